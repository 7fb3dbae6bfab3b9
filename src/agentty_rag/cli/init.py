"""``agentty-rag init CLIENT``: merge agentty-rag into an agent's configuration (or take it out), showing
every change as a diff before anything is written."""

from __future__ import annotations

import argparse
import errno
import shlex
import sys
from pathlib import Path

from agentty_rag import jsonc
from agentty_rag.cli import client_files, clients
from agentty_rag.config import Settings
from agentty_rag.errors import ClientError, Conflict, Unwritable
from agentty_rag.fsguard import UnsafeFile

# The clients whose documentation says their JSON file may hold comments (VS Code's JSONC, opencode's .jsonc).
JSONC_CLIENTS = frozenset({"vscode", "opencode"})


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

    launch = clients.launcher()
    try:
        edits, notes = _edits(args, root, home, settings, launch)
        changes = client_files.plan(edits, root, remove=args.uninstall, force=args.force)
    except Conflict as error:
        show(client_files.plan(edits, root, force=True))
        print(f"agentty-rag: {error} (the diff above); rerun with --force to replace it", file=sys.stderr)
        return 1
    except ClientError as error:
        print(f"agentty-rag: {error}; nothing written", file=sys.stderr)
        return 1
    show(changes)
    notes += _commented(changes, args.client, root, home) if not args.uninstall else []
    notes += [
        f"kept the agentty-rag entry in {_shown(change.path, root, home)}: it holds changes init did not write "
        f"({what}); `agentty-rag init {args.client} --uninstall --force` removes it"
        for change in changes
        for what in change.kept
    ]
    touched = [change for change in changes if change.changed]
    if not args.uninstall and launch.machine_specific:
        written = ", ".join(_shown(c.path, root, home) for c in changes if c.after is not None)
        notes.append(
            f"{launch.machine_specific}, so {written} now run {shlex.join(launch.argv)}, a path only this machine "
            "has: the entry breaks on any other machine that uses these files. For the portable command "
            "`agentty-rag`, install it on PATH (`uv tool install` or `pipx install`, see the README) and run "
            f"`agentty-rag init {args.client} --force` again"
        )
    if args.dry_run:
        print("(dry run: nothing written)")
        _tell(notes)
        return 0
    try:
        client_files.write(changes, root)
    except Unwritable as error:
        print(f"agentty-rag: {_unwritable(error, root, home)}", file=sys.stderr)
        return 1
    except ClientError as error:  # a folder on the way became a link out after the plan
        print(f"agentty-rag: {error}; nothing more written", file=sys.stderr)
        return 1
    if not touched:
        print(f"{args.client}: nothing to {'remove' if args.uninstall else 'change'}")
    else:
        done = "removed agentty-rag from" if args.uninstall else "wrote"
        print(f"{done} {', '.join(_shown(c.path, root, home) for c in touched)}")
        if not args.uninstall:
            _next_steps(args, settings)
    _tell(notes)
    return 0


def _edits(
    args: argparse.Namespace, root: Path, home: Path | None, settings: Settings, launch: clients.Launcher
) -> tuple[list[clients.Edit], list[str]]:
    """The entries to write (or remove), and what to tell the user about them."""
    if not args.uninstall:
        edits = clients.client_edits(
            args.client,
            root,
            home,
            hook=args.hook,
            learn=args.learn,
            local=args.local,
            instructions=args.instructions,
            build_wait_ms=settings.build_wait_ms,
            argv=launch.argv,
        )
        return edits, []
    edits = clients.uninstall_edits(args.client, root, home, settings.build_wait_ms)
    readers = client_files.still_reading_instructions(args.client, root, home)
    if not readers:
        return edits, []
    shared = clients.instruction_file(args.client)
    note = (
        f"kept the agentty-rag block in {shared}: {', '.join(readers)} still run(s) agentty-rag here and read it "
        f"(`agentty-rag init {readers[0]} --uninstall` removes it with the last one)"
    )
    return [edit for edit in edits if edit.kind != "text-block"], [note]


def _commented(changes: list[client_files.Change], client: str, root: Path, home: Path | None) -> list[str]:
    """A note for each JSON file with comments or trailing commas that its client is not known to accept."""
    notes = []
    for change in changes:
        before = change.before or ""
        if change.path.suffix != ".json" or client in JSONC_CLIENTS or not before.strip() or jsonc.is_plain(before):
            continue
        notes.append(
            f"{_shown(change.path, root, home)} holds comments or trailing commas (JSON with comments): init kept "
            "them and changed only its own entry, but a client that reads plain JSON may refuse the file"
        )
    return notes


def _unwritable(error: Unwritable, root: Path, home: Path | None) -> str:
    """One line: the file the system refused, why, what to do, and what was written before it."""
    shown = _shown(error.path, root, home)
    if isinstance(error.reason, UnsafeFile):
        remedy = "remove the link and run init again"
    elif error.reason.errno in (errno.EPERM, errno.EACCES, errno.EROFS):
        remedy = f"make it writable (its permissions; `chattr -i {shown}` if it is immutable) and run init again"
    else:
        remedy = "fix the cause (room on the disk, a size limit) and run init again"
    done = f"wrote only {', '.join(_shown(p, root, home) for p in error.written)}" if error.written else ""
    return (
        f"cannot {error.verb} {shown} ({error.reason.strerror or error.reason}): {remedy}, or make the change shown "
        f"above yourself; {done or 'nothing written'}"
    )


# The one-line way to hybrid search, offered while no embedding backend is configured.
HYBRID_STEP = (
    "optional, to search by meaning too (hybrid), with no server: pip install 'agentty-rag[local]' and set "
    "AGENTTY_EMBED_BACKEND=local in the server's environment (docs/dense.md says what it costs)"
)


def _next_steps(args: argparse.Namespace, settings: Settings) -> None:
    print(clients.NEXT_STEPS[args.client])
    if settings.dense and not settings.dense_configured:
        print(HYBRID_STEP)
    if args.hook:
        print("the hook stays quiet until you run: agentty-rag proactive on   (or first-turn)")
    if args.learn:
        print(
            "implicit learning: the server runs with AGENTTY_RAG_LEARN=1; "
            "the files the agent opens after a search go to .agentty/rag_feedback.tsv"
        )


def _tell(notes: list[str]) -> None:
    for note in notes:
        print(f"agentty-rag: note: {note}", file=sys.stderr)


__all__ = ["run_init"]
