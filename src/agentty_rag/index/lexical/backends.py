"""The lexical backends by name: a backend is one module implementing ``LexicalIndex`` and one line here.

``IndexConfig.lexical`` names the backend an index uses (``sqlite`` unless told otherwise; ``qdrant`` keeps
the postings in Qdrant's engine in-process, ``index/qdrant/``, and needs the ``qdrant`` extra).
"""

from __future__ import annotations

from collections.abc import Callable

from agentty_rag.index.lexical.protocol import LexicalIndex
from agentty_rag.index.lexical.sqlite import SqliteLexical
from agentty_rag.index.qdrant.lexical import QdrantLexical
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.store import Store

# (the index's definition, its database as it is now, where notes for the next result go) -> an empty
# lexical index.
LexicalFactory = Callable[[IndexConfig, Callable[[], Store], Notes], LexicalIndex]


def _sqlite(config: IndexConfig, store: Callable[[], Store], notes: Notes) -> LexicalIndex:
    return SqliteLexical(config.field_names, store)


def _qdrant(config: IndexConfig, store: Callable[[], Store], notes: Notes) -> LexicalIndex:
    return QdrantLexical(config, store)


BACKENDS: dict[str, LexicalFactory] = {
    "sqlite": _sqlite,
    "qdrant": _qdrant,
}


def lexical_index(config: IndexConfig, store: Callable[[], Store], notes: Notes | None = None) -> LexicalIndex:
    """An empty lexical index of the backend ``config`` names (``notes``: where it tells the next result how
    it answered; none kept when not given).

    Raises:
        ValueError: no backend has that name (the message lists those that do).
    """
    factory = BACKENDS.get(config.lexical)
    if factory is None:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown lexical backend {config.lexical!r}: the backends are {known}")
    return factory(config, store, Notes() if notes is None else notes)


__all__ = ["BACKENDS", "LexicalFactory", "lexical_index"]
