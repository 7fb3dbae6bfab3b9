"""Where an index keeps its embeddings: the ``VectorStore`` seam, what is embedded for a chunk, and exact
cosine search in memory.

A ``VectorStore`` holds the vectors of one embedding profile by chunk id (the chunk's slot in the index), and
speaks ids only. The index asks it to ``load`` what is stored after it opens and after each commit, to ``drop``
the chunks that left, which chunks are still ``missing`` a vector (and to ``put`` their vectors once embedded),
and, while it searches, for the ``similarities`` of the chunks it may return (in the order it asks;
``best_of`` takes a search's candidates from them) and the ``coverage``. A ``VectorBackend`` makes stores
(``stores.VECTOR_STORES`` names each) and keeps the vectors of every profile: the SQLite one
(``sqlite.py``) keeps them in the index database, keyed by the hash of the embedded text, so an
unchanged chunk is never embedded twice; the Qdrant one (``index/qdrant/vectors.py``) writes through to
that table and searches a copy of the live chunks' vectors in Qdrant's engine in-process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.density import NeighbourDensity, Neighbourhoods
from agentty_rag.types import Chunk

if TYPE_CHECKING:
    from agentty_rag.index.storage.definition import IndexConfig
    from agentty_rag.index.storage.store import Store

Matrix = npt.NDArray[np.float32]
Ids = npt.NDArray[np.intp]
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
    """The vectors of one embedding profile, by chunk id, with exact similarities to a query."""

    def load(self, ids: Sequence[int] | None = None) -> None:
        """Take in the stored vectors of the chunks ``ids`` (of every chunk when None, replacing what is held)."""
        ...

    def put(self, ids: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Keep new vectors (unit rows) of chunks, given by id and by the ``embed_hash`` of their text."""
        ...

    def drop(self, ids: Sequence[int]) -> None:
        """Forget the vectors of chunks that left the index."""
        ...

    def missing(self, limit: int, definitions: bool | None = None) -> list[int]:
        """Up to ``limit`` ids of chunks with no vector yet, in id order: of every chunk (``definitions`` None),
        of the code definitions only (True, ``types.DEFINITION_KINDS``) or of the other chunks only (False)."""
        ...

    def similarities(self, query: Matrix, ids: Ids) -> Matrix:
        """The cosine similarity of each chunk of ``ids`` (ascending) to ``query`` (a unit vector), in that
        order: NaN for a chunk with no vector."""
        ...

    def densities(self, ids: Ids) -> Matrix:
        """Each chunk's neighbourhood density (``density.py``: its mean similarity to its nearest others), in
        the order of ``ids`` (ascending): NaN for a chunk with no vector."""
        ...

    def keep_neighbourhoods(self) -> None:
        """Keep the neighbourhoods found so far for the next process, when they changed since last kept (a
        store that keeps none does nothing)."""
        ...

    def coverage(self, ids: Ids) -> int:
        """How many of the chunks ``ids`` have a vector."""
        ...


class VectorBackend(Protocol):
    """Makes the ``VectorStore`` of a profile over an index's database, and keeps the vectors of every profile.

    A new backend is one module implementing this (a class whose constructor makes the store will do), plus
    its line in ``stores.VECTOR_STORES``.
    """

    def __call__(self, database: Callable[[], Store], profile: EmbeddingProfile, config: IndexConfig) -> VectorStore:
        """The store of ``profile``'s vectors; ``database`` is the index database as it is now, ``config`` the
        index (where a store kept outside the database lives)."""
        ...

    def imported(self, database: Store, other: Path) -> int:
        """Take every vector another index database keeps that this one lacks; returns how many."""
        ...

    def prune(self, database: Store) -> None:
        """Forget vectors no live chunk uses any more (after a rebuild or a compaction)."""
        ...


