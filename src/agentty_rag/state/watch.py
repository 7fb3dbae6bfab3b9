"""What a running server does to stay fresh, told to ``agentty-rag status`` in another process.

``serve`` records in ``.agentty/rag_watch.json`` whether it watches the workspace, or why it cannot (every
search then scans the tree); ``status`` shows it while that process is alive. The file is written atomically,
never through a link, and removed when the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from agentty_rag.fsguard import UnsafeFile, open_private, write_private
from agentty_rag.state.folder import make as make_state_dir

WATCH_FILE = "rag_watch.json"


def record(state_dir: Path, state: str, problem: str = "") -> None:
    """Say what this server does (``watching``, ``failed``, ``off``); a file that cannot be written is left."""
    data = {"pid": os.getpid(), "state": state, "problem": problem}
    with contextlib.suppress(OSError):
        make_state_dir(state_dir)
        write_private(state_dir / WATCH_FILE, json.dumps(data, sort_keys=True).encode("utf-8"))


def clear(state_dir: Path, name: str = WATCH_FILE) -> None:
    """Remove this server's record (another server's is left)."""
    data = read_record(state_dir, name)
    if data is not None and data.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            (state_dir / name).unlink()


def _read(state_dir: Path) -> dict[str, object] | None:
    return read_record(state_dir, WATCH_FILE)


def read_record(state_dir: Path, name: str) -> dict[str, object] | None:
    """A server's record ``name`` in the state folder (None when missing, unsafe or not a JSON object)."""
    try:
        fd = open_private(state_dir / name, os.O_RDONLY)
    except (OSError, UnsafeFile):
        return None
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(1 << 16)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs."""
    return _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def running_server(state_dir: Path) -> str:
    """How a running server on this workspace learns of changes ("" when none runs)."""
    data = _read(state_dir)
    if data is None:
        return ""
    pid = data.get("pid")
    if not isinstance(pid, int) or not _alive(pid):
        return ""
    state, problem = data.get("state"), data.get("problem") or ""
    if state == "watching":
        return f"the server (pid {pid}) watches the workspace: its searches re-read only the files that changed"
    if state == "off":
        return f"the server (pid {pid}) does not watch (AGENTTY_RAG_WATCH=0): every search scans the tree"
    return f"the server (pid {pid}) could not watch the workspace ({problem}): every search scans the tree"


__all__ = ["WATCH_FILE", "alive", "clear", "read_record", "record", "running_server"]
