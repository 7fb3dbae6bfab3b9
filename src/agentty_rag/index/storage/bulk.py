"""A full build's writer: every file's chunks, ready-made by the workers (``ingest.build_file``), numbered into
slots, their terms mapped to the index's ids a file at a time, and written in one transaction (the lexical
index's part by its backend's ``LexicalBuild``).

Term ids are given in order of first occurrence (file by file in key order, then chunk, field and term), so
the same files always give the same index. The per-chunk work left here is small: the id mapping, the
sorting and the postings are array operations over a whole file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

import numpy as np

from agentty_rag.index.lexical.chunk_terms import FileLayout
from agentty_rag.index.lexical.protocol import LexicalIndex
from agentty_rag.index.storage.definition import IndexConfig, Progress
from agentty_rag.index.storage.ingest import BuiltFile
from agentty_rag.index.storage.manifest import Scan
from agentty_rag.index.storage.records import Block, ChunkRecord
from agentty_rag.index.storage.store import FileRow, Store
from agentty_rag.index.storage.update import write_meta
from agentty_rag.index.vectors.stores import vector_backend

# Chunk rows written per statement (about).
_ROWS_PER_WRITE = 2000


def rebuild(
    store: Store,
    config: IndexConfig,
    found: Scan,
    prepared: Iterator[BuiltFile],
    progress: Progress,
    lexical: LexicalIndex,
    meta: Mapping[str, str] | None = None,
) -> tuple[dict[str, FileRow], int]:
    """Write the index anew from every file (``prepared`` in key order) into the database and ``lexical`` (an
    empty lexical index), with ``meta`` beside the header; returns the file rows and the number of chunks."""
    fields = config.field_names
    keys = sorted(found.stamps)
    vocab: dict[str, int] = {}
    postings = lexical.builder()
    files: dict[str, FileRow] = {}
    rows: list[tuple[int, list[ChunkRecord], list[Block], list[bytes]]] = []
    pending = 0
    slot = 0
    with store.transaction():
        store.clear()
        for number, key in enumerate(keys, start=1):
            progress(number, len(keys), "parsing")
            built = next(prepared)
            files[key] = replace(built.row, first_slot=slot)
            if not built.records:
                continue
            # A term new to the index gets the next id, in the file's order of first use (a file's terms are
            # distinct).
            terms = built.terms.terms
            new = [term for term in terms if term not in vocab]
            vocab.update(zip(new, range(len(vocab), len(vocab) + len(new)), strict=True))
            index_ids = np.fromiter(map(vocab.__getitem__, terms), np.int32, len(terms))
            layout = FileLayout(fields, built.terms, index_ids, len(built.records))
            postings.add(slot, layout)
            rows.append((slot, built.records, built.blocks, layout.blobs()))
            slot += len(built.records)
            pending += len(built.records)
            if pending >= _ROWS_PER_WRITE:
                store.put_records(rows)
                rows, pending = [], 0
        store.put_records(rows)
        progress(len(keys), len(keys), "writing")
        store.add_terms(vocab)
        postings.finish(store, len(vocab), slot)
        store.put_files(files)
        vector_backend(config.vector_store).prune(store)
        write_meta(store, config, found, base_slots=slot, next_slot=slot, vocab_size=len(vocab))
        if meta:
            store.set_meta(meta)
    return files, slot


__all__ = ["rebuild"]
