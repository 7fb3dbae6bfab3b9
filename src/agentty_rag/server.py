"""The MCP server: two read-only tools over one workspace. Thin: validate, delegate, translate errors.

stdout carries the protocol; every log line goes to stderr. Index building starts in a background thread
when the server starts, so the handshake never waits for it; a search that arrives during the first build
waits for it (up to AGENTTY_RAG_BUILD_WAIT_MS) and reports progress to a client that asked for it.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agentty_rag import __version__
from agentty_rag.errors import AgenttyError, BadRequest
from agentty_rag.inject import HookEvent, proactive_context
from agentty_rag.service import MAX_K, Outcome, Workspace

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
agentty-rag searches this project's knowledge at a low token cost.
- search_docs: the project's documentation, installed skills and learned memory facts. Use it for how-to,
  configuration, conventions, past decisions and "why" questions.
- search_code: the source code by meaning, when you do not know the exact identifier ("where do we refresh
  expired tokens?"). For an exact name, string or error message, grep is faster and complete.
Each passage starts with its provenance (docs:PATH:LINES, skill:NAME, memory:ID, code:PATH:LINES); open the
file at those lines when you need more than the excerpt."""

SEARCH_DOCS_DESCRIPTION = """\
Search the project's documentation folder, installed skills and learned memory facts, ranked by relevance.

Use it to find how something is configured, deployed, operated or decided in this project, in your own
words. Returns passages with provenance (docs:PATH:START-END, skill:NAME, memory:ID) and a header naming the
retrieval mode and how many candidates each stage kept. Not for exact strings: use grep for those."""

SEARCH_CODE_DESCRIPTION = """\
Search the workspace's source code by meaning: each result is a whole function, method, class or
declaration with its provenance code:PATH:START-END.

Use it when you do not know the identifier ("where are webhook deliveries retried?"). For an exact
identifier, string or error message, use grep instead: it is exact and complete."""

CONTEXT_FOR_DESCRIPTION = """\
Retrieved excerpts of this project's docs (and code, when AGENTTY_RAG_PROACTIVE_SOURCES says so) for a
question, within the proactive budget, with their provenance; nothing when retrieval is not confident."""

ReadOnly = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class FunnelStage(BaseModel):
    stage: str
    count: int


class ResultItem(BaseModel):
    provenance: str
    source: str
    path: str
    lines: list[int]
    score: float
    relevance: float
    kind: str
    language: str
    heading: str
    symbol: str
    text: str
    compressed: bool
    also: list[str]


class SearchOutput(BaseModel):
    """Structured form of a search result (the text content says the same for the model)."""

    tool: str
    mode: str
    query: str
    funnel: list[FunnelStage]
    confidence: float
    budget_bytes: int
    used_bytes: int
    compressed: int
    empty_reason: str
    notes: list[str]
    results: list[ResultItem]


@dataclass
class AppState:
    workspace: Workspace


def _warm_up(workspace: Workspace) -> None:
    """Probe the embedding server, open or build both indexes, then embed what has no vector yet.

    Runs in a background thread: the MCP handshake never waits for it, and BM25 answers as soon as an
    index is built (the header says ``partial`` until every chunk has a vector).
    """
    status = workspace.dense.ensure()
    log.info("dense leg: %s", workspace.dense.describe())
    for name in ("docs", "code"):
        try:
            index = workspace.index(name)
            with index.lock:
                report = index.refresh()
            if report.rebuilt:
                log.info("%s index built: %d chunks in %.1f s", name, report.chunks_added, report.seconds)
        except AgenttyError as error:
            log.warning("%s index: %s", name, error)
        except Exception:
            log.exception("building the %s index failed", name)
    if status.state == "ready":
        for name in ("docs", "code"):
            try:
                workspace.embed_all(name)
            except Exception:
                log.exception("embedding the %s index failed", name)


