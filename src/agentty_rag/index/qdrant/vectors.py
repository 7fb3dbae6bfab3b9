"""The Qdrant backend of the vector store: the dense leg's candidates from Qdrant's engine in-process.

The ``vectors`` table of the index database stays the truth (``sqlite.VectorTable``: keyed by the embedded
text's hash, so nothing is embedded twice and a rebuild keeps them): this store writes through to it, and
keeps the vectors of the live chunks that have one in a shard of their own (``EdgeDense``: one named dense
vector, point id = the chunk's slot, scored by the dot product of unit vectors: their cosine), beside the
lexical one, one per embedding profile:
``.agentty/qdrant/<index>-dense-<hash of the profile key>/``. ``similarities`` is one exact Qdrant query,
filtered to the chunks asked for.

The marker point names what the shard holds: the profile, and a digest of its (slot, text hash) pairs that
does not depend on their order (so each write updates it at once). A shard whose marker differs at load is
written anew from the table; one this store keeps is brought up to date by the difference.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.index.qdrant.collection import UPSERT_BATCH, EdgeFolder, opened_once
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.store import Store
from agentty_rag.index.vectors.base import DenseIndex, Ids, Matrix
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.sqlite import VectorTable, stored_hashes, stored_matrix

DENSE = "dense"
# The dot product of the unit vectors the table keeps: the cosine similarity the SQLite store computes. Qdrant's
# Cosine would normalise again the float16-rounded vectors (scores moved by up to 1.6e-4, near-ties reordered).
DISTANCE = "Dot"
# Bumped when what a point holds changes: a shard with another marker is written anew.
# 2: the points are the table's vectors as checked when read (a shard of 1 may hold the zero or NaN vectors an
# earlier version kept): a shard of another format is written again from the table.
FORMAT_VERSION = "2"


def dense_path(target: QdrantTarget, profile: EmbeddingProfile) -> Path:
    """The folder of a profile's shard: beside the lexical one, ``<its name>-dense-<hash of the profile>``."""
    short = xxhash.xxh3_64_hexdigest(profile.key.encode("utf-8"))[:12]
    return target.path.with_name(f"{target.path.name}-dense-{short}")


class EdgeDense(EdgeFolder):
    """A shard of one dense vector (cosine) per point, kept by Qdrant's engine in-process."""

    def reset(self, dimension: int) -> None:
        """Empty the shard (made when missing), for vectors of ``dimension``."""
        edge = self._edge
        params = edge.EdgeVectorParams(size=dimension, distance=getattr(edge.Distance, DISTANCE))
        self._create(edge.EdgeConfig(vectors={DENSE: params}))

    def upsert(self, ids: Sequence[int], vectors: Matrix) -> None:
        """Write the points ``ids`` with the rows of ``vectors`` (a point written again is replaced). Not
        flushed here: the marker written next is (a flush took 7 ms, half of a 32-vector batch's write)."""
        edge, shard = self._edge, self._held
        for start in range(0, len(ids), UPSERT_BATCH):
            rows = vectors[start : start + UPSERT_BATCH].tolist()
            batch = [
                edge.Point(i, {DENSE: row}) for i, row in zip(ids[start : start + UPSERT_BATCH], rows, strict=True)
            ]
            shard.update(edge.UpdateOperation.upsert_points(batch))

    def nearest(self, query: Matrix, ids: Sequence[int]) -> list[tuple[int, float]]:
        """The similarity (dot product) of the points ``ids`` to ``query``, best first (exact: no HNSW)."""
        if self._shard is None or not ids:
            return []
        edge = self._edge
        request = edge.QueryRequest(
            limit=len(ids),
            query=edge.Query.Nearest(query.tolist(), using=DENSE),
            filter=edge.Filter(must=[edge.HasIdCondition(set(ids))]),
            params=edge.SearchParams(exact=True),
            with_payload=False,
            with_vector=False,
        )
        return [(int(p.id), p.score) for p in self._shard.query(request)]


