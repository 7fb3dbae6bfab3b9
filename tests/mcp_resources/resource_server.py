"""A small MCP resource server written with the official SDK, for the tests of the MCP resource reader.

Run as a script: over stdio by default, or over streamable HTTP on a free loopback port (``--http``; the port
is the first line it prints). What it serves is chosen by flags:

- ``--docs``: static resources: Markdown notes, a JSON schema, a plain-text runbook, a PNG blob, a binary
  ``application/octet-stream`` text, and a resource template (which a reader must ignore);
- ``--many N --page-size P``: N more notes, listed P per page;
- ``--changing``: ``note://changing`` reads "first version" once; then it changes to "second version"
  (``notifications/resources/updated``) and ``note://added`` appears (``notifications/resources/list_changed``);
- ``--hang-read URI``: reading that resource never answers;
- ``--hang``: never speaks MCP at all (sleeps with stdin unread; ``--pid-file PATH`` says which process it is);
- ``--crash``: writes a reason to stderr and exits with status 3 before the handshake;
- ``--env``: ``env://variables`` shows the variables it was started with (``AGENTTY*``, ``TEAM``, ``PATH``);
- ``--no-subscribe``: no subscriptions and no change notifications (a reader must re-list on its own);
- ``--endless``: a listing that never ends: every page holds the same note and a new cursor.
"""

from __future__ import annotations

import argparse
import base64
import os
import socket
import sys
import time
from typing import Any

# A crashing or hanging server does so at once: the SDK is imported only by a server that answers.
if __name__ == "__main__" and ("--crash" in sys.argv or "--hang" in sys.argv):
    if "--crash" in sys.argv:
        print("resource server: the wiki database is unavailable", file=sys.stderr, flush=True)
        raise SystemExit(3)
    if "--pid-file" in sys.argv:
        with open(sys.argv[sys.argv.index("--pid-file") + 1], "w", encoding="utf-8") as pid_file:
            pid_file.write(str(os.getpid()))
    time.sleep(3600)

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.lowlevel import NotificationOptions, Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.server.subscriptions import (  # noqa: E402
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)

DOCS: dict[str, tuple[str, str]] = {
    "file:///design/auth.md": (
        "text/markdown",
        "# Authentication design\n\n## Token rotation\n\nService tokens for the quasar gateway rotate every "
        "nineteen hours; the rotation job lives in the scheduler.\n",
    ),
    "wiki://Team/Runbook": (
        "text/plain",
        "Runbook\n\nWhen the pelican queue backs up, drain it with the pelican-drain command before restarting.\n",
    ),
    "db://schema/orders": (
        "application/json",
        '{"table": "orders", "columns": ["id", "zeppelin_status", "placed_at"]}',
    ),
    "file:///images/logo.png": ("image/png", ""),
    "file:///bin/blob": ("application/octet-stream", ""),
}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode("ascii")


class State:
    """What the server holds now, and who is to hear about changes."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.texts: dict[str, tuple[str, str]] = dict(DOCS) if args.docs else {}
        for i in range(args.many):
            self.texts[f"note://many/{i:04d}"] = ("text/markdown", f"# Note {i}\n\nThe note numbered {i} of many.\n")
        if args.env:
            shown = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(("AGENTTY", "TEAM", "PATH")))
            self.texts["env://variables"] = ("text/plain", "\n".join(shown))
        if args.changing:
            self.texts["note://changing"] = ("text/markdown", "# Changing\n\nfirst version of the changing note\n")
        self.changed = False
        self.subscribers: list[Any] = []  # legacy sessions that subscribed
        self.bus = InMemorySubscriptionBus()

    async def notify_updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        for session in self.subscribers:
            await session.send_resource_updated(uri)

    async def notify_list_changed(self) -> None:
        await self.bus.publish(ResourcesListChanged())
        for session in self.subscribers:
            await session.send_resource_list_changed()


def build(state: State) -> Server[Any]:
    args = state.args

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        if args.endless:
            page_number = int(params.cursor) if params is not None and params.cursor else 0
            state.texts["note://endless"] = ("text/markdown", "# Endless\n\nThe endless listing's one note.\n")
            endless = types.Resource(uri="note://endless", name="endless", mime_type="text/markdown")
            return types.ListResourcesResult(resources=[endless], next_cursor=str(page_number + 1))
        uris = sorted(state.texts)
        start = int(params.cursor) if params is not None and params.cursor else 0
        size = args.page_size or len(uris) or 1
        page = uris[start : start + size]
        following = str(start + size) if start + size < len(uris) else None
        resources = [
            types.Resource(uri=uri, name=uri.rsplit("/", 1)[-1], mime_type=state.texts[uri][0]) for uri in page
        ]
        return types.ListResourcesResult(resources=resources, next_cursor=following)

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(uri_template="note://by-id/{id}", name="by-id", mime_type="text/markdown")
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == args.hang_read:
            await anyio.sleep_forever()
        if uri not in state.texts:
            raise ValueError(f"no resource {uri}")
        mime, text = state.texts[uri]
        if mime == "image/png" or uri == "file:///bin/blob":
            contents: Any = types.BlobResourceContents(uri=uri, mime_type=mime, blob=PNG)
        else:
            contents = types.TextResourceContents(uri=uri, mime_type=mime, text=text)
        if uri == "note://changing" and not state.changed:
            state.changed = True
            state.texts[uri] = (mime, "# Changing\n\nsecond version of the changing note\n")
            state.texts["note://added"] = ("text/markdown", "# Added\n\nA note added after the first read.\n")
            await state.notify_updated(uri)
            await state.notify_list_changed()
        return types.ReadResourceResult(contents=[contents])

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        if ctx.session not in state.subscribers:
            state.subscribers.append(ctx.session)
        return types.EmptyResult()

    live = not args.no_subscribe
    return Server(
        args.name,
        version="1.0",
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe if live else None,
        on_subscriptions_listen=ListenHandler(state.bus) if live else None,
    )


async def serve_stdio(server: Server[Any], live: bool) -> None:
    options = server.create_initialization_options(NotificationOptions(resources_changed=live))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


def serve_http(server: Server[Any]) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="error", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="resources")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--docs", action="store_true")
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--changing", action="store_true")
    parser.add_argument("--hang-read", default="")
    parser.add_argument("--no-subscribe", action="store_true")
    parser.add_argument("--env", action="store_true")
    parser.add_argument("--endless", action="store_true")
    args = parser.parse_args()
    server = build(State(args))
    if args.http:
        serve_http(server)
    else:
        anyio.run(serve_stdio, server, not args.no_subscribe)


if __name__ == "__main__":
    main()
