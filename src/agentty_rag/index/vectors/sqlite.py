"""The ``VectorStore`` kept in the index database (the ``sqlite`` backend of ``stores``), and the upkeep
of its ``vectors`` table.

``vectors(profile, hash, vector)`` holds float16 embeddings keyed by embedding profile and the hash of the
embedded text (``embed_hash``, a column of every chunk), so an unchanged chunk is never embedded twice and a
new model invalidates vectors only. Every vector ends with its checksum, sealed with this machine's key as
every checksum of the database: a damaged page changes bytes without any SQLite error, and a vector
written elsewhere (an index copied or committed) is not this machine's. ``VectorTable`` is the table of one
profile, which every store writes through to; ``SqliteVectors`` searches over a ``DenseIndex`` in memory,
filled from the table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexBusy, IndexCorrupt, IndexFull, IndexUnwritable
from agentty_rag.index.storage.store import Store
from agentty_rag.index.vectors import neighbour_file
from agentty_rag.index.vectors.base import DenseIndex, Ids, Matrix
from agentty_rag.index.vectors.dense import EmbeddingProfile

if TYPE_CHECKING:
    from agentty_rag.index.storage.definition import IndexConfig

log = logging.getLogger(__name__)

_VECTOR_SUM_BYTES = 8


def _vector_sum(store: Store, vector: bytes) -> bytes:
    return bytes.fromhex(store.sealed(vector))[:_VECTOR_SUM_BYTES]


def seal_vector(store: Store, vector: bytes) -> bytes:
    """A vector's bytes followed by their checksum (sealed with the key of ``store``)."""
    return vector + _vector_sum(store, vector)


def open_vector(store: Store, sealed: bytes) -> bytes:
    """The vector bytes of a sealed blob; ``IndexCorrupt`` when they do not match their checksum."""
    vector, sum_bytes = sealed[:-_VECTOR_SUM_BYTES], sealed[-_VECTOR_SUM_BYTES:]
    if len(sealed) <= _VECTOR_SUM_BYTES or _vector_sum(store, vector) != sum_bytes:
        raise IndexCorrupt("a stored vector does not match its checksum")
    return vector


class VectorTable:
    """The ``vectors`` table of one profile: the truth every store of the profile writes through to, and the
    backend's upkeep of the table, for every profile.

    Args:
        database: the index database as it is now (it is replaced when the index is rebuilt after corruption).
        profile: the embedding profile (its key names the vectors, its dimension their length).
    """

    def __init__(self, database: Callable[[], Store], profile: EmbeddingProfile) -> None:
        self._store = database
        self.profile = profile.key
        self.dimension = profile.dimension
        # Stored vectors a load left out as unusable (``stored_matrix``): forgotten before the next embedding
        # asks what is missing (a load reads inside a read transaction, where nothing can be written).
        self.unusable: set[str] = set()

    # -- the backend's upkeep of the table, for every profile ---------------------------------------------

    @staticmethod
    def imported(database: Store, other: Path) -> int:
        return import_vectors(database, other)

    @staticmethod
    def prune(database: Store) -> None:
        prune_vectors(database)

    # -- the profile's vectors ----------------------------------------------------------------------------

    def _write(self, hashes: Sequence[str], vectors: Matrix) -> None:
        """Store the vectors (as float16) by the hash of their text."""
        blobs = [(h, vectors[i].astype(np.float16).tobytes()) for i, h in enumerate(hashes)]
        write_vectors(self._store(), self.profile, blobs)

    def missing(self, limit: int, definitions: bool | None = None) -> list[int]:
        if self.unusable:
            forget_vectors(self._store(), self.profile, sorted(self.unusable))
            self.unusable.clear()
        among = "" if definitions is None else f"c.definition = {int(definitions)} AND "
        query = (
            f"SELECT c.slot FROM chunks c WHERE {among}NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.profile = ? AND v.hash = c.embed_hash) ORDER BY c.slot LIMIT ?"
        )
        return [int(chunk) for (chunk,) in self._store().run(query, (self.profile, limit))]


