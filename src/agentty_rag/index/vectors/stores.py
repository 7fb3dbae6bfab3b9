"""Where an index keeps its vectors: ``IndexConfig.vector_store`` names one of ``VECTOR_STORES``.

A new backend is its module (a ``base.VectorBackend``) and one line here. ``qdrant`` (the code index in
Qdrant's engine in-process) searches a copy of the vectors in Qdrant, and needs the ``qdrant`` extra.
"""

from __future__ import annotations

from agentty_rag.index.qdrant.vectors import QdrantVectors
from agentty_rag.index.vectors.base import VectorBackend
from agentty_rag.index.vectors.sqlite import SqliteVectors

VECTOR_STORES: dict[str, VectorBackend] = {
    "sqlite": SqliteVectors,
    "qdrant": QdrantVectors,
}


def vector_backend(name: str) -> VectorBackend:
    """The backend registered as ``name``; ``ValueError`` names the known ones when there is none."""
    try:
        return VECTOR_STORES[name]
    except KeyError:
        raise ValueError(f"no vector store {name!r} (known: {', '.join(VECTOR_STORES)})") from None


__all__ = ["VECTOR_STORES", "vector_backend"]
