"""What a running server's dense leg does, told to ``agentty-rag status`` in another process.

``serve`` records in ``.agentty/rag_dense.json`` its leg's state and why, the embedding profile its probe
found, when it probes again, when the embedding server last answered, and each index's vectors with the rate
they are embedded at; ``status`` shows it while that process is alive (its own probe may wait behind the
server's batches, and a leg cooling down after failures is news only the server has). The file is written
atomically, never through a link, and removed when the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from agentty_rag.fsguard import write_private
from agentty_rag.state.folder import make as make_state_dir
from agentty_rag.state.watch import remove_own_record, running_record

DENSE_FILE = "rag_dense.json"


def record(state_dir: Path, facts: Mapping[str, object]) -> None:
    """Say what this server's leg does now; a file that cannot be written is left."""
    data = {**facts, "pid": os.getpid(), "written_at": time.time()}
    with contextlib.suppress(OSError, TypeError, ValueError):
        make_state_dir(state_dir)
        write_private(state_dir / DENSE_FILE, json.dumps(data, sort_keys=True).encode("utf-8"))


def clear(state_dir: Path) -> None:
    """Remove this server's record (another server's is left)."""
    remove_own_record(state_dir, DENSE_FILE)


def running_leg(state_dir: Path) -> dict[str, object] | None:
    """The record of a server running on this workspace (None when none runs, or it said nothing)."""
    return running_record(state_dir, DENSE_FILE)


__all__ = ["DENSE_FILE", "clear", "record", "running_leg"]
