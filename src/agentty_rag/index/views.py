"""What searches read again and again from one state of an index, worked out once per state.

Which file each chunk comes from, the files' BM25 statistics, filter masks, and chunk rows with their term
ids: each is kept until the next reload or commit. Everything here runs under the index's lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.bm25 import idf as bm25_idf
from agentty_rag.index.chunk_terms import decode_terms
from agentty_rag.index.fields import FILE_WIDE_FIELDS, Scoring
from agentty_rag.index.lexical import GroupStatistics, LexicalIndex
from agentty_rag.index.store import Store
from agentty_rag.types import Chunk

# Chunk rows kept in memory between searches (a few MB).
ROW_CACHE = 8192
_T = TypeVar("_T")


@dataclass(frozen=True)
class FileGroups:
    """The files of an index: ``refs`` in path order, each slot's position in it (-1: no chunk there), and
    each file's slots: ``slots[starts[f]:starts[f + 1]]``, in slot order."""

    of_slot: npt.NDArray[np.int32]
    refs: tuple[str, ...]
    slots: npt.NDArray[np.int32]
    starts: npt.NDArray[np.int64]

    def slots_of(self, file: int) -> npt.NDArray[np.int32]:
        return self.slots[int(self.starts[file]) : int(self.starts[file + 1])]


@dataclass(frozen=True)
class LexicalScores:
    """One query's BM25 evidence: a score per chunk slot and a score per file (the files of ``groups``)."""

    chunks: npt.NDArray[np.float64]
    files: npt.NDArray[np.float64]
    groups: FileGroups


