"""One writer at a time per index, across processes: an advisory lock on a file beside the database.

The operating system releases the lock when its holder exits, however it exits, so a lock left by a dead
process is never in force: the file may stay behind, but the next writer takes the lock at once.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from agentty_rag.errors import IndexBusy

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_POLL_SECONDS = 0.05


@contextlib.contextmanager
def exclusive(path: Path, timeout_s: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) or raise ``IndexBusy`` after ``timeout_s``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise IndexBusy(
                            f"another process is updating {path.stem} (lock {path}); "
                            f"waited {timeout_s:.0f} s — try again, or raise AGENTTY_RAG_LOCK_TIMEOUT_MS"
                        ) from None
                    time.sleep(_POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def held(path: Path) -> bool:
    """Whether another process holds the lock right now (never waits)."""
    if fcntl is None or not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


__all__ = ["exclusive", "held"]
