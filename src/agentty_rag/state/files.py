"""The small JSON files agentty-rag keeps under ``.agentty/`` (settings, sessions, recent searches, the leg
check's verdict): read and written the one safe way.

A read never follows a link, never opens a FIFO or a device (it would block, or never end), never reads
from a ``.agentty/`` that links out of the workspace, reads at most ``max_bytes``, and turns anything it
cannot parse (not UTF-8, not JSON, nested past the parser's depth) into a problem string, never an
exception. A write goes to a new temporary file with an unpredictable name (opened with ``O_EXCL``, never
through a link) that is renamed over the file, into a ``.agentty/`` made by ``state.folder.make``.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentty_rag.fsguard import read_state_file, write_private
from agentty_rag.state.folder import make as make_state_dir

JSON_MAX_BYTES = 1 << 20


def read_json(path: Path, max_bytes: int = JSON_MAX_BYTES) -> tuple[object, str]:
    """(data, problem): data is None when the file is missing (problem "") or cannot be used (problem says
    why: a link, a FIFO, larger than ``max_bytes``, not UTF-8 JSON, nested too deep)."""
    data, problem = read_state_file(path, max_bytes)
    if data is None:
        return None, f"{path} is unreadable ({problem}); treating it as empty" if problem else ""
    try:
        return json.loads(data.decode("utf-8")), ""
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        kind = "JSON nested too deep" if isinstance(error, RecursionError) else f"not UTF-8 JSON: {error}"
        return None, f"{path} is unreadable ({kind}); treating it as empty"


def write_json(path: Path, data: object, indent: int | None = 1) -> None:
    """Write ``data`` as JSON atomically, never through a link, into a ``.agentty/`` that stays inside.

    Raises:
        UnsafeFile: the folder links out of the workspace, or the path is not a regular file.
        OSError: it cannot be written (read-only, full).
    """
    make_state_dir(path.parent)
    write_private(path, json.dumps(data, indent=indent, sort_keys=True).encode("utf-8"))


__all__ = ["JSON_MAX_BYTES", "read_json", "write_json"]
