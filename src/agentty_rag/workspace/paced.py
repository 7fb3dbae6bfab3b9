"""Background embedding that never holds a query up: the server's batches go in requests sized by the
embedding server's measured speed, each sent only when no query is waiting for its own embedding.

An embedding server on a small machine answers one request at a time (Ollama's default) or shares its cores
between them; either way a query sent while a batch of 32 texts is being embedded waits for that batch, and a
query that waits longer than ``AGENTTY_RAG_EMBED_TIMEOUT_MS`` falls back to BM25. So a batch is cut into
requests that take about ``REQUEST_S`` each, and a query's embedding goes before the next request
(``QueryTurns``). A query that still timed out while a request of the background was in flight is not the
server's failure: it was busy (``DenseBackend.query_vector`` does not count it).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import numpy as np

from agentty_rag.errors import EmbeddingError
from agentty_rag.index.vectors.dense import Embedder, Matrix, Role

# How long one request of the background should take: what a query may wait behind it.
REQUEST_S = 0.4
# How long a request of the background waits for the queries in flight before it goes anyway.
QUERY_TURN_S = 5.0


class QueryTurns:
    """Who is talking to the embedding server: queries in flight, and requests of the background."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._queries = 0
        self._background = 0

    @contextlib.contextmanager
    def query(self) -> Iterator[None]:
        with self._changed:
            self._queries += 1
        try:
            yield
        finally:
            with self._changed:
                self._queries -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def background(self) -> Iterator[None]:
        """One request of the background, sent once no query waits (or after ``QUERY_TURN_S``)."""
        with self._changed:
            self._changed.wait_for(lambda: self._queries == 0, QUERY_TURN_S)
            self._background += 1
        try:
            yield
        finally:
            with self._changed:
                self._background -= 1

    @property
    def busy(self) -> bool:
        """Whether a request of the background is in flight now."""
        with self._changed:
            return self._background > 0


def next_size(sent: int, took_s: float, most: int) -> int:
    """The texts of the next request: as many as take about ``REQUEST_S`` at the speed just measured, between
    1 and ``most``."""
    fits = sent * REQUEST_S / took_s if took_s > 0 else float("inf")
    return most if fits >= most else max(1, int(fits))


class PacedEmbedder:
    """``embedder`` for the background: each batch sent as requests of ``next_size`` texts, in turn with the
    queries (``turns``). The rows are the same as one request's."""

    def __init__(self, embedder: Embedder, turns: QueryTurns) -> None:
        self.inner = embedder
        self.turns = turns
        self._size = 0  # texts per request, learned from the last one (0: not measured yet)

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def where(self) -> str:
        return self.inner.where

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if not texts:
            return self.inner.embed(texts, role)
        rows: list[Matrix] = []
        at = 0
        while at < len(texts):
            size = self._size or min(len(texts), 4)  # the first request small: the server's speed is unknown
            part = texts[at : at + size]
            with self.turns.background():
                started = time.monotonic()
                rows.append(self.inner.embed(part, role))
                took = time.monotonic() - started
            self._size = next_size(len(part), took, max(len(texts), 1))
            at += len(part)
        if len({row.shape[1:] for row in rows}) > 1:  # checked per request, but not against each other
            raise EmbeddingError("the server answered one batch with vectors of different lengths")
        return np.concatenate(rows) if len(rows) > 1 else rows[0]

    def close(self) -> None:
        self.inner.close()


__all__ = ["QUERY_TURN_S", "REQUEST_S", "PacedEmbedder", "QueryTurns", "next_size"]
