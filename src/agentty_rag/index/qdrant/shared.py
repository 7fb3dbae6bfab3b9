"""The shared index: one Qdrant collection that CI writes and every machine starts from, instead of reading,
parsing and embedding the whole tree itself.

A collection holds a point per chunk, a point per file and a marker:

- a chunk: the ``bm25`` sparse vector (its BM25 term weights: each field and term one hashed dimension, the
  value its saturated frequency with the published index's average lengths; Qdrant's IDF modifier), the
  ``dense`` vector when the index has embeddings, and a payload: the file's key and checksum, the path, lines,
  symbol and language, and what a machine needs to hold the chunk without reading the file (its text and its
  terms per field);
- a file: its row (size, checksum, chunks, why it was skipped);
- the marker: ``writing`` or ``ready``, the index's profile (chunking, fields, tokenizer), the embedding
  profile of the dense vectors, the commit and branch, and a version naming the files it holds.

``publish`` (``agentty-rag index --backend qdrant``, what CI runs on a merge) sends what the collection does not
hold yet, by the manifest's rule: a file whose checksum the collection holds is not sent again, a removed
file's points are deleted. ``seed`` writes a machine's local index from the collection (a full build whose
files come from the collection, vectors included), once per published version; the ordinary refresh after it
re-indexes the files of the working tree that differ from the collection (edited, added, deleted,
uncommitted): the overlay. Searches read the local index, so the answer an agent sees is the same pipeline's.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from agentty_rag.errors import BackendUnavailable, BackendUnreachable, NotPublished
from agentty_rag.fsguard import UnsafeFile, read_regular, write_private
from agentty_rag.index.lexical.backends import lexical_index
from agentty_rag.index.lexical.bm25 import tf_saturation
from agentty_rag.index.lexical.chunk_terms import FileTerms, decode_terms
from agentty_rag.index.qdrant.collection import Reach, failure_reason, reach_of
from agentty_rag.index.qdrant.encoding import SENTINEL
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.bulk import rebuild
from agentty_rag.index.storage.definition import IndexConfig, Progress
from agentty_rag.index.storage.ingest import BuiltFile
from agentty_rag.index.storage.manifest import Scan
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.records import chunk_record
from agentty_rag.index.storage.refresh import writer_lock
from agentty_rag.index.storage.store import FileRow, Store
from agentty_rag.index.vectors.sqlite import open_vector, write_vectors
from agentty_rag.sources.walker import SkipReport
from agentty_rag.types import Chunk, FileStamp

if TYPE_CHECKING:
    import qdrant_client

log = logging.getLogger(__name__)

FORMAT = "agentty-rag-shared/1"
SPARSE, DENSE = "bm25", "dense"
MARKER_ID = "00000000-0000-5000-8000-0000000051a7"
_CHUNKS = uuid.UUID("0b6c8f0e-3f7a-4a55-9d0c-7e1f52a4c3d1")
_FILES = uuid.UUID("6a0d2b4e-91c3-4e6f-8a27-d5b3c1e0f942")
# The meta keys of a local index seeded from a collection.
SEEDED_VERSION, SEEDED_FROM = "shared_version", "shared_from"
# Points per request, and the relative move of an average length past which every chunk's BM25 vector is
# written again (below it, vectors keep the averages they were written with: scores move by less than 1 %).
_BATCH = 256
_REWEIGHT = 0.01
_PUBLISHED_MAX_BYTES = 256 << 20
_INSTALL = "the shared index needs the Qdrant extra: pip install 'agentty-rag[qdrant]'"


def chunk_point(key: str, ordinal: int) -> str:
    return str(uuid.uuid5(_CHUNKS, f"{key}\0{ordinal}"))


def file_point(key: str) -> str:
    return str(uuid.uuid5(_FILES, key))


def dimension(field_name: str, term: str) -> int:
    """The sparse dimension of a term in a field (32-bit hash: a collision merges two terms' statistics)."""
    return xxhash.xxh32_intdigest(f"{field_name}\x1f{term}".encode("utf-8", "surrogatepass"))


def bm25_query(terms: Sequence[str], fields: Mapping[str, float]) -> tuple[list[int], list[float]]:
    """A query of the ``bm25`` vector: each term in each weighted field (a term asked twice weighs twice)."""
    weights: dict[int, float] = {}
    for name, weight in fields.items():
        if weight > 0:
            for term in terms:
                at = dimension(name, term)
                weights[at] = weights.get(at, 0.0) + weight
    ordered = sorted(weights)
    return ordered, [weights[i] for i in ordered]


def bm25_vector(
    terms: Mapping[str, Mapping[str, int]], averages: Mapping[str, float], k1: float, b: float
) -> tuple[list[int], list[float]]:
    """A chunk's sparse BM25 vector: each field's terms, their frequency saturated against the field's average
    length (the IDF is Qdrant's, a query carries each field's weight), and the sentinel every chunk holds so
    that Qdrant counts it in N (see ``encoding.py``)."""
    weights: dict[int, float] = {SENTINEL: 1.0}
    for name, counts in terms.items():
        if not counts:
            continue
        tf = np.asarray(list(counts.values()), np.float64)
        length = np.full(len(tf), float(tf.sum()))
        saturated = tf_saturation(tf, length, max(averages.get(name, 1.0), 1e-9), k1, b)
        for term, value in zip(counts, saturated.tolist(), strict=True):
            at = dimension(name, term)
            weights[at] = weights.get(at, 0.0) + value
    ordered = sorted(weights)
    return ordered, [weights[i] for i in ordered]


# -- where the collection is ---------------------------------------------------------------------------------


def open_client(target: QdrantTarget) -> qdrant_client.QdrantClient:
    """A client of ``target``'s server, or of qdrant-client's local mode for a ``file:`` folder.

    Raises:
        BackendUnavailable: the ``qdrant`` extra is not installed, or the URL is none of a server's or a folder's.
    """
    try:
        from qdrant_client import QdrantClient
    except ImportError:
        raise BackendUnavailable(_INSTALL) from None
    url = target.url or ""
    if not url.startswith(("http://", "https://", "file:")):
        raise BackendUnavailable(
            f"AGENTTY_QDRANT_URL={url} is not a Qdrant server: give http://HOST:6333, https://… or file:DIR"
        )
    if url.startswith("file:"):
        return QdrantClient(path=url.removeprefix("file:").removeprefix("//"))
    timeout = max(1, round(target.timeout_s))
    # No version check: a failure to answer is ours to tell, bounded.
    return QdrantClient(url=url, api_key=target.api_key, timeout=timeout, check_compatibility=False)


class SharedCollection:
    """The shared collection of ``target``: every request bounded by its timeout, a failure raising
    ``BackendUnreachable`` with a short reason, after which the server rests (``reach``)."""

    def __init__(self, target: QdrantTarget, client: qdrant_client.QdrantClient | None = None) -> None:
        from qdrant_client import models
        from qdrant_client.http.exceptions import ApiException

        self.target = target
        self.name = target.collection
        self.models = models
        self.reach: Reach = reach_of(target)
        self._failure = ApiException
        self._client = client
        self._given = client is not None

    def close(self) -> None:
        if self._client is not None and not self._given:
            self._client.close()
            self._client = None

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``client.method(*args, **kwargs)``, bounded; ``BackendUnreachable`` when it fails."""
        if self.reach.resting():
            raise BackendUnreachable(self.reach.reason)
        try:
            if self._client is None:
                self._client = open_client(self.target)
            answer = getattr(self._client, method)(*args, **kwargs)
        except (self._failure, OSError, RuntimeError) as error:
            # RuntimeError: the local mode's folder is held by another process.
            reason = failure_reason(error, self.target.url or "", self.target.timeout_s)
            self.reach.failed(reason)
            raise BackendUnreachable(reason) from error
        self.reach.answered()
        return answer

    def marker(self) -> dict[str, Any] | None:
        if not self.call("collection_exists", self.name):
            return None
        found = self.call("retrieve", self.name, [MARKER_ID], with_payload=True, with_vectors=False)
        payload = found[0].payload if found else None
        return dict(payload) if payload and payload.get("format") == FORMAT else None

    def set_marker(self, marker: Mapping[str, Any]) -> None:
        point = self.models.PointStruct(id=MARKER_ID, vector={}, payload=dict(marker))
        self.call("upsert", self.name, [point], wait=True)

    def create(self, dense_size: int | None) -> None:
        """Make the collection anew: the sparse vector, and a dense one of ``dense_size`` (None: none)."""
        m = self.models
        if self.call("collection_exists", self.name):
            self.call("delete_collection", self.name)
        dense = {} if dense_size is None else {DENSE: m.VectorParams(size=dense_size, distance=m.Distance.COSINE)}
        # One shard: Qdrant keeps IDF statistics per shard (replicas scale reads).
        self.call(
            "create_collection",
            self.name,
            vectors_config=dense,
            sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            shard_number=1,
        )
        local = (self.target.url or "").startswith("file:")  # the local mode has no payload indexes
        for name in () if local else ("kind", "key"):
            self.call("create_payload_index", self.name, name, m.PayloadSchemaType.KEYWORD)

    def scroll(self, kind: str, keys: Sequence[str] | None = None, vectors: bool = False) -> Iterator[Any]:
        """Every point of ``kind`` (``file``, ``chunk``; only those of ``keys`` when given), with its payload."""
        m = self.models
        must: list[Any] = [m.FieldCondition(key="kind", match=m.MatchValue(value=kind))]
        if keys is not None:
            must.append(m.FieldCondition(key="key", match=m.MatchAny(any=list(keys))))
        offset = None
        while True:
            points, offset = self.call(
                "scroll",
                self.name,
                scroll_filter=m.Filter(must=must),
                limit=_BATCH,
                offset=offset,
                with_payload=True,
                with_vectors=[DENSE] if vectors else False,
            )
            yield from points
            if offset is None:
                return

    def upsert(self, points: Sequence[Any]) -> None:
        for start in range(0, len(points), _BATCH):
            batch = list(points[start : start + _BATCH])
            self.call("upsert", self.name, batch, wait=True)

    def delete_files(self, keys: Sequence[str]) -> None:
        """Delete every point (chunks and file) of these files."""
        m = self.models
        for start in range(0, len(keys), _BATCH):
            chosen = list(keys[start : start + _BATCH])
            selector = m.FilterSelector(
                filter=m.Filter(must=[m.FieldCondition(key="key", match=m.MatchAny(any=chosen))])
            )
            self.call("delete", self.name, selector, wait=True)

    def search(self, indices: list[int], values: list[float], limit: int) -> list[tuple[str, int, float]]:
        """The chunks best matching a sparse BM25 query: (file key, ordinal, score), best first."""
        m = self.models
        found = self.call(
            "query_points",
            self.name,
            query=m.SparseVector(indices=indices, values=values),
            using=SPARSE,
            limit=limit,
            # IDF over the chunks alone (a server also counts deleted points until it vacuums them)
            search_params=m.SearchParams(
                idf=m.IdfCorpusParams(corpus=m.Filter(must=[m.HasVectorCondition(has_vector=SPARSE)]))
            ),
            with_payload=["key", "ordinal"],
        )
        return [(str(p.payload["key"]), int(p.payload["ordinal"]), float(p.score)) for p in found.points]


# -- publishing -------------------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Provenance:
    """What a collection says of the tree it was published from."""

    commit: str = ""
    branch: str = ""
    repository: str = ""


def index_profile(config: IndexConfig) -> dict[str, object]:
    """What must agree between the published index and a machine's, for the machine to start from it."""
    profile = dict(config.profile())
    profile.pop("roots", None)
    return profile


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
    profile = index_profile(config)
    embedding, vectors = _published_vectors(store)
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
    embedded = _embedded_per_file(store, embedding)
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
            {SEEDED_VERSION: report.version, SEEDED_FROM: json.dumps(_provenance(marker_of), sort_keys=True)}
        )
    mirror.sync()
    _keep_published(config, files)
    report.seconds = time.perf_counter() - started
    return report


