"""The lexical backends by name: a backend is one module implementing ``LexicalIndex`` and one line here.

``IndexConfig.lexical`` names the backend an index uses (``sqlite`` unless told otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

from agentty_rag.index.lexical.protocol import LexicalIndex
from agentty_rag.index.lexical.sqlite import SqliteLexical
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.store import Store

# (the index's fields, its database as it is now) -> an empty lexical index.
LexicalFactory = Callable[[tuple[str, ...], Callable[[], Store]], LexicalIndex]

BACKENDS: dict[str, LexicalFactory] = {
    "sqlite": SqliteLexical,
}


def lexical_index(config: IndexConfig, store: Callable[[], Store]) -> LexicalIndex:
    """An empty lexical index of the backend ``config`` names.

    Raises:
        ValueError: no backend has that name (the message lists those that do).
    """
    factory = BACKENDS.get(config.lexical)
    if factory is None:
        known = ", ".join(sorted(BACKENDS))
        raise ValueError(f"unknown lexical backend {config.lexical!r}: the backends are {known}")
    return factory(config.field_names, store)


__all__ = ["BACKENDS", "LexicalFactory", "lexical_index"]
