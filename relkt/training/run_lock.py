"""One writer per run folder: an advisory lock the operating system drops when its holder dies."""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import socket
from pathlib import Path

from relkt.errors import ConfigError
from relkt.io import RUN_LOCK

log = logging.getLogger("relkt.training")

LOCK_FILE = RUN_LOCK
# What an interrupted writer leaves: export_encoder's `.best.writing-PID`, io.replace_dir's `.best.old` and
# `.checkpoint.old` (older relkt wrote `.best.old-PID`), the harness's `.checkpoint.writing`, io.atomic_file's
# `.NAME.XXXX.tmp`.
_DEBRIS = re.compile(r"^\.(?P<name>[^.]+(?:\.[^.]+)*?)\.(?:writing|old)(?:-\d+)?$|^\.checkpoint\.writing$|^\..+\.tmp$")


class RunLock:
    """Hold `folder/.lock` (fcntl.flock) for as long as this object lives in this process.

    The file names the holder (pid and host), so a second trainer on the same folder is refused with who holds it.
    The lock itself is the kernel's: it goes with the holder's process, so a killed run leaves no stale lock and the
    next run takes over (saying whose it was). With the lock held, whatever an interrupted writer left is ours to
    clean (`clean_debris`).
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise ConfigError(f"output_dir {self.folder} is a file, not a folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / LOCK_FILE
        # O_NOFOLLOW: a `.lock` that is a link to a file elsewhere is refused, never truncated
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder()
            os.close(self._fd)
            self._fd = None
            raise ConfigError(
                f"{self.folder} is in use by another run ({holder or 'unknown holder'}; lock file "
                f"{self.path}): one writer per run folder. Wait for it, stop it, or choose another "
                "output_dir"
            ) from None
        previous = self._holder()
        if previous:
            log.info(
                "%s: taking over the lock of %s, which no longer holds it (an interrupted run)", self.folder, previous
            )
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        os.fsync(self._fd)

    def _holder(self) -> str:
        try:
            return os.pread(self._fd, 200, 0).decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def clean_debris(self) -> list[str]:
        """Remove what interrupted writes left in the folder; an export whose swap was cut between its two renames
        (`best/` gone, `.best.old-PID` there) is put back. Returns what was done, one line each."""
        done = []
        for entry in sorted(self.folder.iterdir()):
            m = _DEBRIS.match(entry.name)
            if not m or entry.name == LOCK_FILE:
                continue
            target = self.folder / m.group("name") if m.group("name") else None
            if target is not None and ".old" in entry.name and not target.exists():
                os.replace(entry, target)
                done.append(f"restored {target.name}/ from {entry.name} (a swap cut between its renames)")
                continue
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            done.append(f"removed {entry.name} (left by an interrupted write)")
        for line in done:
            log.info("%s: %s", self.folder, line)
        return done

    def release(self) -> None:
        if self._fd is not None:
            self.path.write_text("")  # no holder named: the next run takes over silently
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
