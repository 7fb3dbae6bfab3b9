"""The commands an agent's hooks run: ``agentty-rag inject`` (before a turn) and ``agentty-rag feedback``
(after a tool call).

``inject`` reads the prompt event on stdin, retrieves within ``AGENTTY_RAG_PROACTIVE_TIMEOUT_MS`` and prints
the context block (or nothing); what to inject is ``inject.py``'s to decide. ``feedback`` reads a post-tool
event and, when the file the agent opened was among the last results, records it (``feedback.py``); it
prints nothing. Both exit 0 in every case and say on stderr why they did nothing: a hook must never block
the agent.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agentty_rag.config import Settings
from agentty_rag.errors import StdinError
from agentty_rag.workspace.discovery import EMPTY_ROOT, locate


def _stop_build_workers() -> None:
    """Stop the processes a build started here: they inherited the hook's stdout and stderr, and the agent
    waits for those to close, long after the hook gave up (they would idle there for good)."""
    if "multiprocessing" not in sys.modules:  # no build started one
        return
    import multiprocessing

    for child in multiprocessing.active_children():
        child.kill()


def run_hook(args: argparse.Namespace, settings: Settings) -> int:
    """The hook: exit 0 in every case, print the block or nothing; say on stderr why it stayed quiet."""
    from agentty_rag.cli.inject import (
        OFF,
        PROMPT_MAX_BYTES,
        Injection,
        hook_json,
        mode_of,
        proactive_context,
        read_event,
    )

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
        if mode_of(settings, located / ".agentty")[0] == "off":  # said before the retrieval stack is loaded
            note(OFF)
            return 0
        from agentty_rag.workspace.service import Workspace

        workspace = Workspace(located, settings)
        outcome: list[Any] = []

        def work() -> None:
            try:
                outcome.append(proactive_context(workspace, event))
            except Exception as error:  # reported below; a hook must never block the user's turn
                outcome.append(error)

        # A thread, not a supervised job: the hook is a one-shot process bound by its time limit; a worker that
        # overruns is abandoned with the process (os._exit below), never run again.
        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(settings.proactive_timeout_ms / 1000)
        if worker.is_alive():
            note(
                f"retrieval took longer than AGENTTY_RAG_PROACTIVE_TIMEOUT_MS={settings.proactive_timeout_ms}; "
                "nothing injected"
            )
            sys.stderr.flush()
            _stop_build_workers()
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


def run_feedback(args: argparse.Namespace, settings: Settings) -> int:
    """The post-tool hook: record the opened file when a recent search showed it; exit 0 in every case.

    Only searches run with ``AGENTTY_RAG_LEARN=1`` are remembered, so the switch is the server's: the hook
    itself records whatever they remembered.
    """
    from agentty_rag.state import feedback
    from agentty_rag.workspace.places import Places

    def note(message: str) -> None:
        print(f"agentty-rag feedback: {message}", file=sys.stderr)

    try:
        opened = feedback.opened_file(sys.stdin.buffer.read(feedback.EVENT_MAX_BYTES))
        if isinstance(opened, str):
            note(f"{opened}; nothing recorded")
            return 0
        located = _hook_workspace(args.root, os.path.dirname(opened.path), settings)
        if isinstance(located, str):
            note(f"{located}; nothing recorded")
            return 0
        state_dir = Places(Path(os.path.realpath(located)), settings).state_dir
        now = time.time()
        paths = {opened.path, os.path.realpath(opened.path)}
        searches = feedback.recent(state_dir, now)
        known = feedback.read_rows(state_dir)
        path = next((p for p in sorted(paths) if feedback.showed(searches, p)), None)
        if path is None:
            note(f"{opened.path} was not among the last results; nothing recorded")
            return 0
        rows = feedback.judgments(searches, path, now, known)
        feedback.append_rows(state_dir, rows)
        if not rows:
            note(f"{opened.path} was recorded already for the search that showed it")
    except Exception as error:  # a hook must never block the agent
        note(f"unexpected error ({type(error).__name__}: {error}); nothing recorded")
    return 0


def _hook_workspace(root: Path | None, cwd: str | None, settings: Settings) -> Path | str:
    """The workspace a hook may read and write, or why there is none.

    Only ``--root`` or a project marker (``.git``, ``.agentty/``) at or above the event's folder make one:
    the hook never creates ``.agentty/`` in a folder that merely happened to be the agent's working folder.
    An empty ``--root`` (a hook's ``$CLAUDE_PROJECT_DIR`` that is not set) makes none.
    """
    if root == EMPTY_ROOT:
        return "--root is empty (is $CLAUDE_PROJECT_DIR set?)"
    start = (root or (Path(cwd) if cwd else Path.cwd())).expanduser()
    if not start.is_dir():
        return f"{start} is not a folder"
    located = locate(start, settings.home, root)
    if located.root is None:
        return located.problem
    if not located.marked:
        return f"no project at or above {start} (no .git or .agentty folder); pass --root DIR"
    return located.root


__all__ = ["run_feedback", "run_hook"]
