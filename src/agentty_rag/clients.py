"""What ``agentty-rag init CLIENT`` writes for each agent, in the format that client documents, merged into
the user's existing files so that only agentty-rag's own entry changes.

Each edit is one entry: a server under its name (``agentty-rag``) in a JSON or TOML file, the Claude Code
hook as one item of the ``UserPromptSubmit`` list, or a marked block of instructions in ``AGENTS.md``-style
files. Installing inserts it; uninstalling removes exactly it (and a file or folder left empty by that).
"""

from __future__ import annotations

import difflib
import math
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentty_rag import jsonc

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
  `memory:ID`): open the file there when you need more than the excerpt.
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


class ClientError(Exception):
    """init cannot go ahead (the message says why and what to do); nothing was written."""


class Conflict(ClientError):
    """agentty-rag's entry is there but differs from what init writes: replaced only with --force."""


@dataclass(frozen=True)
class Edit:
    """One entry in one file: where it goes and what it holds."""

    path: Path
    kind: Kind
    keys: tuple[str, ...] = ()
    key: str = SERVER_NAME
    value: object = None


@dataclass(frozen=True)
class Change:
    """A file before and after the edits (``None``: the file does not exist, or is deleted)."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def launcher() -> list[str]:
    """How a client starts this installation: the ``agentty-rag`` command when it is on PATH, else the
    script beside this Python, else ``python -m agentty_rag``."""
    if shutil.which(SERVER_NAME):
        return [SERVER_NAME]
    script = Path(sys.executable).with_name(SERVER_NAME + (".exe" if sys.platform == "win32" else ""))
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "agentty_rag"]


def codex_tool_timeout(build_wait_ms: int) -> int:
    """Codex's per-call limit: above the longest a first search waits for an index build, with room."""
    return max(60, math.ceil(build_wait_ms / 1000) + 40)


def _is_our_hook(item: object) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("hooks"), list):
        return False
    commands = [h.get("command", "") for h in item["hooks"] if isinstance(h, dict)]
    return any(isinstance(c, str) and "inject" in c and ("agentty-rag" in c or "agentty_rag" in c) for c in commands)


def _opencode_file(root: Path) -> Path:
    plain, commented = root / "opencode.json", root / "opencode.jsonc"
    return commented if commented.exists() and not plain.exists() else plain


def _opencode_keys(path: Path) -> tuple[str, ...]:
    """``mcp`` (the V1 shape, which V2 still reads), or ``mcp.servers`` when the file already uses V2's."""
    try:
        servers = jsonc.get(path.read_text(encoding="utf-8"), ("mcp", "servers"))
    except (OSError, jsonc.JsoncError):
        return ("mcp",)
    return ("mcp", "servers") if isinstance(servers, dict) and "type" not in servers else ("mcp",)


def client_edits(
    client: str,
    root: Path,
    home: Path | None,
    *,
    hook: bool = False,
    local: bool = False,
    instructions: bool = False,
    build_wait_ms: int = 20_000,
    argv: list[str] | None = None,
) -> list[Edit]:
    """The entries ``init CLIENT`` writes (with ``uninstall``, every entry it may have written)."""
    argv = argv or launcher()
    command, prefix = argv[0], argv[1:]
    serve = [*prefix, "serve"]
    in_workspace = [*prefix, "--root", "${workspaceFolder}", "serve"]  # Cursor and VS Code expand it
    edits: list[Edit]
    if client == "claude-code":
        edits = [Edit(root / ".mcp.json", "json-member", ("mcpServers",), value={"command": command, "args": serve})]
        if hook:
            settings = ".claude/settings.local.json" if local else ".claude/settings.json"
            inject = f'{shlex.join(argv)} inject --root "$CLAUDE_PROJECT_DIR" --format json'
            item = {"hooks": [{"type": "command", "command": inject, "timeout": 10}]}
            edits.append(Edit(root / settings, "json-item", ("hooks", "UserPromptSubmit"), value=item))
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
        edits.append(Edit(root / INSTRUCTION_FILES.get(client, "AGENTS.md"), "text-block", value=INSTRUCTIONS))
    return edits


def uninstall_edits(client: str, root: Path, home: Path | None) -> list[Edit]:
    """Every entry ``init CLIENT`` may have written, whatever options it ran with."""
    edits = client_edits(client, root, home, hook=True, instructions=True)
    if client == "claude-code":
        edits += client_edits(client, root, home, hook=True, local=True)[1:]
    if client == "opencode":
        edits += [Edit(edits[0].path, "json-member", keys) for keys in (("mcp",), ("mcp", "servers"))]
    return edits


# -- applying one edit to a file's text ----------------------------------------------------------------------


