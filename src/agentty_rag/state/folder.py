"""The workspace's ``.agentty/`` folder: machine state that stays out of git, beside what a team commits.

Every writer under ``.agentty/`` creates the folder with ``make``: never through a link out of the workspace
(``fsguard.check_state_dir``), and with a ``.gitignore`` of its own, so the machine state (the indexes, their
manifests and locks, graphs, leg-check verdicts, the proactive mode, sessions, feedback) never shows in
``git status``, whatever the repository's own ``.gitignore`` says. What a user writes stays committable: the
``ignore`` rules, ``knowledge/`` (docs), ``skills/`` and ``memory/``. The ``.gitignore`` ignores itself too,
as pytest's and mypy's cache folders do: it is written again wherever it is missing.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from agentty_rag.fsguard import UnsafeFile, check_state_dir, read_regular, write_private
from agentty_rag.source_kinds import state_folders
from agentty_rag.status.types import StateFolder

GITIGNORE = ".gitignore"
# What a user writes under .agentty/: the only entries its .gitignore lets git see (the ignore rules, and the
# folders of the source kinds that have one).
COMMITTED = ("ignore", *(f"{folder}/" for folder in state_folders()))
RULES = (
    "# Written by agentty-rag: everything here is machine state (indexes, locks, verdicts, settings),\n"
    f"# rebuilt on demand, except what a team commits: {', '.join(COMMITTED[:-1])} and {COMMITTED[-1]}.\n"
    "/*\n" + "".join(f"!/{name}\n" for name in COMMITTED)
)


def make(state_dir: Path) -> None:
    """Create ``state_dir`` (when missing) with its ``.gitignore``.

    Raises:
        UnsafeFile: ``state_dir`` is a link out of the folder holding it, or not a folder.
        OSError: it cannot be created (a read-only workspace).
    """
    check_state_dir(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    ensure_gitignore(state_dir)


def ensure_gitignore(state_dir: Path) -> None:
    """Write the folder's ``.gitignore`` when it has none; a user's own file (or a link) is left as it is."""
    path = state_dir / GITIGNORE
    if os.path.lexists(path):
        return
    with contextlib.suppress(OSError):  # read-only: the index says so itself; git status is not worth a failure
        write_private(path, RULES.encode("utf-8"))


def describe(state_dir: Path) -> StateFolder:
    """``state_dir`` as ``status`` reports it (reading only)."""
    if not state_dir.is_dir():
        return StateFolder()
    try:
        text = read_regular(str(state_dir / GITIGNORE), "", len(RULES) + 4096).decode("utf-8", errors="replace")
        gitignore = "ours" if text == RULES else "edited"
    except FileNotFoundError:
        gitignore = "missing"
    except (OSError, UnsafeFile):
        gitignore = "edited"
    present = tuple(name for name in COMMITTED if (state_dir / name.rstrip("/")).exists())
    return StateFolder(True, gitignore, present)


__all__ = ["COMMITTED", "GITIGNORE", "RULES", "describe", "ensure_gitignore", "make"]
