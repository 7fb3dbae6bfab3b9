"""What a running server does in the background, told to ``agentty-rag status`` in another process.

``serve`` records in ``.agentty/rag_watch.json`` whether it watches the workspace, or why it cannot (every
search then scans the tree), and its background jobs (``jobs.Supervisor``: which run, which failed and were
run again); ``status`` shows them while that process is alive. The file is written atomically, never through
a link, and removed when the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from agentty_rag.fsguard import UnsafeFile, open_private, write_private
from agentty_rag.state.folder import make as make_state_dir

WATCH_FILE = "rag_watch.json"
# The most job lines a record keeps (a server has about ten jobs).
MAX_JOBS = 64

# This process's records, by state folder: the watcher's state and the jobs are written by different threads.
_records: dict[Path, dict[str, object]] = {}
_cleared: set[Path] = set()
_lock = threading.Lock()


def record(state_dir: Path, state: str, problem: str = "") -> None:
    """Say what this server does (``watching``, ``failed``, ``off``); a file that cannot be written is left."""
    _update(state_dir, state=state, problem=problem)


def record_jobs(state_dir: Path, jobs: Sequence[tuple[str, int, str]]) -> None:
    """Say which background jobs run and how each is doing: (key, failures, description) per job."""
    kept = [{"key": key, "failures": failures, "describe": text} for key, failures, text in jobs[:MAX_JOBS]]
    _update(state_dir, jobs=kept)


def _update(state_dir: Path, **fields: object) -> None:
    with _lock:
        if "state" not in fields and state_dir in _cleared:
            return  # the server stopped recording here: a job's last event is not news
        _cleared.discard(state_dir)
        data = _records.setdefault(state_dir, {"pid": os.getpid(), "state": "starting", "problem": "", "jobs": []})
        if all(data.get(key) == value for key, value in fields.items()):
            return  # nothing new: no write
        data.update(fields)
        with contextlib.suppress(OSError):
            make_state_dir(state_dir)
            write_private(state_dir / WATCH_FILE, json.dumps(data, sort_keys=True).encode("utf-8"))


def clear(state_dir: Path) -> None:
    """Remove this server's record (another server's is left)."""
    with _lock:
        _records.pop(state_dir, None)
        _cleared.add(state_dir)
        remove_own_record(state_dir, WATCH_FILE)


def remove_own_record(state_dir: Path, name: str) -> None:
    """Remove the record ``name`` when this process wrote it (another server's is left)."""
    data = read_record(state_dir, name)
    if data is not None and data.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            (state_dir / name).unlink()


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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def running_record(state_dir: Path, name: str) -> dict[str, object] | None:
    """The record ``name`` of a server running on this workspace (None when none runs, or it said nothing)."""
    data = read_record(state_dir, name)
    if data is None:
        return None
    pid = data.get("pid")
    return data if isinstance(pid, int) and _alive(pid) else None


def server_jobs(state_dir: Path) -> tuple[tuple[str, int, str], ...]:
    """A running server's background jobs: (key, failures, description) each (none when no server runs)."""
    data = running_record(state_dir, WATCH_FILE)
    jobs = data.get("jobs") if data is not None else None
    if not isinstance(jobs, list):
        return ()
    kept: list[tuple[str, int, str]] = []
    for job in jobs[:MAX_JOBS]:
        if isinstance(job, dict):
            key, failures, text = job.get("key"), job.get("failures"), job.get("describe")
            if isinstance(key, str) and isinstance(failures, int) and isinstance(text, str):
                kept.append((key[:80], failures, text[:400]))
    return tuple(kept)


def running_server(state_dir: Path) -> str:
    """How a running server on this workspace learns of changes ("" when none runs)."""
    data = running_record(state_dir, WATCH_FILE)
    if data is None:
        return ""
    pid = data["pid"]
    state, problem = data.get("state"), data.get("problem") or ""
    if state == "watching":
        return f"the server (pid {pid}) watches the workspace: its searches re-read only the files that changed"
    if state == "starting":
        return f"the server (pid {pid}) is starting its watcher: its searches scan the tree until it watches"
    if state == "off":
        return f"the server (pid {pid}) does not watch (AGENTTY_RAG_WATCH=0): every search scans the tree"
    return f"the server (pid {pid}) could not watch the workspace ({problem}): every search scans the tree"


__all__ = [
    "WATCH_FILE",
    "clear",
    "read_record",
    "record",
    "record_jobs",
    "remove_own_record",
    "running_record",
    "running_server",
    "server_jobs",
]
