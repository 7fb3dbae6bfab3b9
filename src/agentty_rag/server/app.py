"""The MCP app: its lifespan, the two tools, the prompt, and the protocol edges the SDK does not cover.

The lifespan opens the session (and its workspace) when the server starts, starts warming the indexes up
in the background, and closes the workspace on shutdown; tools and the prompt read it from the request
context. A blocking search runs in a worker thread while the request reports index-build progress.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND, CallToolResult, ListRootsResult, TextContent
from pydantic import Field

from agentty_rag import __version__
from agentty_rag.cli.inject import HookEvent, proactive_context
from agentty_rag.config import Settings
from agentty_rag.errors import AgenttyError
from agentty_rag.server.contract import (
    CONTEXT_FOR_DESCRIPTION,
    INSTRUCTIONS,
    SEARCH_CODE_DESCRIPTION,
    SEARCH_DOCS_DESCRIPTION,
    ReadOnly,
    SearchCodeArgs,
    SearchDocsArgs,
    SearchOutput,
    input_schema,
    parse_arguments,
)
from agentty_rag.server.session import AppState, Session
from agentty_rag.server.web import http_app
from agentty_rag.server.wire import guarded_stdio
from agentty_rag.workspace.discovery import Located

if TYPE_CHECKING:
    from agentty_rag.workspace.service import Workspace

log = logging.getLogger(__name__)

ToolArguments = TypeVar("ToolArguments", SearchDocsArgs, SearchCodeArgs)


async def _with_progress(
    ctx: Context[AppState], workspace: Workspace, name: str, call: Callable[[], CallToolResult]
) -> CallToolResult:
    """Run a blocking search in a worker thread, reporting index-build progress while it waits."""
    index = workspace.index(name)
    done = anyio.Event()
    outcome: list[CallToolResult] = []
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


def _session(ctx: Context[AppState]) -> Session:
    """The session the lifespan opened, from the request context."""
    return ctx.request_context.lifespan_context.session


def _call_arguments(ctx: Context[AppState], model: type[ToolArguments], tool: str) -> ToolArguments:
    """The call's raw arguments as the tool's model, validated once against the published schema (a
    ``ToolError`` when invalid)."""
    params = ctx.request_context.params or {}
    arguments = params.get("arguments")
    parsed = parse_arguments(model, tool, {} if arguments is None else arguments)
    if isinstance(parsed, str):
        raise ToolError(parsed)
    return parsed


def client_roots(ctx: Context[AppState]) -> ListRoots | None:
    """Ask for the client's roots the first time (and after it says they changed), when it can answer."""
    session = _session(ctx)
    capabilities = ctx.client_capabilities
    if session.roots_pending and capabilities is not None and capabilities.roots is not None:
        return ListRoots()
    return None


ClientRoots = Annotated[ListRootsResult | None, Resolve(client_roots)]


async def _search(
    ctx: Context[AppState], roots: ListRootsResult | None, name: str, arguments: SearchDocsArgs | SearchCodeArgs
) -> CallToolResult:
    """A tool call: the validated arguments make the request (checked against the workspace in the worker
    thread, with the search), and ``Workspace.search`` answers it."""
    session = _session(ctx)
    if roots is not None:
        session.adopt_roots([str(root.uri) for root in roots.roots])
    workspace = session.require()

    def call() -> CallToolResult:  # fitted and rendered in the worker thread too
        outcome = workspace.search(arguments.request(workspace.places))
        text = TextContent(type="text", text=outcome.text)
        # The text is what the model reads and pays for; structured content only when asked for, and small.
        structured = outcome.compact if session.settings.structured else None
        return CallToolResult(content=[text], structured_content=structured)

    try:
        return await _with_progress(ctx, workspace, name, call)
    except AgenttyError as error:
        raise ToolError(str(error)) from None


async def search_docs(ctx: Context[AppState], roots: ClientRoots = None) -> Annotated[CallToolResult, SearchOutput]:
    return await _search(ctx, roots, "docs", _call_arguments(ctx, SearchDocsArgs, "search_docs"))