class Views:
    """The per-state views of one index.

    Args:
        store: the index database as it is now (opened on first use).
        field_names: the index's fields, in the order of its term blobs.
        row_cache: chunk rows kept between searches.
    """

    def __init__(self, store: Callable[[], Store], field_names: tuple[str, ...], row_cache: int = ROW_CACHE) -> None:
        self._store = store
        self._row_cache = row_cache
        self._field_names = field_names
        self._attributes: dict[int, tuple[str, str, str]] | None = None
        self._groups: FileGroups | None = None
        self._numbers: dict[str, int] | None = None  # each file's number in the groups, once an edit asked
        self._group_stats: GroupStatistics | None = None
        self._rows: OrderedDict[int, tuple[Chunk, frozenset[int]]] = OrderedDict()
        self._rows_generation = -1
        self._masks: dict[str, npt.NDArray[np.bool_]] = {}

    def forget(self) -> None:
        """The index changed: work everything out again when next asked."""
        self._attributes = None
        self._rows.clear()
        self._groups = None
        self._numbers = None
        self._masks = {}

    def patched(self, removed: Sequence[int], added: Mapping[int, tuple[str, str, str]], size: int) -> None:
        """A patch was committed: update the chunks' attributes and the file groups in place when the patch
        re-chunked files the groups already hold (an edit), else work them out again when next asked; the
        rest is forgotten. Reading every chunk's attributes again costs O(chunks) after each edit.

        Args:
            removed: the slots whose chunks the patch deleted.
            added: (source, ref, language) of each chunk it added, by slot.
            size: the number of slots now (``len(lexical.alive)``).
        """
        attributes, groups, numbers = self._attributes, self._groups, self._numbers
        self.forget()
        if attributes is None:
            return
        gone = {attributes[s][1] for s in removed if s in attributes}
        for slot in removed:
            attributes.pop(slot, None)
        attributes.update(added)
        self._attributes = attributes
        if groups is None or gone != {ref for _, ref, _ in added.values()}:
            return  # a file appeared or lost every chunk: the files themselves changed
        number = numbers if numbers is not None else {ref: i for i, ref in enumerate(groups.refs)}
        if any(ref not in number for ref in gone):
            return
        self._numbers = number  # the same files: their numbers hold for the next edit too
        of_slot = np.full(size, -1, np.int32)
        kept = min(size, len(groups.of_slot))
        of_slot[:kept] = groups.of_slot[:kept]
        of_slot[[s for s in removed if s < size]] = -1
        for slot, (_, ref, _) in added.items():
            if slot < size:
                of_slot[slot] = number[ref]
        self._groups = _grouped(of_slot, groups.refs)

    def attributes(self) -> dict[int, tuple[str, str, str]]:
        """(source, ref, language) of every chunk, by slot."""
        if self._attributes is None:
            self._attributes = {s: (src, ref, lang) for s, src, ref, lang in self._store().chunk_attributes()}
        return self._attributes

    def file_groups(self, alive: npt.NDArray[np.bool_]) -> FileGroups:
        """Which file each chunk comes from."""
        if self._groups is not None and len(self._groups.of_slot) == len(alive):
            return self._groups
        attributes = self.attributes()
        refs = sorted({ref for _, ref, _ in attributes.values()})
        number = {ref: i for i, ref in enumerate(refs)}
        of_slot = np.full(len(alive), -1, np.int32)
        for slot, (_, ref, _) in attributes.items():
            if slot < len(of_slot):
                of_slot[slot] = number[ref]
        self._groups = _grouped(of_slot, tuple(refs))
        return self._groups

    def group_statistics(self, lexical: LexicalIndex, groups: FileGroups) -> GroupStatistics:
        """The file statistics of the index as it is now (worked out once per state, like the groups)."""
        if self._group_stats is None or self._group_stats.group_of_slot is not groups.of_slot:
            self._group_stats = lexical.group_statistics(groups.of_slot, len(groups.refs), FILE_WIDE_FIELDS)
        return self._group_stats

    def lexical_scores(
        self,
        lexical: LexicalIndex,
        terms: Mapping[str, float],
        weights: Mapping[str, float],
        scoring: Scoring,
        files: bool,
    ) -> LexicalScores:
        """BM25 of every chunk — and with ``files``, of every file — for weighted query terms (term -> weight)."""
        ids = self._store().lookup_terms(terms)
        known = [ids[t] for t in terms if t in ids]
        query_ids = dict.fromkeys(self._field_names, known)
        term_weights = {ids[t]: w for t, w in terms.items() if t in ids}
        chunk_scores = lexical.score(query_ids, weights, term_weights, scoring.k1, scoring.b)
        groups = self.file_groups(lexical.alive)
        file_scores = np.zeros(len(groups.refs), np.float64)
        if files:
            file_scores = lexical.score_groups(
                query_ids,
                {**weights, **scoring.file_weights},
                self.group_statistics(lexical, groups),
                term_weights,
                scoring.file_k1,
                scoring.file_b,
            )
        return LexicalScores(chunk_scores, file_scores, groups)

    def score_outside(
        self,
        lexical: LexicalIndex,
        counts: Mapping[str, Mapping[str, int]],
        terms: Mapping[str, float],
        weights: Mapping[str, float],
        scoring: Scoring,
    ) -> float:
        """``LexicalIndex.score_outside`` for a document's term counts and weighted query terms, as text."""
        ids = self._store().lookup_terms(terms)
        term_weights = {ids[t]: w for t, w in terms.items() if t in ids}
        counted, lengths = _by_id(counts, ids)
        query = sorted(term_weights)
        return lexical.score_outside(counted, lengths, query, weights, term_weights, scoring.k1, scoring.b)

    def score_file_outside(
        self,
        lexical: LexicalIndex,
        file: int,
        replaced: Mapping[int, Mapping[str, Mapping[str, int]]],
        terms: Mapping[str, float],
        weights: Mapping[str, float],
        scoring: Scoring,
    ) -> float:
        """``LexicalIndex.score_group_outside`` for a file whose chunks in ``replaced`` (slot -> field -> term ->
        count) held other text, for weighted query terms."""
        ids = self._store().lookup_terms(terms)
        term_weights = {ids[t]: w for t, w in terms.items() if t in ids}
        as_ids = {slot: _by_id(counts, ids) for slot, counts in replaced.items()}
        groups = self.group_statistics(lexical, self.file_groups(lexical.alive))
        return lexical.score_group_outside(
            file,
            as_ids,
            sorted(term_weights),
            {**weights, **scoring.file_weights},
            groups,
            term_weights,
            scoring.file_k1,
            scoring.file_b,
        )

    def term_statistics(self, lexical: LexicalIndex, terms: Sequence[str]) -> tuple[dict[str, int], dict[str, float]]:
        """Ids and body-field IDF of terms (a term the body never holds gets the highest IDF)."""
        ids = self._store().lookup_terms(terms)
        n_live = max(lexical.n_live, 1)
        idf: dict[str, float] = {}
        for term in terms:
            df = lexical.document_frequency("body", ids[term]) if term in ids else 0
            idf[term] = bm25_idf(df, n_live)
        return ids, idf

    def defined_as(self, lexical: LexicalIndex, terms: Sequence[str]) -> list[int]:
        """Slots of the definitions named by any of ``terms`` (an index with a ``name`` field)."""
        ids = self._store().lookup_terms(terms)
        found: set[int] = set()
        for term in terms:
            if term in ids:
                found.update(lexical.postings("name", ids[term]).tolist())
        return sorted(found)

    def rows(
        self, lexical: LexicalIndex, generation: int, slots: Sequence[int]
    ) -> dict[int, tuple[Chunk, frozenset[int]]]:
        """Chunks and their term ids, read (and checked) once per index generation: a slot's row never
        changes until the next commit, and consecutive searches read many of the same candidates.

        Every row asked for is in the answer, however many: the cache keeps the ``row_cache`` most recently
        used, and is trimmed only after the answer holds its rows."""
        if self._rows_generation != generation:
            self._rows.clear()
            self._rows_generation = generation
        found: dict[int, tuple[Chunk, frozenset[int]]] = {}
        missing: list[int] = []
        for slot in slots:
            row = self._rows.get(slot)
            if row is None:
                missing.append(slot)
            else:
                self._rows.move_to_end(slot)
                found[slot] = row
        if missing:
            store = self._store()
            for slot, (chunk, blob) in _all_live(
                store, lexical, generation, missing, store.chunk_rows(missing)
            ).items():
                fields = decode_terms(self._field_names, blob)
                terms = frozenset(int(t) for ids, _ in fields.values() for t in ids.tolist())
                found[slot] = self._rows[slot] = (chunk, terms)
        while len(self._rows) > self._row_cache:
            self._rows.popitem(last=False)
        return {slot: found[slot] for slot in slots if slot in found}

    def allowed(
        self, alive: npt.NDArray[np.bool_], key: str, keep: Callable[[str, str, str], bool]
    ) -> npt.NDArray[np.bool_]:
        """A mask over slots of the chunks ``keep(source, ref, language)`` admits."""
        mask = self._masks.get(key)
        if mask is not None and len(mask) == len(alive):
            return mask
        mask = np.zeros(len(alive), bool)
        for slot, (source, ref, language) in self.attributes().items():
            if slot < len(mask) and keep(source, ref, language):
                mask[slot] = True
        self._masks[key] = mask
        return mask