def _published_vectors(store: Store) -> tuple[str, dict[str, bytes]]:
    """The embedding profile with the most vectors in the index, and its vectors by text hash ("", {}: none)."""
    rows = store.run("SELECT profile, COUNT(*) FROM vectors GROUP BY profile ORDER BY 2 DESC, 1 LIMIT 1")
    if not rows:
        return "", {}
    profile = str(rows[0][0])
    held = store.run(
        "SELECT v.hash, v.vector FROM vectors v WHERE v.profile = ? AND v.hash IN (SELECT embed_hash FROM chunks)",
        (profile,),
    )
    return profile, {str(h): open_vector(sealed) for h, sealed in held}


def _embedded_per_file(store: Store, profile: str) -> dict[str, int]:
    """How many of each file's chunks have a vector of ``profile``."""
    rows = store.run(
        "SELECT c.file_key, COUNT(*) FROM chunks c JOIN vectors v ON v.profile = ? AND v.hash = c.embed_hash "
        "GROUP BY c.file_key",
        (profile,),
    )
    return {str(key): int(count) for key, count in rows}


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
        record = chunk_record(key, chunk)
        indices, values = bm25_vector(terms, averages, config.scoring.k1, config.scoring.b)
        vector: dict[str, Any] = {SPARSE: models.SparseVector(indices=indices, values=values)}
        held = vectors.get(record.embed_hash)
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
            "embed_hash": record.embed_hash,
        }
        points.append(models.PointStruct(id=chunk_point(key, ordinal), vector=vector, payload=payload))
    return points