async def search_code(ctx: Context[AppState], roots: ClientRoots = None) -> Annotated[CallToolResult, SearchOutput]:
    return await _search(ctx, roots, "code", _call_arguments(ctx, SearchCodeArgs, "search_code"))


async def context_for(
    question: Annotated[str, Field(description="The question to find project context for.")],
    ctx: Context[AppState],
) -> str:
    session = _session(ctx)
    workspace = session.workspace
    if workspace is None:
        return f"No project context: no workspace ({session.located.problem})."
    injection = await anyio.to_thread.run_sync(
        functools.partial(proactive_context, workspace, HookEvent(question), True)
    )
    if injection.block is None:
        return (
            f"No confident project context for this question ({injection.reason}). "
            "Use the search_docs or search_code tools to look further."
        )
    return injection.block


# -- protocol edges the SDK does not cover --------------------------------------------------------------------


def _missing_prompt_argument(params: object) -> str:
    """Why a prompts/get for context_for cannot run ("" when it can): its one argument is required."""
    if not isinstance(params, dict) or params.get("name") != "context_for":
        return ""
    arguments = params.get("arguments") or {}
    question = arguments.get("question") if isinstance(arguments, dict) else None
    if not isinstance(question, str) or not question.strip():
        return "context_for needs the argument 'question': the question to find project context for"
    unknown = sorted(set(arguments) - {"question"})
    if unknown:
        return f"unknown argument {unknown[0]!r}: context_for takes question"
    return ""


async def edges(ctx: Any, call_next: Any) -> Any:
    """Middleware: no resources capability (the server has none), JSON-RPC errors for a bad prompt call,
    and a fresh look at the client's roots when it says they changed."""
    method = ctx.method
    if method.startswith("resources/"):
        raise MCPError(code=METHOD_NOT_FOUND, message=f"{method}: this server has no resources")
    if method == "prompts/get":
        problem = _missing_prompt_argument(ctx.params)
        if problem:
            raise MCPError(code=INVALID_PARAMS, message=problem)
    if method == "notifications/roots/list_changed":
        session: Session = ctx.lifespan_context.session
        session.roots_pending = not session.explicit
    result = await call_next(ctx)
    if method in ("initialize", "server/discover") and isinstance(result, dict):
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict):
            capabilities.pop("resources", None)
    return result


def build_server(located: Located, settings: Settings) -> MCPServer[AppState]:
    """An MCP server whose lifespan opens the workspace ``located`` names (or waits for the client's roots).

    Args:
        located: the workspace found at start (its root None when the start folder cannot be one).
        settings: the settings every workspace of the session is opened with.
    """

    @asynccontextmanager
    async def lifespan(server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        session = Session(located, settings)
        session.warm_up()
        try:
            yield AppState(session)
        finally:
            session.close()

    tools = []
    for fn, name, title, description, model in (
        (search_docs, "search_docs", "Search project docs", SEARCH_DOCS_DESCRIPTION, SearchDocsArgs),
        (search_code, "search_code", "Search project code", SEARCH_CODE_DESCRIPTION, SearchCodeArgs),
    ):
        tool = Tool.from_function(
            fn,
            name=name,
            title=title,
            description=description,
            annotations=ReadOnly,
            structured_output=settings.structured,  # the output schema is published only with structured content
        )
        tool.parameters = input_schema(model)
        tools.append(tool)

    mcp: MCPServer[AppState] = MCPServer(
        "agentty-rag",
        title="agentty-rag",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        tools=tools,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
    )
    mcp.middleware.append(edges)
    mcp.prompt(name="context_for", title="Project context for a question", description=CONTEXT_FOR_DESCRIPTION)(
        context_for
    )
    return mcp


def serve(
    located: Located, settings: Settings, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765
) -> None:
    """Run the server until the client disconnects."""
    mcp = build_server(located, settings)
    if transport == "http":
        import uvicorn

        app = http_app(mcp, host, settings.http_token)
        config = uvicorn.Config(app, host=host, port=port, log_level=settings.log_level)
        uvicorn.Server(config).run()
    else:
        with guarded_stdio():  # a malformed line gets a JSON-RPC error reply, where the SDK gives none
            mcp.run()


__all__ = ["build_server", "client_roots", "edges", "serve"]
