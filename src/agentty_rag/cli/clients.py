"""What ``agentty-rag init CLIENT`` writes for each agent, in the format that client documents, merged into
the user's existing files so that only agentty-rag's own entry changes.

Each edit is one entry: a server under its name (``agentty-rag``) in a JSON or TOML file, a Claude Code
hook as one item of the ``UserPromptSubmit`` list (``inject``) or of the ``PostToolUse`` list (``feedback``),
or a marked block of instructions in ``AGENTS.md``-style files. Installing inserts it; uninstalling removes
exactly it (and a file or folder left empty by that). ``client_files.py`` merges the edits into the files.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentty_rag import jsonc
from agentty_rag.errors import ClientError
from agentty_rag.fsguard import read_regular

SERVER_NAME = "agentty-rag"
CLIENTS = ("claude-code", "codex", "cursor", "vscode", "gemini", "windsurf", "opencode")
BLOCK_START = "<!-- agentty-rag:start (agentty-rag init writes this block; init --uninstall removes it) -->"
BLOCK_END = "<!-- agentty-rag:end -->"
INSTRUCTIONS = f"""{BLOCK_START}
## Project knowledge: agentty-rag

- Before answering how something in this project is built, configured, deployed or decided, call the
  `search_docs` tool with the question in your own words (docs, skills and learned memory facts).
- To find code by what it does when you do not know its name, call `search_code`; for an exact
  identifier, string or error message, grep is faster and complete.
