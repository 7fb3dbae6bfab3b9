"""Writing an index: a full rebuild from every file, or a patch of the changed files.

A patch deletes the chunks of changed and removed files and adds the new ones in the delta; when the delta
(or the count of dead slots) has grown large, it is compacted into the base segment. Each runs in one
SQLite transaction, with the header (``meta``) written last, so a reader never sees half an update.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentty_rag.index.chunk_terms import encode_terms
from agentty_rag.index.definition import IndexConfig, Progress
from agentty_rag.index.ingest import Counted, Prepared
from agentty_rag.index.lexical import FieldTerms, LexicalIndex, Segment
from agentty_rag.index.manifest import Scan, meta_int
from agentty_rag.index.sqlite_vectors import prune_vectors
from agentty_rag.index.store import FileRow, Store, dumps
from agentty_rag.types import Chunk

# Compact the delta into the base segment when it holds more than this share of the base's postings.
_COMPACT_DELTA_SHARE = 0.10
_COMPACT_MIN_DELTA = 20_000  # postings
# Chunk rows written per statement during a rebuild.
_ROWS_PER_WRITE = 2000


class _Postings:
    """Each field's postings as a rebuild collects them, chunk by chunk, and the segments made of them."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.terms: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.slots: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.tfs: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.lengths: dict[str, list[float]] = {n: [] for n in fields}

    def add(self, slot: int, terms: dict[str, FieldTerms]) -> None:
        for name in self.fields:
            ids, tfs = terms.get(name, (np.zeros(0, np.int32), np.zeros(0, np.int32)))
            self.terms[name].append(ids)
            self.slots[name].append(np.full(len(ids), slot, np.int32))
            self.tfs[name].append(tfs)
            self.lengths[name].append(float(tfs.sum()))

    def segments(self, n_terms: int) -> tuple[dict[str, Segment], dict[str, npt.NDArray[np.float64]]]:
        segments: dict[str, Segment] = {}
        lengths: dict[str, npt.NDArray[np.float64]] = {}
        for name in self.fields:
            segments[name] = Segment.build(
                _concat(self.terms[name]),
                _concat(self.slots[name]),
                _concat(self.tfs[name]).astype(np.float32),
                n_terms,
            )
            lengths[name] = np.asarray(self.lengths[name], np.float64)
        return segments, lengths


def rebuild(
    store: Store,
    config: IndexConfig,
    found: Scan,
    prepared: Iterator[tuple[Prepared, list[Counted]]],
    progress: Progress,
) -> tuple[LexicalIndex, dict[str, FileRow], int]:
    """Write the index anew from every file (``prepared`` in key order); returns the in-memory index, the
    file rows and the number of chunks."""
    fields = config.field_names
    keys = sorted(found.stamps)
    vocab: dict[str, int] = {}
    postings = _Postings(fields)
    files: dict[str, FileRow] = {}
    rows: list[tuple[int, str, Chunk, bytes]] = []
    slot = 0
    with store.transaction():
        store.clear()
        for number, key in enumerate(keys, start=1):
            progress(number, len(keys), "parsing")
            item, counted = next(prepared)
            files[key] = item.row()
            for chunk, counts in counted:
                for counter in counts.values():
                    for term in counter:
                        if term not in vocab:
                            vocab[term] = len(vocab)
                terms = as_ids(counts, vocab)
                postings.add(slot, terms)
                rows.append((slot, key, chunk, encode_terms(fields, terms)))
                slot += 1
            if len(rows) >= _ROWS_PER_WRITE:
                store.put_chunks(rows)
                rows = []
        store.put_chunks(rows)
        progress(len(keys), len(keys), "writing")
        store.add_terms(vocab)
        segments, lengths = postings.segments(len(vocab))
        store.put_segments(segments, lengths)
        store.put_files(files)
        prune_vectors(store)
        write_meta(store, config, found, base_slots=slot, next_slot=slot, vocab_size=len(vocab))
    lexical = LexicalIndex(fields)
    lexical.load_base(segments, lengths, np.arange(slot, dtype=np.int32))
    return lexical, files, slot


@dataclass(frozen=True)
class Patched:
    """What a patch wrote: the file rows, the slots of the new chunks and those of the chunks it deleted."""

    files: dict[str, FileRow]
    new_slots: list[int]
    old_slots: list[int]
    attributes: dict[int, tuple[str, str, str]]  # (source, ref, language) of each new chunk, by slot


