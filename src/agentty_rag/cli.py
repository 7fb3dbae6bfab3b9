"""``agentty-rag``: serve the MCP tools, search from the terminal, build and inspect the indexes.

Only ``serve`` imports the MCP SDK: searching and indexing from the terminal stay quick to start.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.config import Settings, load_settings
from agentty_rag.errors import AgenttyError, BadRequest

log = logging.getLogger("agentty_rag")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentty-rag",
        description="Retrieval for coding agents: search a project's docs, skills, memory and code.",
    )
    parser.add_argument("--version", action="version", version=f"agentty-rag {__version__}")
    parser.add_argument("--root", type=Path, default=None, help="workspace root (default: the current directory)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the MCP server (stdio by default)")
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio, or streamable HTTP on loopback",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP host (loopback by default)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port")

    docs = commands.add_parser("search-docs", help="search docs, skills and memory")
    docs.add_argument("query", nargs="+", help="what you are looking for")
    docs.add_argument("-k", type=int, default=8, help="passages to return (1-50, default 8)")
    docs.add_argument("--scope", help="only this file or folder of the docs")
    docs.add_argument("--sources", help="comma-separated: docs,skills,memory (default: all)")
    docs.add_argument("--json", action="store_true", help="print the structured result as JSON")
    docs.add_argument("--explain", action="store_true", help="also print each ranking feature's contribution")

    code = commands.add_parser("search-code", help="search source code by meaning")
    code.add_argument("query", nargs="+", help="what the code does")
    code.add_argument("-k", type=int, default=8, help="results to return (1-50, default 8)")
    code.add_argument("--scope", help="only this file or folder (relative to the workspace root)")
    code.add_argument("--language", help="only this language (python, typescript, go ...)")
    code.add_argument("--json", action="store_true", help="print the structured result as JSON")
    code.add_argument("--explain", action="store_true", help="also print each ranking feature's contribution")

    index = commands.add_parser("index", help="bring an index up to date now")
    index.add_argument("which", choices=("docs", "code", "all"), help="which index")
    index.add_argument("--rebuild", action="store_true", help="rebuild from scratch instead of updating")

    status = commands.add_parser("status", help="what each index holds, whether it is fresh, what was skipped")
    status.add_argument("--json", action="store_true", help="print as JSON")

    inject = commands.add_parser("inject", help="print retrieved context for the prompt on stdin (agent hooks)")
    inject.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default), or the JSON a UserPromptSubmit hook reads",
    )

    proactive = commands.add_parser("proactive", help="show or set proactive injection: on, first-turn, off")
    proactive.add_argument("mode", nargs="?", choices=("on", "first-turn", "off"), help="the new mode")

    init = commands.add_parser("init", help="write an agent's project configuration for agentty-rag")
    init.add_argument("client", choices=CLIENTS, help="which agent")
    init.add_argument(
        "--hook",
        action="store_true",
        help="claude-code: also add the UserPromptSubmit hook that runs agentty-rag inject",
    )
    init.add_argument("--force", action="store_true", help="overwrite files that exist")
    init.add_argument("--dry-run", action="store_true", help="only show what would be written")
    return parser


def _setup_logging(settings: Settings) -> None:
    logging.basicConfig(stream=sys.stderr, level=settings.log_level.upper(), format="agentty-rag: %(message)s")
    for warning in settings.warnings:
        log.warning("%s", warning)


class _ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int, _item: str) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def _status_text(status: dict[str, object]) -> str:
    lines = [f"{status['index']} index: {status['path']}"]
    lines.append(
        f"  files {status['files']}, chunks {status['chunks']}, updated {status['updated_at']}, "
        f"generation {status['generation']}"
    )
    fresh = "fresh" if status["fresh"] else f"stale ({status['stale_reason']})"
    lines.append(f"  {fresh}")
    if status.get("storage", "disk") != "disk":
        lines.append(f"  kept in {status['storage']}")
    redacted = status.get("redacted")
    if isinstance(redacted, dict) and redacted["secrets"]:
        lines.append(
            f"  secrets redacted: {redacted['secrets']} in {redacted['files']} files "
            f"({', '.join(redacted['examples'][:5])})"
        )
    manifest = status["manifest"]
    assert isinstance(manifest, dict)
    lines.append(
        f"  tokenizer v{manifest['tokenizer_version']}, chunking {json.dumps(manifest['chunking'])}, "
        f"schema {manifest['schema_version']}"
    )
    for name, root in sorted(dict(manifest.get("roots", {})).items()):
        lines.append(f"  {name}: {root}")
    dense = status.get("dense")
    if isinstance(dense, dict):
        line = f"  dense: {dense['description']}"
        if dense["state"] == "ready":
            line += f"; {dense['embedded']} of {dense['chunks']} chunks embedded"
        lines.append(line)
    skipped = status["skipped"]
    assert isinstance(skipped, dict)
    counts, examples = skipped.get("counts", {}), skipped.get("examples", {})
    if counts:
        lines.append("  skipped: " + ", ".join(f"{n} {reason}" for reason, n in counts.items()))
        for reason, paths in examples.items():
            shown = list(paths)[:5]
            more = counts.get(reason, 0) - len(shown)
            lines.append(f"    {reason}: {', '.join(shown)}" + (f" (+{more} more)" if more > 0 else ""))
    else:
        lines.append("  skipped: nothing")
    return "\n".join(lines)


def _inject(args: argparse.Namespace, settings: Settings) -> int:
    """The hook: exit 0 in every case, print the block or nothing; say on stderr why it stayed quiet."""
    from agentty_rag.inject import (
        PROMPT_MAX_BYTES,
        Injection,
        StdinError,
        hook_json,
        proactive_context,
        read_event,
    )
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
        root = (args.root or (Path(event.cwd) if event.cwd else Path.cwd())).expanduser()
        if not root.is_dir():
            note(f"{root} is not a folder; nothing injected")
            return 0
        workspace = Workspace(root, settings)
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


def _proactive(workspace: Any, mode: str | None) -> int:
    from agentty_rag.inject import effective_mode
    from agentty_rag.state import read_mode, write_mode

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


CLIENTS = ("claude-code", "cursor", "codex")


def client_files(client: str, hook: bool, command: str) -> dict[str, str]:
    """The project files that register agentty-rag with a client (path relative to the workspace -> text)."""
    server = {"command": command, "args": ["serve"]}
    if client == "codex":
        return {".codex/config.toml": f'[mcp_servers.agentty-rag]\ncommand = "{command}"\nargs = ["serve"]\n'}
    path = ".cursor/mcp.json" if client == "cursor" else ".mcp.json"
    files = {path: json.dumps({"mcpServers": {"agentty-rag": server}}, indent=2) + "\n"}
    if client == "claude-code" and hook:
        settings = {
            "hooks": {
                "UserPromptSubmit": [
                    {"hooks": [{"type": "command", "command": f"{command} inject --format json", "timeout": 10}]}
                ]
            }
        }
        files[".claude/settings.json"] = json.dumps(settings, indent=2) + "\n"
    return files


def _init(root: Path, client: str, hook: bool, force: bool, dry_run: bool) -> int:
    import shutil

    command = "agentty-rag" if shutil.which("agentty-rag") else str(Path(sys.argv[0]).resolve())
    files = client_files(client, hook, command)
    existing = [path for path in files if (root / path).exists()]
    for path, text in files.items():
        print(f"--- {root / path}{' (exists)' if path in existing else ''}")
        print(text, end="")
    if dry_run:
        print("(dry run: nothing written)")
        return 0
    if existing and not force:
        print(
            f"agentty-rag: {', '.join(existing)} already exist; merge the lines above by hand, or rerun with "
            "--force to overwrite",
            file=sys.stderr,
        )
        return 1
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    print(f"wrote {', '.join(files)}")
    if hook:
        print("the hook stays quiet until you run: agentty-rag proactive on   (or first-turn)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``agentty-rag`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    settings = load_settings()
    _setup_logging(settings)
    if args.command is None:
        _parser().print_help(sys.stderr)
        return 2
    if args.command == "inject":
        return _inject(args, settings)
    root = (args.root or Path.cwd()).expanduser()
    if not root.is_dir():
        print(f"agentty-rag: --root {root} is not a folder", file=sys.stderr)
        return 2
    from agentty_rag.service import Workspace

    workspace = Workspace(root, settings)
    try:
        if args.command == "serve":
            from agentty_rag.server import serve

            serve(workspace, args.transport, args.host, args.port)
            return 0
        if args.command in ("search-docs", "search-code"):
            query = " ".join(args.query)
            if args.command == "search-docs":
                sources = [s for s in args.sources.split(",") if s.strip()] if args.sources else None
                outcome = workspace.search_docs(query, args.k, args.scope, sources, wait_s=3600)
            else:
                outcome = workspace.search_code(query, args.k, args.scope, args.language, wait_s=3600)
            print(json.dumps(outcome.structured, indent=2, ensure_ascii=False) if args.json else outcome.text)
            if args.explain:
                from agentty_rag.render import render_explanation

                print("\n" + render_explanation(outcome.explanations))
            return 0
        if args.command == "index":
            for name in ("docs", "code") if args.which == "all" else (args.which,):
                index = workspace.index(name)
                bar = _ProgressBar(f"indexing {name}")
                index.progress = bar
                report = index.refresh(force_rebuild=args.rebuild)
                bar.close()
                what = "rebuilt" if report.rebuilt else "updated" if report.changed_anything else "already fresh"
                print(
                    f"{name}: {what} — {index.n_files} files, {index.n_chunks} chunks "
                    f"({report.added} added, {report.changed} changed, {report.removed} removed, "
                    f"{report.rechunked_files} re-chunked) in {report.seconds:.2f} s"
                )
                if workspace.dense.ensure().state == "ready":
                    bar = _ProgressBar(f"embedding {name}")
                    started = time.monotonic()
                    embedded = workspace.embed_all(name, bar)
                    bar.close()
                    have, live = index.vector_coverage()
                    print(
                        f"{name}: embedded {embedded} chunks in {time.monotonic() - started:.2f} s — "
                        f"{have} of {live} have vectors ({workspace.dense.describe()})"
                    )
                else:
                    print(f"{name}: dense leg {workspace.dense.describe()}")
            return 0
        if args.command == "proactive":
            return _proactive(workspace, args.mode)
        if args.command == "init":
            return _init(workspace.root, args.client, args.hook, args.force, args.dry_run)
        if args.command == "status":
            statuses = [
                {**workspace.index(name).status(), "dense": workspace.dense_status(name)} for name in ("docs", "code")
            ]
            if args.json:
                print(json.dumps(statuses, indent=2))
            else:
                print("\n".join(_status_text(s) for s in statuses))
            return 0
    except BadRequest as error:
        print(f"agentty-rag: {error}", file=sys.stderr)
        return 2
    except AgenttyError as error:
        print(f"agentty-rag: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        workspace.close()
    return 2


if __name__ == "__main__":
    sys.exit(main())
