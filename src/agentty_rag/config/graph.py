"""The settings of the graph stage (GraphRAG).

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import flag, integer


@dataclass(frozen=True)
class GraphSettings:
    """GraphRAG: the optional stage that adds the best hits' neighbours in the index's graph (off by default)."""

    graph: bool = flag(
        "AGENTTY_RAG_GRAPH",
        False,
        "GraphRAG: links between files (docs links, imports, names a file uses that another defines), similar "
        "passages and communities; the best hits' neighbours join the candidates, fused by rank. The graph is "
        "built on first use and again after the index changed, and kept beside the index.",
    )
    graph_seeds: int = integer(
        "AGENTTY_RAG_GRAPH_SEEDS", 3, "GraphRAG: how many of the best hits bring their neighbours.", low=1, high=10
    )
    graph_max_chunks: int = integer(
        "AGENTTY_RAG_GRAPH_MAX_CHUNKS",
        100_000,
        "GraphRAG: an index with more passages than this gets no graph (the search says so).",
        low=100,
        high=2_000_000,
    )


__all__ = ["GraphSettings"]