def _by_id(
    counts: Mapping[str, Mapping[str, int]], ids: Mapping[str, int]
) -> tuple[dict[str, dict[int, int]], dict[str, float]]:
    """A text's term counts per field as the index's term ids (terms it does not know left out), and its length
    per field (every term counted)."""
    counted = {name: {ids[t]: n for t, n in held.items() if t in ids} for name, held in counts.items()}
    return counted, {name: float(sum(held.values())) for name, held in counts.items()}


def _all_live(
    store: Store, lexical: LexicalIndex, generation: int, slots: Sequence[int], found: dict[int, _T]
) -> dict[int, _T]:
    """``found``, when it holds every live slot asked for. A live slot the database lacks, while no other
    process changed the index, is corruption: a damaged row key hides its row from every lookup."""
    alive = lexical.alive
    missing = [s for s in slots if s not in found and 0 <= s < len(alive) and alive[s]]
    if missing and store.generation() == generation:
        raise IndexCorrupt(f"chunk {missing[0]} is missing from {store.path.name}")
    return found


def within(scores: LexicalScores, allowed: npt.NDArray[np.bool_]) -> LexicalScores:
    """The scores with chunks outside ``allowed`` (and files with no allowed chunk) at 0 (changed in place)."""
    chunk_scores, file_scores, groups = scores.chunks, scores.files, scores.groups
    chunk_scores[: len(allowed)] *= allowed[: len(chunk_scores)]
    chunk_scores[len(allowed) :] = 0
    admitted = np.zeros(len(groups.refs), bool)
    in_mask = groups.of_slot[np.flatnonzero(allowed[: len(groups.of_slot)])]
    admitted[in_mask[in_mask >= 0]] = True
    file_scores *= admitted
    return LexicalScores(chunk_scores, file_scores, groups)


def _grouped(of_slot: npt.NDArray[np.int32], refs: tuple[str, ...]) -> FileGroups:
    """The file groups of ``refs`` from each slot's file number (-1: no chunk)."""
    held = np.flatnonzero(of_slot >= 0)
    slots = held[np.argsort(of_slot[held], kind="stable")].astype(np.int32)
    starts = np.zeros(len(refs) + 1, np.int64)
    np.cumsum(np.bincount(of_slot[held], minlength=len(refs)), out=starts[1:])
    return FileGroups(of_slot, refs, slots, starts)


__all__ = ["ROW_CACHE", "FileGroups", "LexicalScores", "Views", "within"]
