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

``publish.py`` (``agentty-rag index --backend qdrant``, what CI runs on a merge) writes it; ``seed.py`` writes a
machine's local index from it; ``origin.py`` keeps, beside the local index, what it was seeded from; ``start.py``
is what a code index does with all of it. This module holds the collection's format and the collection itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import xxhash

from agentty_rag.errors import BackendUnavailable
from agentty_rag.index.lexical.bm25 import tf_saturation
from agentty_rag.index.qdrant.encoding import SENTINEL
from agentty_rag.index.qdrant.reach import Reach, bounded, reach_of
from agentty_rag.index.qdrant.target import QdrantTarget

if TYPE_CHECKING:
    import qdrant_client


FORMAT = "agentty-rag-shared/1"
SPARSE, DENSE = "bm25", "dense"
MARKER_ID = "00000000-0000-5000-8000-0000000051a7"
_CHUNKS = uuid.UUID("0b6c8f0e-3f7a-4a55-9d0c-7e1f52a4c3d1")
_FILES = uuid.UUID("6a0d2b4e-91c3-4e6f-8a27-d5b3c1e0f942")
# Points per write, and per page of a read.
_BATCH = 256
_SCROLL = 2048
INSTALL = "the shared index needs the Qdrant extra: pip install 'agentty-rag[qdrant]'"


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
    return _ascending(weights)


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
    return _ascending(weights)


def _ascending(weights: Mapping[int, float]) -> tuple[list[int], list[float]]:
    """A sparse vector's dimensions in ascending order, and their values."""
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
        raise BackendUnavailable(INSTALL) from None
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

        def request() -> Any:
            if self._client is None:
                self._client = open_client(self.target)
            return getattr(self._client, method)(*args, **kwargs)

        # RuntimeError: the local mode's folder is held by another process.
        failures = (self._failure, OSError, RuntimeError)
        return bounded(self.reach, self.target.url or "", self.target.timeout_s, request, failures, warn=False)

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

    def scroll(self, kind: str | None = None, vectors: bool = False) -> Iterator[Any]:
        """Every point (of ``kind``, ``file`` or ``chunk``, when given), with its payload (and dense vector)."""
        m = self.models
        only = None if kind is None else m.Filter(must=[m.FieldCondition(key="kind", match=m.MatchValue(value=kind))])
        offset = None
        while True:
            points, offset = self.call(
                "scroll",
                self.name,
                scroll_filter=only,
                limit=_SCROLL,
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


@dataclass(frozen=True)
class Provenance:
    """What a collection says of the tree it was published from."""

    commit: str = ""
    branch: str = ""
    repository: str = ""


__all__ = [
    "DENSE",
    "INSTALL",
    "FORMAT",
    "MARKER_ID",
    "Provenance",
    "SPARSE",
    "SharedCollection",
    "bm25_query",
    "bm25_vector",
    "chunk_point",
    "dimension",
    "file_point",
    "open_client",
]
