"""Opening files in a workspace a user does not control: never through a link out, never a FIFO or a device.

A cloned repository can ship a symlink, a named pipe or a device node wherever a regular file is expected,
and can swap one in between a scan and a read. Every read of a source file goes through ``read_regular``,
every file agentty-rag writes under ``.agentty/`` is opened with ``open_private`` or checked with
``refuse_link`` first:

* a read opens without following a final link (a link is resolved and admitted only when its target lies
  inside the allowed folder), without blocking (a FIFO opens at once), then checks what was opened: a
  regular file whose real path lies inside the allowed folder;
* a write never follows a link at all and refuses anything that is not a regular file, or a file with
  another name (a hard link: writing it in place would change a file elsewhere).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from agentty_rag.errors import UnsafeFile

# O_NOFOLLOW, O_NONBLOCK and O_CLOEXEC are POSIX: Windows has none (nor FIFOs to block on) and wants O_BINARY.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_COMMON = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _COMMON
# A final symlink opened with O_NOFOLLOW fails with ELOOP on Linux, EMLINK on some BSDs.
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK}


def is_inside(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or lies below it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def cited_inside(ref: str, roots: Iterable[str]) -> bool:
    """Whether a passage's path names a file inside the workspace: a relative path that never climbs out (no
    ``..`` part, no drive), or an absolute one inside one of ``roots`` (a docs folder named outside the
    workspace is cited by its absolute path). A path that fails this came from an index that lies."""
    if not ref or "\x00" in ref:
        return False
    if os.path.isabs(ref) or ref.startswith("/"):
        normal = os.path.normpath(ref)
        return any(os.path.isabs(root) and is_inside(normal, os.path.normpath(root)) for root in roots)
    parts = ref.replace("\\", "/").split("/")
    drive = len(ref) > 2 and ref[0].isalpha() and ref[1] == ":" and ref[2] in "/\\"  # C:/… on Windows
    return ".." not in parts and not drive


def real_path_of(fd: int, opened_as: str) -> str:
    """Where an open file really is: what the kernel says (Linux), else the resolved path it was opened by."""
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)")
    return os.path.realpath(opened_as)


def _blocking(fd: int) -> None:
    """Reads and writes wait again once the file is known to be a regular file (where there was a flag)."""
    if _NONBLOCK:
        os.set_blocking(fd, True)


def _open_admitted(path: str, boundary: str) -> int:
    """Open ``path`` for reading; a final link is followed only to a target inside ``boundary``."""
    try:
        return os.open(path, _READ_FLAGS)
    except OSError as error:
        if error.errno not in _LINK_ERRNOS:
            raise
    target = os.path.realpath(path)
    if boundary and not is_inside(target, boundary):
        raise UnsafeFile(f"{path} is a link to {target}, outside {boundary}", "symlink outside root")
    return os.open(target, _READ_FLAGS)


def read_regular(path: str, boundary: str, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of a regular file whose real path lies inside ``boundary``.

    Args:
        path: the file to read.
        boundary: the real path of the folder the file must lie in ("" to skip that check).
        max_bytes: read one byte more than this, so the caller can tell a file that grew too large.

    Raises:
        UnsafeFile: a link out of ``boundary``, or not a regular file (a FIFO, a device, a folder).
        OSError: the file cannot be opened or read.
    """
    fd = _open_admitted(path, boundary)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFile(f"{path} is not a regular file")
        real = real_path_of(fd, path)
        if boundary and not is_inside(real, boundary):
            raise UnsafeFile(f"{path} resolves to {real}, outside {boundary}", "symlink outside root")
        _blocking(fd)
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def refuse_link(path: Path, writing: bool = True) -> None:
    """Raise ``UnsafeFile`` when ``path`` exists as anything but a regular file (a symbolic link above all)
    or, for a file to be written in place, one with another name (a hard link)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    mode = st.st_mode
    if writing and stat.S_ISREG(mode) and st.st_nlink > 1:
        raise UnsafeFile(_hard_link(path, st.st_nlink))
    if stat.S_ISLNK(mode):
        raise UnsafeFile(f"{path} is a symbolic link; agentty-rag never writes through a link — remove it")
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise UnsafeFile(f"{path} is {kind}, where agentty-rag keeps a file — remove it")


def open_private(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` for a file agentty-rag writes: never through a link, only a regular file, and opened for
    writing only when it has no other name (a hard link, which arrives through an archive, not git).

    Raises:
        UnsafeFile: ``path`` is a link, a folder or another non-regular file, or a hard link to be written.
        OSError: it cannot be opened (no permission, read-only file system).
    """
    if not _NOFOLLOW:  # no flag to refuse a final link: look first
        refuse_link(path, writing=bool(flags & (os.O_WRONLY | os.O_RDWR)))
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _COMMON, mode)
    except IsADirectoryError:
        refuse_link(path)
        raise
    except OSError as error:
        if error.errno in _LINK_ERRNOS:
            refuse_link(path)
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        refuse_link(path)
        raise UnsafeFile(f"{path} is not a regular file")
    if flags & (os.O_WRONLY | os.O_RDWR) and st.st_nlink > 1:
        os.close(fd)
        raise UnsafeFile(_hard_link(path, st.st_nlink))
    _blocking(fd)
    return fd


