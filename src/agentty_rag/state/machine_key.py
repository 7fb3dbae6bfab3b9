"""This machine's key: a secret kept outside every workspace, which seals every checksum an index writes.

An index this machine built carries checksums only this key makes (``database.checksum``); an index that was
copied, committed or written anywhere else carries none of them and is rebuilt from the working tree
(docs/indexes.md, "Which indexes are believed"). The key is 32 random bytes in
``$XDG_STATE_HOME/agentty-rag/index.key`` (``~/.local/state/agentty-rag/index.key`` by default), made on
first use, readable by its owner only, never under a workspace and never through a link. Two processes that
make it at once agree on one (the file is linked into place, never replaced). Where no key can be kept (no
home folder, a read-only one), the process draws a key of its own: its indexes are believed by itself only,
and the next process rebuilds them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from pathlib import Path

from agentty_rag.fsguard import UnsafeFile, open_private, read_private

log = logging.getLogger(__name__)

KEY_BYTES = 32
_FOLDER = "agentty-rag"
_NAME = "index.key"
_guard = threading.Lock()
_keys: dict[Path | None, bytes] = {}


def key_path(state_home: Path | None) -> Path | None:
    """Where the key lives under the user's state folder (None: there is no such folder)."""
    return None if state_home is None else state_home / _FOLDER / _NAME


def machine_key(state_home: Path | None) -> bytes:
    """The key kept under ``state_home`` (made when missing), once per process; a key of this process alone
    when none can be kept there (said once in the log)."""
    path = key_path(state_home)
    with _guard:
        key = _keys.get(path)
        if key is None:
            key, problem = _load_or_make(path)
            if problem:
                log.warning("no machine key (%s): indexes are rebuilt by every process", problem)
            _keys[path] = key
        return key


def _load_or_make(path: Path | None) -> tuple[bytes, str]:
    """(the key, "") or (a key of this process, why the kept one cannot be used)."""
    if path is None:
        return secrets.token_bytes(KEY_BYTES), "no home folder"
    try:
        key = read_private(path, KEY_BYTES + 1)
        if key is None:
            key = _make(path)
    except (OSError, UnsafeFile) as error:
        return secrets.token_bytes(KEY_BYTES), f"{path}: {error}"
    if len(key) != KEY_BYTES:
        return secrets.token_bytes(KEY_BYTES), f"{path} is not a key of {KEY_BYTES} bytes"
    return key, ""


def _make(path: Path) -> bytes:
    """Write a new key beside its place, then link it there: a key another process made first is kept, and
    read back (no process ever holds a key the file does not)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f"{_NAME}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    kept = read_private(path, KEY_BYTES + 1)
    if kept is None:
        raise FileNotFoundError(f"{path} went away as it was made")
    return kept


__all__ = ["KEY_BYTES", "key_path", "machine_key"]
