"""Serving over streamable HTTP: loopback by default; any other address only behind a bearer token."""

from __future__ import annotations

import errno
import hmac
import ipaddress
import logging
import socket
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agentty_rag.errors import BadRequest

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class RequireBearer:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401 and goes no further."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", ())).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                refusal = PlainTextResponse("a bearer token is required", 401, {"WWW-Authenticate": "Bearer"})
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(mcp: MCPServer[Any], host: str, token: str | None) -> ASGIApp:
    """The streamable HTTP app; bound beyond loopback only behind a bearer token.

    The SDK checks Host and Origin (against DNS rebinding) only on loopback; on any other address the token
    is what keeps other machines out.

    Raises:
        BadRequest: a non-loopback ``host`` without ``AGENTTY_RAG_HTTP_TOKEN``.
    """
    if not is_loopback(host):
        if not token:
            raise BadRequest(
                f"--host {host} would serve every machine that can reach this one, with no authentication; "
                "set AGENTTY_RAG_HTTP_TOKEN to require a bearer token, or serve on 127.0.0.1"
            )
        log.warning("serving on %s: reachable from other machines; every request must carry the bearer token", host)
    app: ASGIApp = mcp.streamable_http_app(host=host)
    return RequireBearer(app, token) if token else app


def port_problem(host: str, port: int) -> str:
    """Why the HTTP server cannot listen on ``host:port`` ("" when it can)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        return f"--host {host}: host not found ({error.strerror})"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use: stop the other server or pass --port N"
            return f"cannot listen on {host}:{port} ({error.strerror})"
    return ""


__all__ = ["RequireBearer", "http_app", "is_loopback", "port_problem"]