def open_dense(path: Path) -> EdgeDense:
    """The dense shard in ``path``, opened once per process (``collection.opened_once``).

    Raises:
        BackendUnavailable: the ``qdrant`` extra is not installed.
    """
    return opened_once(path, EdgeDense)


class QdrantVectors(VectorTable):
    """A ``VectorStore`` whose similarities Qdrant answers, over the index database's ``vectors`` table.

    Args:
        database: the index database as it is now.
        profile: the embedding profile (its key names the vectors and the shard, its dimension their length).
        config: the index: its ``qdrant`` target says where the lexical shard is, and this one goes beside it.
    """

    def __init__(self, database: Callable[[], Store], profile: EmbeddingProfile, config: IndexConfig) -> None:
        super().__init__(database, profile)
        if config.qdrant is None:
            raise ValueError(f"the {config.name} index keeps its vectors in Qdrant but names no Qdrant folder")
        self.path = dense_path(config.qdrant, profile)
        self._opened: EdgeDense | None = None
        self._held: dict[int, str] | None = None  # each point's text hash, by slot (None: not known)
        self._present = np.zeros(0, bool)  # by slot: the shard holds its point
        self._digest = 0
        self._densities: tuple[int, Matrix] | None = None  # (the digest they were found for, by slot)

    @property
    def _shard(self) -> EdgeDense:
        if self._opened is None:
            self._opened = open_dense(self.path)
        return self._opened

    # -- keeping the shard equal to the table ------------------------------------------------------------

    def load(self, ids: Sequence[int] | None = None) -> None:
        store = self._store()
        if ids is not None and self._current():
            wanted = stored_hashes(store, self.profile, ids) if ids else {}
            self._write_points(store, [slot for slot, h in wanted.items() if self._held_hash(slot) != h], wanted)
            self._seal()
        else:
            self._settle(store, stored_hashes(store, self.profile))

    def _settle(self, store: Store, wanted: Mapping[int, str]) -> None:
        """Make the shard hold exactly the points ``wanted`` (slot -> text hash)."""
        shard = self._shard
        if self._current():
            assert self._held is not None
            gone = [slot for slot in self._held if slot not in wanted]
            shard.delete(gone)
            self._forget(gone)
        elif shard.marker() == _marker(self.profile, len(wanted), _digest(wanted.items())):
            self._clear()
            self._remember(wanted)
            return
        else:
            shard.reset(self.dimension)
            self._clear()
        self._write_points(store, [slot for slot, h in wanted.items() if self._held_hash(slot) != h], wanted)
        self._seal()

    def _write_points(self, store: Store, slots: Sequence[int], hashes: Mapping[int, str]) -> None:
        """Write the points of ``slots`` with their vectors as the table keeps them (float16, widened)."""
        if not slots:
            return
        ids, matrix = stored_matrix(store, self.profile, self.dimension, slots, self.unusable)
        if ids:
            self._shard.upsert(ids, matrix)
            self._remember({slot: hashes[slot] for slot in ids})

    def put(self, ids: Sequence[int], hashes: Sequence[str], vectors: Matrix) -> None:
        """Store the vectors in the table (as float16) and write their points rounded as stored, as the SQLite
        store searches them: the shard holds what the table does, and the next process takes it as it is."""
        self._write(hashes, vectors)
        if self._held is None:
            return  # not loaded yet: the first load reads them
        if not self._current():
            self.load()
            return
        self._shard.upsert(list(ids), vectors.astype(np.float16).astype(np.float32))
        self._remember(dict(zip(ids, hashes, strict=True)))
        self._seal()

    def drop(self, ids: Sequence[int]) -> None:
        if self._held is None:
            return
        if not self._current():
            self.load()
            return
        gone = [slot for slot in ids if slot in self._held]
        self._shard.delete(gone)
        self._forget(gone)
        self._seal()

    # -- what the shard holds ----------------------------------------------------------------------------

    def _clear(self) -> None:
        """Hold nothing (the shard was made anew, or is about to be taken as its marker says)."""
        self._held, self._present, self._digest = {}, np.zeros(0, bool), 0

    def _held_hash(self, slot: int) -> str | None:
        return None if self._held is None else self._held.get(slot)

    def _remember(self, pairs: Mapping[int, str]) -> None:
        held = self._held if self._held is not None else {}
        self._forget([slot for slot in pairs if slot in held])
        size = max(pairs, default=-1) + 1
        if size > len(self._present):
            grown = np.zeros(max(size, 2 * len(self._present)), bool)
            grown[: len(self._present)] = self._present
            self._present = grown
        for slot, text_hash in pairs.items():
            held[slot] = text_hash
            self._present[slot] = True
        self._digest ^= _digest(pairs.items())
        self._held = held

    def _forget(self, slots: Sequence[int]) -> None:
        if self._held is None or not slots:
            return
        self._digest ^= _digest((slot, self._held.pop(slot)) for slot in slots)
        self._present[list(slots)] = False

    def _marker_text(self) -> str:
        return _marker(self.profile, len(self._held or ()), self._digest)

    def _seal(self) -> None:
        """Write the marker of what the shard now holds."""
        self._shard.set_marker(self._marker_text())

    def _current(self) -> bool:
        """Whether the shard holds what this store believes (it wrote it, and nothing wrote it since)."""
        return self._held is not None and self._shard.marker() == self._marker_text()

    # -- searching ---------------------------------------------------------------------------------------

    def _holds(self, ids: Ids) -> npt.NDArray[np.bool_]:
        within = ids < len(self._present)
        within[within] = self._present[ids[within]]
        return within

    def similarities(self, query: Matrix, ids: Ids) -> Matrix:
        out = np.full(len(ids), np.nan, np.float32)
        asked = ids[self._holds(ids)]
        if self._held is None or not len(asked):
            return out
        found = self._shard.nearest(query.reshape(-1).astype(np.float32), asked.tolist())
        if found:
            slots = np.fromiter((slot for slot, _ in found), np.intp, len(found))
            out[np.searchsorted(ids, slots)] = np.fromiter((score for _, score in found), np.float32, len(found))
        return out

    def densities(self, ids: Ids) -> Matrix:
        """Found in memory from the table's vectors of the points held (Qdrant has no neighbourhood query that
        would keep them up to date): again whenever what the shard holds has changed."""
        out = np.full(len(ids), np.nan, np.float32)
        if self._held is None:
            return out
        if self._densities is None or self._densities[0] != self._digest:
            self._densities = (self._digest, self._table_densities())
        by_slot = self._densities[1]
        asked = self._holds(ids) & (ids < len(by_slot))
        out[asked] = by_slot[ids[asked]]
        return out

    def keep_neighbourhoods(self) -> None:
        """Nothing kept: the densities are found from the table whenever the shard changed."""

    def _table_densities(self) -> Matrix:
        assert self._held is not None
        dense = DenseIndex(self.dimension)
        dense.put(*stored_matrix(self._store(), self.profile, self.dimension, sorted(self._held)))
        return dense.densities(np.arange(len(dense.present), dtype=np.intp))

    def coverage(self, ids: Ids) -> int:
        return int(self._holds(ids).sum())


def _digest(pairs: Iterable[tuple[int, str]]) -> int:
    """An order-free digest of (slot, text hash) pairs: the XOR of each pair's hash."""
    digest = 0
    for slot, text_hash in pairs:
        digest ^= xxhash.xxh3_64_intdigest(f"{slot}:{text_hash}".encode())
    return digest


def _marker(profile: str, points: int, digest: int) -> str:
    held = {"format": FORMAT_VERSION, "distance": DISTANCE, "profile": profile, "points": points}
    return json.dumps({**held, "digest": f"{digest:016x}"})


__all__ = ["DENSE", "EdgeDense", "QdrantVectors", "dense_path", "open_dense"]
