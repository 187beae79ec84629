"""ContractFiles: a change is a new content behind the path, seen through symlink swaps."""

from __future__ import annotations

import os
from pathlib import Path

from stream_validator.service.reload.files import ContractFiles
from tests.support.contractfiles import BROKEN, V1, V2, ConfigMapVolume


def test_a_configmap_update_is_seen_through_the_symlink_swap(tmp_path: Path) -> None:
    """The ..data swap changes the content behind the unchanged path: one change, once."""
    volume = ConfigMapVolume(tmp_path / "contracts", V1)
    files = ContractFiles([str(volume.path)])
    assert files.changed() == []
    volume.update(V2)
    (content,) = files.changed()
    assert content.text == V2
    files.accepted(content)
    assert files.changed() == []


def test_a_new_inode_with_the_same_content_is_no_change(tmp_path: Path) -> None:
    """A ConfigMap update of another key renews every file: same content, nothing to do."""
    volume = ConfigMapVolume(tmp_path / "contracts", V1)
    files = ContractFiles([str(volume.path)])
    volume.update(V1)
    assert files.changed() == []


def test_a_rejected_content_is_offered_again_only_when_it_changes_or_forced(
    tmp_path: Path,
) -> None:
    """A malformed file is reported once, not at every look; SIGHUP (force) offers it again."""
    path = tmp_path / "tick.yaml"
    path.write_text(V1)
    files = ContractFiles([str(path)])
    path.write_text(BROKEN)
    os.utime(path, ns=(1, 1))  # a stat that surely differs from the first
    (content,) = files.changed()
    files.rejected(content)
    os.utime(path, ns=(2, 2))  # touched, same content
    assert files.changed() == []
    assert [c.text for c in files.changed(force=True)] == [BROKEN]
    path.write_text(V2)
    assert [c.text for c in files.changed()] == [V2]


def test_a_file_that_disappears_is_a_change_that_cannot_be_read(tmp_path: Path) -> None:
    """A deleted contract file is offered with its error (the reload rejects it)."""
    path = tmp_path / "tick.yaml"
    path.write_text(V1)
    files = ContractFiles([str(path)])
    path.unlink()
    (content,) = files.changed()
    assert content.text is None
    assert content.error is not None and "cannot read file" in content.error
