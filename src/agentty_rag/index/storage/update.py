"""Writing an index: a patch of the changed files (a full rebuild is ``bulk.py``'s).

A patch deletes the chunks of changed and removed files and adds the new ones, to the database and to the
lexical index (``LexicalIndex.patch``: the SQLite backend adds them to its delta, and compacts it when it has
grown large). Each runs in one SQLite transaction, with the header (``meta``) written last, so a reader never
sees half an update.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from agentty_rag.index.lexical.chunk_terms import encode_terms
from agentty_rag.index.lexical.protocol import FieldTerms, LexicalIndex
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.ingest import Counted, Prepared
from agentty_rag.index.storage.manifest import Scan, meta_int
from agentty_rag.index.storage.store import FileRow, Store, dumps
from agentty_rag.index.vectors.stores import vector_backend


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
        added: list[tuple[int, dict[str, FieldTerms]]] = []
        attributes: dict[int, tuple[str, str, str]] = {}
        files: dict[str, FileRow] = {}
        # A file's chunks get consecutive slots: the file's row names the first (``FileRow.first_slot``).
        for item, pairs in counted:
            files[item.key] = replace(item.row(), first_slot=next_slot)
            if not pairs:
                continue
            blobs = []
            for slot, (chunk, counts) in enumerate(pairs, start=next_slot):
                terms = as_ids(counts, ids)
                blobs.append(encode_terms(fields, terms))
                added.append((slot, terms))
                attributes[slot] = (str(chunk.source), chunk.ref, chunk.language)
            store.put_file_chunks(next_slot, [chunk for chunk, _ in pairs], blobs)
            next_slot += len(pairs)
        files.update(touched)
        store.put_files(files)
        base_slots = meta_int(meta, "base_slots")
        if lexical.patch(store, old_slots, added, next_id, next_slot):
            base_slots = next_slot
            vector_backend(config.vector_store).prune(store)
        write_meta(store, config, found, base_slots=base_slots, next_slot=next_slot, vocab_size=next_id)
    return Patched(files, [slot for slot, _ in added], old_slots, attributes)


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


__all__ = ["Patched", "as_ids", "patch", "write_meta"]
