"""Publishing the local index to the shared collection: what the collection does not hold yet, by the manifest's
rule (a file whose checksum and vectors the collection holds is not sent again; a removed file's points are
deleted), the marker ``writing`` while it runs and ``ready`` with the new version last."""

from __future__ import annotations

import bisect
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xxhash

from agentty_rag.index.lexical.chunk_terms import decode_terms
from agentty_rag.index.qdrant.origin import SEEDED_FROM, SEEDED_VERSION, keep_published, provenance_of
from agentty_rag.index.qdrant.shared import (
    DENSE,
    FORMAT,
    SPARSE,
    Provenance,
    SharedCollection,
    bm25_vector,
    chunk_point,
    file_point,
)
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.refresh import writer_lock
from agentty_rag.index.storage.store import FileRow, Store
from agentty_rag.index.vectors.base import embed_hash
from agentty_rag.index.vectors.sqlite import open_vector

# The relative move of an average length past which the collection is written anew (below it, the BM25 vectors
# keep the averages they were written with: Qdrant's own scores of them move by under 5 %; our searches read
# the exact terms).
_REWEIGHT = 0.1


@dataclass
class Published:
    """What a publish did."""

    collection: str
    sent: int = 0  # files whose points were written
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0  # chunk points written
    vectors: int = 0  # of them with a dense vector
    recreated: str = ""  # why the collection was made anew ("" when it was patched)
    version: str = ""
    seconds: float = 0.0


def version_of(files: Mapping[str, FileRow], embedding: str, embedded: Mapping[str, int]) -> str:
    """Names the files (their checksums, how many of their chunks have a vector) a collection holds, and its
    embeddings."""
    digest = xxhash.xxh3_128()
    for key in sorted(files):
        row = files[key]
        line = f"{key}\0{row.hash}\0{row.chunks}\0{row.skip}\0{embedded.get(key, 0)}\n"
        digest.update(line.encode("utf-8", "surrogatepass"))
    digest.update(embedding.encode())
    return digest.hexdigest()


