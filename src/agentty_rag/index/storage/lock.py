"""One writer at a time per index, across processes: an advisory lock on a file beside the database.

The operating system releases the lock when its holder exits, however it exits, so a lock left by a dead
process is never in force: the file may stay behind, but the next writer takes the lock at once. The lock
primitive is filelock's (``flock`` on POSIX, ``LockFileEx`` on Windows), taken on a descriptor this module
opens itself. The holder writes its process id into the file and empties it when it lets go, so a file that
still names a process while nobody holds the lock tells that an update died half-way (the index is then
checked before use).

The lock file is never opened through a symbolic link, and a lock path that is a folder or a FIFO is
refused with a message that says so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from agentty_rag.errors import IndexBusy, IndexFull, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile, open_private

_POLL_SECONDS = 0.05
# "No space left on device" and "disk quota exceeded": the disk is full for this process.
FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def _open_lock(path: Path, flags: int) -> int:
    """Open the lock file, or raise ``IndexUnwritable`` saying why it cannot be used."""
    try:
        return open_private(path, flags)
    except UnsafeFile as error:
        raise IndexUnwritable(f"the lock file {error}") from None
    except OSError as error:
        raise IndexUnwritable(f"the lock file {path} cannot be opened ({error.strerror})") from None


# The lock files this thread holds, and how deeply: taking one again inside (recovering from damage met
# during an update) must not wait for itself.
_held = threading.local()


@contextlib.contextmanager
def exclusive(path: Path, timeout_s: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) or raise ``IndexBusy`` after ``timeout_s``.
    A thread that holds it already holds it again at once.

    Raises:
        IndexBusy: another process held it for longer than ``timeout_s``.
        IndexUnwritable: the lock file cannot be used (a link, a folder, no permission, a hard link).
        IndexFull: the disk is full (the process id cannot be written).
    """
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    key = os.path.abspath(path)
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    with _locked(path, timeout_s):
        depth[key] = 1
        try:
            yield
        finally:
            depth.pop(key, None)


@contextlib.contextmanager
def _locked(path: Path, timeout_s: float) -> Iterator[None]:
    from filelock import lock_descriptor, unlock_descriptor  # only a writer needs it: a search starts without

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise IndexUnwritable(f"{path.parent} cannot be created ({error.strerror})") from None
    fd = _open_lock(path, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + timeout_s
        while not lock_descriptor(fd, blocking=False):
            if time.monotonic() >= deadline:
                raise IndexBusy(
                    f"another process is updating {path.stem} (lock {path}); "
                    f"waited {timeout_s:.0f} s — try again, or raise AGENTTY_RAG_LOCK_TIMEOUT_MS"
                )
            time.sleep(_POLL_SECONDS)
        _write_pid(fd, path)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):  # released by a live process: its transaction ended either way
                os.ftruncate(fd, 0)
    finally:
        with contextlib.suppress(OSError):
            unlock_descriptor(fd)
        os.close(fd)


def _write_pid(fd: int, path: Path) -> None:
    """Name this process in the lock file (an update that dies half-way leaves it named).

    Raises:
        IndexFull: the disk is full: no update can be written either, the committed index still answers.
        IndexUnwritable: it cannot be written for another reason.
    """
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as error:
        if error.errno in FULL_ERRNOS:
            raise IndexFull(f"{path.parent} is on a full disk ({error.strerror}): the index is not updated") from None
        raise IndexUnwritable(f"the lock file {path} cannot be written ({error.strerror})") from None


def held(path: Path) -> bool:
    """Whether another process holds the lock right now (never waits)."""
    from filelock import lock_descriptor, unlock_descriptor

    if not path.exists():
        return False
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if not lock_descriptor(fd, blocking=False):
            return True
        unlock_descriptor(fd)
        return False
    finally:
        os.close(fd)


def unfinished_update(path: Path) -> bool:
    """Whether the last holder of the lock died while holding it (it still names a process, nobody holds it)."""
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        named = os.read(fd, 64).strip()
    except OSError:  # Windows locks the bytes themselves: a holder is alive
        return False
    finally:
        os.close(fd)
    return bool(named) and not held(path)


__all__ = ["FULL_ERRNOS", "exclusive", "held", "unfinished_update"]
