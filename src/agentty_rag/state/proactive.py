"""Small per-workspace state under ``.agentty/`` that is not an index: the proactive mode a user chose, and
which agent sessions were already grounded (for the ``first-turn`` mode).

Both files are JSON, written to a temporary name and renamed, so a reader never sees half a file. A file
that cannot be read is reported and treated as empty; it never stops a turn.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from agentty_rag.state.files import read_json as _read_json
from agentty_rag.state.files import write_json as _write_json

MODES = ("on", "first-turn", "off")
SETTINGS_FILE = "settings.json"
SESSIONS_FILE = "sessions.json"
# Sessions grounded longer ago than this are forgotten, and at most this many are kept.
SESSION_TTL_S = 7 * 24 * 3600
MAX_SESSIONS = 2000


def read_mode(state_dir: Path) -> tuple[str, str]:
    """(mode from ``settings.json``, problem). A missing, corrupt or unknown setting is ``off``."""
    data, problem = _read_json(state_dir / SETTINGS_FILE)
    if problem:
        return "off", problem
    if data is None:
        return "off", ""
    mode = data.get("proactive") if isinstance(data, dict) else None
    if mode is None:
        return "off", ""
    if mode not in MODES:
        return "off", f"{state_dir / SETTINGS_FILE}: proactive mode {mode!r} is not one of {', '.join(MODES)}; off"
    return str(mode), ""


def write_mode(state_dir: Path, mode: str) -> None:
    """Persist the proactive mode, keeping any other keys of ``settings.json``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    data, _ = _read_json(state_dir / SETTINGS_FILE)
    settings = dict(data) if isinstance(data, dict) else {}
    settings["proactive"] = mode
    _write_json(state_dir / SETTINGS_FILE, settings)


def first_time(state_dir: Path, session_id: str, now: float | None = None) -> bool:
    """Record ``session_id``; True when it was not known (its first turn). Old sessions are pruned."""
    now = time.time() if now is None else now
    path = state_dir / SESSIONS_FILE
    data, _ = _read_json(path)
    sessions = {k: v for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}
    sessions = {k: v for k, v in sessions.items() if now - v < SESSION_TTL_S}
    seen = session_id in sessions
    if not seen:
        sessions[session_id] = now
        if len(sessions) > MAX_SESSIONS:
            sessions = dict(sorted(sessions.items(), key=lambda item: item[1])[-MAX_SESSIONS:])
        with contextlib.suppress(OSError):
            _write_json(path, sessions)
    return not seen


__all__ = ["MODES", "first_time", "read_mode", "write_mode"]