class SqliteVectors(VectorTable):
    """The vectors of one profile in the index database, searched in memory.

    Args:
        database: the index database as it is now (it is replaced when the index is rebuilt after corruption).
        profile: the embedding profile (its key names the vectors, its dimension their length).
        config: the index (where its neighbourhoods are kept between processes; None, or one kept in memory
            only: not kept).
    """

    def __init__(
        self, database: Callable[[], Store], profile: EmbeddingProfile, config: IndexConfig | None = None
    ) -> None:
        super().__init__(database, profile)
        self._dense: DenseIndex | None = None
        kept = config is not None and config.persist
        self._neighbours = neighbour_file.neighbours_path(config.state_dir, config.name) if kept and config else None
        self._key = config.seal_key if config is not None else b""
        self._kept_changes: int | None = None  # the neighbourhoods' change the file holds (this process wrote)

    def load(self, ids: Sequence[int] | None = None) -> None:
        store = self._store()
        if ids is None or self._dense is None:
            previous, self._dense = self._dense, DenseIndex(self.dimension)
            self._dense.put(*stored_matrix(store, self.profile, self.dimension, unusable=self.unusable))
            if previous is not None:
                self._dense.carry_density(previous)  # what another process changed is all that is searched again
            return
        if ids:
            self._dense.put(*stored_matrix(store, self.profile, self.dimension, ids, self.unusable))

    def put(self, ids: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Store the vectors (as float16) and search them at once, rounded as stored: a process that reads them
        back holds the same vectors, so it finds the same similarities and neighbourhoods."""
        self._write(hashes, vectors)
        if self._dense is not None:
            self._dense.put(list(ids), vectors.astype(np.float16).astype(np.float32))

    def drop(self, ids: Sequence[int]) -> None:
        if self._dense is not None:
            self._dense.drop(ids)

    def similarities(self, query: Matrix, ids: Ids) -> Matrix:
        if self._dense is None:
            return np.full(len(ids), np.nan, np.float32)
        return self._dense.similarities(query, ids)

    def densities(self, ids: Ids) -> Matrix:
        if self._dense is None:
            return np.full(len(ids), np.nan, np.float32)
        if self._neighbours is not None and self._dense.density_changes() is None:
            self._take_kept_neighbourhoods(self._neighbours)
        return self._dense.densities(ids)

    def _take_kept_neighbourhoods(self, path: Path) -> None:
        """Start from the neighbourhoods another process kept, when they can be used."""
        assert self._dense is not None
        found, problem = neighbour_file.read(path, self._key)
        if problem:
            log.info("neighbourhoods found anew: %s", problem)
        if found is None:
            return
        self._kept_changes = 0  # as the file holds them; taking in what differs makes a change
        try:
            self._dense.take_neighbourhoods(found)  # sets them only once taken over whole
        except Exception as error:  # noqa: BLE001 - a cache: a file that passed its checks and still fails
            log.info("neighbourhoods found anew: %s could not be taken over (%s)", path.name, error)

    def keep_neighbourhoods(self) -> None:
        """Write the neighbourhoods for the next process, once per change (a failure only costs it the time):
        where they are found for every vector (``CorpusIndex.find_densities``), never in a search."""
        changes = None if self._dense is None else self._dense.density_changes()
        found = None if self._dense is None or changes == self._kept_changes else self._dense.neighbourhoods()
        if self._neighbours is None or found is None:
            return
        try:
            neighbour_file.write(self._neighbours, found, self._key)
        except OSError as error:  # read-only, full, a link: the next process finds them again
            log.info("the neighbourhoods were not kept: %s", error)
        self._kept_changes = changes

    def coverage(self, ids: Ids) -> int:
        return 0 if self._dense is None else self._dense.count(ids)


def stored_vectors(store: Store, profile: str, slots: Sequence[int] | None = None) -> list[tuple[int, bytes]]:
    """(slot, float16 vector bytes) of every live chunk (or of ``slots``) with a vector for ``profile``."""
    return [(slot, open_vector(store, sealed)) for slot, sealed in _with_vectors(store, "v.vector", profile, slots)]


def stored_matrix(
    store: Store, profile: str, dimension: int, slots: Sequence[int] | None = None, unusable: set[str] | None = None
) -> tuple[list[int], Matrix]:
    """The slots and vectors (float16 widened to float32, one row each) of ``stored_vectors``. A vector that
    is not a unit vector of ``dimension`` numbers (all zeros, NaN, of another length: an earlier version kept
    what a server sent) is left out, and the hash of its text added to ``unusable`` (to be embedded again)."""
    rows: list[tuple[int, str, bytes]] = []
    wrong: list[tuple[int, str, bytes]] = []
    for slot, text_hash, sealed in _with_vectors(store, "c.embed_hash, v.vector", profile, slots):
        blob = open_vector(store, sealed)
        (rows if len(blob) == 2 * dimension else wrong).append((slot, text_hash, blob))
    matrix = np.zeros((0, dimension), np.float32)
    if rows:
        matrix = np.stack([np.frombuffer(blob, np.float16) for _, _, blob in rows]).astype(np.float32)
    usable = unit_rows(matrix)
    if unusable is not None:
        unusable.update(text_hash for _, text_hash, _ in wrong)
        unusable.update(rows[i][1] for i in np.flatnonzero(~usable))
    if usable.all():  # the usual case: no copy of the matrix
        return [slot for slot, _, _ in rows], matrix
    return [rows[i][0] for i in np.flatnonzero(usable)], matrix[usable]


def unit_rows(matrix: Matrix) -> npt.NDArray[np.bool_]:
    """Which rows are vectors a search can use: finite numbers, of length one (as float16 keeps a unit vector)."""
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.linalg.norm(matrix, axis=1)
        usable: npt.NDArray[np.bool_] = np.isfinite(matrix).all(axis=1) & (np.abs(norms - 1.0) < 0.05)
    return usable


def forget_vectors(store: Store, profile: str, hashes: Iterable[str]) -> None:
    """Drop the stored vectors of these texts, so that they are embedded again; a database this process
    cannot write now keeps them (left out of its searches all the same)."""
    rows = [(profile, text_hash) for text_hash in hashes]
    log.info("%d stored vectors are not unit vectors of the model's dimension: they are embedded again", len(rows))
    try:
        with store.immediate():
            store.run_many("DELETE FROM vectors WHERE profile = ? AND hash = ?", rows)
    except (IndexBusy, IndexFull, IndexUnwritable) as error:
        log.info("the unusable vectors stay stored for now: %s", error)


def stored_hashes(store: Store, profile: str, slots: Sequence[int] | None = None) -> dict[int, str]:
    """The embedded text's hash of every live chunk (or of ``slots``) with a vector for ``profile``, by slot
    (the vectors are not read)."""
    return {int(slot): text_hash for slot, text_hash in _with_vectors(store, "c.embed_hash", profile, slots)}


def _with_vectors(store: Store, column: str, profile: str, slots: Sequence[int] | None) -> list[tuple[Any, ...]]:
    """(slot, ``column``) of every live chunk (or of ``slots``) with a vector for ``profile``."""
    join = f"SELECT c.slot, {column} FROM chunks c JOIN vectors v ON v.profile = ? AND v.hash = c.embed_hash"
    if slots is None:
        return list(store.run(join, (profile,)))
    return list(store.rows_in(join + " WHERE c.slot IN ({marks})", slots, profile))


def write_vectors(store: Store, profile: str, rows: Iterable[tuple[str, bytes]]) -> None:
    """Store vectors in their own transaction. The generation is not bumped: vectors never change what
    BM25 holds, so other processes need not reload; they read vectors when they next load them."""
    with store.immediate():
        store.run_many(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", [(profile, h, seal_vector(store, v)) for h, v in rows]
        )


def import_vectors(store: Store, other: Path) -> int:
    """Copy every vector of another index database that this one lacks (same profile and text hash), and
    that this machine sealed: a vector written elsewhere is never taken in."""
    with store.serialized():
        store.run("ATTACH DATABASE ? AS other", (str(other),))
        try:
            rows = store.run(
                "SELECT profile, hash, vector FROM other.vectors o WHERE NOT EXISTS "
                "(SELECT 1 FROM main.vectors v WHERE v.profile = o.profile AND v.hash = o.hash)"
            )
        finally:
            store.run("DETACH DATABASE other")
        kept = [(profile, text_hash, blob) for profile, text_hash, blob in rows if _sealed_here(store, blob)]
        with store.immediate():
            store.run_many("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", kept)
    return len(kept)


def _sealed_here(store: Store, blob: object) -> bool:
    if not isinstance(blob, bytes):
        return False
    try:
        open_vector(store, blob)
    except IndexCorrupt:
        return False
    return True


def prune_vectors(store: Store) -> None:
    """Drop vectors no live chunk uses (kept until the table is twice the live chunks: reverts reuse them)."""
    with store.serialized():
        count = store.run("SELECT COUNT(*) FROM vectors")[0][0]
        live = store.run("SELECT COUNT(*) FROM chunks")[0][0]
        if count > 2 * max(live, 1000):
            store.run("DELETE FROM vectors WHERE hash NOT IN (SELECT embed_hash FROM chunks)")


__all__ = [
    "SqliteVectors",
    "VectorTable",
    "forget_vectors",
    "import_vectors",
    "open_vector",
    "prune_vectors",
    "seal_vector",
    "stored_hashes",
    "stored_matrix",
    "stored_vectors",
    "write_vectors",
]
