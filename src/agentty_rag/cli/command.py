"""``agentty-rag``: serve the MCP tools, search from the terminal, build and inspect the indexes.

Only ``serve`` imports the MCP SDK: searching and indexing from the terminal stay quick to start.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from agentty_rag.cli.hook import run_feedback, run_hook
from agentty_rag.cli.parser import parser as _parser
from agentty_rag.config import Settings, load_settings
from agentty_rag.errors import AgenttyError, BadRequest
from agentty_rag.workspace.discovery import EMPTY_ROOT, Located, locate

log = logging.getLogger("agentty_rag")


def _setup_logging(settings: Settings) -> None:
    logging.basicConfig(stream=sys.stderr, level=settings.log_level.upper(), format="agentty-rag: %(message)s")
    for warning in settings.warnings:
        log.warning("%s", warning)


_BAR = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_noinv_fmt}]"
_COUNTER = "{desc}: {n_fmt} [{elapsed}, {rate_noinv_fmt}]"


class _Progress:
    """Progress on stderr while an index is built: the phase (scanning, parsing, writing, embedding), how far,
    the rate and the time left. Drawn only on a terminal."""

    UNITS = {"parsing": "file", "embedding": "chunk"}

    def __init__(self, name: str) -> None:
        self.name = name
        self.phase = ""
        self.bar: Any = None
        self.start = 0  # where the phase's count began (embedding resumes from the chunks already embedded)

    def __call__(self, done: int, total: int, phase: str) -> None:
        from tqdm import tqdm

        if phase != self.phase:
            self.close()
            self.phase = phase
            unit = self.UNITS.get(phase, "file")
            self.bar = tqdm(
                total=total or None,
                desc=f"{self.name}: {phase}",
                unit=f" {unit}s",
                file=sys.stderr,
                disable=None,  # off when stderr is not a terminal
                leave=False,
                dynamic_ncols=True,
                # The rate as files (chunks) a second even when slow, never "1.48s/ files"; the time left from
                # the phase's average rate, shown after its first second (a first batch's wait is no estimate).
                bar_format=_BAR if total else _COUNTER,
                smoothing=0,
                delay=1.0,
            )
            self.start = done if phase == "embedding" else 0
        if self.bar is not None:
            if phase == "embedding":
                self.bar.total = max(total - self.start, 0)
                done -= self.start
            self.bar.update(max(done - self.bar.n, 0))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _index(workspace: Any, which: str, rebuild: bool, dry_run: bool, publish: bool = False) -> int:
    """Bring the indexes up to date (or, with --dry-run, show what they would read), then embed; with
    ``publish``, write the code index to the shared collection."""
    from agentty_rag.render import counted
    from agentty_rag.status.report import preview
    from agentty_rag.workspace.places import nothing_indexed

    names = ("docs", "code") if which == "all" else (which,)
    workspace.dense.patient = True  # a batch: an embedding server still loading its model is waited for
    if dry_run:
        print(preview(workspace, names))
        print("(dry run: nothing indexed)")
        return 0
    for name in names:
        index = workspace.index(name)
        progress = _Progress(name)
        try:
            report = index.refresh(force_rebuild=rebuild, progress=progress)
        finally:
            progress.close()
        what = "rebuilt" if report.rebuilt else "updated" if report.changed_anything else "already fresh"
        if name == "docs" and index.n_files == 0:
            print(f"docs: {nothing_indexed('docs', workspace.places)}")
            continue
        print(
            f"{name}: {what} — {counted(index.n_files, 'file')}, {counted(index.n_chunks, 'chunk')} "
            f"({report.added} added, {report.changed} changed, {report.removed} removed, "
            f"{report.rechunked_files} re-chunked) in {report.seconds:.2f} s"
        )
        skipped = index.skipped()
        if skipped.total:
            print(f"{name}: {skipped.summary()} — `agentty-rag status` lists them")
        for line in index.coverage():  # code covers 4,000 of 9,210 files: the file cap … left out …
            print(line)
        if workspace.dense.ensure().state == "ready":
            progress = _Progress(name)
            started = time.monotonic()
            try:
                embedded = workspace.embed_all(name, progress)
            finally:
                progress.close()
            have, live = index.vector_coverage()
            print(
                f"{name}: embedded {embedded} chunks in {time.monotonic() - started:.2f} s — "
                f"{have} of {live} have vectors ({workspace.dense.describe()})"
            )
            if name == "code":
                print(f"{name}: leg check: {workspace.dense_status(name)['leg_check']}")
    if workspace.dense.status.state != "ready":
        print(f"dense: {workspace.dense.describe()}")
    if publish and "code" in names:
        _publish(workspace)
    return 0


def _publish(workspace: Any) -> None:
    """Publish the code index to its shared collection, and say what was sent."""
    from agentty_rag.index.qdrant.shared import Provenance
    from agentty_rag.workspace.repository import current_branch, current_commit, publish_problem, repository_name

    root, settings = workspace.root, workspace.settings
    problem = publish_problem(root, settings.qdrant_branch, settings.qdrant_collection is not None)
    if problem:
        raise BadRequest(f"not published: {problem}")
    branch = current_branch(root) or settings.qdrant_branch
    provenance = Provenance(current_commit(root), branch, repository_name(root))
    report = workspace.index("code").publish(provenance)
    how = f"made anew ({report.recreated})" if report.recreated else "patched"
    print(
        f"code: published to the Qdrant collection {report.collection}, {how} — {report.sent} files sent "
        f"({report.chunks} chunks, {report.vectors} with a dense vector), {report.unchanged} unchanged, "
        f"{report.removed} removed, commit {provenance.commit[:12] or 'unknown'}, in {report.seconds:.2f} s"
    )


def _proactive(workspace: Any, mode: str | None) -> int:
    from agentty_rag.cli.inject import effective_mode
    from agentty_rag.state.proactive import read_mode, write_mode

    if mode is not None:
        try:
            write_mode(workspace.state_dir, mode)
        except OSError as error:  # a link out, a read-only folder: said in one line, nothing written
            print(f"agentty-rag: the proactive mode could not be saved: {error}", file=sys.stderr)
            return 1
        print(f"proactive injection: {mode} (saved in {workspace.state_dir / 'settings.json'})")
    saved, problem = read_mode(workspace.state_dir)
    if problem:
        print(f"agentty-rag: {problem}", file=sys.stderr)
    current, _ = effective_mode(workspace)
    if mode is None:
        print(f"proactive injection: {current}")
    if workspace.settings.proactive is not None and current != saved:
        print(f"(AGENTTY_RAG_PROACTIVE={int(workspace.settings.proactive)} overrides the saved mode {saved})")
    return 0


# What ``serve`` says when a person starts it in a terminal: it still serves, but nobody there speaks MCP.
ON_A_TERMINAL = (
    "agentty-rag serve: an MCP server speaks JSON-RPC on stdin/stdout, so an MCP client starts it "
    "(`agentty-rag init claude-code|codex|cursor|vscode|...` adds it to one); serving anyway, Ctrl-C stops it"
)


def _on_a_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (OSError, ValueError):  # a closed stdin
        return False


def _serve(args: argparse.Namespace, located: Located, settings: Settings) -> int:
    """Run the MCP server; with no usable start folder it still runs, and waits for the client's roots."""
    from agentty_rag.server import port_problem, serve

    if located.root is None:
        if located.how == "--root":
            print(f"agentty-rag: {located.problem}", file=sys.stderr)
            return 2
        log.warning("%s; serving anyway, for a client that sends MCP roots", located.problem)
    elif located.found_elsewhere:
        log.info("workspace %s (%s above %s)", located.root, located.how, located.start)
    if args.transport == "stdio" and _on_a_terminal(sys.stdin):
        print(ON_A_TERMINAL, file=sys.stderr, flush=True)
    if args.transport == "http":
        problem = port_problem(args.host, args.port)
        if problem:
            print(f"agentty-rag: {problem}", file=sys.stderr)
            return 1
    try:
        serve(located, settings, args.transport, args.host, args.port)
    except BadRequest as error:  # a non-loopback bind without a bearer token
        print(f"agentty-rag: {error}", file=sys.stderr)
        return 2
    return 0


