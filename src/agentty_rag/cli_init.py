"""``agentty-rag init CLIENT``: merge agentty-rag into an agent's configuration (or take it out), showing
every change as a diff before anything is written."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentty_rag import client_files, clients
from agentty_rag.config import Settings
from agentty_rag.errors import ClientError, Conflict


def _shown(path: Path, root: Path, home: Path | None) -> str:
    """A path as a user reads it: relative to the workspace, or to ~, else absolute."""
    if root in path.parents:
        return path.relative_to(root).as_posix()
    if home is not None and home in path.parents:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def run_init(args: argparse.Namespace, root: Path, settings: Settings) -> int:
    """Merge agentty-rag into a client's configuration (or take it out), showing every change as a diff."""
    if (args.hook or args.learn) and args.client != "claude-code":
        print(
            "agentty-rag: --hook and --learn are for claude-code (its UserPromptSubmit and PostToolUse hooks)",
            file=sys.stderr,
        )
        return 2
    if args.local and not (args.hook or args.learn or args.uninstall):
        print("agentty-rag: --local puts the hook in .claude/settings.local.json: add --hook", file=sys.stderr)
        return 2
    home = settings.home

    def show(changes: list[client_files.Change]) -> None:
        for change in changes:
            shown = _shown(change.path, root, home)
            print(client_files.diff(change, shown) if change.changed else f"unchanged: {shown}", end="")
            if not change.changed:
                print()

    try:
        if args.uninstall:
            edits = clients.uninstall_edits(args.client, root, home)
        else:
            edits = clients.client_edits(
                args.client,
                root,
                home,
                hook=args.hook,
                learn=args.learn,
                local=args.local,
                instructions=args.instructions,
                build_wait_ms=settings.build_wait_ms,
            )
        changes = client_files.plan(edits, remove=args.uninstall, force=args.force)
    except Conflict as error:
        show(client_files.plan(edits, force=True))
        print(f"agentty-rag: {error} (the diff above); rerun with --force to replace it", file=sys.stderr)
        return 1
    except ClientError as error:
        print(f"agentty-rag: {error}; nothing written", file=sys.stderr)
        return 1
    show(changes)
    touched = [change for change in changes if change.changed]
    if args.dry_run:
        print("(dry run: nothing written)")
        return 0
    client_files.write(changes, root)
    if not touched:
        print(f"{args.client}: nothing to {'remove' if args.uninstall else 'change'}")
        return 0
    done = "removed agentty-rag from" if args.uninstall else "wrote"
    print(f"{done} {', '.join(_shown(c.path, root, home) for c in touched)}")
    if not args.uninstall:
        print(clients.NEXT_STEPS[args.client])
        if args.hook:
            print("the hook stays quiet until you run: agentty-rag proactive on   (or first-turn)")
        if args.learn:
            print(
                "implicit learning: the server runs with AGENTTY_RAG_LEARN=1; "
                "the files the agent opens after a search go to .agentty/rag_feedback.tsv"
            )
    return 0


__all__ = ["run_init"]
