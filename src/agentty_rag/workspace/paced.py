"""Background embedding that never holds a query up: the server's batches go in requests sized by the
embedding server's measured speed, each sent only when no query is waiting for its own embedding, and in the
order that answers most questions first.

An embedding server on a small machine answers one request at a time (Ollama's default) or shares its cores
between them; either way a query sent while a batch of 32 texts is being embedded waits for that batch, and a
query that waits longer than ``AGENTTY_RAG_EMBED_TIMEOUT_MS`` falls back to BM25. So a batch is cut into
requests that take about ``REQUEST_S`` each (a quarter of the query's time-out when that is shorter) at the
speed of the last requests (``Pace``), a query's embedding
goes before the next request (``QueryTurns``), and a query waits for one such request at most. A query that
still timed out while a request of the background was in flight, or was sent during its wait, is not the
server's failure: it was busy (``DenseBackend.query_vector`` does not count it).

Requests of the background also take turns by what they embed (``TIERS``): an index's code definitions
first, then the documentation, then the rest of the code. A request waits while an embedder of an earlier
tier has work left (at most ``TIER_TURN_S``, so that a stalled one never stops the others).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator

import numpy as np

from agentty_rag.errors import EmbeddingError
from agentty_rag.index.vectors.dense import Embedder, Matrix, Role

# How long one request of the background should take: what a query may wait behind it. A shorter query
# time-out makes it shorter: at most a quarter of the time a query may wait (``request_s``).
REQUEST_S = 0.25
# How long a request of the background waits for the queries in flight before it goes anyway.
QUERY_TURN_S = 5.0
# How long a request of the background waits for an embedder of an earlier tier before it goes anyway.
TIER_TURN_S = 30.0
# The tiers, in the order they are embedded: the code index's definitions, the documentation, the rest.
TIERS = ("definitions", "docs", "rest")
# The requests whose speed sizes the next one.
MEASURED = 4


class Turn:
    """One query's embedding: whether a request of the background was in flight at any moment of it."""

    def __init__(self, turns: QueryTurns) -> None:
        self._turns = turns
        self._started = turns.started
        self._busy = turns.busy

    @property
    def overlapped(self) -> bool:
        """A request of the background was in flight when the query was sent, or was sent while it waited."""
        return self._busy or self._turns.busy or self._turns.started != self._started