def _json(edit: Edit, text: str, remove: bool, force: bool) -> str:
    if edit.kind == "json-item":
        current = jsonc.get(text, edit.keys) if text.strip() else None
        present = [item for item in current if _is_our_hook(item)] if isinstance(current, list) else []
        if remove:
            return jsonc.remove_items(text, edit.keys, _is_our_hook) if present else text
        if present == [edit.value]:
            return text
        if present and not force:
            raise Conflict(f"{edit.path}: the agentty-rag hook differs from what init writes")
        if present:
            text = jsonc.remove_items(text, edit.keys, _is_our_hook)
        return jsonc.insert_item(text, edit.keys, edit.value)
    if remove:
        return jsonc.remove_member(text, edit.keys, edit.key) if text.strip() else text
    current = jsonc.get(text, (*edit.keys, edit.key)) if text.strip() else None
    if current is not None and current != edit.value and not force:
        raise Conflict(f"{edit.path}: the {edit.key!r} entry differs from what init writes")
    return text if current == edit.value else jsonc.set_member(text, edit.keys, edit.key, edit.value)


def _toml(edit: Edit, text: str, remove: bool, force: bool) -> str:
    import tomlkit  # only init needs it: the hook and the server start without it
    import tomlkit.exceptions

    try:
        document = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as error:
        raise ClientError(f"{edit.path} is not valid TOML ({error}); fix it or move it aside") from None
    servers = document.get(edit.keys[0])
    current = servers.get(edit.key) if servers is not None else None
    if remove:
        if servers is None or current is None:
            return text
        del servers[edit.key]
        if not servers:
            del document[edit.keys[0]]
        out = tomlkit.dumps(document)
        return out.rstrip("\n") + "\n" if out.strip() else ""
    if current is not None and current.unwrap() == edit.value:
        return text
    if current is not None and not force:
        raise Conflict(f"{edit.path}: [{edit.keys[0]}.{edit.key}] differs from what init writes")
    table = tomlkit.table()
    assert isinstance(edit.value, dict)
    for name, item in edit.value.items():
        table.add(name, item)
    table.add(tomlkit.nl())
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document.add(edit.keys[0], servers)
    if current is not None:
        del servers[edit.key]
    servers.add(edit.key, table)
    return tomlkit.dumps(document)


def _block(edit: Edit, text: str, remove: bool, force: bool) -> str:
    start, end = text.find(BLOCK_START), text.find(BLOCK_END)
    if start >= 0 and end > start:
        block_end = end + len(BLOCK_END) + (1 if text[end + len(BLOCK_END) :].startswith("\n") else 0)
        present = text[start:block_end]
        if not remove and present == edit.value:
            return text
        if not remove and not force:
            raise Conflict(f"{edit.path}: the agentty-rag block differs from what init writes")
        before = text[:start]
        if before.endswith("\n\n"):
            before = before[:-1]
        text = before + text[block_end:]
    if remove:
        return text
    assert isinstance(edit.value, str)
    if not text.strip():
        return edit.value
    return text + ("" if text.endswith("\n") else "\n") + "\n" + edit.value


def _empty(kind: Kind, text: str) -> bool:
    if kind in ("json-member", "json-item"):
        return jsonc.is_empty(text)
    return not text.strip()


_APPLY: dict[Kind, Callable[[Edit, str, bool, bool], str]] = {
    "json-member": _json,
    "json-item": _json,
    "toml-table": _toml,
    "text-block": _block,
}


def plan(edits: list[Edit], *, remove: bool = False, force: bool = False) -> list[Change]:
    """Each touched file before and after its edits; raises ``ClientError`` before anything is written."""
    texts: dict[Path, str | None] = {}
    kinds: dict[Path, Kind] = {}
    for edit in edits:
        if edit.path not in texts:
            texts[edit.path] = _read(edit.path)
        kinds[edit.path] = edit.kind
        text = texts[edit.path] or ""
        if remove and texts[edit.path] is None:
            continue
        try:
            texts[edit.path] = _APPLY[edit.kind](edit, text, remove, force)
        except jsonc.JsoncError as error:
            raise ClientError(f"{edit.path} is not valid JSON ({error}); fix it or move it aside") from None
    changes = []
    for path, after in texts.items():
        before = _read(path)
        if remove and after is not None and before is not None and _empty(kinds[path], after):
            after = None
        changes.append(Change(path, before, after))
    return changes


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ClientError(f"cannot read {path} ({error})") from None


def diff(change: Change, shown: str) -> str:
    """The change as a unified diff, with paths as the user knows them."""
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    old = "/dev/null" if change.before is None else f"a/{shown}"
    new = "/dev/null" if change.after is None else f"b/{shown}"
    lines = difflib.unified_diff(before, after, old, new)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write(changes: list[Change], stop_at: Path) -> None:
    """Write (or delete) each changed file atomically; folders left empty are removed up to ``stop_at``."""
    for change in changes:
        if not change.changed:
            continue
        if change.after is None:
            change.path.unlink(missing_ok=True)
            _remove_empty_parents(change.path.parent, stop_at)
            continue
        change.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = change.path.with_name(f".{change.path.name}.agentty-{os.getpid()}")
        temporary.write_text(change.after, encoding="utf-8")
        os.replace(temporary, change.path)


def _remove_empty_parents(folder: Path, stop_at: Path) -> None:
    while folder != stop_at and stop_at in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


__all__ = [
    "CLIENTS",
    "NEXT_STEPS",
    "Change",
    "ClientError",
    "Conflict",
    "Edit",
    "client_edits",
    "codex_tool_timeout",
    "diff",
    "launcher",
    "plan",
    "uninstall_edits",
    "write",
]
