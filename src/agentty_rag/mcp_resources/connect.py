"""Reaching one configured server with the SDK's client: start its command (stdio) or call its URL (HTTP).

A stdio server gets this process's environment (less ``AGENTTY_*`` variables) plus its entry's ``env``, the
workspace as its folder unless the entry names one, and a pipe as its stderr (``StderrTail``). An HTTP server
gets its entry's headers on every request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp.client.session import MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agentty_rag import __version__
from agentty_rag.errors import ResourceServerError
from agentty_rag.mcp_resources.servers import ServerSpec
from agentty_rag.mcp_resources.stderr import StderrTail, describe, first_error

CLIENT = types.Implementation(name="agentty-rag", version=__version__)


async def open_client(
    stack: contextlib.AsyncExitStack,
    spec: ServerSpec,
    environment: Mapping[str, str],
    tail: StderrTail | None,
    protocol: str,
    on_message: MessageHandlerFnT,
) -> Client:
    """Start (or reach) the server and shake hands; the client closes with ``stack``. Unbounded: the caller
    puts a deadline on it.

    Raises:
        ResourceServerError: it could not be started or reached, or the handshake failed (said in words).
    """
    if spec.url:
        http = await stack.enter_async_context(create_mcp_http_client(headers=dict(spec.headers) or None))
        transport: Any = streamable_http_client(spec.url, http_client=http)
    else:
        assert tail is not None, "a stdio server's stderr goes to a pipe"
        params = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env={**environment, **dict(spec.env)},
            cwd=spec.cwd or None,
        )
        transport = stdio_client(params, errlog=tail.writer)
    client = Client(transport, mode=protocol, message_handler=on_message, cache=None, client_info=CLIENT)
    try:
        await stack.enter_async_context(client)
    except Exception as error:  # the handshake's errors, or a transport's own (refused, no such program)
        leaf = first_error(error)
        if isinstance(leaf, MCPError) and leaf.code == types.CONNECTION_CLOSED:
            raise ResourceServerError("closed the connection while starting") from None
        if isinstance(leaf, MCPError):
            raise ResourceServerError(f"failed starting: {leaf.message}") from None
        raise ResourceServerError(describe(leaf)) from None
    return client


__all__ = ["CLIENT", "open_client"]
