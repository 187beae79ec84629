"""Which contract files changed: a cheap ``stat`` of each path first, its content second.

A path is followed to the file it names at every look (a Kubernetes ConfigMap volume makes
``tick.yaml`` a symlink into ``..data/``, and an update swaps ``..data`` to a new directory,
so the file's inode changes while its path does not). When the stat (device, inode, size,
modification time) differs from the last one seen, the file is read and its content hashed:
only a content that differs from the live contract's, and from the last one rejected, is a
change. So touching a file, or a ConfigMap update of another key (which renews every file's
inode), reloads nothing, and a malformed file is reported once, not at every look.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from stream_validator.yamlfile import read_text_file

#: What ``stat`` says of a file (device, inode, size, mtime in ns), or the error's text.
Fingerprint = tuple[int, int, int, int] | str


@dataclass(frozen=True, slots=True)
class Content:
    """A contract file as read once: its text (None: unreadable, ``error`` says why) and the
    digest that tells it apart."""

    path: str
    text: str | None
    digest: str
    error: str | None = None


def fingerprint(path: str) -> Fingerprint:
    """The stat of the file ``path`` names (symlinks followed), or why there is none."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read(path: str) -> Content:
    """The file's text and digest; an unreadable file's digest is its error's."""
    try:
        text = read_text_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        error = f"cannot read file: {exc}"
        return Content(path, None, "error:" + error, error)
    return Content(path, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


class ContractFiles:
    """The routes' contract files: the live content of each and what was last seen."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._seen: dict[str, Fingerprint] = {}
        self._live: dict[str, str] = {}
        self._rejected: dict[str, str] = {}
        for path in paths:
            self._seen[path] = fingerprint(path)
            self._live[path] = read(path).digest

    @property
    def paths(self) -> list[str]:
        """Every file watched."""
        return list(self._seen)

    def changed(self, *, force: bool = False) -> list[Content]:
        """The files whose content differs from the live one. Without ``force`` a file is
        read only when its stat changed, and a content already rejected is no change;
        ``force`` (SIGHUP) reads every file and offers a rejected content again."""
        out: list[Content] = []
        for path, seen in self._seen.items():
            now = fingerprint(path)
            if now == seen and not force:
                continue
            self._seen[path] = now
            content = read(path)
            if content.digest == self._live[path]:
                continue
            if content.digest == self._rejected.get(path) and not force:
                continue
            out.append(content)
        return out

    def accepted(self, content: Content) -> None:
        """The content is live now."""
        self._live[content.path] = content.digest
        self._rejected.pop(content.path, None)

    def rejected(self, content: Content) -> None:
        """The content was refused: not offered again until it changes (or SIGHUP)."""
        self._rejected[content.path] = content.digest
