"""A full build's writer: every file's chunks, ready-made by the workers (``ingest.build_file``), numbered into
slots, their terms mapped to the index's ids a file at a time, and written in one transaction.

Term ids are given in order of first occurrence (file by file in key order, then chunk, field and term), so
the same files always give the same index. The per-chunk work left here is small: the id mapping, the
sorting and the postings are array operations over a whole file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import numpy.typing as npt

from agentty_rag.index.chunk_terms import FileLayout
from agentty_rag.index.definition import IndexConfig, Progress
from agentty_rag.index.ingest import BuiltFile
from agentty_rag.index.lexical import LexicalIndex, Segment
from agentty_rag.index.manifest import Scan
from agentty_rag.index.records import ChunkRecord
from agentty_rag.index.store import FileRow, Store
from agentty_rag.index.update import write_meta
from agentty_rag.index.vector_stores import vector_backend

# Chunk rows written per statement.
_ROWS_PER_WRITE = 2000


class _Postings:
    """Each field's postings as the build collects them, file by file, and the segments made of them."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.terms: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.slots: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.tfs: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in fields}
        self.lengths: dict[str, list[npt.NDArray[np.float64]]] = {n: [] for n in fields}

    def add(self, first_slot: int, layout: FileLayout) -> None:
        for name in self.fields:
            column = layout.columns[name]
            self.terms[name].append(column.ids)
            self.slots[name].append((column.chunk_of_each() + first_slot).astype(np.int32))
            self.tfs[name].append(column.counts)
            self.lengths[name].append(layout.lengths(name))

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
            lengths[name] = np.concatenate([np.zeros(0, np.float64), *self.lengths[name]])
        return segments, lengths


def rebuild(
    store: Store, config: IndexConfig, found: Scan, prepared: Iterator[BuiltFile], progress: Progress
) -> tuple[LexicalIndex, dict[str, FileRow], int]:
    """Write the index anew from every file (``prepared`` in key order); returns the in-memory index, the
    file rows and the number of chunks."""
    fields = config.field_names
    keys = sorted(found.stamps)
    vocab: dict[str, int] = {}
    postings = _Postings(fields)
    files: dict[str, FileRow] = {}
    rows: list[tuple[int, ChunkRecord, bytes]] = []
    slot = 0
    with store.transaction():
        store.clear()
        for number, key in enumerate(keys, start=1):
            progress(number, len(keys), "parsing")
            built = next(prepared)
            files[key] = built.row
            if not built.records:
                continue
            # setdefault numbers a term new to the index with the next id, in the file's order of first use.
            index_ids = np.fromiter(
                (vocab.setdefault(term, len(vocab)) for term in built.terms.terms), np.int32, len(built.terms.terms)
            )
            layout = FileLayout(fields, built.terms, index_ids, len(built.records))
            postings.add(slot, layout)
            rows.extend(zip(range(slot, slot + len(built.records)), built.records, layout.blobs(), strict=True))
            slot += len(built.records)
            if len(rows) >= _ROWS_PER_WRITE:
                store.put_records(rows)
                rows = []
        store.put_records(rows)
        progress(len(keys), len(keys), "writing")
        store.add_terms(vocab)
        segments, lengths = postings.segments(len(vocab))
        store.put_segments(segments, lengths)
        store.put_files(files)
        vector_backend(config.vector_store).prune(store)
        write_meta(store, config, found, base_slots=slot, next_slot=slot, vocab_size=len(vocab))
    lexical = LexicalIndex(fields)
    lexical.load_base(segments, lengths, np.arange(slot, dtype=np.int32))
    return lexical, files, slot


def _concat(parts: Iterable[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
    return np.concatenate([np.zeros(0, np.int32), *parts]).astype(np.int32)


__all__ = ["rebuild"]