def _hard_link(path: Path, names: int) -> str:
    return (
        f"{path} is a hard link ({names} names): its other name may lie outside the workspace, and agentty-rag "
        "never writes such a file in place — remove it"
    )


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` atomically (a new temporary file, then a rename that replaces a link, never follows it)."""
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    fd = open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def check_state_dir(state_dir: Path) -> None:
    """Refuse a ``.agentty`` folder that is a link out of the folder holding it (or not a folder at all)."""
    try:
        mode = os.lstat(state_dir).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        target = os.path.realpath(state_dir)
        if not is_inside(target, os.path.realpath(state_dir.parent)):
            raise UnsafeFile(
                f"{state_dir} is a link to {target}, outside the workspace; agentty-rag never writes there"
            )
        mode = os.stat(state_dir).st_mode
    if not stat.S_ISDIR(mode):
        raise UnsafeFile(f"{state_dir} is not a folder")


def write_state_file(path: Path, data: bytes) -> None:
    """Write a file agentty-rag keeps under ``.agentty/`` atomically, never through a link, never into a
    ``.agentty`` that links out (``UnsafeFile``; ``OSError`` when it cannot be written)."""
    check_state_dir(path.parent)
    write_private(path, data)


def read_private(path: Path, max_bytes: int) -> bytes | None:
    """At most ``max_bytes`` of a file agentty-rag keeps (``open_private``: never through a link, never a FIFO);
    None when there is none.

    Raises:
        UnsafeFile: ``path`` is a link, a folder or another non-regular file.
        OSError: it cannot be read.
    """
    try:
        fd = open_private(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(max_bytes)


def read_state_file(path: Path, max_bytes: int) -> tuple[bytes | None, str]:
    """(data, problem) of a file agentty-rag keeps under ``.agentty/``, read the one safe way: never through a
    link, never a FIFO or a device, never from a ``.agentty`` that links out, at most ``max_bytes``. data is
    None when the file is missing (problem "") or cannot be read (problem says why)."""
    try:
        check_state_dir(path.parent)
        with os.fdopen(open_private(path, os.O_RDONLY), "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        return None, ""
    except OSError as error:  # UnsafeFile too: a link, a FIFO, a device, a folder
        return None, str(error) if isinstance(error, UnsafeFile) else (error.strerror or str(error))
    if len(data) > max_bytes:
        return None, f"larger than {max_bytes} bytes"
    return data, ""


__all__ = [
    "UnsafeFile",
    "read_private",
    "check_state_dir",
    "cited_inside",
    "is_inside",
    "open_private",
    "read_regular",
    "read_state_file",
    "real_path_of",
    "refuse_link",
    "write_private",
    "write_state_file",
]
