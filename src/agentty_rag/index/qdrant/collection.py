"""The client seam: the few things the lexical backend asks of a Qdrant collection, and two adapters.

``EdgeCollection`` runs Qdrant's engine in-process (``qdrant-edge-py``'s ``EdgeShard``: one shard in a folder,
no server; its ``EdgeFolder`` part is shared with the dense vectors' shard of ``vectors.py``);
``ClientCollection`` speaks to a collection through ``qdrant-client`` (a server at a URL, or its local mode in
tests). A collection holds named sparse vectors with the IDF modifier, and one payload-only
point, the marker, saying which state of the index it holds.

Every search scopes its IDF to the points that hold the searched vector (``IdfParams(corpus=...)``): a server
counts deleted points in N and df until its optimizer vacuums them, and the marker (holding no vector) is
left out. A collection has one shard: Qdrant keeps IDF statistics per shard.

A server may not answer: ``ClientCollection``'s requests go through ``reach.bounded``.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from agentty_rag.errors import BackendUnavailable
from agentty_rag.index.qdrant.reach import Reach, bounded
from agentty_rag.index.qdrant.target import QdrantTarget

if TYPE_CHECKING:
    import qdrant_client
    import qdrant_edge

log = logging.getLogger(__name__)

T = TypeVar("T")
PointId = int | str
# The marker's point id (a UUID: chunk points are numbered by slot).
MARKER_ID = "00000000-0000-5000-8000-00000000a9e7"
UPSERT_BATCH = 512  # points per upsert request
_INSTALL = "the Qdrant backend needs its extra: pip install 'agentty-rag[qdrant]'"


@dataclass(frozen=True)
class SparsePoint:
    """A point of one named sparse vector: its dimensions (ascending) and their values."""

    id: PointId
    vector: str
    indices: list[int]
    values: list[float]
    payload: dict[str, str] = field(default_factory=dict)


class SparseCollection(Protocol):
    """A collection of sparse vectors with the IDF modifier."""

    def reset(self, vectors: Sequence[str]) -> None:
        """Empty the collection (made when missing), with these named sparse vectors."""

    def upsert(self, points: Sequence[SparsePoint]) -> None:
        """Write points (a point written again is replaced)."""

    def delete(self, ids: Sequence[PointId]) -> None:
        """Delete points (ids not held are ignored)."""

    def search(
        self, vector: str, indices: list[int], values: list[float], limit: int, ids: Sequence[PointId] | None = None
    ) -> list[tuple[PointId, float]]:
        """The points of ``vector`` sharing a dimension with the query, best first (at most ``limit``; only
        ``ids`` when given), with IDF counted over every point of ``vector``."""

    def marker(self) -> str | None:
        """The marker's text (None: no marker)."""

    def set_marker(self, text: str) -> None:
        """Write the marker."""


