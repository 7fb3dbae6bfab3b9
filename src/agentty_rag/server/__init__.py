"""The MCP server: two read-only tools over one workspace. Thin: validate, delegate, translate errors.

stdout carries the protocol; every log line goes to stderr. Index building starts in a background thread
when the server starts, so the handshake never waits for it; a search that arrives during the first build
waits for it (up to AGENTTY_RAG_BUILD_WAIT_MS) and reports progress to a client that asked for it.

- ``contract``: what clients see (instructions, descriptions, the argument and output schemas);
- ``session``: the workspace over the server's lifetime (start, MCP roots, warm-up, close);
- ``app``: the lifespan, the tools, the prompt and the protocol edges;
- ``web``: streamable HTTP, with a bearer token beyond loopback.
"""

from __future__ import annotations

from agentty_rag.server.app import build_server, serve
from agentty_rag.server.contract import SearchCodeArgs, SearchDocsArgs, SearchOutput, input_schema, parse_arguments
from agentty_rag.server.session import AppState, Session
from agentty_rag.server.web import RequireBearer, http_app, is_loopback, port_problem

__all__ = [
    "AppState",
    "RequireBearer",
    "SearchCodeArgs",
    "SearchDocsArgs",
    "SearchOutput",
    "Session",
    "build_server",
    "http_app",
    "input_schema",
    "parse_arguments",
    "is_loopback",
    "port_problem",
    "serve",
]
