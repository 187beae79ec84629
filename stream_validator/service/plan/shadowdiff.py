"""PURE: how a shadow contract's verdicts on one micro-batch differ from the live contract's.

A verdict is sparse: the batch indices of the records that fail, each with the violations
that made it fail, as ``(field, kind)`` pairs (field None for a record-level problem); every
other record passes. ``classify`` compares the two:

- **rescued**: failed under the live contract, would pass under the shadow; its violations
  are the live ones (what the shadow no longer objects to);
- **newly quarantined**: passed live, would fail under the shadow; its violations are the
  shadow's;
- a record failing (or passing) under both is **unchanged**, whatever its violations.

A null-ceiling breach is a batch-level verdict: a nullable field the shadow would find over
its ceiling and the live contract does not is ``newly_breached``, the reverse
``no_longer_breached``.

The cost is in the failing records, never in the passing ones: two sets of indices are
compared, no per-record loop over the batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

#: The violations that made one record fail: ``(field, kind)`` pairs.
Pairs = Sequence[tuple[str | None, str]]
Difference = Literal["rescued", "newly_quarantined"]
CeilingChange = Literal["newly_breached", "no_longer_breached"]
DIFFERENCES: Final = ("rescued", "newly_quarantined")
CEILING_CHANGES: Final = ("newly_breached", "no_longer_breached")


@dataclass(frozen=True, slots=True)
class ShadowDiff:
    """One batch judged by both contracts: how many records were compared, which ones
    (batch indices, ascending) each contract would route differently, the violations of
    those by ``(difference, field, kind)``, and the null-ceiling breaches that change."""

    records: int
    rescued: tuple[int, ...] = ()
    newly_quarantined: tuple[int, ...] = ()
    violations: Mapping[tuple[str, str | None, str], int] = field(default_factory=dict)
    ceiling: Mapping[str, CeilingChange] = field(default_factory=dict)
    #: Which shadow contract of the route judged (the service counts a reload up).
    generation: int = 0

    @property
    def unchanged(self) -> int:
        """Records both contracts route alike."""
        return self.records - len(self.rescued) - len(self.newly_quarantined)

    @property
    def differs(self) -> bool:
        """True when anything differs: a record's verdict or a null-ceiling breach."""
        return bool(self.rescued or self.newly_quarantined or self.ceiling)


def classify(
    records: int,
    live: Mapping[int, Pairs],
    shadow: Mapping[int, Pairs],
    *,
    live_breaches: Collection[str] = (),
    shadow_breaches: Collection[str] = (),
    generation: int = 0,
) -> ShadowDiff:
    """The differences between the live and the shadow verdicts of a batch of ``records``
    records (``live``/``shadow``: index -> violations of each failing record)."""
    rescued = sorted(live.keys() - shadow.keys())
    newly = sorted(shadow.keys() - live.keys())
    violations: Counter[tuple[str, str | None, str]] = Counter()
    for difference, indices, verdicts in (
        ("rescued", rescued, live),
        ("newly_quarantined", newly, shadow),
    ):
        for index in indices:
            # A record counts once per (field, kind), however often it breaks that check.
            for name, kind in set(verdicts[index]):
                violations[(difference, name, kind)] += 1
    ceiling: dict[str, CeilingChange] = {}
    for name in sorted(set(shadow_breaches) - set(live_breaches)):
        ceiling[name] = "newly_breached"
    for name in sorted(set(live_breaches) - set(shadow_breaches)):
        ceiling[name] = "no_longer_breached"
    return ShadowDiff(records, tuple(rescued), tuple(newly), violations, ceiling, generation)
