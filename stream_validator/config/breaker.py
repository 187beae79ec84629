"""A route's ``circuit_breaker`` settings: the BreakerSpec and its parser.

Here, not in ``service``, because the config is read before any service exists (and config
must not import service). ``service.breaker`` is the state machine these settings drive;
docs/service/circuit-breaker.md says what the breaker does; each key is in the
configuration reference (docs/service/configuration.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from stream_validator.config.schema import MAX_SECONDS
from stream_validator.errors import ConfigError

#: The window is a byte per record, allocated at start-up (10**12 was a MemoryError).
MAX_WINDOW_RECORDS: Final = 1_000_000


class BreakerAction(StrEnum):
    """What the service does while the breaker is open."""

    ALERT = "alert"  # keep consuming; event, metric, alert rule
    PAUSE = "pause"  # stop consuming the route's partitions, staying in the group


@dataclass(frozen=True, slots=True)
class BreakerSpec:
    """A route's ``circuit_breaker`` settings; ConfigError names the offending key."""

    action: BreakerAction = BreakerAction.ALERT
    window_records: int = 1000
    max_quarantined_share: float = 0.5
    min_records: int | None = None  # None: the window must be full
    max_consecutive: int | None = 100  # None: no run limit
    cool_down_s: float = 60.0
    probe_records: int = 100

    def __post_init__(self) -> None:
        problems = []
        if self.window_records < 1:
            problems.append("window_records must be >= 1")
        elif self.window_records > MAX_WINDOW_RECORDS:
            problems.append(f"window_records must be at most {MAX_WINDOW_RECORDS:,}")
        if not 0.0 <= self.max_quarantined_share < 1.0:
            problems.append("max_quarantined_share must be in [0, 1) (a share, not a percent)")
        if self.min_records is not None and not 1 <= self.min_records <= self.window_records:
            problems.append("min_records must be between 1 and window_records")
        if self.max_consecutive is not None and self.max_consecutive < 1:
            problems.append("max_consecutive must be >= 1")
        if not 0 <= self.cool_down_s <= MAX_SECONDS:  # NaN too
            problems.append(f"cool_down_s must be in [0, {MAX_SECONDS}] seconds")
        if self.probe_records < 1:
            problems.append("probe_records must be >= 1")
        if problems:
            raise ConfigError("; ".join(problems))


_COUNTS = ("window_records", "min_records", "max_consecutive", "probe_records")
_NULLABLE = frozenset({"min_records", "max_consecutive"})
_SECONDS_OR_SHARE = ("max_quarantined_share", "cool_down_s")


def breaker_spec_from_mapping(raw: object, where: str) -> BreakerSpec:
    """A route's ``circuit_breaker`` mapping as a BreakerSpec; ConfigError names ``where``."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: must be a mapping")
    allowed = {"action", *_COUNTS, *_SECONDS_OR_SHARE}
    unknown = sorted(str(key) for key in raw if key not in allowed)
    problems = []
    if unknown:
        known = ", ".join(sorted(allowed))
        problems.append(f"unknown key(s) {', '.join(unknown)} (allowed: {known})")
    options: dict[str, Any] = {}
    for key in (*_COUNTS, *_SECONDS_OR_SHARE):
        if key not in raw:
            continue
        value = options[key] = raw[key]
        kinds: tuple[type, ...] = (int,) if key in _COUNTS else (int, float)
        if value is None and key in _NULLABLE:
            continue
        if not isinstance(value, kinds) or isinstance(value, bool):
            wanted = "a whole number" if key in _COUNTS else "a number"
            problems.append(f"{key} must be {wanted}, got {value!r}")
    action = raw.get("action", "alert")
    if not isinstance(action, str) or action not in {a.value for a in BreakerAction}:
        problems.append(f"action must be alert or pause, got {action!r}")
    if problems:
        raise ConfigError(f"{where}: " + "; ".join(problems))
    try:
        return BreakerSpec(action=BreakerAction(action), **options)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
