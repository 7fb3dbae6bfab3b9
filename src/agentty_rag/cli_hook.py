"""``agentty-rag inject``: the command an agent's prompt hook runs.

It reads the prompt event on stdin, retrieves within ``AGENTTY_RAG_PROACTIVE_TIMEOUT_MS`` and prints the
context block (or nothing). It exits 0 in every case and says on stderr why it stayed quiet: a hook must
never block the user's turn. What to inject is ``inject.py``'s to decide.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import Any

from agentty_rag.config import Settings
from agentty_rag.discovery import locate
from agentty_rag.errors import StdinError


def run_hook(args: argparse.Namespace, settings: Settings) -> int:
    """The hook: exit 0 in every case, print the block or nothing; say on stderr why it stayed quiet."""
    from agentty_rag.inject import PROMPT_MAX_BYTES, Injection, hook_json, proactive_context, read_event
    from agentty_rag.service import Workspace

    def note(message: str) -> None:
        print(f"agentty-rag inject: {message}", file=sys.stderr)

    try:
        data = sys.stdin.buffer.read(PROMPT_MAX_BYTES + 1)
        try:
            event = read_event(data)
        except StdinError as error:
            note(f"{error}; nothing injected")
            return 0
        located = _hook_workspace(args.root, event.cwd, settings)
        if isinstance(located, str):
            note(f"{located}; nothing injected")
            return 0
        workspace = Workspace(located, settings)
        outcome: list[Any] = []

        def work() -> None:
            try:
                outcome.append(proactive_context(workspace, event))
            except Exception as error:  # reported below; a hook must never block the user's turn
                outcome.append(error)

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(settings.proactive_timeout_ms / 1000)
        if worker.is_alive():
            note(
                f"retrieval took longer than AGENTTY_RAG_PROACTIVE_TIMEOUT_MS={settings.proactive_timeout_ms}; "
                "nothing injected"
            )
            sys.stderr.flush()
            os._exit(0)  # the worker may be mid-update: its transaction rolls back, the index stays valid
        injection = outcome[0] if outcome else None
        if not isinstance(injection, Injection):
            note(f"retrieval failed ({type(injection).__name__}: {injection}); nothing injected")
            return 0
        if injection.block is None:
            note(injection.reason)
        else:
            print(hook_json(injection.block) if args.format == "json" else injection.block)
        workspace.close()
    except Exception as error:  # a hook must never block the user's turn
        note(f"unexpected error ({type(error).__name__}: {error}); nothing injected")
    return 0


def _hook_workspace(root: Path | None, cwd: str | None, settings: Settings) -> Path | str:
    """The workspace a hook may read and write, or why there is none.

    Only ``--root`` or a project marker (``.git``, ``.agentty/``) at or above the event's folder make one:
    the hook never creates ``.agentty/`` in a folder that merely happened to be the agent's working folder.
    """
    start = (root or (Path(cwd) if cwd else Path.cwd())).expanduser()
    if not start.is_dir():
        return f"{start} is not a folder"
    located = locate(start, settings.home, root)
    if located.root is None:
        return located.problem
    if not located.marked:
        return f"no project at or above {start} (no .git or .agentty folder); pass --root DIR"
    return located.root


__all__ = ["run_hook"]