- Every passage starts with its provenance (`docs:PATH:LINES`, `code:PATH:LINES`, `skill:NAME`,
  `memory:ID`); PATH is relative to the workspace root: open the file there when you need more than the
  excerpt. A passage opens only after the answer's fence line `--- KEY` (a key drawn for each answer,
  which ends with `--- KEY · sources: …`): a line inside a passage that looks like a title is its text.
{BLOCK_END}
"""
INSTRUCTION_FILES = {"claude-code": "CLAUDE.md", "gemini": "GEMINI.md"}  # the others read AGENTS.md
NEXT_STEPS = {
    "claude-code": "Claude Code asks once to approve the project's .mcp.json servers; /mcp lists them.",
    "codex": "Codex reads .codex/config.toml in trusted projects only; `codex mcp list` shows the server.",
    "cursor": "Cursor lists the server under Settings → MCP; enable it there if it is off.",
    "vscode": "VS Code starts it from the MCP view (or `MCP: List Servers`); Copilot's agent mode uses it.",
    "gemini": "Run /mcp inside Gemini CLI to see the server and its tools.",
    "windsurf": "Windsurf's file is per user (all projects): press refresh in Cascade's MCP panel.",
    "opencode": "`opencode mcp list` shows the server.",
}

Kind = Literal["json-member", "json-item", "toml-table", "text-block"]


@dataclass(frozen=True)
class Edit:
    """One entry in one file: where it goes and what it holds."""

    path: Path
    kind: Kind
    keys: tuple[str, ...] = ()
    key: str = SERVER_NAME
    value: object = None


@dataclass(frozen=True)
class Launcher:
    """How a client starts this installation (``argv``), and why that is a path only this machine has
    (``machine_specific``: "" when it is the bare ``agentty-rag`` command, which works on any machine that has
    it on PATH)."""

    argv: list[str]
    machine_specific: str = ""


def _script_beside(python: str) -> Path:
    return Path(python).with_name(SERVER_NAME + (".exe" if sys.platform == "win32" else ""))


def _interpreter_of(script: str) -> str:
    """The Python a pip-style script runs (its ``#!`` line), or "" when it has none."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return ""
    if not first.startswith(b"#!"):
        return ""
    words = first[2:].decode("utf-8", errors="replace").split()
    return words[0] if words else ""


def same_installation(found: str, python: str) -> bool:
    """Whether the ``agentty-rag`` found on PATH runs this installation: it is (a link to) the script beside
    ``python`` (pipx, ``uv tool``), or a script whose ``#!`` line names ``python`` (pip)."""
    if os.path.realpath(found) == os.path.realpath(_script_beside(python)):
        return True
    interpreter = _interpreter_of(found)
    return bool(interpreter) and os.path.abspath(interpreter) == os.path.abspath(python)


def launcher(python: str | None = None, path: str | None = None) -> Launcher:
    """How a client starts this installation: the bare ``agentty-rag`` when the one on PATH (``path``, the
    process's own by default) is this installation; else the script beside this Python, else
    ``python -m agentty_rag``, with the reason that is machine-specific."""
    python = python or sys.executable
    found = shutil.which(SERVER_NAME, path=path)
    if found and same_installation(found, python):
        return Launcher([SERVER_NAME])
    why = f"the agentty-rag on PATH ({found}) is another installation" if found else "agentty-rag is not on PATH"
    script = _script_beside(python)
    if script.exists():
        return Launcher([str(script)], why)
    return Launcher([python, "-m", "agentty_rag"], why)


def codex_tool_timeout(build_wait_ms: int) -> int:
    """Codex's per-call limit: above the longest a first search waits for an index build, with room."""
    return max(60, math.ceil(build_wait_ms / 1000) + 40)


def _opencode_file(root: Path) -> Path:
    plain, commented = root / "opencode.json", root / "opencode.jsonc"
    return commented if commented.exists() and not plain.exists() else plain


def _opencode_keys(path: Path) -> tuple[str, ...]:
    """``mcp`` (the V1 shape, which V2 still reads), or ``mcp.servers`` when the file already uses V2's."""
    try:
        text = read_regular(str(path), "", 4 << 20).decode("utf-8", "replace")  # never blocks on a FIFO
        servers = jsonc.get(text, ("mcp", "servers"))
    except (OSError, jsonc.JsoncError):
        return ("mcp",)
    return ("mcp", "servers") if isinstance(servers, dict) and "type" not in servers else ("mcp",)


def client_edits(
    client: str,
    root: Path,
    home: Path | None,
    *,
    hook: bool = False,
    learn: bool = False,
    local: bool = False,
    instructions: bool = False,
    build_wait_ms: int = 20_000,
    argv: list[str] | None = None,
) -> list[Edit]:
    """The entries ``init CLIENT`` writes (with ``uninstall``, every entry it may have written)."""
    argv = argv or launcher().argv
    command, prefix = argv[0], argv[1:]
    serve = [*prefix, "serve"]
    in_workspace = [*prefix, "--root", "${workspaceFolder}", "serve"]  # Cursor and VS Code expand it
    edits: list[Edit]
    if client == "claude-code":
        server: dict[str, object] = {"command": command, "args": serve}
        if learn:  # the server remembers its results only with learning on
            server["env"] = {"AGENTTY_RAG_LEARN": "1"}
        edits = [Edit(root / ".mcp.json", "json-member", ("mcpServers",), value=server)]
        settings = root / (".claude/settings.local.json" if local else ".claude/settings.json")
        if hook:
            inject = f'{shlex.join(argv)} inject --root "$CLAUDE_PROJECT_DIR" --format json'
            item = {"hooks": [{"type": "command", "command": inject, "timeout": 10}]}
            edits.append(Edit(settings, "json-item", ("hooks", "UserPromptSubmit"), value=item))
        if learn:  # after each Read: the file the agent opened, for implicit learning
            record = f'{shlex.join(argv)} feedback --root "$CLAUDE_PROJECT_DIR"'
            on_read: dict[str, object] = {
                "matcher": "Read",
                "hooks": [{"type": "command", "command": record, "timeout": 10}],
            }
            edits.append(Edit(settings, "json-item", ("hooks", "PostToolUse"), value=on_read))
    elif client == "codex":
        table = {
            "command": command,
            "args": serve,
            "startup_timeout_sec": 20,
            "tool_timeout_sec": codex_tool_timeout(build_wait_ms),
        }
        edits = [Edit(root / ".codex" / "config.toml", "toml-table", ("mcp_servers",), value=table)]
    elif client == "cursor":
        value = {"command": command, "args": in_workspace}
        edits = [Edit(root / ".cursor" / "mcp.json", "json-member", ("mcpServers",), value=value)]
    elif client == "vscode":
        value = {"type": "stdio", "command": command, "args": in_workspace}
        edits = [Edit(root / ".vscode" / "mcp.json", "json-member", ("servers",), value=value)]
    elif client == "gemini":
        value = {"command": command, "args": serve}
        edits = [Edit(root / ".gemini" / "settings.json", "json-member", ("mcpServers",), value=value)]
    elif client == "windsurf":
        if home is None:
            raise ClientError("Windsurf's configuration is in the home folder, and HOME is not set")
        path = home / ".codeium" / "windsurf" / "mcp_config.json"
        edits = [Edit(path, "json-member", ("mcpServers",), value={"command": command, "args": serve})]
    elif client == "opencode":
        path = _opencode_file(root)
        local_server = {"type": "local", "command": [*argv, "serve"], "enabled": True}
        edits = [Edit(path, "json-member", _opencode_keys(path), value=local_server)]
    else:
        raise ClientError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    if instructions:
        edits.append(Edit(root / instruction_file(client), "text-block", value=INSTRUCTIONS))
    return edits


def instruction_file(client: str) -> str:
    """The file whose instructions block ``client`` reads (``AGENTS.md`` is shared by several clients)."""
    return INSTRUCTION_FILES.get(client, "AGENTS.md")


def sharing_instructions(client: str) -> tuple[str, ...]:
    """The other clients that read ``client``'s instructions file."""
    mine = instruction_file(client)
    return tuple(other for other in CLIENTS if other != client and instruction_file(other) == mine)


def server_entries(client: str, root: Path, home: Path | None) -> list[Edit]:
    """Every place ``client``'s server entry may be (opencode's two shapes); [] when it has none here."""
    try:
        entry = client_edits(client, root, home, argv=[SERVER_NAME])[0]
    except ClientError:  # Windsurf without a home folder
        return []
    if client == "opencode":
        return [Edit(entry.path, "json-member", keys) for keys in (("mcp",), ("mcp", "servers"))]
    return [entry]


def uninstall_edits(client: str, root: Path, home: Path | None, build_wait_ms: int = 20_000) -> list[Edit]:
    """Every entry ``init CLIENT`` may have written, whatever options it ran with."""
    edits = client_edits(client, root, home, hook=True, learn=True, instructions=True, build_wait_ms=build_wait_ms)
    if client == "claude-code":
        edits += client_edits(client, root, home, hook=True, learn=True, local=True)[1:]
    if client == "opencode":
        server = edits[0]
        edits += [Edit(server.path, "json-member", keys, value=server.value) for keys in (("mcp",), ("mcp", "servers"))]
    return edits


# The server's environment with --learn: init's own, so it is no edit of the user's.
_LEARN_ENV = {"AGENTTY_RAG_LEARN": "1"}


def _launch_free(entry: dict[str, object]) -> dict[str, object]:
    """``entry`` with the way it starts this installation (a script path, ``python -m agentty_rag``, the bare
    command: each machine's own) made one, and --learn's environment left out, so that entries written by
    any installation, with any options, compare equal."""
    command, args = entry.get("command"), entry.get("args", [])
    argv = command if isinstance(command, list) else [command, *(args if isinstance(args, list) else [args])]
    if argv and isinstance(argv[0], str) and Path(argv[0]).name in (SERVER_NAME, SERVER_NAME + ".exe"):
        rest = argv[1:]
    elif argv[1:3] == ["-m", "agentty_rag"]:
        rest = argv[3:]
    else:
        return entry
    free = {name: value for name, value in entry.items() if name != "args"}
    free["command"] = [SERVER_NAME, *rest]
    if free.get("env") == _LEARN_ENV:
        del free["env"]
    return free


def user_changes(found: object, written: object) -> list[str]:
    """What a user changed in init's server entry (``found``, against what init writes, ``written``): the
    names of the keys added or changed; [] when init wrote it as it is (by any installation, with any
    options)."""
    if not isinstance(found, dict) or not isinstance(written, dict):
        return [] if found == written else ["the whole entry"]
    mine, theirs = _launch_free(written), _launch_free(found)
    return sorted(name for name in {*mine, *theirs} if mine.get(name) != theirs.get(name))


__all__ = [
    "BLOCK_END",
    "BLOCK_START",
    "CLIENTS",
    "NEXT_STEPS",
    "Edit",
    "Kind",
    "Launcher",
    "client_edits",
    "codex_tool_timeout",
    "instruction_file",
    "launcher",
    "same_installation",
    "server_entries",
    "sharing_instructions",
    "uninstall_edits",
    "user_changes",
]
