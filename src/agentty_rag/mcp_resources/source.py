"""Other MCP servers' resources as a source of the in-memory ``mcp`` index.

A scan takes the hub's snapshot: one item per resource, keyed ``mcp:SERVER:URI``, stamped with its size and a
hash of its text (so an index re-reads exactly the resources whose text changed). Its bytes are held here,
never read from or written to disk. A resource becomes one document cut as docs are, by its format; its
``ref`` is its URI (provenance ``mcp:URI``) and its title starts with its server's name (``Chunk.origin``),
then its name and description.
"""

from __future__ import annotations

from collections.abc import Callable

import xxhash

from agentty_rag.mcp_resources.model import Resource, Snapshot
from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.text import decode
from agentty_rag.sources.walker import ScanResult, SkipReport
from agentty_rag.types import ORIGIN_END, Document, FileStamp


def resource_key(resource: Resource) -> str:
    return f"mcp:{resource.server}:{resource.uri}"


def resource_bytes(resource: Resource) -> bytes:
    return resource.text.encode("utf-8", "surrogatepass")


class McpSource:
    """The text resources of the configured MCP servers, as the hub's latest snapshot holds them.

    Args:
        snapshots: gives the hub's snapshot (starting the hub, and waiting for its first load, on first use).
        max_bytes: the largest resource read (the reader already skips larger ones).
    """

    name = "mcp"

    def __init__(self, snapshots: Callable[[], Snapshot], max_bytes: int) -> None:
        self._snapshots = snapshots
        self.max_bytes = max_bytes
        self._held: dict[str, Resource] = {}

    def scan(self) -> ScanResult:
        snapshot = self._snapshots()
        self._held = {resource_key(resource): resource for resource in snapshot.resources}
        stamps = [
            FileStamp(
                key,
                resource.uri,
                len(resource_bytes(resource)),
                xxhash.xxh3_64_intdigest(resource_bytes(resource)) >> 1,
            )
            for key, resource in sorted(self._held.items())
        ]
        return ScanResult(stamps, SkipReport())

    def held(self, stamp: FileStamp) -> bytes | None:
        resource = self._held.get(stamp.key)
        return None if resource is None else resource_bytes(resource)

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        resource = self._held.get(stamp.key)
        loaded = decode(data)
        if resource is None or loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason or "went away")
        about = " ".join(part for part in (resource.name, resource.description) if part)
        title = f"{resource.server}{ORIGIN_END}{about}"
        return LoadResult((Document("mcp", resource.uri, loaded.text, language=resource.format, title=title),))

    def describe(self) -> str:
        return "the resources of the configured MCP servers"


__all__ = ["McpSource", "resource_key"]
