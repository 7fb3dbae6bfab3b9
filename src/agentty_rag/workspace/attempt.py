"""One index's part of a search: what it is asked (``Lookup``) and what it gave (``Attempt``)."""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.vectors.dense import Vector
from agentty_rag.retrieve.parsed import ParsedQuery
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.workspace.request import SearchRequest


@dataclass(frozen=True)
class Lookup:
    """One index's search for a request, made before the index lock is taken.

    Args:
        request: what the search asks for (the query, ``k``, the filters).
        parsed: the query, read once for this index's tokenizer.
        name: the index's name (``docs``, ``code``, ``mcp``).
        index: the index.
        vector: the query's embedding (None when the dense leg is not wanted or not up).
        degraded: why the dense leg gave no vector, for the mode ("" when it did or was not asked).
        deadline: when waiting for the index lock gives up (``time.monotonic``).
    """

    request: SearchRequest
    parsed: ParsedQuery
    name: str
    index: CorpusIndex
    vector: Vector | None
    degraded: str
    deadline: float


@dataclass(frozen=True)
class Attempt:
    """A retrieval over one index: the ranking (None when there was nothing to rank) and how it went."""

    index: CorpusIndex
    retrieved: Retrieved | None
    mode: str
    empty_reason: str = ""
    notes: tuple[str, ...] = ()


def empty_reason(retrieved: Retrieved, request: SearchRequest, none_held: str = "") -> str:
    """Why a ranking came back empty ("" when it did not): ``none_held`` when the kinds the request is
    restricted to have nothing in the index (``places.nothing_held``), else no match."""
    if retrieved.hits:
        return ""
    if none_held:
        return none_held
    return f"no matches ({retrieved.mode})" + (" within the given filters" if request.filters.active else "")


__all__ = ["Attempt", "Lookup", "empty_reason"]