def publish(mirror: Mirror, collection: SharedCollection, provenance: Provenance) -> Published:
    """Write the local index (refreshed and embedded by the caller) to the shared collection: the files it does not
    hold yet, or holds with another checksum; the removed files' points deleted; the marker last.

    Raises:
        BackendUnreachable: the server did not answer (the collection keeps the marker ``writing``: a machine
            does not start from it until a publish ends).
    """
    started = time.perf_counter()
    config, store = mirror.config, mirror.store()
    files = dict(store.files())
    profile = config.profile()
    active = mirror.embedding_profile.key if mirror.embedding_profile is not None else None
    embedding, vectors = _published_vectors(store, active)
    report = Published(collection.name)
    marker = collection.marker()
    averages = _average_lengths(store, config.field_names)
    if marker is None:
        report.recreated = "new collection"
    elif marker.get("profile") != profile:
        report.recreated = "the index's settings changed"
    elif marker.get("embedding", "") != embedding:
        report.recreated = "the embeddings changed"
    elif _moved(marker.get("averages", {}), averages):
        report.recreated = "the average chunk lengths moved"
    held: dict[str, tuple[str, int]] = {}
    if report.recreated:
        dense_size = len(next(iter(vectors.values()))) // 2 if vectors else None
        collection.create(dense_size)
    else:
        held = {
            str(p.payload["key"]): (str(p.payload["hash"]), int(p.payload.get("vectors", 0)))
            for p in collection.scroll("file")
        }
    collection.set_marker({"format": FORMAT, "state": "writing", "profile": profile, "embedding": embedding})
    embedded = _embedded_per_file(store, files, embedding)
    removed = sorted(set(held) - set(files))
    # A file is sent again when its content changed, or when more of its chunks have a vector than were sent.
    send = sorted(key for key, row in files.items() if held.get(key) != (row.hash, embedded.get(key, 0)))
    report.unchanged, report.removed = len(files) - len(send), len(removed)
    collection.delete_files(removed + [key for key in send if key in held])
    vocabulary = store.vocabulary()
    for start in range(0, len(send), 64):
        points = []
        for key in send[start : start + 64]:
            row, count = files[key], embedded.get(key, 0)
            made = _file_points(store, config, key, row, count, vocabulary, averages, vectors, collection.models)
            report.chunks += len(made) - 1
            report.vectors += sum(1 for p in made if isinstance(p.vector, dict) and DENSE in p.vector)
            points.extend(made)
        collection.upsert(points)
    report.sent = len(send)
    report.version = version_of(files, embedding, embedded)
    marker_of = {
        "format": FORMAT,
        "state": "ready",
        "profile": profile,
        "embedding": embedding,
        "averages": averages,
        "version": report.version,
        "commit": provenance.commit,
        "branch": provenance.branch,
        "repository": provenance.repository,
        "files": len(files),
        "chunks": store.counts()[1],
        "published_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    collection.set_marker(marker_of)
    # The index holds what was just published: a later start need not seed it again.
    with writer_lock(mirror), store.transaction():
        store.set_meta(
            {SEEDED_VERSION: report.version, SEEDED_FROM: json.dumps(provenance_of(marker_of), sort_keys=True)}
        )
    mirror.sync()
    keep_published(config, files)
    report.seconds = time.perf_counter() - started
    return report


def _published_vectors(store: Store, active: str | None) -> tuple[str, dict[str, bytes]]:
    """The embedding profile to publish — the one in use, else the one with the most vectors of live chunks —
    and its vectors of live chunks by text hash ("", {}: none)."""
    profile = active
    if profile is None:
        rows = store.run(
            "SELECT v.profile, COUNT(*) FROM vectors v JOIN chunks c ON c.embed_hash = v.hash "
            "GROUP BY v.profile ORDER BY 2 DESC, 1 LIMIT 1"
        )
        if not rows:
            return "", {}
        profile = str(rows[0][0])
    held = store.run(
        "SELECT v.hash, v.vector FROM vectors v WHERE v.profile = ? AND v.hash IN (SELECT embed_hash FROM chunks)",
        (profile,),
    )
    if not held:
        return "", {}
    return profile, {str(h): open_vector(store, sealed) for h, sealed in held}


def _embedded_per_file(store: Store, files: Mapping[str, FileRow], profile: str) -> dict[str, int]:
    """How many of each file's chunks have a vector of ``profile``."""
    rows = store.run(
        "SELECT c.slot FROM chunks c JOIN vectors v ON v.profile = ? AND v.hash = c.embed_hash", (profile,)
    )
    held = sorted((row.first_slot, row.chunks, key) for key, row in files.items() if row.chunks)
    firsts = [first for first, _, _ in held]
    counts: dict[str, int] = {}
    for (slot,) in rows:
        at = bisect.bisect_right(firsts, slot) - 1  # the file whose slots hold it
        if at >= 0 and slot < held[at][0] + held[at][1]:
            counts[held[at][2]] = counts.get(held[at][2], 0) + 1
    return counts


def _average_lengths(store: Store, fields: Sequence[str]) -> dict[str, float]:
    totals = dict.fromkeys(fields, 0.0)
    count = 0
    for _, terms in store.delta_terms(fields, 0):
        count += 1
        for name, (_, counts) in terms.items():
            totals[name] += float(counts.sum())
    return {name: total / max(count, 1) for name, total in totals.items()}


def _moved(before: Mapping[str, float], now: Mapping[str, float]) -> bool:
    if set(before) != set(now):
        return True
    return any(abs(now[k] - before[k]) > _REWEIGHT * max(before[k], 1e-9) for k in now)


def _file_points(
    store: Store,
    config: IndexConfig,
    key: str,
    row: FileRow,
    embedded: int,
    vocabulary: Mapping[int, str],
    averages: Mapping[str, float],
    vectors: Mapping[str, bytes],
    models: Any,
) -> list[Any]:
    """The points of one file: its row, and a point per chunk."""
    file_payload = {
        "kind": "file",
        "key": key,
        "size": row.size,
        "hash": row.hash,
        "chunks": row.chunks,
        "skip": row.skip,
        "redacted": row.redacted,
        "vectors": embedded,
    }
    points = [models.PointStruct(id=file_point(key), vector={}, payload=file_payload)]
    rows = store.chunk_rows(store.slots_of_files([key]))
    for ordinal, slot in enumerate(sorted(rows)):
        chunk, blob = rows[slot]
        terms = {
            name: {vocabulary[int(t)]: int(n) for t, n in zip(ids.tolist(), counts.tolist(), strict=True)}
            for name, (ids, counts) in decode_terms(config.field_names, blob).items()
        }
        indices, values = bm25_vector(terms, averages, config.scoring.k1, config.scoring.b)
        vector: dict[str, Any] = {SPARSE: models.SparseVector(indices=indices, values=values)}
        text_hash = embed_hash(chunk)
        held = vectors.get(text_hash)
        if held is not None:
            vector[DENSE] = np.frombuffer(held, np.float16).astype(np.float32).tolist()
        payload = {
            "kind": "chunk",
            "key": key,
            "ordinal": ordinal,
            "hash": row.hash,
            "path": chunk.ref,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "symbol": chunk.symbol,
            "language": chunk.language,
            "chunk": {
                "source": str(chunk.source),
                "kind": chunk.kind,
                "context": chunk.context,
                "title": chunk.title,
                "text": chunk.text,
            },
            "terms": [[name, list(counts.items())] for name, counts in terms.items()],
            "embed_hash": text_hash,
        }
        points.append(models.PointStruct(id=chunk_point(key, ordinal), vector=vector, payload=payload))
    return points


__all__ = [
    "Published",
    "publish",
    "version_of",
]