class DenseIndex:
    """Unit vectors by chunk id, and exact cosine similarities of the ones asked for."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.matrix: Matrix = np.zeros((0, dimension), np.float32)
        self.present = np.zeros(0, bool)
        self._density: NeighbourDensity | None = None  # found at the first ``densities``, then kept up to date

    def _grow(self, capacity: int) -> None:
        if capacity <= len(self.present):
            return
        size = max(capacity, 2 * len(self.present), 64)
        matrix = np.zeros((size, self.dimension), np.float32)
        matrix[: len(self.matrix)] = self.matrix
        present = np.zeros(size, bool)
        present[: len(self.present)] = self.present
        self.matrix, self.present = matrix, present

    def put(self, ids: list[int], vectors: Matrix) -> None:
        if not ids:
            return
        self._grow(max(ids) + 1)
        self.matrix[ids] = vectors
        self.present[ids] = True
        self._changed(ids)

    def drop(self, ids: Sequence[int]) -> None:
        for chunk in ids:
            if chunk < len(self.present):
                self.present[chunk] = False
        self._changed(ids)

    def _changed(self, ids: Sequence[int]) -> None:
        if self._density is not None and len(ids):
            self._density.changed(self.matrix, self.present, np.asarray(ids, np.intp))

    def _held(self, ids: Ids) -> npt.NDArray[np.bool_]:
        """Which of ``ids`` have a vector."""
        within = ids < len(self.present)
        within[within] = self.present[ids[within]]
        return within

    def count(self, ids: Ids) -> int:
        return int(self._held(ids).sum())

    def similarities(self, query: Matrix, ids: Ids) -> Matrix:
        """The cosine similarity of each of ``ids`` (ascending) to ``query`` (a unit vector), in that order; NaN
        for one with no vector."""
        held = self._held(ids)
        out = np.full(len(ids), np.nan, np.float32)
        rows = ids[held]
        if len(rows):
            out[held] = self.matrix[rows] @ query.reshape(-1).astype(np.float32)
        return out

    def carry_density(self, previous: DenseIndex) -> None:
        """Take over the neighbourhoods ``previous`` found (the same vectors read again), told which vectors
        differ from its own: a reload finds again only what changed."""
        if previous._density is None or previous.dimension != self.dimension:
            return
        known = len(previous.present)
        self._grow(known)  # the rows previous held, at least
        differs = self.present.copy()
        differs[:known] = (self.present[:known] != previous.present) | (
            self.present[:known] & (self.matrix[:known] != previous.matrix[:known]).any(axis=1)
        )
        self._density = previous._density
        self._density.changed(self.matrix, self.present, np.flatnonzero(differs))

    def take_neighbourhoods(self, kept: Neighbourhoods) -> None:
        """Start from the neighbourhoods another process found (``kept``): only the vectors that differ from
        the ones they were found for are compared again. Nothing is taken once this index has its own."""
        if self._density is not None or len(kept.present) > 2 * len(self.present) + 1024:
            return  # kept for far more rows than this index has: not worth holding them all
        self._grow(len(kept.present))
        self._density = NeighbourDensity.taken_over(kept, self.matrix, self.present)

    def neighbourhoods(self) -> Neighbourhoods | None:
        """The neighbourhoods found so far, for keeping (None before any was found)."""
        return None if self._density is None else self._density.snapshot(self.present)

    def density_changes(self) -> int | None:
        """How many times the neighbourhoods changed (None before any was found): a snapshot is worth keeping
        once per change."""
        return None if self._density is None else self._density.changes

    def densities(self, ids: Ids) -> Matrix:
        """The neighbourhood density (``density.py``) of each of ``ids``, in that order; NaN for one with no
        vector. The first call finds every vector's neighbours; later changes are taken in as they come."""
        if self._density is None:
            self._density = NeighbourDensity()
            self._density.rebuild(self.matrix, self.present)
        held = self._held(ids)
        out = np.full(len(ids), np.nan, np.float32)
        out[held] = self._density.densities(ids[held])
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
