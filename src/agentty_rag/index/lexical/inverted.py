"""An inverted index that can be patched: a compacted base segment plus a small delta, scored lazily.

``bm25s`` precomputes every score at index time, which is fast to query but has no update: any change means a
rebuild. Here postings keep raw term frequencies, and BM25 is computed at query time from statistics of the
*live* documents only. Removing a chunk is a tombstone, adding one appends to the delta; both are exact, so
an index patched many times scores every document the same as a fresh build of the same chunks.

Documents are numbered by *slot* (the chunk's row id in the store); terms by id (the store's vocabulary).
Each field (body, title, symbol, path ...) has its own postings and length statistics.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.bm25 import K1, B, idf, tf_saturation
from agentty_rag.index.lexical.protocol import FieldTerms

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


@dataclass
class Segment:
    """Postings of one field in compressed sparse row form: term id -> (slots, term frequencies)."""

    indptr: npt.NDArray[np.int64]
    slots: IntArray
    tfs: npt.NDArray[np.float32]

    @classmethod
    def empty(cls) -> Segment:
        return cls(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32))

    @property
    def n_terms(self) -> int:
        return len(self.indptr) - 1

    def postings(self, term: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        if term >= self.n_terms:
            return _NO_SLOTS, _NO_TFS
        a, b = int(self.indptr[term]), int(self.indptr[term + 1])
        return self.slots[a:b], self.tfs[a:b]

    @classmethod
    def build(cls, term_ids: IntArray, slots: IntArray, tfs: npt.NDArray[np.float32], n_terms: int) -> Segment:
        """CSR from parallel (term, slot, tf) arrays; postings of each term sorted by slot."""
        order = np.lexsort((slots, term_ids))
        counts = np.bincount(term_ids, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, slots[order].astype(np.int32), tfs[order].astype(np.float32))


_NO_SLOTS: IntArray = np.zeros(0, np.int32)


def weight_of(term: int, term_weights: Mapping[int, float] | None) -> float:
    return term_weights.get(term, 1.0) if term_weights else 1.0


_NO_TFS = np.zeros(0, np.float32)


@dataclass
class FieldIndex:
    """One field: a base segment, a delta (term -> slots, tfs), and each slot's length in tokens."""

    base: Segment = field(default_factory=Segment.empty)
    delta: dict[int, tuple[list[int], list[float]]] = field(default_factory=dict)
    lengths: FloatArray = field(default_factory=lambda: np.zeros(0, np.float64))

    def postings(self, term: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        slots, tfs = self.base.postings(term)
        extra = self.delta.get(term)
        if extra:
            slots = np.concatenate([slots, np.asarray(extra[0], np.int32)])
            tfs = np.concatenate([tfs, np.asarray(extra[1], np.float32)])
        return slots, tfs


class Postings:
    """BM25 over several weighted fields, with slot-level add and remove: the postings of the SQLite
    backend (``sqlite.SqliteLexical``), and the scoring of its chunks."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.field_names = tuple(fields)
        self.fields = {name: FieldIndex() for name in self.field_names}
        self.alive = np.zeros(0, bool)

    # -- building -------------------------------------------------------------------------------------------

    def _grow(self, capacity: int) -> None:
        if capacity <= len(self.alive):
            return
        size = max(capacity, 2 * len(self.alive), 64)
        alive = np.zeros(size, bool)
        alive[: len(self.alive)] = self.alive
        self.alive = alive
        for index in self.fields.values():
            lengths = np.zeros(size, np.float64)
            lengths[: len(index.lengths)] = index.lengths
            index.lengths = lengths

    def load_base(self, segments: Mapping[str, Segment], lengths: Mapping[str, FloatArray], live: IntArray) -> None:
        """Install compacted segments; ``live`` lists the slots that exist."""
        capacity = max([len(v) for v in lengths.values()] + [int(live.max()) + 1 if len(live) else 0])
        self._grow(capacity)
        self.alive[:] = False
        self.alive[live] = True
        for name in self.field_names:
            index = self.fields[name]
            index.base = segments.get(name, Segment.empty())
            index.delta = {}
            index.lengths[:] = 0
            values = lengths.get(name)
            if values is not None:
                index.lengths[: len(values)] = values

    def add(self, slot: int, terms: Mapping[str, FieldTerms]) -> None:
        """Add a chunk at ``slot`` (which must be free) to the delta."""
        self._grow(slot + 1)
        self.alive[slot] = True
        for name in self.field_names:
            index = self.fields[name]
            ids, counts = terms.get(name, (_NO_SLOTS, _NO_SLOTS))
            index.lengths[slot] = float(counts.sum()) if len(counts) else 0.0
            for term, count in zip(ids.tolist(), counts.tolist(), strict=True):
                entry = index.delta.get(term)
                if entry is None:
                    index.delta[term] = ([slot], [float(count)])
                else:
                    entry[0].append(slot)
                    entry[1].append(float(count))

    def remove(self, slots: Iterable[int]) -> None:
        """Tombstone chunks; their postings stay until the next compaction but never score."""
        for slot in slots:
            if slot < len(self.alive):
                self.alive[slot] = False

    @property
    def n_live(self) -> int:
        return int(self.alive.sum())

    @property
    def delta_size(self) -> int:
        return sum(len(v[0]) for v in self.fields[self.field_names[0]].delta.values()) if self.field_names else 0

    def live_slots(self) -> IntArray:
        return np.flatnonzero(self.alive).astype(np.int32)

    # -- scoring --------------------------------------------------------------------------------------------

    def score(
        self,
        query: Mapping[str, Sequence[int]],
        weights: Mapping[str, float],
        term_weights: Mapping[int, float] | None = None,
        k1: float = K1,
        b: float = B,
        slots: IntArray | None = None,
    ) -> FloatArray:
        """BM25 of every slot (or of ``slots``) for the query terms of each field, weighted per field and summed.

        Args:
            query: field -> distinct term ids of the query (unknown terms already dropped).
            weights: field -> weight; fields missing or weighted 0 are skipped.
            term_weights: term id -> weight of that query term (default 1 for every term).
            slots: the slots to score (None: every slot); each scores what it scores among all.

        Returns:
            A float array over all slots, or over ``slots`` in their order (dead slots score 0).
        """
        if slots is not None:
            asked = np.asarray(slots, np.int64)
            held_slots, inverse = np.unique(asked[(asked >= 0) & (asked < len(self.alive))], return_inverse=True)
            among = self._scored(query, weights, term_weights, k1, b, held_slots)
            scores = np.zeros(len(asked), np.float64)
            scores[(asked >= 0) & (asked < len(self.alive))] = among[inverse]
            return scores
        return self._scored(query, weights, term_weights, k1, b, None)

    def _scored(
        self,
        query: Mapping[str, Sequence[int]],
        weights: Mapping[str, float],
        term_weights: Mapping[int, float] | None,
        k1: float,
        b: float,
        slots: npt.NDArray[np.int64] | None,
    ) -> FloatArray:
        """``score`` of every slot, or of ``slots`` (distinct, ascending, each below the slot count): only their
        postings are saturated, and each one's terms are added up in the same order."""
        scores = np.zeros(len(self.alive) if slots is None else len(slots), np.float64)
        n_live = self.n_live
        if n_live == 0:
            return scores
        for _, weight, index, terms in self.fields_to_score(query, weights):
            avg_len = float(index.lengths[self.alive].sum()) / n_live
            for term in terms:
                held, tfs = self.live_postings(index, term)
                if len(held) == 0:
                    continue
                term_idf = idf(len(held), n_live) * weight_of(term, term_weights)
                at: npt.NDArray[np.intp] | IntArray = held
                if slots is not None:
                    keep = np.isin(held, slots)
                    held, tfs = held[keep], tfs[keep]
                    at = np.searchsorted(slots, held)
                part = tf_saturation(tfs.astype(np.float64), index.lengths[held], avg_len, k1, b)
                scores[at] += weight * term_idf * part
        return scores

    def score_outside(
        self,
        counts: Mapping[str, Mapping[int, int]],
        lengths: Mapping[str, float],
        query: Sequence[int],
        weights: Mapping[str, float],
        term_weights: Mapping[int, float] | None = None,
        k1: float = K1,
        b: float = B,
    ) -> float:
        """BM25 of one document that is not in the index (its counts of the query's terms and its length, per
        field) against the live statistics: what ``score`` gives a slot holding it, but for its own share of
        those statistics."""
        n_live = self.n_live
        total = 0.0
        for name, weight, index, terms in self.fields_to_score(dict.fromkeys(self.field_names, query), weights):
            held = counts.get(name, {})
            length = np.array([lengths.get(name, 0.0)])
            avg_len = float(index.lengths[self.alive].sum()) / max(n_live, 1)
            for term in terms:
                df = self.document_frequency(name, term)
                if held.get(term, 0) and df:
                    part = tf_saturation(np.array([float(held[term])]), length, avg_len, k1, b)
                    total += weight * idf(df, n_live) * weight_of(term, term_weights) * float(part[0])
        return total

    def fields_to_score(
        self, query: Mapping[str, Sequence[int]], weights: Mapping[str, float]
    ) -> Iterator[tuple[str, float, FieldIndex, list[int]]]:
        """(name, weight, postings, distinct terms in order) of each field with a weight and query terms."""
        for name in self.field_names:
            weight = weights.get(name, 0.0)
            terms = query.get(name, ())
            if weight > 0 and terms:
                yield name, weight, self.fields[name], sorted(set(terms))

    def live_postings(self, index: FieldIndex, term: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        slots, tfs = index.postings(term)
        if len(slots) == 0:
            return slots, tfs
        keep = self.alive[slots]
        return slots[keep], tfs[keep]

    def postings(self, name: str, term: int) -> IntArray:
        """The live slots holding ``term`` in field ``name``."""
        return self.live_postings(self.fields[name], term)[0]

    def document_frequency(self, name: str, term: int) -> int:
        slots, _ = self.fields[name].postings(term)
        return int(self.alive[slots].sum()) if len(slots) else 0

    # -- compaction -----------------------------------------------------------------------------------------

    def compacted(self, name: str, n_terms: int) -> Segment:
        """The field's live postings (base and delta) as one new segment."""
        index = self.fields[name]
        base = index.base
        term_of = np.repeat(np.arange(base.n_terms, dtype=np.int32), np.diff(base.indptr).astype(np.int64))
        parts_t, parts_s, parts_f = [term_of], [base.slots], [base.tfs]
        for term, (slots, tfs) in index.delta.items():
            parts_t.append(np.full(len(slots), term, np.int32))
            parts_s.append(np.asarray(slots, np.int32))
            parts_f.append(np.asarray(tfs, np.float32))
        terms = np.concatenate(parts_t)
        slots_all = np.concatenate(parts_s)
        tfs_all = np.concatenate(parts_f)
        keep = self.alive[slots_all] if len(slots_all) else np.zeros(0, bool)
        return Segment.build(terms[keep], slots_all[keep], tfs_all[keep], n_terms)

    def compact(self, n_terms: int) -> None:
        for name in self.field_names:
            segment = self.compacted(name, n_terms)
            self.fields[name].base = segment
            self.fields[name].delta = {}


__all__ = ["FieldIndex", "Postings", "Segment", "weight_of"]
