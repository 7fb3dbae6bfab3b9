"""The SQLite backend of the lexical index: postings in memory (``inverted.Postings``), their compacted form in
the ``.ragdb`` file.

The ``segments`` table holds each field's compacted postings and every slot's length, compressed
(``write_segments``); chunks added since the last compaction (slots at or above ``meta.base_slots``) are read
back from their term blobs into the delta at load. A patch adds to the delta and tombstones removed chunks;
when the delta (or the count of dead slots) has grown large it is compacted and the segments are written
anew. Term ids are the database's vocabulary.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical.chunk_terms import FileLayout
from agentty_rag.index.lexical.fields import FILE_WIDE_FIELDS
from agentty_rag.index.lexical.groups import GroupStatistics, group_statistics, score_group_outside, score_groups
from agentty_rag.index.lexical.inverted import Postings, Segment
from agentty_rag.index.lexical.protocol import FieldTerms, IntArray, LexicalQuery, TextTerms
from agentty_rag.index.storage.manifest import meta_int
from agentty_rag.index.storage.records import squeeze, unsqueeze
from agentty_rag.index.storage.store import Store
from agentty_rag.index.storage.views import FileGroups

FloatArray = npt.NDArray[np.float64]
Lengths = dict[str, FloatArray]

# Compact the delta into the base segment when it holds more than this share of the base's postings.
_COMPACT_DELTA_SHARE = 0.10
_COMPACT_MIN_DELTA = 20_000  # postings


class SqliteLexical:
    """A ``LexicalIndex`` kept in the index database.

    Args:
        field_names: the indexed fields.
        store: the database as it is now (opened on first use): where term ids are looked up.
    """

    def __init__(self, field_names: tuple[str, ...], store: Callable[[], Store]) -> None:
        self.field_names = field_names
        self._store = store
        self.postings = Postings(field_names)
        self._groups: GroupStatistics | None = None  # the files' statistics, for one grouping of this state

    def describe(self) -> str:
        return "local"

    # -- the documents held ---------------------------------------------------------------------------------

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        return self.postings.alive

    @property
    def n_live(self) -> int:
        return self.postings.n_live

    def live_slots(self) -> IntArray:
        return self.postings.live_slots()

    # -- writing --------------------------------------------------------------------------------------------

    def load(self, store: Store, meta: Mapping[str, str]) -> None:
        segments, lengths = read_segments(store, self.field_names)
        self.postings.load_base(segments, lengths, store.live_slots(below=meta_int(meta, "next_slot")))
        for slot, terms in store.delta_terms(self.field_names, meta_int(meta, "base_slots")):
            self.postings.add(slot, terms)
        self._groups = None

    def builder(self) -> _Build:
        return _Build(self.field_names, self.postings)

    def patch(
        self,
        store: Store,
        removed: Sequence[int],
        added: Sequence[tuple[int, Mapping[str, FieldTerms]]],
        n_terms: int,
        n_slots: int,
    ) -> bool:
        postings = self.postings
        postings.remove(removed)
        for slot, terms in added:
            postings.add(slot, terms)
        self._groups = None
        if not should_compact(postings, n_slots):
            return False
        postings.compact(n_terms)
        fields = self.field_names
        write_segments(
            store,
            {n: postings.fields[n].base for n in fields},
            {n: postings.fields[n].lengths[:n_slots] for n in fields},
        )
        return True

    # -- term statistics ------------------------------------------------------------------------------------

    def term_ids(self, terms: Iterable[str]) -> dict[str, int]:
        return self._store().lookup_terms(terms)

    def document_frequency(self, field: str, term: int) -> int:
        return self.postings.document_frequency(field, term)

    def holders(self, field: str, term: int) -> IntArray:
        return self.postings.postings(field, term)

    # -- scoring --------------------------------------------------------------------------------------------

    def score(self, query: LexicalQuery, slots: IntArray | None = None) -> FloatArray:
        by_field = dict.fromkeys(self.field_names, list(query.terms))
        return self.postings.score(by_field, query.fields, dict(query.terms), query.k1, query.b, slots)

    def score_files(self, query: LexicalQuery, groups: FileGroups) -> FloatArray:
        by_field = dict.fromkeys(self.field_names, list(query.terms))
        statistics = self._statistics(groups)
        return score_groups(self.postings, by_field, query.fields, statistics, dict(query.terms), query.k1, query.b)

    def score_outside(self, text: TextTerms, query: LexicalQuery) -> float:
        counts, lengths = text
        terms = sorted(query.terms)
        return self.postings.score_outside(counts, lengths, terms, query.fields, dict(query.terms), query.k1, query.b)

    def score_file_outside(
        self, file: int, replaced: Mapping[int, TextTerms], query: LexicalQuery, groups: FileGroups
    ) -> float:
        statistics = self._statistics(groups)
        terms, weights = sorted(query.terms), dict(query.terms)
        return score_group_outside(
            self.postings, file, replaced, terms, query.fields, statistics, weights, query.k1, query.b
        )

    def _statistics(self, groups: FileGroups) -> GroupStatistics:
        """The files' statistics (worked out once per state of the index and its files)."""
        if self._groups is None or self._groups.group_of_slot is not groups.of_slot:
            self._groups = group_statistics(self.postings, groups.of_slot, len(groups.refs), FILE_WIDE_FIELDS)
        return self._groups


