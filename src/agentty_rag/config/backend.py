"""The settings of the code index's backend: the local index, or Qdrant (in-process or a server).

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import choice, integer, text


@dataclass(frozen=True)
class BackendSettings:
    """Backend: where the code index keeps its BM25 postings."""

    backend: str = choice(
        "AGENTTY_RAG_BACKEND",
        "local",
        "Where the code index's BM25 postings live: `local` (the index database under `.agentty/`) or "
        "`qdrant` (a Qdrant collection; needs `pip install 'agentty-rag[qdrant]'`). Scores are the same.",
        choices=("local", "qdrant"),
    )
    qdrant_url: str | None = text(
        "AGENTTY_QDRANT_URL",
        None,
        "The Qdrant server of the `qdrant` backend (`http://host:6333`). Unset: Qdrant's engine runs "
        "in-process, its collection in `.agentty/qdrant/`.",
    )
    qdrant_api_key: str | None = text(
        "AGENTTY_QDRANT_API_KEY",
        None,
        "The API key the Qdrant server asks for (use TLS with it). Never shown in reports.",
        secret=True,
    )
    qdrant_timeout_ms: int = integer(
        "AGENTTY_QDRANT_TIMEOUT_MS",
        5000,
        "Longest wait for one request to the Qdrant server (rounded to whole seconds). A server that does not "
        "answer in time, or refuses, leaves searches to the local index, and says so in their header.",
        low=1000,
        high=60_000,
    )
    qdrant_retry_s: int = integer(
        "AGENTTY_QDRANT_RETRY_S",
        30,
        "After the Qdrant server failed to answer, how long searches use the local index before it is asked again.",
        low=1,
        high=86_400,
    )


__all__ = ["BackendSettings"]
