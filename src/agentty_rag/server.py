"""The MCP server: two read-only tools over one workspace. Thin: validate, delegate, translate errors.

stdout carries the protocol; every log line goes to stderr. Index building starts in a background thread
when the server starts, so the handshake never waits for it; a search that arrives during the first build
waits for it (up to AGENTTY_RAG_BUILD_WAIT_MS) and reports progress to a client that asked for it.
"""

from __future__ import annotations

import errno
import functools
import hmac
import ipaddress
import json
import logging
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    CallToolResult,
    ListRootsResult,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agentty_rag import __version__
from agentty_rag.config import Settings
from agentty_rag.discovery import Located, from_roots
from agentty_rag.errors import AgenttyError, BadRequest
from agentty_rag.inject import HookEvent, proactive_context
from agentty_rag.service import MAX_K, Outcome, Workspace
from agentty_rag.source_kinds import DocsChoice, choice_names

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
    workspace: str
    funnel: list[FunnelStage]
    confidence: float
    budget_bytes: int
    used_bytes: int
    compressed: int
    empty_reason: str
    notes: list[str]
    results: list[ResultItem]


class Session:
    """The server's workspace: the one found at start, replaced once by the client's MCP roots.

    ``--root`` wins over roots. When the start folder cannot be a workspace (the file-system root, the home
    folder, a system folder) and no roots arrive, every tool call says so and names ``--root``.
    """

    def __init__(self, located: Located, settings: Settings) -> None:
        self.located = located
        self.settings = settings
        self.explicit = located.how == "--root"
        self.roots_pending = not self.explicit  # ask a client that declares roots, once (again after a change)
        self.workspace: Workspace | None = None
        self._lock = threading.Lock()
        if located.root is not None:
            self.workspace = self._open(located)

    def _open(self, located: Located) -> Workspace:
        assert located.root is not None
        workspace = Workspace(located.root, self.settings, start=located.start)
        workspace.background_embedding = True
        workspace.background_builds = True  # a request never builds an index past the build wait
        return workspace

    def warm_up(self) -> None:
        """Start building the current workspace's indexes in the background."""
        workspace = self.workspace
        if workspace is not None:
            threading.Thread(target=_warm_up, args=(workspace,), name="agentty-warm-up", daemon=True).start()

    def adopt_roots(self, uris: list[str]) -> None:
        """Switch to the first of the client's roots that can be a workspace (no change when none can)."""
        self.roots_pending = False
        located = from_roots(uris, self.located.start, self.settings.home)
        if located is None or located.root is None:
            if uris:
                log.info("no usable folder among the client's roots %s; keeping %s", uris, self.located.root)
            return
        with self._lock:
            if self.workspace is not None and self.workspace.root == located.root:
                return
            previous, self.workspace, self.located = self.workspace, self._open(located), located
        log.info("workspace from the client's roots: %s", located.root)
        self.warm_up()
        if previous is not None:
            previous.close()

    def require(self) -> Workspace:
        """The workspace, or a tool error that says why there is none and what to do."""
        workspace = self.workspace
        if workspace is None:
            raise ToolError(
                f"no workspace: {self.located.problem}. Add --root DIR to the server's arguments in the "
                "client's configuration (agentty-rag init CLIENT writes it), or use a client that sends MCP roots."
            )
        return workspace


@dataclass
class AppState:
    session: Session


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


# -- the tools' arguments: one strict model each, published as the input schema and checked on every call ----


class _Strict(BaseModel):
    """No coercion (``k="5"``, ``k=true`` are errors) and no unknown argument (a misspelled name is an error)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class SearchDocsArgs(_Strict):
    query: str = Field(description="What you want to know, in a few words or a question.", max_length=100_000)
    k: int = Field(8, ge=1, le=MAX_K, description=f"How many passages to return: a whole number from 1 to {MAX_K}.")
    scope: str | None = Field(
        None,
        description="Only this file or folder of the docs (relative to the docs folder or the workspace).",
        max_length=4096,
    )
    sources: list[DocsChoice] | None = Field(
        None, description=f"Which sources to search ({', '.join(choice_names('docs'))}); all when omitted."
    )


class SearchCodeArgs(_Strict):
    query: str = Field(description="What the code does, in your own words.", max_length=100_000)
    k: int = Field(8, ge=1, le=MAX_K, description=f"How many results to return: a whole number from 1 to {MAX_K}.")
    scope: str | None = Field(
        None, description="Only this file or folder, relative to the workspace root.", max_length=4096
    )
    language: str | None = Field(
        None, description="Only this language, e.g. python, typescript, go, rust, java.", max_length=64
    )


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema as clients see it: descriptions, bounds, ``additionalProperties: false``, and
    no generated titles (a property is named by its key, not titled "K")."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _expected(name: str, prop: dict[str, Any]) -> str:
    """What a property accepts, in words."""
    kinds = [option for option in prop.get("anyOf", [prop]) if option.get("type") != "null"]
    kind = kinds[0] if kinds else prop
    if kind.get("type") == "integer":
        return f"{name} must be a whole number from {kind.get('minimum')} to {kind.get('maximum')}"
    if kind.get("type") == "array":
        return f"{name} must be a list of any of: {', '.join(kind.get('items', {}).get('enum', []))}"
    return f"{name} must be a string" + (" or left out" if "anyOf" in prop else "")


def argument_problem(model: type[BaseModel], tool: str, arguments: object) -> str:
    """One line saying what is wrong with a call's arguments ("" when they are valid)."""
    if not isinstance(arguments, dict):
        return f'the arguments must be an object, e.g. {{"query": "..."}} (got {type(arguments).__name__})'
    try:
        model.model_validate(arguments)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        location = first["loc"]
        name = str(location[0]) if location else "arguments"
        properties = model.model_json_schema().get("properties", {})
        if first["type"] == "extra_forbidden":
            return f"unknown argument {name!r}: {tool} takes {', '.join(properties)}"
        if first["type"] == "missing":
            return f"{name} is required ({properties.get(name, {}).get('description', '').rstrip('.')})"
        if first["type"] == "string_too_long":
            return f"{name} is too long (at most {first.get('ctx', {}).get('max_length')} characters)"
        got = arguments.get(name)
        return f"{_expected(name, properties.get(name, {}))} (got {json.dumps(got, ensure_ascii=False)[:80]})"
    return ""


