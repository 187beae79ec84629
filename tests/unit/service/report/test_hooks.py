"""Service hooks: a raising hook is reported, never raised into the loop."""

from __future__ import annotations

from stream_validator.service.report.hooks import ServiceHooks, guarded


def test_guarded_hooks_report_exceptions_instead_of_raising() -> None:
    """Every guarded hook catches its exception and hands it to the failure callback."""
    failures: list[tuple[str, str]] = []

    def boom(*_: object) -> None:
        raise ValueError("bad label")

    hooks = guarded(
        ServiceHooks(on_commit=boom, on_ready=boom),
        lambda name, exc: failures.append((name, str(exc))),
    )
    hooks.on_commit(1.0)
    hooks.on_ready(True)
    hooks.on_batch(None, 0.1)  # type: ignore[arg-type]  # the default does nothing
    assert failures == [("on_commit", "bad label"), ("on_ready", "bad label")]


def test_guarded_hooks_still_call_the_hook() -> None:
    """A hook that works is called with its arguments."""
    seen: list[float] = []
    guarded(ServiceHooks(on_commit=seen.append), lambda *_: None).on_commit(2.5)
    assert seen == [2.5]
