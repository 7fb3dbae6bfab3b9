"""The arguments of ``agentty-rag``: its commands and their options (the docs pages print its help)."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentty_rag import __version__
from agentty_rag.cli.clients import CLIENTS
from agentty_rag.workspace.discovery import EMPTY_ROOT


def _root(text: str) -> Path:
    """``--root``'s value; an empty one stays empty (``Path("")`` would be the current folder)."""
    return Path(text) if text.strip() else EMPTY_ROOT


def _search_options(command: argparse.ArgumentParser, query_help: str, what: str, scope_help: str) -> None:
    """The query, ``-k`` and ``--scope`` of a search command."""
    command.add_argument("query", nargs="+", help=query_help)
    command.add_argument("-k", type=int, default=8, help=f"{what} to return (1-50, default 8)")
    command.add_argument("--scope", help=scope_help)


def _output_options(command: argparse.ArgumentParser) -> None:
    """How a search command prints its result."""
    command.add_argument("--json", action="store_true", help="print the structured result as JSON")
    command.add_argument("--explain", action="store_true", help="also print each ranking feature's contribution")


def parser() -> argparse.ArgumentParser:
    """The command line's arguments: the commands, each with its options."""
    parser = argparse.ArgumentParser(
        prog="agentty-rag",
        description="Retrieval for coding agents: search a project's docs, skills, memory and code.",
    )
    parser.add_argument("--version", action="version", version=f"agentty-rag {__version__}")
    root_help = "the workspace (default: the nearest folder at or above this one holding .agentty/ or .git)"
    parser.add_argument("--root", type=_root, default=None, metavar="DIR", help=root_help)
    # --root is also accepted after the command (agentty-rag inject --root DIR), as hooks are often written.
    rooted = argparse.ArgumentParser(add_help=False)
    rooted.add_argument("--root", type=_root, default=argparse.SUPPRESS, metavar="DIR", help=root_help)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", parents=[rooted], help="run the MCP server (stdio by default)")
    serve.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio, or streamable HTTP on loopback",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP host (loopback by default)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port")

    docs = commands.add_parser("search-docs", parents=[rooted], help="search docs, skills and memory")
    _search_options(docs, "what you are looking for", "passages", "only this file or folder of the docs")
    docs.add_argument("--sources", help="comma-separated: docs,skills,memory,mcp (default: all)")
    _output_options(docs)

    code = commands.add_parser("search-code", parents=[rooted], help="search source code by meaning")
    _search_options(code, "what the code does", "results", "only this file or folder (relative to the workspace root)")
    code.add_argument("--language", help="only this language (python, typescript, go ...)")
    _output_options(code)

    index = commands.add_parser("index", parents=[rooted], help="bring the indexes up to date now (and embed them)")
    index.add_argument(
        "which", nargs="?", default="all", choices=("docs", "code", "all"), help="which index (default: all)"
    )
    index.add_argument("--rebuild", action="store_true", help="rebuild from scratch instead of updating")
    index.add_argument(
        "--backend",
        choices=("local", "qdrant"),
        help="qdrant: then publish the code index to the shared collection at AGENTTY_QDRANT_URL (what CI runs "
        "on a merge: only files the collection does not hold are sent); default: AGENTTY_RAG_BACKEND",
    )
    index.add_argument(
        "--dry-run", action="store_true", help="list what would be indexed (by folder and language, the largest files)"
    )

    status = commands.add_parser(
        "status", parents=[rooted], help="what each index holds, whether it is fresh, what was skipped"
    )
    status.add_argument("--json", action="store_true", help="print everything as JSON")
    status.add_argument("--verbose", action="store_true", help="also show the index files and their profile")

    inject = commands.add_parser(
        "inject", parents=[rooted], help="print retrieved context for the prompt on stdin (agent hooks)"
    )
    inject.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default), or the JSON a UserPromptSubmit hook reads",
    )

    commands.add_parser(
        "feedback", parents=[rooted], help="record a file the agent opened after a search (a PostToolUse hook)"
    )

    proactive = commands.add_parser(
        "proactive", parents=[rooted], help="show or set proactive injection: on, first-turn, off"
    )
    proactive.add_argument("mode", nargs="?", choices=("on", "first-turn", "off"), help="the new mode")

    init = commands.add_parser(
        "init", parents=[rooted], help="add agentty-rag to an agent's configuration, merged into existing files"
    )
    init.add_argument("client", choices=CLIENTS, help="which agent")
    init.add_argument(
        "--hook",
        action="store_true",
        help="claude-code: also add the UserPromptSubmit hook that runs agentty-rag inject",
    )
    learn_help = "claude-code: also add the PostToolUse hook that runs agentty-rag feedback (AGENTTY_RAG_LEARN)"
    init.add_argument("--learn", action="store_true", help=learn_help)
    init.add_argument(
        "--local", action="store_true", help="claude-code: the hook goes in .claude/settings.local.json (personal)"
    )
    init.add_argument(
        "--instructions",
        action="store_true",
        help="also add a short block telling the agent when to call which tool (AGENTS.md, CLAUDE.md, GEMINI.md)",
    )
    init.add_argument(
        "--uninstall",
        action="store_true",
        help="remove everything init wrote for this client (an entry a user changed stays)",
    )
    init.add_argument(
        "--force", action="store_true", help="replace an agentty-rag entry that differs (with --uninstall: remove it)"
    )
    init.add_argument("--dry-run", action="store_true", help="show the changes as a diff and write nothing")
    return parser


__all__ = ["parser"]