def patch(
    store: Store,
    config: IndexConfig,
    found: Scan,
    lexical: LexicalIndex,
    counted: list[tuple[Prepared, list[Counted]]],
    old_keys: list[str],
    removed: list[str],
    touched: dict[str, FileRow],
) -> Patched:
    """Drop the chunks of ``old_keys`` (changed and removed files), add the new chunks; ``lexical`` is
    patched alongside, inside the transaction (it holds part of the update if the transaction fails)."""
    fields = config.field_names
    meta = store.meta()
    next_slot = meta_int(meta, "next_slot")
    prepared = [item for item, _ in counted]
    counts_per_chunk = [(item, chunk, counts) for item, pairs in counted for chunk, counts in pairs]
    wanted = {term for _, _, counts in counts_per_chunk for counter in counts.values() for term in counter}
    with store.transaction():
        old_slots = store.slots_of_files(old_keys)
        store.delete_chunks(old_slots)
        store.delete_files_rows(removed)
        ids = store.lookup_terms(wanted)
        new_terms: dict[str, int] = {}
        # Kept in the header: counting the vocabulary table took tens of ms per patch at 200k chunks.
        next_id = meta_int(meta, "vocab_size") if "vocab_size" in meta else store.vocab_size()
        for term in sorted(wanted - ids.keys()):
            new_terms[term] = next_id
            next_id += 1
        store.add_terms(new_terms)
        ids.update(new_terms)
        rows: list[tuple[int, str, Chunk, bytes]] = []
        added: list[tuple[int, dict[str, FieldTerms]]] = []
        for item, chunk, counts in counts_per_chunk:
            terms = as_ids(counts, ids)
            rows.append((next_slot, item.key, chunk, encode_terms(fields, terms)))
            added.append((next_slot, terms))
            next_slot += 1
        store.put_chunks(rows)
        files = {p.key: p.row() for p in prepared}
        files.update(touched)
        store.put_files(files)
        lexical.remove(old_slots)
        for slot, terms in added:
            lexical.add(slot, terms)
        base_slots = meta_int(meta, "base_slots")
        if should_compact(lexical, fields, next_slot):
            lexical.compact(next_id)
            store.put_segments(
                {n: lexical.fields[n].base for n in fields},
                {n: lexical.fields[n].lengths[:next_slot] for n in fields},
            )
            base_slots = next_slot
            prune_vectors(store)
        write_meta(store, config, found, base_slots=base_slots, next_slot=next_slot, vocab_size=next_id)
    attributes: dict[int, tuple[str, str, str]] = {
        slot: (str(chunk.source), chunk.ref, chunk.language) for slot, _, chunk, _ in rows
    }
    return Patched(files, [slot for slot, _ in added], old_slots, attributes)


def should_compact(lexical: LexicalIndex, fields: tuple[str, ...], next_slot: int) -> bool:
    """Fold the delta into the base when it (or the count of dead slots) has grown large."""
    live = max(lexical.n_live, 1)
    base_postings = len(lexical.fields[fields[0]].base.slots)
    big_delta = lexical.delta_size > max(_COMPACT_MIN_DELTA, _COMPACT_DELTA_SHARE * base_postings)
    many_dead = next_slot - live > max(1000, 0.25 * live)
    return big_delta or many_dead


def write_meta(
    store: Store, config: IndexConfig, found: Scan, base_slots: int, next_slot: int, vocab_size: int
) -> None:
    """The header of the update (call inside its transaction)."""
    store.set_meta(
        {
            "profile": dumps(config.profile()),
            "roots": dumps(config.roots),
            "base_slots": str(base_slots),
            "next_slot": str(next_slot),
            "vocab_size": str(vocab_size),
            "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "scan_skipped": dumps(found.skipped.to_json()),
        }
    )


def as_ids(counts: dict[str, Counter[str]], ids: Mapping[str, int]) -> dict[str, FieldTerms]:
    """A chunk's term counts per field as (term ids, counts), ids ascending."""
    out: dict[str, FieldTerms] = {}
    for name, counter in counts.items():
        if counter:
            pairs = sorted((ids[t], n) for t, n in counter.items())
            out[name] = (
                np.asarray([p[0] for p in pairs], np.int32),
                np.asarray([p[1] for p in pairs], np.int32),
            )
    return out


def _concat(parts: Iterable[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
    items = list(parts)
    return np.concatenate(items).astype(np.int32) if items else np.zeros(0, np.int32)


__all__ = ["Patched", "as_ids", "patch", "rebuild", "should_compact", "write_meta"]