class _Build:
    """Each field's postings as a full build collects them, file by file, then the segments made of them."""

    def __init__(self, fields: tuple[str, ...], postings: Postings) -> None:
        self.fields = fields
        self.postings = postings
        self.terms: dict[str, list[IntArray]] = {n: [] for n in fields}
        self.slots: dict[str, list[IntArray]] = {n: [] for n in fields}
        self.tfs: dict[str, list[IntArray]] = {n: [] for n in fields}
        self.lengths: dict[str, list[FloatArray]] = {n: [] for n in fields}

    def add(self, first_slot: int, layout: FileLayout) -> None:
        for name in self.fields:
            column = layout.columns[name]
            self.terms[name].append(column.ids)
            self.slots[name].append((column.chunk_of_each() + first_slot).astype(np.int32))
            self.tfs[name].append(column.counts)
            self.lengths[name].append(layout.lengths(name))

    def finish(self, store: Store, n_terms: int, n_slots: int) -> None:
        segments: dict[str, Segment] = {}
        lengths: Lengths = {}
        for name in self.fields:
            segments[name] = Segment.build(
                _concat(self.terms[name]),
                _concat(self.slots[name]),
                _concat(self.tfs[name]).astype(np.float32),
                n_terms,
            )
            lengths[name] = np.concatenate([np.zeros(0, np.float64), *self.lengths[name]])
        write_segments(store, segments, lengths)
        self.postings.load_base(segments, lengths, np.arange(n_slots, dtype=np.int32))


def _concat(parts: Iterable[IntArray]) -> IntArray:
    return np.concatenate([np.zeros(0, np.int32), *parts]).astype(np.int32)


def should_compact(postings: Postings, n_slots: int) -> bool:
    """Fold the delta into the base when it (or the count of dead slots) has grown large."""
    live = max(postings.n_live, 1)
    base_postings = len(postings.fields[postings.field_names[0]].base.slots)
    big_delta = postings.delta_size > max(_COMPACT_MIN_DELTA, _COMPACT_DELTA_SHARE * base_postings)
    many_dead = n_slots - live > max(1000, 0.25 * live)
    return big_delta or many_dead


def read_segments(store: Store, fields: Sequence[str]) -> tuple[dict[str, Segment], Lengths]:
    """Each field's compacted postings and slot lengths, checked against their checksum (the stored form is
    ``write_segments``')."""
    rows = store.run("SELECT field, n_terms, indptr, slots, tfs, lengths, checksum FROM segments")
    name_of = store.path.name
    segments: dict[str, Segment] = {}
    lengths: Lengths = {}
    for name, n_terms, counts, gaps, tfs, lens, stored_sum in rows:
        if name not in fields:
            continue
        if store.sealed(name, n_terms, counts, gaps, tfs, lens) != stored_sum:
            raise IndexCorrupt(f"the {name} postings in {name_of} do not match their checksum")
        segment, slot_lengths = _decoded(name, name_of, n_terms, counts, gaps, tfs, lens)
        segments[name] = segment
        lengths[name] = slot_lengths
    return segments, lengths


def _decoded(
    name: str, name_of: str, n_terms: int, counts: bytes, gaps: bytes, tfs: bytes, lens: bytes
) -> tuple[Segment, FloatArray]:
    """One field's segment from its stored blobs: each term's posting count, its slots as gaps (the first from
    0), the term frequencies and every slot's length, each squeezed (``records.squeeze``)."""
    per_term = unsqueeze(counts, n_terms, (np.uint16, np.int32)).astype(np.int64)
    if len(per_term) and int(per_term.min()) < 0:
        raise IndexCorrupt(f"the {name} postings in {name_of} are inconsistent")
    indptr = np.zeros(n_terms + 1, np.int64)
    np.cumsum(per_term, out=indptr[1:])
    n_postings = int(indptr[-1])
    steps = unsqueeze(gaps, n_postings, (np.uint16, np.int32)).astype(np.int64)
    slots = np.cumsum(steps)
    held = per_term > 0
    starts = indptr[:-1][held]
    slots -= np.repeat(slots[starts] - steps[starts], per_term[held])  # each term's run counts from 0
    if n_postings and (int(slots.min()) < 0 or int(slots.max()) >= 1 << 31):
        raise IndexCorrupt(f"the {name} postings in {name_of} are inconsistent")
    frequencies = unsqueeze(tfs, n_postings, (np.uint16, np.float32)).astype(np.float32)
    try:
        raw_lengths = zlib.decompress(lens)
    except zlib.error:
        raise IndexCorrupt(f"the {name} postings in {name_of} cannot be decompressed") from None
    if len(raw_lengths) % 4:
        raise IndexCorrupt(f"the {name} postings in {name_of} are truncated")
    segment = Segment(indptr, slots.astype(np.int32), frequencies)
    return segment, np.frombuffer(raw_lengths, np.float32).astype(np.float64)


def write_segments(store: Store, segments: Mapping[str, Segment], lengths: Mapping[str, FloatArray]) -> None:
    """Replace the stored segments (inside the update's transaction), each row with its checksum.

    A field's postings are stored as each term's posting count, its slots as gaps from the previous slot of
    the same term (the first from 0: small numbers), its term frequencies and every slot's length, each
    zlib-compressed: a fifth of the plain arrays' room."""
    rows = []
    for name, seg in segments.items():
        slots = seg.slots.astype(np.int64)
        steps = np.diff(slots, prepend=0)
        starts = seg.indptr[:-1][np.diff(seg.indptr) > 0]
        steps[starts] = slots[starts]
        values = (
            name,
            seg.n_terms,
            squeeze(np.diff(seg.indptr), np.uint16, np.int32),
            squeeze(steps, np.uint16, np.int32),
            squeeze(seg.tfs, np.uint16, np.float32),
            zlib.compress(lengths[name].astype(np.float32).tobytes(), 1),
        )
        rows.append((*values, store.sealed(*values)))
    with store.serialized():
        store.run("DELETE FROM segments")
        store.run_many("INSERT INTO segments VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


__all__ = ["SqliteLexical", "read_segments", "should_compact", "write_segments"]