# -- starting from the collection -------------------------------------------------------------------------------


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
    seeded = {SEEDED_VERSION: done.version, SEEDED_FROM: json.dumps(_provenance(marker), sort_keys=True)}
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
    _keep_published(config, rows)
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
    rows = {_key(p.payload["key"]): _file_row(p.payload) for p in collection.scroll("file")}
    chunks: dict[str, list[Any]] = {}
    for point in collection.scroll("chunk", vectors=True):
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


def _provenance(marker: Mapping[str, Any]) -> dict[str, object]:
    keys = ("commit", "branch", "repository", "published_at", "files", "chunks")
    return {k: marker.get(k) for k in keys}


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


def seeded_from(store: Store) -> dict[str, Any]:
    """What the local index was seeded from (``{}``: it was built from the files)."""
    meta = store.meta()
    if SEEDED_VERSION not in meta:
        return {}
    try:
        held = json.loads(meta.get(SEEDED_FROM, "{}"))
    except ValueError:
        held = {}
    return {"version": meta[SEEDED_VERSION], **(held if isinstance(held, dict) else {})}


def _published_path(config: IndexConfig) -> Path:
    return config.state_dir / f"rag_{config.name}.published.json"


def _keep_published(config: IndexConfig, rows: Mapping[str, FileRow]) -> None:
    """Keep each file's checksum as published beside the index, to tell the overlay later."""
    if not config.persist:
        return
    text = json.dumps({key: row.hash for key, row in sorted(rows.items())}, separators=(",", ":"))
    try:
        write_private(_published_path(config), text.encode("utf-8"))
    except OSError as error:
        log.warning("%s could not be written (%s)", _published_path(config), error)


def published_hashes(config: IndexConfig) -> dict[str, str] | None:
    """Each file's checksum as the collection the index was seeded from holds it (None: not known)."""
    try:
        data = json.loads(read_regular(str(_published_path(config)), str(config.state_dir), _PUBLISHED_MAX_BYTES))
    except (OSError, UnsafeFile, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return {str(key): str(value) for key, value in data.items()}


def overlay(files: Mapping[str, FileRow], published: Mapping[str, str]) -> list[str]:
    """The files the working tree holds otherwise than the collection: edited, added, deleted."""
    changed = {key for key, row in files.items() if published.get(key) != row.hash}
    return sorted(changed | (set(published) - set(files)))


__all__ = [
    "FORMAT",
    "NotPublished",
    "Provenance",
    "Published",
    "Seeded",
    "SharedCollection",
    "bm25_query",
    "bm25_vector",
    "chunk_point",
    "dimension",
    "file_point",
    "open_client",
    "overlay",
    "publish",
    "seed",
    "seeded_from",
]
