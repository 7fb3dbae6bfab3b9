"""The settings of the code index's backend: the local index, or Qdrant (in-process or a server).

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import choice, integer, text


@dataclass(frozen=True)
class BackendSettings:
    """Backend: where the code index comes from: built here, or started from a shared index on Qdrant."""

    backend: str = choice(
        "AGENTTY_RAG_BACKEND",
        "local",
        "The code index's backend: `local` (the index database under `.agentty/`) or `qdrant` (needs "
        "`pip install 'agentty-rag[qdrant]'`): with `AGENTTY_QDRANT_URL`, the shared index published there, with "
        "the working tree overlaid; without, the BM25 postings in Qdrant's engine in-process. Scores are the same.",
        choices=("local", "qdrant"),
    )
    qdrant_url: str | None = text(
        "AGENTTY_QDRANT_URL",
        None,
        "The Qdrant server holding the shared index (`http://host:6333`; `file:DIR` for qdrant-client's local "
        "mode, one process at a time). Unset: Qdrant's engine runs in-process, its collection in `.agentty/qdrant/`.",
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
    qdrant_collection: str | None = text(
        "AGENTTY_QDRANT_COLLECTION",
        None,
        "The shared index's collection. Unset: `agentty_<repository>_<branch>`, the repository named by its "
        "`origin` remote (else its folder), the branch by `AGENTTY_QDRANT_BRANCH`.",
    )
    qdrant_branch: str = text(
        "AGENTTY_QDRANT_BRANCH",
        "main",
        "The branch whose shared index a machine starts from and `agentty-rag index --backend qdrant` "
        "publishes (a feature branch starts from main's, its own changes overlaid).",
    )


__all__ = ["BackendSettings"]
