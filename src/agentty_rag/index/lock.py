"""One writer at a time per index, across processes: an advisory lock on a file beside the database.

The operating system releases the lock when its holder exits, however it exits, so a lock left by a dead
process is never in force: the file may stay behind, but the next writer takes the lock at once. The lock
primitive is filelock's (``flock`` on POSIX, ``LockFileEx`` on Windows), taken on a descriptor this module
opens itself.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import lock_descriptor, unlock_descriptor

from agentty_rag.errors import IndexBusy

_POLL_SECONDS = 0.05


@contextlib.contextmanager
def exclusive(path: Path, timeout_s: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) or raise ``IndexBusy`` after ``timeout_s``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while not lock_descriptor(fd, blocking=False):
            if time.monotonic() >= deadline:
                raise IndexBusy(
                    f"another process is updating {path.stem} (lock {path}); "
                    f"waited {timeout_s:.0f} s — try again, or raise AGENTTY_RAG_LOCK_TIMEOUT_MS"
                )
            time.sleep(_POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            unlock_descriptor(fd)
        os.close(fd)


def held(path: Path) -> bool:
    """Whether another process holds the lock right now (never waits)."""
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        if not lock_descriptor(fd, blocking=False):
            return True
        unlock_descriptor(fd)
        return False
    finally:
        os.close(fd)


__all__ = ["exclusive", "held"]
