"""Each vector's neighbourhood density: its mean cosine similarity to its ``NEIGHBOURS`` nearest others.

A chunk that sits close to many others (boilerplate, a family of near-identical functions) is close to most
queries too, whatever they ask: a hub. The code index's dense leg subtracts a share of each chunk's density
from its similarity to the query (``AGENTTY_RAG_HUBNESS``; cross-domain similarity local scaling, Conneau et
al. 2018), so that the chunk near *this* query stands out from the ones near every query.

``NeighbourDensity`` keeps the densities exact as vectors come and go: a new vector's neighbours are found
among all the vectors, and it enters the neighbours of each vector it is nearer to than their last one; only
the vectors that counted a changed or departed one among their neighbours are compared again. Past
``REFERENCE_CAP`` vectors the neighbours are sought among a sample of them (a half, a quarter … chosen by a
hash of each vector's float16 bytes: the same vectors give the same sample however they came), which keeps
the cost near ``vectors × REFERENCE_CAP`` instead of ``vectors²``.

``Neighbourhoods`` is what was found, as it is kept between processes (``neighbour_file.py``): each row's
vector hash says which vectors it was found for, so a process that takes it over compares again only the
rows whose vector came, changed or left since.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import xxhash

Matrix = npt.NDArray[np.float32]
Ids = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]

NEIGHBOURS = 10
# Vectors up to which every one is a candidate neighbour; past it a sample of about this many (8,192 x 384
# dimensions: ~3 MFLOP a vector).
REFERENCE_CAP = 8192
# Rows compared at once: a block of similarities is BLOCK x (reference vectors) floats.
_BLOCK = 512
_NONE = -1
_DIGITS = 5


def sample_level(live: int, cap: int = REFERENCE_CAP) -> int:
    """How many low bits of a vector's hash must be zero for it to be in the reference sample: 0 (every
    vector) up to ``cap`` live vectors, then one more bit each time the count doubles."""
    return 0 if live <= cap else math.ceil(math.log2(live / cap))


def vector_hash(vector: Matrix) -> int:
    """A hash of the vector as stored (float16): the same before and after the table's rounding."""
    return xxhash.xxh3_64_intdigest(np.asarray(vector, np.float32).astype(np.float16).tobytes())


def hashes_of(matrix: Matrix, rows: Ids) -> npt.NDArray[np.uint64]:
    """``vector_hash`` of each of ``rows`` of ``matrix``, in that order."""
    rounded = matrix[rows].astype(np.float16)
    return np.fromiter((xxhash.xxh3_64_intdigest(row.tobytes()) for row in rounded), np.uint64, len(rows))


def row_hashes(matrix: Matrix, present: Mask) -> npt.NDArray[np.uint64]:
    """``vector_hash`` of each live row of ``matrix`` (0 for a row without a vector)."""
    hashes = np.zeros(len(present), np.uint64)
    live = np.flatnonzero(present)
    hashes[live] = hashes_of(matrix, live)
    return hashes


@dataclass(frozen=True)
class Neighbourhoods:
    """The neighbourhoods a ``NeighbourDensity`` found, and for which vectors.

    Args:
        hashes: each row's ``vector_hash`` (0 for a row without a vector).
        present: which rows held a vector.
        best: each row's ``k`` best similarities (-inf where it has fewer neighbours).
        whose: the rows they are to (-1 where none).
        level: the reference sample's level (``sample_level`` of the live rows).
        cap: the reference cap it was found with.
    """

    hashes: npt.NDArray[np.uint64]
    present: Mask
    best: Matrix
    whose: npt.NDArray[np.int32]
    level: int
    cap: int

    def problem(self, cap: int = REFERENCE_CAP) -> str:
        """What makes it unusable here ("" when nothing): shapes, neighbours that are not rows, similarities
        that are not cosines, a reference sample other than the one ``cap`` gives."""
        if self.present.ndim != 1:
            return "its arrays do not fit one another"
        rows = len(self.present)
        if self.hashes.shape != (rows,) or self.best.shape != (rows, NEIGHBOURS) or self.whose.shape != self.best.shape:
            return "its arrays do not fit one another"
        if self.cap != cap or self.level != sample_level(int(self.present.sum()), cap):
            return "it was found with another reference sample"
        none = self.whose == _NONE
        if ((self.whose < _NONE) | (self.whose >= rows)).any() or (none != np.isneginf(self.best)).any():
            return "a neighbour is not one of its rows"
        found = self.best[~none]
        if not np.isfinite(found).all() or (np.abs(found) > 1.01).any():
            return "a similarity is not a cosine"
        return ""