class EdgeFolder:
    """A shard of Qdrant's engine in-process, in the folder ``path`` (made by the first ``_create``), with the
    marker point.

    The engine lets one process open a folder at a time: when another holds it, this process keeps its own
    shard in a temporary folder (its owner writes it anew from the index database)."""

    def __init__(self, path: Path) -> None:
        try:
            import qdrant_edge
        except ImportError:
            raise BackendUnavailable(_INSTALL) from None
        self._edge = qdrant_edge
        self.path = path
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        self._shard: qdrant_edge.EdgeShard | None = None
        if path.is_dir() and any(path.iterdir()):
            try:
                self._shard = qdrant_edge.EdgeShard.load(str(path))
            # The engine raises plain Exception; its message tells a folder another process holds.
            except Exception as error:
                if "WouldBlock" not in str(error):
                    log.warning("the Qdrant shard in %s cannot be opened (%s); it is made anew", path, error)
                else:
                    log.warning("%s is open in another process; this one keeps its own copy", path)
                    self._temporary = tempfile.TemporaryDirectory(prefix="agentty-qdrant-")

    @property
    def _held(self) -> qdrant_edge.EdgeShard:
        if self._shard is None:
            raise RuntimeError("the Qdrant shard is written only after a reset")
        return self._shard

    def _create(self, config: qdrant_edge.EdgeConfig) -> None:
        """Make the shard anew, empty, with ``config`` (in a temporary folder when ``path`` cannot be used)."""
        path = Path(self._temporary.name) if self._temporary is not None else self.path
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        try:
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True, exist_ok=True)
            self._shard = self._edge.EdgeShard.create(str(path), config)
        # The folder cannot be written (a read-only .agentty/), or another process just made it: the engine
        # raises plain Exception.
        except Exception as error:
            if self._temporary is not None:
                raise
            log.warning("the Qdrant shard cannot be kept in %s (%s); this process keeps its own copy", path, error)
            self._temporary = tempfile.TemporaryDirectory(prefix="agentty-qdrant-")
            self._shard = self._edge.EdgeShard.create(self._temporary.name, config)

    def delete(self, ids: Sequence[PointId]) -> None:
        if ids:
            self._held.update(self._edge.UpdateOperation.delete_points(list(ids)))
            self._held.flush()

    def marker(self) -> str | None:
        if self._shard is None:
            return None
        found = self._shard.retrieve([MARKER_ID], with_payload=True, with_vector=False)
        payload = found[0].payload if found else None
        text = payload.get("marker") if payload else None
        return text if isinstance(text, str) else None

    def set_marker(self, text: str) -> None:
        point = self._edge.Point(MARKER_ID, {}, {"marker": text})
        self._held.update(self._edge.UpdateOperation.upsert_points([point]))
        self._held.flush()


class EdgeCollection(EdgeFolder):
    """A collection of sparse vectors kept by Qdrant's engine in-process, in the folder ``path``."""

    def reset(self, vectors: Sequence[str]) -> None:
        edge = self._edge
        sparse = {name: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf) for name in vectors}
        self._create(edge.EdgeConfig(sparse_vectors=sparse))

    def upsert(self, points: Sequence[SparsePoint]) -> None:
        edge, shard = self._edge, self._held
        for start in range(0, len(points), UPSERT_BATCH):
            batch = [
                edge.Point(p.id, {p.vector: edge.SparseVector(indices=p.indices, values=p.values)}, p.payload or None)
                for p in points[start : start + UPSERT_BATCH]
            ]
            shard.update(edge.UpdateOperation.upsert_points(batch))
        shard.flush()

    def search(
        self, vector: str, indices: list[int], values: list[float], limit: int, ids: Sequence[PointId] | None = None
    ) -> list[tuple[PointId, float]]:
        edge = self._edge
        corpus = edge.SearchParams(idf=edge.IdfParams(corpus=edge.Filter(must=[edge.HasVectorCondition(vector)])))
        only = None if ids is None else edge.Filter(must=[edge.HasIdCondition(set(ids))])
        request = edge.QueryRequest(
            limit=limit,
            query=edge.Query.Nearest(edge.SparseVector(indices=indices, values=values), using=vector),
            filter=only,
            params=corpus,
            with_payload=False,
        )
        if self._shard is None:
            return []
        return [(p.id if isinstance(p.id, int) else str(p.id), p.score) for p in self._shard.query(request)]