class QueryTurns:
    """Who is talking to the embedding server: queries in flight, and requests of the background (by tier)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._queries = 0
        self._background = 0
        self._started = 0  # requests of the background sent so far
        self._waiting = 0  # requests of the background waiting for their turn
        self._working: Counter[int] = Counter()  # embedders with work left, by tier

    @contextlib.contextmanager
    def query(self) -> Iterator[Turn]:
        with self._changed:  # a reentrant lock: ``Turn`` reads the counts under it, at once
            self._queries += 1
            turn = Turn(self)
        try:
            yield turn
        finally:
            with self._changed:
                self._queries -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def working(self, tier: str) -> Iterator[None]:
        """An embedder with work of ``tier`` left: the later tiers' requests wait for it."""
        rank = TIERS.index(tier)
        with self._changed:
            self._working[rank] += 1
        try:
            yield
        finally:
            with self._changed:
                self._working[rank] -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def background(self, tier: str = "rest") -> Iterator[None]:
        """One request of the background, sent once no embedder of an earlier tier has work left (or after
        ``TIER_TURN_S``), then once no query waits (or after ``QUERY_TURN_S``)."""
        rank = TIERS.index(tier)
        with self._changed:
            self._waiting += 1
            self._changed.notify_all()
            self._changed.wait_for(lambda: not any(self._working[r] for r in range(rank)), TIER_TURN_S)
            self._changed.wait_for(lambda: self._queries == 0, QUERY_TURN_S)
            self._waiting -= 1
            self._background += 1
            self._started += 1
        try:
            yield
        finally:
            with self._changed:
                self._background -= 1
                self._changed.notify_all()

    @property
    def busy(self) -> bool:
        """Whether a request of the background is in flight now."""
        with self._changed:
            return self._background > 0

    def await_waiting(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` requests of the background wait for their turn (False after ``timeout``)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._waiting >= count, timeout)

    @property
    def started(self) -> int:
        """How many requests of the background were sent so far."""
        with self._changed:
            return self._started


def request_s(query_timeout_s: float) -> float:
    """How long one request of the background should take when a query may wait ``query_timeout_s``."""
    return min(REQUEST_S, query_timeout_s / 4)


def next_size(sent: int, took_s: float, most: int, aim_s: float = REQUEST_S) -> int:
    """The texts of the next request: as many as take about ``aim_s`` at the speed measured (``sent`` texts
    in ``took_s``), between 1 and ``most``."""
    fits = sent * aim_s / took_s if took_s > 0 else float("inf")
    return most if fits >= most else max(1, int(fits))


class Pace:
    """The embedding server's speed over the last ``MEASURED`` requests of the background, and what it has
    embedded lately (for ``status``: chunks a second)."""

    def __init__(self, aim_s: float = REQUEST_S) -> None:
        self.aim_s = aim_s  # how long a request should take
        self._lock = threading.Lock()
        self._recent: deque[tuple[int, float]] = deque(maxlen=MEASURED)
        self._done: deque[tuple[float, int]] = deque(maxlen=64)  # (when, texts) of the last requests

    def took(self, sent: int, seconds: float) -> None:
        with self._lock:
            self._recent.append((sent, seconds))
            self._done.append((time.monotonic(), sent))

    def size(self, most: int) -> int:
        """The next request's texts: 4 before any was measured (the server's speed is unknown)."""
        with self._lock:
            if not self._recent:
                return min(most, 4)
            sent = sum(n for n, _ in self._recent)
            took = sum(s for _, s in self._recent)
        return next_size(sent, took, most, self.aim_s)

    def rate(self, window_s: float = 60.0) -> float:
        """Texts a second embedded over the last ``window_s`` (0 when nothing was)."""
        now = time.monotonic()
        with self._lock:
            recent = [(at, n) for at, n in self._done if now - at <= window_s]
        if not recent:
            return 0.0
        span = max(now - recent[0][0], 1.0)
        return sum(n for _, n in recent) / span


class PacedEmbedder:
    """``embedder`` for the background: each batch sent as requests of ``Pace.size`` texts, in turn with the
    queries and the other tiers (``turns``). The rows are the same as one request's."""

    def __init__(self, embedder: Embedder, turns: QueryTurns, aim_s: float = REQUEST_S) -> None:
        self.inner = embedder
        self.turns = turns
        self.pace = Pace(aim_s)
        self._local = threading.local()

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def where(self) -> str:
        return self.inner.where

    @contextlib.contextmanager
    def tiered(self, tier: str) -> Iterator[PacedEmbedder]:
        """This thread's requests are of ``tier`` while it embeds that tier's chunks."""
        with self.turns.working(tier):
            previous, self._local.tier = getattr(self._local, "tier", "rest"), tier
            try:
                yield self
            finally:
                self._local.tier = previous

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if not texts:
            return self.inner.embed(texts, role)
        tier = getattr(self._local, "tier", "rest")
        rows: list[Matrix] = []
        at = 0
        while at < len(texts):
            part = texts[at : at + self.pace.size(len(texts))]
            with self.turns.background(tier):
                started = time.monotonic()
                rows.append(self.inner.embed(part, role))
                self.pace.took(len(part), time.monotonic() - started)
            at += len(part)
        if len({row.shape[1:] for row in rows}) > 1:  # checked per request, but not against each other
            raise EmbeddingError("the server answered one batch with vectors of different lengths")
        return np.concatenate(rows) if len(rows) > 1 else rows[0]

    def close(self) -> None:
        self.inner.close()


__all__ = [
    "MEASURED",
    "QUERY_TURN_S",
    "REQUEST_S",
    "TIERS",
    "TIER_TURN_S",
    "Pace",
    "PacedEmbedder",
    "QueryTurns",
    "Turn",
    "next_size",
    "request_s",
]