class NeighbourDensity:
    """The ``k`` best similarities of each live row of a matrix to the other live rows of the reference
    sample, and whose they are."""

    def __init__(self, k: int = NEIGHBOURS, cap: int = REFERENCE_CAP) -> None:
        self.k, self.cap = k, cap
        self._best = np.full((0, k), -np.inf, np.float32)
        self._whose = np.full((0, k), _NONE, np.intp)
        self._hash = np.zeros(0, np.uint64)
        self._level = 0
        self._means: Matrix | None = None  # each row's density, worked out at the first read after a change
        self.changes = 0  # how many times the neighbourhoods changed (a snapshot is kept once per change)
        self.searched = 0  # rows whose neighbours were sought among the reference sample, in all

    @classmethod
    def taken_over(cls, kept: Neighbourhoods, matrix: Matrix, present: Mask) -> NeighbourDensity:
        """The neighbourhoods ``kept`` found, brought up to date with ``matrix``: only the rows whose vector came,
        changed or left since, whose kept neighbours do not hold (not live, not in the sample, not at the
        similarity kept, too few), and those that counted one of them, are compared again. ``present`` covers
        at least ``kept``'s rows."""
        density = cls(kept.best.shape[1], kept.cap)
        rows = len(kept.present)
        density._best, density._whose = kept.best.copy(), kept.whose.astype(np.intp)
        density._hash, density._level = kept.hashes.copy(), kept.level
        density._grow(len(present))
        was = np.zeros(len(present), bool)
        was[:rows] = kept.present
        now = row_hashes(matrix, present)
        differs = (was != present) | (present & (density._hash[: len(present)] != now))
        if density._level != sample_level(int(present.sum()), density.cap) or 2 * differs.sum() > present.sum():
            density.rebuild(matrix, present)  # another sample, another model, most files rewritten: start anew
            return density
        density._hash[: len(present)] = now
        unsound = density._unsound(matrix, present, np.flatnonzero(present & ~differs))
        density.changed(matrix, present, np.union1d(np.flatnonzero(differs), unsound))
        return density

    def snapshot(self, present: Mask) -> Neighbourhoods:
        """What was found, and for which vectors (``present`` says which rows hold one)."""
        rows = len(present)
        self._grow(rows)
        return Neighbourhoods(
            np.where(present, self._hash[:rows], 0).astype(np.uint64),
            present.copy(),
            self._best[:rows].copy(),
            self._whose[:rows].astype(np.int32),
            self._level,
            self.cap,
        )

    def _unsound(self, matrix: Matrix, present: Mask, rows: Ids) -> Ids:
        """Those of ``rows`` whose neighbours, as kept, are not what a search would keep of ``matrix``: one that
        is not a live row of the sample, the row itself or a repeat, a similarity that is not theirs, fewer
        than there are to find."""
        reference = self._reference(present)
        sample = int(reference.sum())
        unsound = []
        for start in range(0, len(rows), _BLOCK):
            block = rows[start : start + _BLOCK]
            whose = self._whose[block]
            found = whose != _NONE
            them = np.where(found, whose, block[:, None])
            ordered = np.sort(np.where(found, whose, -1 - np.arange(self.k)), axis=1)
            similar = np.matmul(matrix[them], matrix[block][:, :, None])[:, :, 0]
            wrong = found & (~reference[them] | (them == block[:, None]) | (np.abs(similar - self._best[block]) > 1e-4))
            repeated = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
            expected = np.minimum(self.k, sample - reference[block])
            unsound.append(block[wrong.any(axis=1) | repeated | (found.sum(axis=1) != expected)])
        return np.concatenate(unsound) if unsound else np.zeros(0, np.intp)

    def _grow(self, size: int) -> None:
        if size <= len(self._best):
            return
        best = np.full((size, self.k), -np.inf, np.float32)
        whose = np.full((size, self.k), _NONE, np.intp)
        hashes = np.zeros(size, np.uint64)
        best[: len(self._best)] = self._best
        whose[: len(self._whose)] = self._whose
        hashes[: len(self._hash)] = self._hash
        self._best, self._whose, self._hash = best, whose, hashes

    def _hashed(self, matrix: Matrix, rows: Ids) -> None:
        self._hash[rows] = hashes_of(matrix, rows)

    def _reference(self, present: Mask) -> Mask:
        """The live rows that are candidate neighbours at the current level."""
        if self._level == 0:
            return present
        low_bits = np.uint64((1 << self._level) - 1)
        sampled: Mask = (self._hash[: len(present)] & low_bits) == 0
        return present & sampled

    def rebuild(self, matrix: Matrix, present: Mask) -> None:
        """Find every live row's neighbours anew."""
        self._means, self.changes = None, self.changes + 1
        self._best = np.full((len(present), self.k), -np.inf, np.float32)
        self._whose = np.full((len(present), self.k), _NONE, np.intp)
        self._hash = np.zeros(len(present), np.uint64)
        live = np.flatnonzero(present)
        self._level = sample_level(len(live), self.cap)
        self._hashed(matrix, live)  # the sample's, past the cap; at every level, what a snapshot records
        self._search(matrix, present, live)

    def changed(self, matrix: Matrix, present: Mask, ids: Ids) -> None:
        """Take in that the rows ``ids`` were added, replaced or removed (``present`` says which)."""
        self._grow(len(present))
        ids = np.unique(ids[ids < len(present)])
        if not len(ids):
            return
        self._means, self.changes = None, self.changes + 1
        if sample_level(int(present.sum()), self.cap) != self._level:  # another sample: every row looks again
            self.rebuild(matrix, present)
            return
        arrived = ids[present[ids]]
        self._hashed(matrix, arrived)
        self._best[ids], self._whose[ids] = -np.inf, _NONE
        counted = np.isin(self._whose, ids).any(axis=1)  # their neighbours changed or left: look again
        again = np.union1d(arrived, np.flatnonzero(counted & present))
        self._search(matrix, present, again)
        joined = arrived[self._reference(present)[arrived]]
        if len(joined):
            others = np.flatnonzero(present)
            self._merge(matrix, others[~np.isin(others, again)], joined)

    def densities(self, ids: Ids) -> Matrix:
        """The mean of each row's neighbour similarities (0 for a row with no neighbour)."""
        if self._means is None:  # once per change, not once per search
            found = np.isfinite(self._best)
            counts = found.sum(axis=1)
            sums = np.where(found, self._best, 0.0).sum(axis=1, dtype=np.float64)
            # rounded: a similarity differs in its last bits with where its rows fall in a matrix product, and
            # identical chunks must tie (then rank by slot) however the index came to hold them
            self._means = np.round(np.where(counts > 0, sums / np.maximum(counts, 1), 0.0), _DIGITS).astype(np.float32)
        within = ids < len(self._means)
        out = np.zeros(len(ids), np.float32)
        out[within] = self._means[ids[within]]
        return out

    def _search(self, matrix: Matrix, present: Mask, rows: Ids) -> None:
        """Find the neighbours of ``rows`` among the reference sample."""
        self._best[rows], self._whose[rows] = -np.inf, _NONE
        self.searched += len(rows)
        columns = np.flatnonzero(self._reference(present))
        if not len(rows) or not len(columns):
            return
        pool = matrix[columns]
        k = min(self.k, len(columns))
        for start in range(0, len(rows), _BLOCK):
            block = rows[start : start + _BLOCK]
            self._keep(block, matrix[block] @ pool.T, columns, k)

    def _keep(self, block: Ids, similar: Matrix, columns: Ids, k: int) -> None:
        """Keep the ``k`` best of ``similar`` (block rows x ``columns``) for each row of ``block``, itself left out."""
        similar[columns[None, :] == block[:, None]] = -np.inf
        if similar.shape[1] > k:
            top = np.argpartition(-similar, k - 1, axis=1)[:, :k]
        else:
            top = np.tile(np.arange(similar.shape[1]), (len(block), 1))
        values = np.take_along_axis(similar, top, axis=1)
        whose = np.where(np.isfinite(values), columns[top], _NONE)
        self._best[block, : top.shape[1]], self._whose[block, : top.shape[1]] = values, whose

    def _merge(self, matrix: Matrix, rows: Ids, arrived: Ids) -> None:
        """Let the new reference rows ``arrived`` into the neighbours of ``rows``, where they are nearer than the
        last."""
        for start in range(0, len(rows), _BLOCK):
            block = rows[start : start + _BLOCK]
            similar = matrix[block] @ matrix[arrived].T
            similar[arrived[None, :] == block[:, None]] = -np.inf
            values = np.concatenate([self._best[block], similar], axis=1)
            whose = np.concatenate([self._whose[block], np.broadcast_to(arrived, similar.shape)], axis=1)
            top = np.argpartition(-values, self.k - 1, axis=1)[:, : self.k]
            self._best[block] = np.take_along_axis(values, top, axis=1)
            self._whose[block] = np.where(np.isfinite(self._best[block]), np.take_along_axis(whose, top, axis=1), _NONE)


__all__ = [
    "NEIGHBOURS",
    "REFERENCE_CAP",
    "NeighbourDensity",
    "Neighbourhoods",
    "hashes_of",
    "row_hashes",
    "sample_level",
    "vector_hash",
]