def _call_arguments(ctx: Context[AppState], model: type[BaseModel], tool: str) -> dict[str, Any]:
    """The call's raw arguments, checked against the published schema (a ``ToolError`` when invalid)."""
    params = ctx.request_context.params or {}
    arguments = params.get("arguments")
    arguments = {} if arguments is None else arguments
    problem = argument_problem(model, tool, arguments)
    if problem:
        raise ToolError(problem)
    return dict(model.model_validate(arguments).model_dump())


def client_roots(ctx: Context[AppState]) -> ListRoots | None:
    """Ask for the client's roots the first time (and after it says they changed), when it can answer."""
    session = ctx.request_context.lifespan_context.session
    capabilities = ctx.client_capabilities
    if session.roots_pending and capabilities is not None and capabilities.roots is not None:
        return ListRoots()
    return None


ClientRoots = Annotated[ListRootsResult | None, Resolve(client_roots)]


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


def _edges(session: Session) -> Any:
    """Middleware: no resources capability (the server has none), JSON-RPC errors for a bad prompt call,
    and a fresh look at the client's roots when it says they changed."""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        method = ctx.method
        if method.startswith("resources/"):
            raise MCPError(code=METHOD_NOT_FOUND, message=f"{method}: this server has no resources")
        if method == "prompts/get":
            problem = _missing_prompt_argument(ctx.params)
            if problem:
                raise MCPError(code=INVALID_PARAMS, message=problem)
        if method == "notifications/roots/list_changed":
            session.roots_pending = not session.explicit
        result = await call_next(ctx)
        if method in ("initialize", "server/discover") and isinstance(result, dict):
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict):
                capabilities.pop("resources", None)
        return result

    return middleware


def build_server(session: Session) -> MCPServer[AppState]:
    """An MCP server for one session's workspace."""

    @asynccontextmanager
    async def lifespan(server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        session.warm_up()
        yield AppState(session)

    async def search(ctx: Context[AppState], roots: ListRootsResult | None, name: str, call: Any) -> CallToolResult:
        if roots is not None:
            session.adopt_roots([str(root.uri) for root in roots.roots])
        workspace = session.require()
        try:
            return _result(await _with_progress(ctx, workspace, name, functools.partial(call, workspace)))
        except AgenttyError as error:
            raise ToolError(str(error)) from None

    async def search_docs(ctx: Context[AppState], roots: ClientRoots = None) -> Annotated[CallToolResult, SearchOutput]:
        a = _call_arguments(ctx, SearchDocsArgs, "search_docs")

        def call(workspace: Workspace) -> Outcome:
            return workspace.search_docs(a["query"], a["k"], a["scope"], a["sources"])

        return await search(ctx, roots, "docs", call)

    async def search_code(ctx: Context[AppState], roots: ClientRoots = None) -> Annotated[CallToolResult, SearchOutput]:
        a = _call_arguments(ctx, SearchCodeArgs, "search_code")

        def call(workspace: Workspace) -> Outcome:
            return workspace.search_code(a["query"], a["k"], a["scope"], a["language"])

        return await search(ctx, roots, "code", call)

    tools = []
    for fn, name, title, description, model in (
        (search_docs, "search_docs", "Search project docs", SEARCH_DOCS_DESCRIPTION, SearchDocsArgs),
        (search_code, "search_code", "Search project code", SEARCH_CODE_DESCRIPTION, SearchCodeArgs),
    ):
        tool = Tool.from_function(fn, name=name, title=title, description=description, annotations=ReadOnly)
        tool.parameters = input_schema(model)
        tools.append(tool)

    mcp: MCPServer[AppState] = MCPServer(
        "agentty-rag",
        title="agentty-rag",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        tools=tools,
        log_level=session.settings.log_level.upper(),  # type: ignore[arg-type]
    )
    mcp.middleware.append(_edges(session))

    @mcp.prompt(name="context_for", title="Project context for a question", description=CONTEXT_FOR_DESCRIPTION)
    async def context_for(
        question: Annotated[str, Field(description="The question to find project context for.")],
    ) -> str:
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


def serve(session: Session, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server until the client disconnects."""
    mcp = build_server(session)
    if transport == "http":
        import uvicorn

        app = http_app(mcp, host, session.settings.http_token)
        config = uvicorn.Config(app, host=host, port=port, log_level=session.settings.log_level)
        uvicorn.Server(config).run()
    else:
        mcp.run()


__all__ = [
    "RequireBearer",
    "SearchOutput",
    "Session",
    "argument_problem",
    "build_server",
    "http_app",
    "input_schema",
    "is_loopback",
    "port_problem",
    "serve",
]
