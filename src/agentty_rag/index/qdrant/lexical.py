"""The Qdrant backend of the lexical index: every live chunk a point of the ``bm25`` sparse vector, every file
with a live chunk a point of ``bm25_files``, scored by Qdrant exactly as the SQLite backend scores them.

The index database keeps the chunks, their term lists and the vocabulary (term ids are its ids); Qdrant keeps
the postings, as sparse vectors (``encoding.py``). A file is a document of its own at file level (its chunks'
term frequencies summed, the path counted once, ``Scoring.file_k1``/``file_b``), which no sum of chunk
scores gives: hence a point per file. In memory: which slots are live, each one's length per field and its
file, enough for the statistics that are not Qdrant's (average lengths, a text outside the index).

The vectors hold the average lengths they were made with, so the collection always holds the vectors of the
current state: a patch that moves an average length rewrites every vector of its level. The marker point
names the state (the live slots, the vocabulary's size, the fields and scoring); a collection whose marker
differs at load is written anew from the database.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.index.lexical.bm25 import idf, tf_saturation
from agentty_rag.index.lexical.chunk_terms import FileLayout, decode_terms
from agentty_rag.index.lexical.fields import FILE_WIDE_FIELDS, Scoring
from agentty_rag.index.lexical.protocol import FieldTerms, IntArray, LexicalQuery, TextTerms
from agentty_rag.index.qdrant.collection import PointId, SparseCollection, SparsePoint, open_collection
from agentty_rag.index.qdrant.encoding import document_vector, query_vector
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.manifest import meta_int
from agentty_rag.index.storage.store import Store
from agentty_rag.index.storage.views import FileGroups

FloatArray = npt.NDArray[np.float64]
CHUNKS = "bm25"
FILES = "bm25_files"
# Bumped when what a point holds changes: a collection with another marker is written anew.
FORMAT_VERSION = "1"
_FILE_IDS = uuid.UUID("5d1f2a8e-6b0c-4f43-9a51-3c2e7d9b0a11")


def file_point(ref: str) -> str:
    """The point id of a file (chunk points are numbered by slot)."""
    return str(uuid.uuid5(_FILE_IDS, ref))


class QdrantLexical:
    """A ``LexicalIndex`` whose postings are a Qdrant collection.

    Args:
        config: the index (its fields, its scoring, and ``qdrant``: where the collection is).
        store: the database as it is now (opened on first use): term ids, and the chunks' term lists.
        collection: the collection to use instead of ``config.qdrant``'s (tests give each adapter).
    """

    def __init__(
        self, config: IndexConfig, store: Callable[[], Store], collection: SparseCollection | None = None
    ) -> None:
        if config.qdrant is None and collection is None:
            raise ValueError(f"the {config.name} index names the qdrant backend but no collection")
        self.field_names = config.field_names
        self._number = {name: i for i, name in enumerate(self.field_names)}
        self._scoring: Scoring = config.scoring
        self._target: QdrantTarget | None = config.qdrant
        self._store = store
        self._given = collection
        self._opened: SparseCollection | None = None
        self._alive = np.zeros(0, bool)
        self._lengths = np.zeros((0, len(self.field_names)), np.float64)  # slot x field
        self._ref: dict[int, str] = {}  # each live slot's file
        self._files: dict[str, list[int]] = {}  # each file's live slots
        self._file_of_point: dict[PointId, str] = {}

    @property
    def _collection(self) -> SparseCollection:
        if self._opened is None:
            if self._given is not None:
                self._opened = self._given
            else:
                assert self._target is not None
                self._opened = open_collection(self._target)
        return self._opened

    def describe(self) -> str:
        return self._target.describe() if self._target is not None else "qdrant"

    # -- the documents held ---------------------------------------------------------------------------------

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        return self._alive

    @property
    def n_live(self) -> int:
        return len(self._ref)

    def live_slots(self) -> IntArray:
        return np.flatnonzero(self._alive).astype(np.int32)

    # -- writing --------------------------------------------------------------------------------------------

    def load(self, store: Store, meta: Mapping[str, str]) -> None:
        self._clear(meta_int(meta, "next_slot"))
        terms = dict(store.delta_terms(self.field_names, 0))
        self._take(terms, _refs(store, terms))
        marker = self._marker(meta_int(meta, "vocab_size"))
        if self._collection.marker() != marker:
            self._rewrite(terms, marker)

    def builder(self) -> _Build:
        return _Build(self)

    def catch_up(self, store: Store) -> None:
        """Make the collection hold the state this index holds, after writes it missed (a server that did not
        answer): written anew when its marker differs."""
        marker = self._marker(meta_int(store.meta(), "vocab_size"))
        if self._collection.marker() != marker:
            self._rewrite(dict(store.delta_terms(self.field_names, 0)), marker)

    def patch(
        self,
        store: Store,
        removed: Sequence[int],
        added: Sequence[tuple[int, Mapping[str, FieldTerms]]],
        n_terms: int,
        n_slots: int,
    ) -> bool:
        chunk_avg, file_avg = self._average_lengths(), self._file_average_lengths()
        gone = [slot for slot in removed if slot in self._ref]
        touched = {self._ref[slot] for slot in gone}
        for slot in gone:
            self._forget(slot)
        new = {slot: dict(terms) for slot, terms in added}
        refs = _refs(store, new)
        self._grow(n_slots)
        self._take(new, refs)
        touched.update(refs.values())
        collection = self._collection
        collection.delete(gone)
        everything: dict[int, dict[str, FieldTerms]] | None = None
        if not np.array_equal(chunk_avg, self._average_lengths()):
            everything = dict(store.delta_terms(self.field_names, 0))
            collection.upsert(self._chunk_points(everything))
        else:
            collection.upsert(self._chunk_points(new))
        if everything is not None or not np.array_equal(file_avg, self._file_average_lengths()):
            everything = everything if everything is not None else dict(store.delta_terms(self.field_names, 0))
            collection.delete([file_point(ref) for ref in touched if ref not in self._files])
            collection.upsert(self._file_points(everything, self._files))
        else:
            slots = [slot for ref in touched for slot in self._files.get(ref, ())]
            held = {**_terms_of(store, self.field_names, [s for s in slots if s not in new]), **new}
            collection.delete([file_point(ref) for ref in touched if ref not in self._files])
            collection.upsert(self._file_points(held, {r: self._files[r] for r in touched if r in self._files}))
        collection.set_marker(self._marker(n_terms))
        return False

    def _clear(self, n_slots: int) -> None:
        self._alive = np.zeros(n_slots, bool)
        self._lengths = np.zeros((n_slots, len(self.field_names)), np.float64)
        self._ref, self._files, self._file_of_point = {}, {}, {}

    def _grow(self, n_slots: int) -> None:
        if n_slots > len(self._alive):
            self._alive = np.concatenate([self._alive, np.zeros(n_slots - len(self._alive), bool)])
            extra = np.zeros((n_slots - len(self._lengths), len(self.field_names)), np.float64)
            self._lengths = np.concatenate([self._lengths, extra])

    def _take(self, terms: Mapping[int, Mapping[str, FieldTerms]], refs: Mapping[int, str]) -> None:
        """Hold the chunks of ``terms`` (slot -> terms per field) as live, each in its file of ``refs``."""
        for slot, fields in terms.items():
            self._grow(slot + 1)
            self._alive[slot] = True
            self._lengths[slot] = 0.0
            for name, (_, counts) in fields.items():
                if name in self._number:
                    self._lengths[slot, self._number[name]] = float(counts.sum())
            ref = refs[slot]
            self._ref[slot] = ref
            self._files.setdefault(ref, []).append(slot)
            self._file_of_point[file_point(ref)] = ref

    def _forget(self, slot: int) -> None:
        ref = self._ref.pop(slot)
        self._alive[slot] = False
        self._lengths[slot] = 0.0
        slots = self._files[ref]
        slots.remove(slot)
        if not slots:
            del self._files[ref]
            self._file_of_point.pop(file_point(ref), None)

    def _rewrite(self, terms: Mapping[int, Mapping[str, FieldTerms]], marker: str) -> None:
        """Write the collection anew: every live chunk's point and every file's."""
        collection = self._collection
        collection.reset((CHUNKS, FILES))
        collection.upsert(self._chunk_points(terms))
        collection.upsert(self._file_points(terms, self._files))
        collection.set_marker(marker)

    def _marker(self, n_terms: int) -> str:
        """What names the state the collection must hold: the live slots (a slot's chunk never changes), the
        vocabulary's size, the fields and the scoring the vectors are made with."""
        s = self._scoring
        return json.dumps(
            {
                "format": FORMAT_VERSION,
                "fields": list(self.field_names),
                "scoring": [s.k1, s.b, s.file_k1, s.file_b],
                "n_terms": n_terms,
                "live": xxhash.xxh3_128_hexdigest(self.live_slots().tobytes()),
            },
            sort_keys=True,
        )

    # -- the vectors ----------------------------------------------------------------------------------------

    def _average_lengths(self) -> FloatArray:
        """Each field's average length over the live chunks."""
        n_live = max(self.n_live, 1)
        lengths: FloatArray = self._lengths[self._alive].sum(axis=0) / n_live
        return lengths

    def _file_lengths(self, slots: Sequence[int]) -> FloatArray:
        """A file's length in each field (its chunks' summed; a file-wide field's longest)."""
        lengths = self._lengths[np.asarray(slots, np.int64)]
        out: FloatArray = lengths.sum(axis=0)
        for name in FILE_WIDE_FIELDS & set(self.field_names):
            out[self._number[name]] = lengths[:, self._number[name]].max()
        return out

    def _file_average_lengths(self) -> FloatArray:
        """Each field's average length over the files with a live chunk."""
        if not self._files:
            return np.zeros(len(self.field_names), np.float64)
        total = np.sum([self._file_lengths(slots) for slots in self._files.values()], axis=0)
        averages: FloatArray = total / len(self._files)
        return averages

    def _chunk_points(self, terms: Mapping[int, Mapping[str, FieldTerms]]) -> list[SparsePoint]:
        s, averages = self._scoring, self._average_lengths().tolist()
        points = []
        for slot, fields in sorted(terms.items()):
            by_number = {
                self._number[name]: (ids, counts.astype(np.float64))
                for name, (ids, counts) in fields.items()
                if name in self._number
            }
            indices, values = document_vector(by_number, self._lengths[slot].tolist(), averages, s.k1, s.b)
            points.append(SparsePoint(slot, CHUNKS, indices, values))
        return points

    def _file_points(
        self, terms: Mapping[int, Mapping[str, FieldTerms]], files: Mapping[str, Sequence[int]]
    ) -> list[SparsePoint]:
        s, averages = self._scoring, self._file_average_lengths().tolist()
        points = []
        for ref, slots in sorted(files.items()):
            summed: dict[int, dict[int, float]] = {}
            for slot in slots:
                for name, (ids, counts) in terms[slot].items():
                    if name in self._number:
                        held = summed.setdefault(self._number[name], {})
                        for term, count in zip(ids.tolist(), counts.tolist(), strict=True):
                            held[term] = held.get(term, 0.0) + count
            for name in FILE_WIDE_FIELDS & set(self.field_names):
                held = summed.get(self._number[name], {})
                summed[self._number[name]] = dict.fromkeys(held, 1.0)
            by_number = {
                number: (np.asarray(sorted(held), np.int32), np.asarray([held[t] for t in sorted(held)], np.float64))
                for number, held in summed.items()
            }
            lengths = self._file_lengths(slots).tolist()
            indices, values = document_vector(by_number, lengths, averages, s.file_k1, s.file_b)
            points.append(SparsePoint(file_point(ref), FILES, indices, values, {"ref": ref}))
        return points

    # -- term statistics ------------------------------------------------------------------------------------

    def term_ids(self, terms: Iterable[str]) -> dict[str, int]:
        return self._store().lookup_terms(terms)

    def document_frequency(self, field: str, term: int) -> int:
        return len(self.holders(field, term))

    def holders(self, field: str, term: int) -> IntArray:
        if field not in self._number or not self.n_live:
            return np.zeros(0, np.int32)
        indices, values = query_vector(self.field_names, {field: 1.0}, {term: 1.0})
        found = self._collection.search(CHUNKS, indices, values, self.n_live)
        return np.sort(np.asarray([int(point) for point, _ in found], np.int32))

    def _file_frequency(self, field: str, term: int) -> int:
        """How many files with a live chunk hold ``term`` in ``field``."""
        if not self._files:
            return 0
        indices, values = query_vector(self.field_names, {field: 1.0}, {term: 1.0})
        return len(self._collection.search(FILES, indices, values, len(self._files)))

    # -- scoring --------------------------------------------------------------------------------------------

    def score(self, query: LexicalQuery, slots: IntArray | None = None) -> FloatArray:
        _check(query, self._scoring.k1, self._scoring.b, "chunks")
        scores = np.zeros(len(self._alive), np.float64)
        asked = None if slots is None else np.asarray(slots, np.int64)
        wanted = None
        if asked is not None:
            inside = asked[(asked >= 0) & (asked < len(self._alive))]
            wanted = sorted({int(s) for s in inside if self._alive[s]})
        indices, values = query_vector(self.field_names, query.fields, query.terms)
        if indices and self.n_live and (wanted is None or wanted):
            limit = self.n_live if wanted is None else len(wanted)
            for point, score in self._collection.search(CHUNKS, indices, values, limit, wanted):
                scores[int(point)] = score
        if asked is None:
            return scores
        out = np.zeros(len(asked), np.float64)
        valid = (asked >= 0) & (asked < len(self._alive))
        out[valid] = scores[asked[valid]]
        return out

    def score_files(self, query: LexicalQuery, groups: FileGroups) -> FloatArray:
        _check(query, self._scoring.file_k1, self._scoring.file_b, "files")
        scores = np.zeros(len(groups.refs), np.float64)
        indices, values = query_vector(self.field_names, query.fields, query.terms)
        if not indices or not self._files:
            return scores
        number = {ref: i for i, ref in enumerate(groups.refs)}
        for point, score in self._collection.search(FILES, indices, values, len(self._files)):
            ref = self._file_of_point.get(point)
            if ref in number:
                scores[number[ref]] = score
        return scores

    def score_outside(self, text: TextTerms, query: LexicalQuery) -> float:
        counts, lengths = text
        averages = self._average_lengths()
        n_live = self.n_live
        total = 0.0
        for name, weight in _weighted(self.field_names, query.fields):
            held = counts.get(name, {})
            length = np.array([lengths.get(name, 0.0)])
            for term in sorted(query.terms):
                if not held.get(term, 0):
                    continue
                df = self.document_frequency(name, term)
                if df:
                    part = tf_saturation(
                        np.array([float(held[term])]), length, float(averages[self._number[name]]), query.k1, query.b
                    )
                    total += weight * idf(df, n_live) * query.terms[term] * float(part[0])
        return total

    def score_file_outside(
        self, file: int, replaced: Mapping[int, TextTerms], query: LexicalQuery, groups: FileGroups
    ) -> float:
        if not self._files or not 0 <= file < len(groups.refs):
            return 0.0
        kept = [int(s) for s in groups.slots_of(file) if s < len(self._alive) and self._alive[s] and s not in replaced]
        terms = _terms_of(self._store(), self.field_names, kept)
        whole_slots = [int(s) for s in groups.slots_of(file) if s < len(self._alive) and self._alive[s]]
        file_lengths = self._file_lengths(whole_slots) if whole_slots else np.zeros(len(self.field_names))
        averages = self._file_average_lengths()
        total = 0.0
        for name, weight in _weighted(self.field_names, query.fields):
            number = self._number[name]
            whole = name in FILE_WIDE_FIELDS
            length = float(file_lengths[number])
            if not whole:
                for slot, (_, new_lengths) in replaced.items():
                    old = float(self._lengths[slot, number]) if slot < len(self._lengths) else 0.0
                    length += new_lengths.get(name, 0.0) - old
            for term in sorted(query.terms):
                tf = float(sum(_count(terms[slot].get(name), term) for slot in kept))
                tf += sum(held.get(name, {}).get(term, 0) for held, _ in replaced.values())
                holders = self._file_frequency(name, term)
                if tf <= 0 or holders == 0:
                    continue
                part = tf_saturation(
                    np.array([1.0 if whole else tf]),
                    np.array([max(length, 0.0)]),
                    float(averages[number]),
                    query.k1,
                    query.b,
                )
                total += weight * idf(holders, len(self._files)) * query.terms[term] * float(part[0])
        return total


class _Build:
    """A full build's chunks as they come, file by file; ``finish`` writes the collection anew."""

    def __init__(self, index: QdrantLexical) -> None:
        self.index = index
        self.terms: dict[int, dict[str, FieldTerms]] = {}

    def add(self, first_slot: int, layout: FileLayout) -> None:
        for name in layout.field_names:
            column = layout.columns[name]
            for chunk in range(layout.n_chunks):
                a, b = int(column.bounds[chunk]), int(column.bounds[chunk + 1])
                held = self.terms.setdefault(first_slot + chunk, {})
                if b > a:
                    held[name] = (column.ids[a:b], column.counts[a:b])

    def finish(self, store: Store, n_terms: int, n_slots: int) -> None:
        index = self.index
        index._clear(n_slots)
        index._take(self.terms, _refs(store, self.terms))
        index._rewrite(self.terms, index._marker(n_terms))


def _refs(store: Store, slots: Iterable[int]) -> dict[int, str]:
    """The file of each of ``slots`` (chunks the database holds)."""
    wanted = set(slots)
    return {slot: ref for slot, _, ref, _ in store.chunk_attributes() if slot in wanted}


def _terms_of(store: Store, fields: Sequence[str], slots: Sequence[int]) -> dict[int, dict[str, FieldTerms]]:
    """The terms of chunks the database holds, per field."""
    return {slot: decode_terms(fields, blob) for slot, (_, blob) in store.chunk_rows(slots).items()}


def _count(terms: FieldTerms | None, term: int) -> int:
    if terms is None:
        return 0
    ids, counts = terms
    at = int(np.searchsorted(ids, term))
    return int(counts[at]) if at < len(ids) and ids[at] == term else 0


def _weighted(field_names: Sequence[str], weights: Mapping[str, float]) -> list[tuple[str, float]]:
    return [(name, weights.get(name, 0.0)) for name in field_names if weights.get(name, 0.0) > 0]


def _check(query: LexicalQuery, k1: float, b: float, level: str) -> None:
    """The vectors hold BM25's k1 and b: a query must ask for the same."""
    if (query.k1, query.b) != (k1, b):
        raise ValueError(f"the Qdrant collection's {level} are made for k1={k1}, b={b}, not {query.k1}, {query.b}")


__all__ = ["CHUNKS", "FILES", "QdrantLexical", "file_point"]
