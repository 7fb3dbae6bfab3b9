"""Where an index's Qdrant collection lives: an in-process engine in a folder, or a server at a URL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class QdrantTarget:
    """One index's collection.

    Args:
        path: the folder of the in-process engine (``qdrant-edge-py``), used when ``url`` is None.
        collection: the collection's name on a server.
        url: a Qdrant server (``AGENTTY_QDRANT_URL``); None keeps the collection in-process under ``path``.
        api_key: the server's API key (``AGENTTY_QDRANT_API_KEY``).
        timeout_s: the longest wait for one request to a server (``AGENTTY_QDRANT_TIMEOUT_MS``).
        retry_s: after a server failed to answer, how long it rests before it is asked again
            (``AGENTTY_QDRANT_RETRY_S``).
    """

    path: Path
    collection: str
    url: str | None = None
    api_key: str | None = None
    timeout_s: float = 5.0
    retry_s: float = 30.0

    @property
    def key(self) -> str:
        """What identifies the collection within a process: its folder, or its server and name."""
        return str(self.path) if self.url is None else f"{self.url}#{self.collection}"

    def describe(self) -> str:
        """Where the collection is, for ``status`` (never the API key)."""
        if self.url is None:
            return f"qdrant in-process in {self.path}"
        return f"qdrant server {self.url}, collection {self.collection}"


__all__ = ["QdrantTarget"]
