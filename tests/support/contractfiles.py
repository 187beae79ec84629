"""Contract files for the reload tests: the tick contract as written, with the vendor's
rename ``ask_sz`` -> ``ask_volume`` (version 2), a broken one, and a ConfigMap-like volume."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.ticks import TICK_YAML, tick

V1 = TICK_YAML.read_text()
#: The vendor renamed ask_sz to ask_volume; this version accepts it.
V2 = V1.replace("name: ask_sz", "name: ask_volume").replace('version: "1"', 'version: "2"')
#: Loads as YAML, fails the contract check (an unknown type).
BROKEN = V1.replace('version: "1"', 'version: "3"').replace("type: float", "type: flaot", 1)


def renamed(seq: int) -> bytes:
    """A tick as the vendor now sends it: ask_volume instead of ask_sz."""
    record = tick(seq)
    record["ask_volume"] = record.pop("ask_sz")
    return json.dumps(record, separators=(",", ":")).encode()


class ConfigMapVolume:
    """A directory laid out as Kubernetes mounts a ConfigMap: ``tick.yaml`` is a symlink to
    ``..data/tick.yaml``, ``..data`` a symlink to a timestamped directory; an update writes a
    new directory and swaps ``..data`` atomically (rename over the old link)."""

    def __init__(self, root: Path, text: str) -> None:
        self.root = root
        self.generation = 0
        root.mkdir(parents=True, exist_ok=True)
        self._publish(text)
        (root / "tick.yaml").symlink_to("..data/tick.yaml")

    @property
    def path(self) -> Path:
        return self.root / "tick.yaml"

    def update(self, text: str) -> None:
        self._publish(text)

    def _publish(self, text: str) -> None:
        self.generation += 1
        directory = self.root / f"..2026_12_03_{self.generation:04d}"
        directory.mkdir()
        (directory / "tick.yaml").write_text(text)
        link = self.root / "..data_tmp"
        link.symlink_to(directory.name)
        os.replace(link, self.root / "..data")
