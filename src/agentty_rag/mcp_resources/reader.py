"""One MCP server, read for the life of the hub: start it, list and read its resources, follow its changes.

A client of the official SDK (``mcp.Client``: the 2026 ``server/discover`` probe, falling back to the
``initialize`` handshake). ``resources/list`` is followed page by page up to ``max_resources``; templates are
not listed; a listing stops after ``MAX_PAGES`` pages or ``LISTING_TIMEOUTS`` call timeouts in all, whatever
cursor the server hands out. Text resources (``text/*``, JSON, YAML …; an unknown type is read and kept when the
server sends text) are read a few at a time; binary ones, blobs and those over ``max_bytes`` are skipped and counted.

Freshness: a server that sends change notifications (``notifications/resources/list_changed``;
``notifications/resources/updated`` for the resources it was subscribed to, through ``resources/subscribe``
or a 2026 ``subscriptions/listen`` stream) is re-listed or re-read when it says so; any other is listed and
read again every ``ttl_s``.

Every call is bounded by ``timeout_s``. A server that cannot be started, times out or errors is marked failed
with the reason (for a stdio server, with the last line of its stderr), its resources are dropped, and it is
tried again after ``ttl_s``; nothing it does is raised to the hub. A resource whose read fails is skipped and
counted; a server whose reads all time out has failed.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client, MCPError

from agentty_rag.errors import ResourceServerError
from agentty_rag.mcp_resources.changes import Changes
from agentty_rag.mcp_resources.connect import open_client
from agentty_rag.mcp_resources.model import (
    LISTING_TIMEOUTS,
    MAX_PAGES,
    ReaderOptions,
    Resource,
    ServerReport,
    is_text_type,
)
from agentty_rag.mcp_resources.servers import ServerSpec
from agentty_rag.mcp_resources.stderr import StderrTail, describe

T = TypeVar("T")


class ServerReader:
    """One configured server: its resources now (``resources``) and how it is doing (``report``).

    Args:
        spec: the server.
        options: the bounds and caps.
        changed: called (on the hub's event loop) whenever ``resources`` or ``report`` changed.
        environment: a stdio server's environment, before its entry's own ``env``.
        protocol: ``auto`` (the SDK's negotiation) or ``legacy`` (the ``initialize`` handshake only).
    """

    def __init__(
        self,
        spec: ServerSpec,
        options: ReaderOptions,
        changed: Callable[[], None],
        environment: Mapping[str, str],
        protocol: str = "auto",
    ) -> None:
        self.spec = spec
        self.options = options
        self.resources: dict[str, Resource] = {}
        self.report = ServerReport(spec.name, spec.origin, spec.target)
        self._changed = changed
        self._environment = environment
        self._protocol = protocol
        self._listed: dict[str, types.Resource] = {}
        self._skipped: dict[str, str] = {}  # uri -> why it was left out
        self._capped = False  # the listing was cut (``_capped_by`` says by what)
        self._capped_by = ""
        self._changes = Changes()
        self._timeouts_in_a_row = 0
        self._failed_this_attempt = False
        self._connected = False
        self._stderr = ""

    @property
    def _ms(self) -> int:
        return round(self.options.timeout_s * 1000)

    # -- the server's life ----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read the server until cancelled; after a failure, try again every ``ttl_s``."""
        while True:
            self._failed_this_attempt = False
            self._stderr = ""
            try:
                await self._session()
                return  # it offers no resources: nothing to follow
            except Exception as error:  # the server's boundary: nothing it does may reach a search
                self._fail(describe(error))
            await anyio.sleep(self.options.ttl_s)

    async def _session(self) -> None:
        """One connection, from start to failure (or to the end, for a server that offers no resources).

        Starting is bounded by a watchdog task rather than a timeout around the handshake: the client's own
        tasks outlive the handshake. A stdio server that does not answer is stopped by the SDK gracefully,
        which takes seconds, so the watchdog reports the failure at the deadline, before that ends.
        """
        tail = StderrTail(self.spec.name) if not self.spec.url else None
        self._connected = False
        try:
            with anyio.CancelScope() as session:
                # The stack (the client) closes before the task group waits for the tasks following it.
                async with anyio.create_task_group() as tasks, contextlib.AsyncExitStack() as stack:
                    tasks.start_soon(self._deadline, session)
                    client = await open_client(
                        stack, self.spec, self._environment, tail, self._protocol, self._changes.on_message
                    )
                    self._connected = True
                    stack.push_async_callback(self._changes.unwatch)
                    if client.server_capabilities.resources is None:
                        self._publish(state="ready", freshness="offers no resources")
                        return
                    await self._load(client, tasks, reread=True)
                    await self._follow(client, tasks)
            if session.cancelled_caught:
                raise ResourceServerError(f"timed out after {self._ms} ms starting")
        finally:
            with anyio.CancelScope(shield=True):  # on shutdown too: the pipe is closed (the server has exited)
                self._stderr = await anyio.to_thread.run_sync(tail.close) if tail is not None else ""

    async def _deadline(self, session: anyio.CancelScope) -> None:
        await anyio.sleep(self.options.timeout_s)
        if not self._connected:
            self._fail(f"timed out after {self._ms} ms starting")
            session.cancel()

    async def _call(self, what: str, call: Awaitable[T]) -> T:
        """One request, bounded by the timeout; a failure raises ``ResourceServerError`` naming ``what``."""
        try:
            with anyio.fail_after(self.options.timeout_s):
                return await call
        except TimeoutError:
            raise ResourceServerError(f"timed out after {self._ms} ms {what}") from None
        except MCPError as error:
            raise ResourceServerError(f"{what}: {error.message}") from None

    # -- listing and reading --------------------------------------------------------------------------------

    async def _load(self, client: Client, tasks: anyio.abc.TaskGroup, reread: bool | Iterable[str]) -> None:
        """List the resources, follow their changes, drop the ones gone, and read the new ones and ``reread``."""
        self._listed = await self._list(client)
        await self._changes.watch(client, tasks, self._listed, self._call)
        for uri in set(self.resources) - set(self._listed):
            del self.resources[uri]
        for uri in set(self._skipped) - set(self._listed):
            del self._skipped[uri]
        again = set(self._listed) if reread is True else set(reread or ())
        done = set(self.resources) | set(self._skipped)
        await self._read_all(client, [item for uri, item in self._listed.items() if uri not in done or uri in again])
        self._publish(state="ready")

    async def _list(self, client: Client) -> dict[str, types.Resource]:
        """The listing, page by page, cut at ``max_resources``, at ``MAX_PAGES`` pages or after
        ``LISTING_TIMEOUTS`` call timeouts in all (``capped_by`` says which)."""
        found: dict[str, types.Resource] = {}
        cursor: str | None = None
        cursors: set[str] = set()
        self._capped, self._capped_by = False, ""
        budget_s = LISTING_TIMEOUTS * self.options.timeout_s
        deadline = anyio.current_time() + budget_s
        for _ in range(MAX_PAGES):
            page = await self._call("listing resources", client.list_resources(cursor=cursor))
            if not page.resources:
                return found
            for item in page.resources:
                if len(found) < self.options.max_resources:
                    found.setdefault(item.uri, item)
                else:
                    self._cap("more than AGENTTY_RAG_MCP_MAX_RESOURCES")
            cursor = page.next_cursor
            if cursor is None or cursor in cursors:
                return found
            if len(found) >= self.options.max_resources:
                self._cap("more than AGENTTY_RAG_MCP_MAX_RESOURCES")
                return found
            if anyio.current_time() > deadline:
                self._cap(f"its listing went on past {budget_s:g} s")
                return found
            cursors.add(cursor)
        self._cap(f"its listing went on past {MAX_PAGES} pages")
        return found

    def _cap(self, why: str) -> None:
        self._capped, self._capped_by = True, why

    async def _read_all(self, client: Client, items: list[types.Resource]) -> None:
        limiter = anyio.CapacityLimiter(self.options.reads_at_once)
        async with anyio.create_task_group() as reads:
            for item in sorted(items, key=lambda item: item.uri):
                reads.start_soon(self._read, client, item, limiter)

    async def _read(self, client: Client, item: types.Resource, limiter: anyio.CapacityLimiter) -> None:
        """Read one resource into ``resources``, or count why it was left out."""
        self.resources.pop(item.uri, None)
        self._skipped.pop(item.uri, None)
        if is_text_type(item.mime_type) is False:
            self._skipped[item.uri] = "binary"
            return
        if item.size is not None and item.size > self.options.max_bytes:
            self._skipped[item.uri] = "too large"
            return
        async with limiter:
            try:
                with anyio.fail_after(self.options.timeout_s):
                    result = await client.read_resource(item.uri)
            except TimeoutError:
                self._timed_out(item.uri)
                return
            except MCPError as error:
                if error.code == types.CONNECTION_CLOSED:
                    raise ResourceServerError(f"the connection closed reading {item.uri}") from None
                self._skipped[item.uri] = "read failed"
                return
        self._timeouts_in_a_row = 0
        self._keep(item, result)

    def _timed_out(self, uri: str) -> None:
        self._skipped[uri] = "read timed out"
        self._timeouts_in_a_row += 1
        if self._timeouts_in_a_row >= max(2, self.options.reads_at_once) and not self.resources:
            raise ResourceServerError(f"timed out after {self._ms} ms reading every resource")

    def _keep(self, item: types.Resource, result: types.ReadResourceResult) -> None:
        texts = [c for c in result.contents if isinstance(c, types.TextResourceContents)]
        mime = item.mime_type or (texts[0].mime_type if texts else "") or ""
        if not texts or is_text_type(mime) is False:
            self._skipped[item.uri] = "binary"
            return
        text = "\n\n".join(c.text for c in texts)
        if len(text.encode("utf-8", "surrogatepass")) > self.options.max_bytes:
            self._skipped[item.uri] = "too large"
            return
        self.resources[item.uri] = Resource(
            self.spec.name, item.uri, text, mime, item.title or item.name, item.description or ""
        )

    # -- freshness ------------------------------------------------------------------------------------------

    def _live(self, client: Client) -> bool:
        """Whether the server says when its resources change (else they are listed and read every TTL)."""
        capabilities = client.server_capabilities.resources
        return capabilities is not None and bool(capabilities.subscribe) and bool(capabilities.list_changed)

    async def _follow(self, client: Client, tasks: anyio.abc.TaskGroup) -> None:
        """Until cancelled: re-list or re-read on the server's word, or everything every TTL."""
        live = self._live(client)
        self._publish(freshness="change notifications" if live else f"read again every {self.options.ttl_s:g} s")
        while True:
            timed_out, relist, stale = await self._changes.wait(math.inf if live else self.options.ttl_s)
            if timed_out:
                await self._load(client, tasks, reread=True)
            elif relist:
                await self._load(client, tasks, reread=stale)
            elif stale:
                await self._read_all(client, [self._listed[uri] for uri in sorted(stale) if uri in self._listed])
                self._publish(state="ready")

    # -- reporting ------------------------------------------------------------------------------------------

    def _publish(self, **changes: Any) -> None:
        self.report = replace(
            self.report,
            listed=len(self._listed),
            read=len(self.resources),
            skipped=tuple(sorted(Counter(self._skipped.values()).items())),
            capped=self._capped,
            capped_by=self._capped_by,
            **changes,
        )
        if changes.get("state") == "ready":
            self.report = replace(self.report, error="", loaded=True)
        self._changed()

    def _fail(self, reason: str) -> None:
        """Mark the server failed (once per attempt) and drop its resources."""
        if self._failed_this_attempt:
            return
        self._failed_this_attempt = True
        if self._stderr and self._stderr not in reason:
            reason = f"{reason} — its stderr: {self._stderr}"
        self.resources.clear()
        self._listed = {}
        self.report = replace(
            self.report, state="failed", error=reason, failures=self.report.failures + 1, loaded=True, read=0
        )
        self._changed()


__all__ = ["ServerReader"]
