"""Where an index keeps its embeddings: the ``VectorStore`` seam, what is embedded for a chunk, and exact
cosine search in memory.

A ``VectorStore`` holds the vectors of one embedding profile by chunk slot. The index asks it to ``load``
what is stored after it opens and after each commit, to ``drop`` the chunks that left, for the chunks still
``missing`` a vector (and to ``put`` their vectors once embedded), and, while it searches, for every slot's
``similarities`` to a query (``best_of`` takes a search's candidates from them) and the ``coverage``. The
SQLite implementation (``sqlite_vectors.py``) keeps them in the index database, keyed by the hash of the
embedded text, so an unchanged chunk is never embedded twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.types import Chunk

Matrix = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]
# Characters of a chunk that are embedded: the head of a long chunk says what it is about.
_EMBEDDED_CHARS = 4000


def embed_text(chunk: Chunk) -> str:
    """What is embedded for a chunk: where it is (path, heading or symbol path), then its text."""
    where = chunk.symbol or chunk.context
    head = f"{chunk.ref} · {where}" if where else chunk.ref
    return f"{head}\n{chunk.text}"[:_EMBEDDED_CHARS]


def embed_hash(chunk: Chunk) -> str:
    """The hash of ``embed_text``: chunks with the same hash share a vector."""
    return xxhash.xxh3_128_hexdigest(embed_text(chunk).encode("utf-8", "surrogatepass"))


class VectorStore(Protocol):
    """The vectors of one embedding profile, by chunk slot, with nearest-neighbour search over them."""

    def load(self, slots: Sequence[int] | None = None) -> None:
        """Take in the stored vectors of ``slots`` (of every chunk when None, replacing what is held)."""
        ...

    def put(self, slots: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Keep new vectors (unit rows) of chunks, given by slot and by the ``embed_hash`` of their text."""
        ...

    def drop(self, slots: Sequence[int]) -> None:
        """Forget the vectors of chunks that left the index."""
        ...

    def missing(self, limit: int) -> list[tuple[int, str, Chunk]]:
        """Up to ``limit`` chunks with no vector yet, in slot order: (slot, embed hash, chunk)."""
        ...

    def similarities(self, query: Matrix, alive: Mask, allowed: Mask | None = None) -> Matrix:
        """The cosine similarity of every slot to ``query`` (a unit vector): NaN where a slot is not live, not
        allowed or has no vector."""
        ...

    def coverage(self, alive: Mask) -> int:
        """How many live chunks have a vector."""
        ...


class DenseIndex:
    """Unit vectors by slot, and exact cosine top-k over the live, allowed ones."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.matrix: Matrix = np.zeros((0, dimension), np.float32)
        self.present = np.zeros(0, bool)

    def _grow(self, capacity: int) -> None:
        if capacity <= len(self.present):
            return
        size = max(capacity, 2 * len(self.present), 64)
        matrix = np.zeros((size, self.dimension), np.float32)
        matrix[: len(self.matrix)] = self.matrix
        present = np.zeros(size, bool)
        present[: len(self.present)] = self.present
        self.matrix, self.present = matrix, present

    def put(self, slots: list[int], vectors: Matrix) -> None:
        if not slots:
            return
        self._grow(max(slots) + 1)
        self.matrix[slots] = vectors
        self.present[slots] = True

    def drop(self, slots: Sequence[int]) -> None:
        for slot in slots:
            if slot < len(self.present):
                self.present[slot] = False

    def count(self, alive: Mask) -> int:
        n = min(len(alive), len(self.present))
        return int((self.present[:n] & alive[:n]).sum())

    def similarities(self, query: Matrix, alive: Mask, allowed: Mask | None = None) -> Matrix:
        """Every slot's cosine similarity to ``query`` (a unit vector); NaN for a slot that is not live, not
        allowed or has no vector."""
        n = min(len(alive), len(self.present))
        usable = self.present[:n] & alive[:n]
        if allowed is not None:
            m = min(n, len(allowed))
            usable[:m] &= allowed[:m]
            usable[m:] = False
        out = np.full(len(alive), np.nan, np.float32)
        slots = np.flatnonzero(usable)
        if len(slots):
            out[slots] = self.matrix[slots] @ query.reshape(-1).astype(np.float32)
        return out


def best_of(similarities: Matrix, pool: int) -> list[tuple[int, float]]:
    """The ``pool`` best (slot, similarity) pairs of a similarity per slot (NaN: not a candidate), best first,
    ties by slot."""
    slots = np.flatnonzero(~np.isnan(similarities))
    if len(slots) == 0 or pool <= 0:
        return []
    scores = similarities[slots]
    if len(slots) > pool:  # everything that ties with the pool's last member, so that ties go by slot
        cut = np.partition(scores, len(scores) - pool)[len(scores) - pool]
        keep = np.flatnonzero(scores >= cut)
        slots, scores = slots[keep], scores[keep]
    order = np.lexsort((slots, -scores))[:pool]
    return [(int(slots[i]), float(scores[i])) for i in order]
