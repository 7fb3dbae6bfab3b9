"""Starting a machine's local index from the shared collection: a full build whose files (their chunks, terms
and dense vectors) come from the collection, once per published version; the ordinary refresh after it
re-indexes what the working tree holds otherwise (the overlay). A collection that is not finished, was
published with other index settings, or holds a point this version cannot read (or whose path would leave
the workspace) is refused whole: nothing from it is kept."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentty_rag.errors import NotPublished
from agentty_rag.index.lexical.backends import lexical_index
from agentty_rag.index.lexical.chunk_terms import FileTerms
from agentty_rag.index.qdrant.origin import SEEDED_FROM, SEEDED_VERSION, keep_published, provenance_of
from agentty_rag.index.qdrant.shared import (
    DENSE,
    SharedCollection,
    index_profile,
)
from agentty_rag.index.storage.bulk import rebuild
from agentty_rag.index.storage.definition import Progress
from agentty_rag.index.storage.ingest import BuiltFile
from agentty_rag.index.storage.manifest import Scan
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.records import chunk_record
from agentty_rag.index.storage.refresh import writer_lock
from agentty_rag.index.storage.store import FileRow
from agentty_rag.index.vectors.sqlite import write_vectors
from agentty_rag.sources.walker import SkipReport
from agentty_rag.types import Chunk, FileStamp


@dataclass
class Seeded:
    """What ``seed`` did: nothing (already the published version), or the local index written from it."""

    collection: str
    version: str = ""
    commit: str = ""
    files: int = 0
    chunks: int = 0
    vectors: int = 0
    wrote: bool = False
    seconds: float = 0.0
    marker: dict[str, Any] = field(default_factory=dict)


def seed(mirror: Mirror, collection: SharedCollection, tell: Progress) -> Seeded:
    """Write the local index from the collection when it holds a version this index was not seeded from.

    Raises:
        BackendUnreachable: the server did not answer (the local index is left as it was).
        NotPublished: no finished publish, or one made with other index settings.
    """
    started = time.perf_counter()
    config = mirror.config
    marker = collection.marker()
    if marker is None:
        raise NotPublished(f"nothing published to the Qdrant collection {collection.name} yet")
    if marker.get("state") != "ready":
        raise NotPublished(f"the Qdrant collection {collection.name} is being written")
    if marker.get("profile") != index_profile(config):
        raise NotPublished(f"the Qdrant collection {collection.name} was published with other index settings")
    done = Seeded(collection.name, str(marker.get("version", "")), str(marker.get("commit", "")), marker=marker)
    if _seeded_version(mirror) == done.version:
        return done
    seeded = {SEEDED_VERSION: done.version, SEEDED_FROM: json.dumps(provenance_of(marker), sort_keys=True)}
    with writer_lock(mirror):
        if _seeded_version(mirror) == done.version:  # another process seeded it meanwhile
            return done
        try:
            rows, built, vectors = _download(collection)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise NotPublished(
                f"the Qdrant collection {collection.name} holds a point this version cannot read "
                f"({type(error).__name__}: {error})"
            ) from None
        found = Scan({key: FileStamp(key, "", row.size, row.mtime_ns) for key, row in rows.items()}, {}, SkipReport())
        store = mirror.store()
        lexical = lexical_index(config, mirror.store, mirror.notes)
        files, slots = rebuild(store, config, found, iter(built), tell, lexical, seeded)
        mirror.lexical = lexical
        mirror.committed(store, files)
        embedding = str(marker.get("embedding") or "")
        if embedding and vectors:
            write_vectors(store, embedding, vectors.items())
            if mirror.vectors is not None:
                mirror.vectors.load()
    keep_published(config, rows)
    done.files, done.chunks, done.vectors, done.wrote = len(files), slots, len(vectors), True
    done.seconds = time.perf_counter() - started
    return done


def _seeded_version(mirror: Mirror) -> str | None:
    mirror.sync()
    return mirror.store().meta().get(SEEDED_VERSION)


def _download(collection: SharedCollection) -> tuple[dict[str, FileRow], list[BuiltFile], dict[str, bytes]]:
    """Every file's row, its chunks ready for a build's writer, and the dense vectors by text hash.

    Raises:
        KeyError, TypeError, ValueError, AttributeError: a point does not hold what a publish writes.
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
        points = sorted(chunks.get(key, []), key=lambda p: int(p.payload["ordinal"]))
        built.append(_built_file(key, rows[key], points, vectors))
    return rows, built, vectors


def _key(value: object) -> str:
    """A file key as a publish writes it: a source prefix and a relative path inside the workspace."""
    if not isinstance(value, str) or ":" not in value:
        raise ValueError(f"file key {value!r}")
    path = value.split(":", 1)[1]
    if path.startswith(("/", "\\")) or ".." in Path(path).parts or not path:
        raise ValueError(f"file key {value!r} leaves the workspace")
    return value


def _file_row(payload: Mapping[str, Any]) -> FileRow:
    # No modification time: the first refresh reads each file once to see that its content is the published one.
    return FileRow(
        int(payload["size"]),
        0,
        str(payload["hash"]),
        int(payload["chunks"]),
        str(payload["skip"]),
        int(payload["redacted"]),
    )


def _built_file(key: str, row: FileRow, points: Sequence[Any], vectors: dict[str, bytes]) -> BuiltFile:
    records = []
    counted: list[dict[str, Counter[str]]] = []
    for point in points:
        p = point.payload
        c = p["chunk"]
        chunk = Chunk(
            source=c["source"],
            ref=_key(f"code:{p['path']}").split(":", 1)[1],
            start_line=int(p["start_line"]),
            end_line=int(p["end_line"]),
            text=c["text"],
            language=p["language"],
            kind=c["kind"],
            context=c["context"],
            symbol=p["symbol"],
            title=c["title"],
        )
        records.append(chunk_record(key, chunk))
        counted.append({name: Counter({str(t): int(n) for t, n in pairs}) for name, pairs in p["terms"]})
        dense = (point.vector or {}).get(DENSE) if isinstance(point.vector, dict) else None
        if dense is not None:
            vectors[records[-1].embed_hash] = np.asarray(dense, np.float32).astype(np.float16).tobytes()
    return BuiltFile(key, row, records, FileTerms.of(counted))


__all__ = [
    "Seeded",
    "seed",
]
