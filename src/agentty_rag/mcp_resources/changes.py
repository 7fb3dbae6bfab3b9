"""What one MCP server says changed: its notifications, and the subscriptions that ask for them.

A server that sends ``notifications/resources/list_changed`` or ``notifications/resources/updated`` is
subscribed to each listed resource (``resources/subscribe``, 2025) or listened to on one 2026
``subscriptions/listen`` stream; each notification marks the listing or one resource stale and wakes the
reader (``ServerReader``), which lists or reads again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Iterable
from typing import Protocol, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import Subscription, SubscriptionLost
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentty_rag.errors import ResourceServerError

T = TypeVar("T")


class Call(Protocol):
    """The reader's bounded request: ``ResourceServerError`` naming ``what`` when it fails."""

    def __call__(self, what: str, call: Awaitable[T]) -> Awaitable[T]: ...


class Changes:
    """The listing and the resources a server said changed since the reader last looked."""

    def __init__(self) -> None:
        self._stale_list = False
        self._stale: set[str] = set()
        self._wake = anyio.Event()
        self._watched: tuple[str, ...] | None = None
        self._watch_stack: contextlib.AsyncExitStack | None = None

    async def watch(self, client: Client, tasks: anyio.abc.TaskGroup, listed: Iterable[str], call: Call) -> None:
        """Ask to be told of changes to the listed resources: subscribe to each (2025) or listen (2026)."""
        capabilities = client.server_capabilities.resources
        uris = tuple(sorted(listed)) if capabilities is not None and capabilities.subscribe else ()
        if capabilities is None or uris == self._watched or not (capabilities.subscribe or capabilities.list_changed):
            return
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.unwatch()
            self._watch_stack = contextlib.AsyncExitStack()
            listening = client.listen(
                resources_list_changed=bool(capabilities.list_changed), resource_subscriptions=uris
            )
            subscription = await call("subscribing", self._watch_stack.enter_async_context(listening))
            tasks.start_soon(self._drain, subscription)
        else:
            new = [uri for uri in uris if uri not in (self._watched or ())]
            for uri in new:
                request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
                with contextlib.suppress(ResourceServerError):
                    await call(f"subscribing to {uri}", client.session.send_request(request, types.EmptyResult))
        self._watched = uris

    async def unwatch(self) -> None:
        """End a 2026 subscription before its session closes."""
        watching, self._watch_stack, self._watched = self._watch_stack, None, None
        if watching is not None:
            await watching.aclose()

    async def _drain(self, subscription: Subscription) -> None:
        """Take a 2026 stream's events (the SDK hands each to ``on_message`` as well); when it is lost, the
        resources are listed again."""
        try:
            async for _event in subscription:
                pass
        except SubscriptionLost:
            self._watched = None
            self._mark(relist=True)

    async def on_message(self, message: object) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            self._mark(relist=True)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._mark(uri=message.params.uri)

    def _mark(self, relist: bool = False, uri: str = "") -> None:
        self._stale_list = self._stale_list or relist
        if uri:
            self._stale.add(uri)
        self._wake.set()

    async def wait(self, timeout_s: float) -> tuple[bool, bool, set[str]]:
        """Wait for a change, at most ``timeout_s``: whether the wait timed out, whether the listing is stale,
        and the resources that are."""
        with anyio.move_on_after(timeout_s) as waited:
            await self._wake.wait()
        self._wake = anyio.Event()
        stale, self._stale = self._stale, set()
        relist, self._stale_list = self._stale_list, False
        return waited.cancelled_caught, relist, stale


__all__ = ["Call", "Changes"]