async def _with_progress(ctx: Context[AppState], workspace: Workspace, name: str, call: Any) -> Outcome:
    """Run a blocking search in a worker thread, reporting index-build progress while it waits."""
    index = workspace.index(name)
    done = anyio.Event()
    outcome: list[Outcome] = []
    failures: list[AgenttyError] = []

    async def run() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(call))
        except AgenttyError as error:  # re-raised below, outside the task group's exception group
            failures.append(error)
        finally:
            done.set()

    async def report() -> None:
        last = (-1, -1)
        while not done.is_set():
            with anyio.move_on_after(0.5):
                await done.wait()
            state = index.build_state
            if not done.is_set() and state != last and state[1]:
                last = state
                await ctx.report_progress(state[0], state[1], f"indexing {name}: {state[0]} of {state[1]} files")

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        group.start_soon(report)
    if failures:
        raise failures[0]
    return outcome[0]


def _result(outcome: Outcome) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=outcome.text)], structured_content=outcome.structured)


def build_server(workspace: Workspace) -> MCPServer[AppState]:
    """An MCP server bound to one workspace."""

    workspace.background_embedding = True
    workspace.background_builds = True

    @asynccontextmanager
    async def lifespan(server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        threading.Thread(target=_warm_up, args=(workspace,), name="agentty-warm-up", daemon=True).start()
        yield AppState(workspace)

    mcp: MCPServer[AppState] = MCPServer(
        "agentty-rag",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        log_level=workspace.settings.log_level.upper(),  # type: ignore[arg-type]
    )

    @mcp.tool(name="search_docs", description=SEARCH_DOCS_DESCRIPTION, annotations=ReadOnly)
    async def search_docs(
        query: Annotated[str, Field(description="What you want to know, in a few words or a question.")],
        ctx: Context[AppState],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many passages to return (1-50).")] = 8,
        scope: Annotated[
            str | None,
            Field(description="Only this file or folder of the docs (relative to the docs folder or the workspace)."),
        ] = None,
        sources: Annotated[
            list[Literal["docs", "skills", "memory"]] | None,
            Field(description="Which sources to search; all when omitted."),
        ] = None,
    ) -> Annotated[CallToolResult, SearchOutput]:
        call = functools.partial(workspace.search_docs, query, k, scope, sources)
        try:
            return _result(await _with_progress(ctx, workspace, "docs", call))
        except AgenttyError as error:
            raise ToolError(str(error)) from None

    @mcp.tool(name="search_code", description=SEARCH_CODE_DESCRIPTION, annotations=ReadOnly)
    async def search_code(
        query: Annotated[str, Field(description="What the code does, in your own words.")],
        ctx: Context[AppState],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="How many results to return (1-50).")] = 8,
        scope: Annotated[
            str | None, Field(description="Only this file or folder, relative to the workspace root.")
        ] = None,
        language: Annotated[
            str | None, Field(description="Only this language, e.g. python, typescript, go, rust, java.")
        ] = None,
    ) -> Annotated[CallToolResult, SearchOutput]:
        call = functools.partial(workspace.search_code, query, k, scope, language)
        try:
            return _result(await _with_progress(ctx, workspace, "code", call))
        except AgenttyError as error:
            raise ToolError(str(error)) from None

    @mcp.prompt(name="context_for", description=CONTEXT_FOR_DESCRIPTION)
    async def context_for(
        question: Annotated[str, Field(description="The question to find project context for.")],
    ) -> str:
        injection = await anyio.to_thread.run_sync(
            functools.partial(proactive_context, workspace, HookEvent(question), True)
        )
        if injection.block is None:
            return (
                f"No confident project context for this question ({injection.reason}). "
                "Use the search_docs or search_code tools to look further."
            )
        return injection.block

    return mcp


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


def http_app(mcp: MCPServer[AppState], host: str, token: str | None) -> ASGIApp:
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


def serve(workspace: Workspace, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server until the client disconnects."""
    mcp = build_server(workspace)
    if transport == "http":
        import uvicorn

        app = http_app(mcp, host, workspace.settings.http_token)
        config = uvicorn.Config(app, host=host, port=port, log_level=workspace.settings.log_level)
        uvicorn.Server(config).run()
    else:
        mcp.run()


__all__ = ["RequireBearer", "SearchOutput", "build_server", "http_app", "is_loopback", "serve"]
