"""Which of a workspace's configured MCP servers the user approved: only those are ever started.

A cloned repository can name any command in its ``.mcp.json``, ``.cursor/mcp.json`` or ``.codex/config.toml``;
each client asks its user before it runs one, and agentty-rag honours the same answers:

* ``.mcp.json`` (Claude Code): a server named in ``disabledMcpjsonServers`` of any of Claude Code's settings
  is never started. One is approved by ``enableAllProjectMcpServers`` or ``enabledMcpjsonServers`` in the
  user's own settings (``~/.claude/settings.json``, or this project's entry in ``~/.claude.json``), or in the
  project's ``.claude/settings.json`` / ``.claude/settings.local.json`` (where Claude Code keeps the answer to
  its prompt) when Claude Code trusts the folder (``hasTrustDialogAccepted`` in ``~/.claude.json``): a
  project's own files cannot approve a server in a folder the user never trusted.
* ``.codex/config.toml`` (Codex): approved when the user trusts the project in Codex (``trust_level =
  "trusted"`` under ``[projects."<path>"]`` of ``~/.codex/config.toml``); Codex reads the file only then.
* ``.cursor/mcp.json`` (Cursor keeps its answers where no other program can read them): approved only by name.
* Any server, by name: ``AGENTTY_RAG_MCP_APPROVED`` (``*``: every configured server not disabled).
* ``AGENTTY_RAG_MCP_SERVERS``: the file the user named is approved whole.

``CLAUDE_CONFIG_DIR`` and ``CODEX_HOME`` move the user's folders as they do for those clients. Every file is
read bounded, never through a FIFO or a device, and a project's files never through a link out of it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag.errors import JsoncError
from agentty_rag.fsguard import UnsafeFile, read_regular
from agentty_rag.jsonc import parse

_USER_FILE_MAX_BYTES = 64 << 20  # ~/.claude.json keeps every project's history: it grows to megabytes
_PROJECT_FILE_MAX_BYTES = 1 << 20
HOW_BY_NAME = "add its name to AGENTTY_RAG_MCP_APPROVED"


@dataclass(frozen=True)
class Decision:
    """Whether a server may be started, and why (approved) or how to approve it (not approved)."""

    approved: bool
    why: str


class Approvals:
    """The approvals in force for one workspace, read once.

    Args:
        root: the workspace.
        by_name: ``AGENTTY_RAG_MCP_APPROVED`` (None: unset).
        home: the user's home folder.
        claude_dir: ``CLAUDE_CONFIG_DIR`` (None: ``~/.claude``, with ``~/.claude.json`` beside it).
        codex_home: ``CODEX_HOME`` (None: ``~/.codex``).
    """

    def __init__(
        self,
        root: Path,
        by_name: tuple[str, ...] | None,
        home: Path | None,
        claude_dir: Path | None = None,
        codex_home: Path | None = None,
    ) -> None:
        self.root = root
        self.by_name = frozenset(by_name or ())
        self._paths = {str(root), os.path.realpath(root)}
        config_dir = claude_dir or (home / ".claude" if home is not None else None)
        state = (claude_dir / ".claude.json") if claude_dir is not None else (home / ".claude.json" if home else None)
        self._claude = self._claude_answers(config_dir, state)
        codex = codex_home or (home / ".codex" if home is not None else None)
        self.codex_trusted = codex is not None and self._codex_trusts(codex / "config.toml")

    def decide(self, name: str, dialect: str, origin: str) -> Decision:
        """Whether the server ``name`` of the file ``origin`` (written in ``dialect``) may be started."""
        if dialect == "claude" and origin == ".mcp.json":
            disabled = self._claude["disabled"].get(name)
            if disabled:
                return Decision(False, f"disabled in {disabled}")
        if name in self.by_name:
            return Decision(True, "named in AGENTTY_RAG_MCP_APPROVED")
        if "*" in self.by_name:
            return Decision(True, "AGENTTY_RAG_MCP_APPROVED=*")
        if dialect == "claude" and origin == ".mcp.json":
            where = self._claude["enabled"].get(name) or self._claude["enabled"].get("*")
            if where:
                return Decision(True, f"approved in Claude Code ({where})")
            return Decision(False, f"approve it in Claude Code (it asks when it opens this project), or {HOW_BY_NAME}")
        if dialect == "codex":
            if self.codex_trusted:
                return Decision(True, "the project is trusted in Codex")
            return Decision(False, f"trust the project in Codex (it asks when it opens it), or {HOW_BY_NAME}")
        return Decision(False, HOW_BY_NAME)

    # -- Claude Code --------------------------------------------------------------------------------------

    def _claude_answers(self, config_dir: Path | None, state: Path | None) -> dict[str, dict[str, str]]:
        """Server name -> the file that enabled ("*": all) or disabled it."""
        enabled: dict[str, str] = {}
        disabled: dict[str, str] = {}
        project = _json(state, "", _USER_FILE_MAX_BYTES) if state is not None else None
        entry: Any = None
        if isinstance(project, dict) and isinstance(project.get("projects"), dict):
            entry = next((project["projects"][p] for p in self._paths if p in project["projects"]), None)
        trusted = isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True
        sources: list[tuple[str, Any, bool]] = []
        if config_dir is not None:
            user = _json(config_dir / "settings.json", "", _USER_FILE_MAX_BYTES)
            sources.append(("~/.claude/settings.json", user, True))
        sources.append(("~/.claude.json", entry, True))
        real_root = os.path.realpath(self.root)
        for shown in (".claude/settings.json", ".claude/settings.local.json"):
            sources.append((shown, _json(self.root / shown, real_root, _PROJECT_FILE_MAX_BYTES), trusted))
        for shown, settings, may_enable in sources:
            if not isinstance(settings, dict):
                continue
            for name in _names(settings.get("disabledMcpjsonServers")):
                disabled.setdefault(name, shown)
            if not may_enable:
                continue
            if settings.get("enableAllProjectMcpServers") is True:
                enabled.setdefault("*", shown)
            for name in _names(settings.get("enabledMcpjsonServers")):
                enabled.setdefault(name, shown)
        return {"enabled": enabled, "disabled": disabled}

    # -- Codex --------------------------------------------------------------------------------------------

    def _codex_trusts(self, config: Path) -> bool:
        import tomllib

        try:
            text = read_regular(str(config), "", _USER_FILE_MAX_BYTES).decode("utf-8")
            projects = tomllib.loads(text).get("projects")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return False
        if not isinstance(projects, dict):
            return False
        return any(
            isinstance(projects.get(path), dict) and projects[path].get("trust_level") == "trusted"
            for path in self._paths
        )


def _json(path: Path, boundary: str, max_bytes: int) -> Any:
    """A JSON (or JSON with comments) file's value; None when it is missing or cannot be used."""
    try:
        data = read_regular(str(path), boundary, max_bytes)
    except (OSError, UnsafeFile):
        return None
    if len(data) > max_bytes:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return parse(text).value
    except (JsoncError, RecursionError):
        return None


def _names(value: object) -> list[str]:
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


__all__ = ["HOW_BY_NAME", "Approvals", "Decision"]
