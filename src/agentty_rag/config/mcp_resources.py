"""The settings of the MCP resource source: which servers, and how their resources are read.

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentty_rag.config.variables import KIB, MIB, flag, folder, integer, names


@dataclass(frozen=True)
class McpSettings:
    """MCP resources: other MCP servers' resources, searched with the docs and never written to disk."""

    mcp_enabled: bool = flag(
        "AGENTTY_RAG_MCP",
        False,
        "search_docs also searches the resources of the MCP servers the workspace's agent is configured with "
        "(`.mcp.json`, `.cursor/mcp.json`, `.codex/config.toml`); this process starts those of them the user "
        "approved (in Claude Code or Codex, or by name below).",
    )
    mcp_approved: tuple[str, ...] | None = names(
        "AGENTTY_RAG_MCP_APPROVED",
        "Servers of the project's files to start without a client's approval, by name (`*`: every one not "
        "disabled). A server Claude Code's settings disable is never started.",
    )
    mcp_servers_file: Path | None = folder(
        "AGENTTY_RAG_MCP_SERVERS",
        'A JSON file of servers in `.mcp.json`\'s shape (`{"mcpServers": {…}}`), read instead of the '
        "project's files (relative to the workspace root).",
    )
    mcp_timeout_ms: int = integer(
        "AGENTTY_RAG_MCP_TIMEOUT_MS",
        5000,
        "Longest wait for one MCP call: starting a server and its handshake, one page of a listing, one read. "
        "A server past it is reported and left out; a resource past it is skipped.",
        low=100,
        high=120_000,
    )
    mcp_ttl_s: int = integer(
        "AGENTTY_RAG_MCP_TTL_S",
        300,
        "How often a server that sends no change notifications is listed and read again (and a failed server "
        "tried again).",
        low=5,
        high=86_400,
    )
    mcp_max_resources: int = integer(
        "AGENTTY_RAG_MCP_MAX_RESOURCES",
        500,
        "Most resources read from one server; the rest are reported as left out.",
        low=1,
        high=10_000,
    )
    mcp_max_bytes: int = integer(
        "AGENTTY_RAG_MCP_MAX_BYTES",
        1 * MIB,
        "Largest resource read; a larger one is skipped and reported.",
        low=4 * KIB,
        high=64 * MIB,
    )


__all__ = ["McpSettings"]