class ClientCollection:
    """A collection reached through ``qdrant-client``: on a server, or in its local mode.

    Args:
        client: the client (``QdrantClient(url=..., api_key=..., timeout=...)``, or ``QdrantClient(":memory:")``).
        name: the collection's name.
        reach: whether the server answers (a new one, never resting, when not given).
        url, timeout_s: the server and the client's timeout, for the reasons of ``BackendUnreachable``.
    """

    def __init__(
        self,
        client: qdrant_client.QdrantClient,
        name: str,
        reach: Reach | None = None,
        url: str = "",
        timeout_s: float = 5.0,
    ) -> None:
        from qdrant_client import models
        from qdrant_client.http.exceptions import ApiException

        self._models = models
        self._client = client
        self.name = name
        self.reach = reach if reach is not None else Reach(0.0)
        self._failure = ApiException
        self._url, self._timeout_s = url, timeout_s

    def _call(self, request: Callable[[], T]) -> T:
        """One request to the server, bounded by the client's timeout (``bounded``)."""
        # qdrant-client raises ResponseHandlingException (refused, timed out) and UnexpectedResponse (an error
        # status), both ApiException; OSError from a socket it did not wrap.
        return bounded(self.reach, self._url, self._timeout_s, request, (self._failure, OSError))

    def reset(self, vectors: Sequence[str]) -> None:
        models = self._models
        if self._call(lambda: self._client.collection_exists(self.name)):
            self._call(lambda: self._client.delete_collection(self.name))
        sparse = {name: models.SparseVectorParams(modifier=models.Modifier.IDF) for name in vectors}
        self._call(
            lambda: self._client.create_collection(
                self.name, vectors_config={}, sparse_vectors_config=sparse, shard_number=1
            )
        )

    def upsert(self, points: Sequence[SparsePoint]) -> None:
        models = self._models
        for start in range(0, len(points), UPSERT_BATCH):
            batch = [
                models.PointStruct(
                    id=p.id,
                    vector={p.vector: models.SparseVector(indices=p.indices, values=p.values)},
                    payload=p.payload or None,
                )
                for p in points[start : start + UPSERT_BATCH]
            ]
            self._call(partial(self._client.upsert, self.name, batch, wait=True))

    def delete(self, ids: Sequence[PointId]) -> None:
        if ids:
            selector = self._models.PointIdsList(points=list(ids))
            self._call(lambda: self._client.delete(self.name, selector, wait=True))

    def search(
        self, vector: str, indices: list[int], values: list[float], limit: int, ids: Sequence[PointId] | None = None
    ) -> list[tuple[PointId, float]]:
        models = self._models
        corpus = models.Filter(must=[models.HasVectorCondition(has_vector=vector)])
        only = None if ids is None else models.Filter(must=[models.HasIdCondition(has_id=list(ids))])
        found = self._call(
            lambda: self._client.query_points(
                self.name,
                query=models.SparseVector(indices=indices, values=values),
                using=vector,
                limit=limit,
                query_filter=only,
                search_params=models.SearchParams(idf=models.IdfCorpusParams(corpus=corpus)),
                with_payload=False,
            )
        )
        return [(p.id if isinstance(p.id, int) else str(p.id), p.score) for p in found.points]

    def marker(self) -> str | None:
        if not self._call(lambda: self._client.collection_exists(self.name)):
            return None
        found = self._call(lambda: self._client.retrieve(self.name, [MARKER_ID], with_payload=True, with_vectors=False))
        payload = found[0].payload if found else None
        text = payload.get("marker") if payload else None
        return text if isinstance(text, str) else None

    def set_marker(self, text: str) -> None:
        point = self._models.PointStruct(id=MARKER_ID, vector={}, payload={"marker": text})
        self._call(lambda: self._client.upsert(self.name, [point], wait=True))


# The engine's folders this process has open, by path: the engine lets one handle hold a folder, and every
# user of the same folder (a mirror makes a new lexical index per load, a new vector store per profile) shares it.
_OPEN: weakref.WeakValueDictionary[str, EdgeFolder] = weakref.WeakValueDictionary()
_OPENING = threading.Lock()
F = TypeVar("F", bound=EdgeFolder)


def opened_once(path: Path, make: Callable[[Path], F]) -> F:
    """The shard in the folder ``path``, made by ``make`` the first time this process asks.

    Raises:
        BackendUnavailable: the ``qdrant`` extra is not installed.
    """
    with _OPENING:
        held = _OPEN.get(str(path))
        if held is None:
            held = _OPEN[str(path)] = make(path)
        return cast(F, held)  # a folder holds one kind of shard


def open_collection(target: QdrantTarget) -> SparseCollection:
    """The in-process collection of ``target``, opened once per process.

    Raises:
        BackendUnavailable: the ``qdrant`` extra is not installed.
    """
    return opened_once(target.path, EdgeCollection)


__all__ = [
    "MARKER_ID",
    "UPSERT_BATCH",
    "ClientCollection",
    "EdgeCollection",
    "EdgeFolder",
    "PointId",
    "SparseCollection",
    "SparsePoint",
    "open_collection",
    "opened_once",
]
