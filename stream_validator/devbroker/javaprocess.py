"""One long-lived ``java`` process owned by a state directory: the local Kafka broker's and the
local Schema Registry's common lifecycle.

The process is spawned in a session of its own (it outlives the CLI, ignores the terminal's
Ctrl-C, and leads its own process group, which stop and kill signal), its pid is written to a
pid file, and it is found again through that file. Before any signal the pid is checked to
still be the process this directory started (``_runs_here``: its command line), so a stale
pid file never gets an unrelated process killed. Nothing here looks processes up by name.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from stream_validator.devbroker.process import rss_bytes
from stream_validator.errors import DevBrokerError

_POLL_S = 0.1


class LocalJavaProcess:
    """The pid file, spawn, stop and kill of one java process; subclasses say where its pid
    file is (``_pid_file``), how its command line is recognised (``_runs_here``) and start it
    (``start``)."""

    _proc: subprocess.Popen[bytes] | None = None

    def _pid_file(self) -> Path:
        raise NotImplementedError

    def _runs_here(self, pid: int) -> bool:
        """Whether ``pid`` (not our child) runs this directory's process."""
        raise NotImplementedError

    def start(self) -> str:
        raise NotImplementedError

    @property
    def pid(self) -> int | None:
        """The process id if it is running, else ``None``."""
        try:
            pid = int(self._pid_file().read_text(encoding="utf-8").strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if self._is_ours(pid) else None

    def is_running(self) -> bool:
        """Whether the process of this state directory is alive."""
        return self.pid is not None

    def rss_bytes(self) -> int | None:
        """Resident memory of the process (``VmRSS``), if running on Linux."""
        pid = self.pid
        return None if pid is None else rss_bytes(pid)

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM the process group, SIGKILL it after ``timeout`` seconds; False if it was
        not running."""
        pid = self.pid
        if pid is None:
            self._pid_file().unlink(missing_ok=True)
            return False
        signal_group(pid, signal.SIGTERM)
        if not self._wait_exit(pid, timeout):
            signal_group(pid, signal.SIGKILL)
            self._wait_exit(pid, timeout)
        self._pid_file().unlink(missing_ok=True)
        return True

    def kill(self) -> bool:
        """SIGKILL the process group (a crash: no clean shutdown); False if it was not running."""
        pid = self.pid
        if pid is None:
            return False
        signal_group(pid, signal.SIGKILL)
        self._wait_exit(pid, 30.0)
        self._pid_file().unlink(missing_ok=True)
        return True

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _spawn(self, cmd: list[str], log_path: Path, cwd: Path, *, append_log: bool) -> None:
        """Start ``cmd`` in its own session, output to ``log_path``; record its pid."""
        with log_path.open("ab" if append_log else "wb") as log:
            try:
                self._proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise DevBrokerError(f"cannot run java ({cmd[0]!r}): {exc}") from exc
        self._pid_file().write_text(f"{self._proc.pid}\n", encoding="utf-8")

    def _exit_code(self) -> int | None:
        """The spawned process's exit code once it has exited while starting, else None."""
        assert self._proc is not None
        return self._proc.poll()

    def _wait_exit(self, pid: int, timeout: float) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            try:
                self._proc.wait(timeout)  # also reaps our child, so no zombie lingers
            except subprocess.TimeoutExpired:
                return False
            return True
        deadline = time.monotonic() + timeout
        while self._is_ours(pid):
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
        return True

    def _is_ours(self, pid: int) -> bool:
        if self._proc is not None and self._proc.pid == pid:
            return self._proc.poll() is None
        return self._runs_here(pid)


def signal_group(pid: int, signum: signal.Signals) -> None:
    """Signal the process group ``pid`` leads (spawned in its own session, so pgid == pid)."""
    with contextlib.suppress(ProcessLookupError):  # it exited on its own since we looked
        os.killpg(pid, signum)