def _search(args: argparse.Namespace, workspace: Any) -> int:
    from agentty_rag.workspace.request import code_request, docs_request

    query = " ".join(args.query)
    if args.command == "search-docs":
        sources = [s for s in args.sources.split(",") if s.strip()] if args.sources else None
        request = docs_request(workspace.places, query, args.k, args.scope, sources, wait_s=3600)
    else:
        request = code_request(workspace.places, query, args.k, args.scope, args.language, wait_s=3600)
    outcome = workspace.search(request)
    print(json.dumps(outcome.structured, indent=2, ensure_ascii=False) if args.json else outcome.text)
    if args.explain:
        from agentty_rag.render import render_explanation

        print("\n" + render_explanation(outcome.explanations, found_by=outcome.found_by, legs=outcome.legs))
    return 0


def _status(args: argparse.Namespace, workspace: Any, located: Located) -> int:
    from agentty_rag.render import render_status, status_json
    from agentty_rag.status.report import gather

    report = gather(workspace, located)
    print(json.dumps(status_json(report), indent=2) if args.json else render_status(report, args.verbose))
    return 0


def _run(args: argparse.Namespace, workspace: Any, located: Located, settings: Settings) -> int:
    """A command that works on the workspace's indexes or settings; returns the exit status."""
    if args.command in ("search-docs", "search-code"):
        return _search(args, workspace)
    if args.command == "index":
        return _index(workspace, args.which, args.rebuild, args.dry_run, args.backend == "qdrant")
    if args.command == "proactive":
        return _proactive(workspace, args.mode)
    if args.command == "init":
        from agentty_rag.cli.init import run_init

        return run_init(args, workspace.root, settings)
    if args.command == "status":
        return _status(args, workspace, located)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``agentty-rag`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    settings = load_settings()
    _setup_logging(settings)
    if args.command is None:
        _parser().print_help(sys.stderr)
        return 2
    if args.command in ("inject", "feedback"):
        return (run_hook if args.command == "inject" else run_feedback)(args, settings)
    if args.root == EMPTY_ROOT:
        print("agentty-rag: --root is empty; give the project folder", file=sys.stderr)
        return 2
    if args.root is not None and not args.root.expanduser().is_dir():
        print(f"agentty-rag: --root {args.root} is not a folder", file=sys.stderr)
        return 2
    located = locate(Path.cwd(), settings.home, args.root)
    if args.command == "serve":
        return _serve(args, located, settings)
    if located.root is None:
        print(f"agentty-rag: {located.problem}", file=sys.stderr)
        return 2
    from agentty_rag.workspace.service import Workspace

    if args.command == "index" and args.backend is not None:
        settings = dataclasses.replace(settings, backend=args.backend)
    workspace = Workspace(located.root, settings, start=located.start)
    try:
        return _run(args, workspace, located, settings)
    except BadRequest as error:
        print(f"agentty-rag: {error}", file=sys.stderr)
        return 2
    except AgenttyError as error:
        print(f"agentty-rag: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        workspace.close()


if __name__ == "__main__":
    sys.exit(main())
