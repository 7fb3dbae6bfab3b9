"""Starting a machine's local index from the shared collection, once per published version: its dense vectors
are taken, and the chunks, terms and texts are built from the working tree, as any build builds them (a file's
chunks are never believed without the file). A vector is kept by the hash of the text it was made for, so only
a chunk whose text the working tree gives again, identical, ever uses it; the ordinary refresh after it keeps
the index up to date (the overlay: the files that differ from the published version).

``fetch`` is the network part (no lock held: a search never waits on it), ``install`` the write (under the
index's writer lock). A collection that is not finished, changed while it was read, was published with other
index settings, or holds a point this version cannot read (a value of the wrong type or out of range, a path
that would leave the workspace or names another file, chunks that disagree with their file's row) is refused
whole: nothing from it is kept."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentty_rag.errors import NotPublished
from agentty_rag.index.lexical.backends import lexical_index
from agentty_rag.index.lexical.chunk_terms import FileTerms
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.index.qdrant.origin import SEEDED_FROM, SEEDED_VERSION, keep_published, provenance_of
from agentty_rag.index.qdrant.shared import (
    DENSE,
    SharedCollection,
)
from agentty_rag.index.storage.bulk import rebuild
from agentty_rag.index.storage.definition import IndexConfig, Progress
from agentty_rag.index.storage.ingest import BuiltFile, prepare_all
from agentty_rag.index.storage.manifest import scan
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.records import file_records
from agentty_rag.index.storage.refresh import writer_lock
from agentty_rag.index.storage.store import FileRow
from agentty_rag.index.vectors.sqlite import write_vectors
from agentty_rag.types import Chunk

# Counts and line numbers as a build stores them (SQLite's and numpy's int32).
_INT32 = 1 << 31


@dataclass
class Download:
    """A published version read whole: its marker, the files' rows, their chunks (read to check the collection
    and to key each vector by the text it was made for; never written: the working tree's are), the dense
    vectors by text hash."""

    marker: dict[str, Any]
    rows: dict[str, FileRow]
    built: list[BuiltFile]
    vectors: dict[str, bytes]

    @property
    def version(self) -> str:
        return str(self.marker.get("version", ""))


def fetch(collection: SharedCollection, config: IndexConfig, seeded_version: str | None) -> Download | None:
    """Read the collection's published version when the local index was not seeded from it (None: it was).
    Network only: no lock is held, nothing local is written.

    Raises:
        BackendUnreachable: the server did not answer.
        NotPublished: nothing published, a publish under way (or one that ended while this read), other index
            settings, or a point this version cannot read.
    """
    marker = _usable_marker(collection, config)
    if str(marker.get("version", "")) == seeded_version:
        return None
    try:
        rows, built, vectors = _download(collection)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as error:
        raise NotPublished(
            f"the Qdrant collection {collection.name} holds a point this version cannot read "
            f"({type(error).__name__}: {error})"
        ) from None
    if collection.marker() != marker:  # a publish ran meanwhile: what was read may mix two versions
        raise NotPublished(f"the Qdrant collection {collection.name} changed while it was read")
    return Download(marker, rows, built, vectors)


def install(mirror: Mirror, download: Download, tell: Progress) -> int:
    """Write the local index from the working tree with the download's vectors (its writer lock held), unless
    another process already did; returns how many files it built (0: none).

    Raises:
        IndexCorrupt, IndexUnwritable, IndexBusy: the local index could not be written (it is as it was).
    """
    config, marker = mirror.config, download.marker
    meta = {SEEDED_VERSION: download.version, SEEDED_FROM: json.dumps(provenance_of(marker), sort_keys=True)}
    with writer_lock(mirror):
        mirror.sync()
        if mirror.store().meta().get(SEEDED_VERSION) == download.version:  # another process seeded it meanwhile
            return 0
        store = mirror.store()
        embedding = str(marker.get("embedding") or "")
        if embedding and download.vectors:
            # Before the chunks that use them: an index that says it is this version always has its vectors.
            write_vectors(store, embedding, download.vectors.items())
        found = scan(config.sources)
        jobs = [(found.owners[key], found.stamps[key], config.chunking) for key in sorted(found.stamps)]
        lexical = lexical_index(config, mirror.store, mirror.notes)
        files, _ = rebuild(store, config, found, prepare_all(jobs, Tokenizer(), mirror.notes.warn), tell, lexical, meta)
        mirror.lexical = lexical
        mirror.committed(store, files)
        if mirror.vectors is not None:
            mirror.vectors.load()
    keep_published(config, download.rows)
    return len(jobs)


def _usable_marker(collection: SharedCollection, config: IndexConfig) -> dict[str, Any]:
    marker = collection.marker()
    if marker is None:
        raise NotPublished(f"nothing published to the Qdrant collection {collection.name} yet")
    if marker.get("state") != "ready":
        raise NotPublished(f"the Qdrant collection {collection.name} is being written")
    if marker.get("profile") != config.profile():
        raise NotPublished(f"the Qdrant collection {collection.name} was published with other index settings")
    return marker


def _download(collection: SharedCollection) -> tuple[dict[str, FileRow], list[BuiltFile], dict[str, bytes]]:
    """Every file's row, its chunks ready for a build's writer, and the dense vectors by text hash.

    Raises:
        KeyError, TypeError, ValueError, AttributeError, OverflowError: a point does not hold what a publish
            writes, or a file's chunks do not agree with its row.
    """
    rows: dict[str, FileRow] = {}
    chunks: dict[str, list[Any]] = {}
    # One pass over every point (a filter per kind costs a local-mode collection a pass per page).
    for point in collection.scroll(vectors=True):
        kind = point.payload.get("kind")
        if kind == "file":
            rows[_key(point.payload["key"])] = _file_row(point.payload)
        elif kind == "chunk":
            chunks.setdefault(_key(point.payload["key"]), []).append(point)
    vectors: dict[str, bytes] = {}
    built = []
    for key in sorted(rows):
        points = sorted(chunks.pop(key, []), key=lambda p: _number(p.payload["ordinal"]))
        if len(points) != rows[key].chunks or any(p.payload["hash"] != rows[key].hash for p in points):
            raise ValueError(f"the chunks of {key} do not agree with its row")
        built.append(_built_file(key, rows[key], points, vectors))
    if chunks:
        raise ValueError(f"chunks of {next(iter(chunks))} with no file row")
    return rows, built, vectors


def _key(value: object) -> str:
    """A code file's key as a publish writes it: ``code:`` and a relative path inside the workspace."""
    if not isinstance(value, str) or not value.startswith("code:"):
        raise ValueError(f"file key {value!r}")
    path = value.removeprefix("code:")
    if path.startswith(("/", "\\")) or ".." in Path(path).parts or not path:
        raise ValueError(f"file key {value!r} leaves the workspace")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _number(value: object, high: int = _INT32) -> int:
    """A whole number from 0 below ``high`` (a bool, a float or a string is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < high:
        raise ValueError(f"{value!r} is not a count")
    return value


def _file_row(payload: Mapping[str, Any]) -> FileRow:
    # No modification time: the first refresh reads each file once to see that its content is the published one.
    return FileRow(
        _number(payload["size"], 1 << 62),
        0,
        _text(payload["hash"]),
        _number(payload["chunks"]),
        _text(payload["skip"]),
        _number(payload["redacted"]),
    )


def _built_file(key: str, row: FileRow, points: Sequence[Any], vectors: dict[str, bytes]) -> BuiltFile:
    chunks: list[Chunk] = []
    dense_vectors: list[Any] = []
    counted: list[dict[str, Counter[str]]] = []
    for point in points:
        p = point.payload
        c = p["chunk"]
        if p["path"] != key.removeprefix("code:"):
            raise ValueError(f"a chunk of {key} names another path")
        start, end = _number(p["start_line"]), _number(p["end_line"])
        if start > end:
            raise ValueError(f"a chunk of {key} ends before it starts")
        chunk = Chunk(
            source="code",
            ref=p["path"],
            start_line=start,
            end_line=end,
            text=_text(c["text"]),
            language=_text(p["language"]),
            kind=_text(c["kind"]),
            context=_text(c["context"]),
            symbol=_text(p["symbol"]),
            title=_text(c["title"]),
        )
        chunks.append(chunk)
        counted.append({_text(name): Counter({_text(t): _number(n) for t, n in pairs}) for name, pairs in p["terms"]})
        dense_vectors.append((point.vector or {}).get(DENSE) if isinstance(point.vector, dict) else None)
    records, blocks = file_records(chunks)
    for record, dense in zip(records, dense_vectors, strict=True):
        if dense is not None:
            vectors[record.embed_hash] = np.asarray(dense, np.float32).astype(np.float16).tobytes()
    return BuiltFile(key, row, records, blocks, FileTerms.of(counted))


__all__ = ["Download", "fetch", "install"]
