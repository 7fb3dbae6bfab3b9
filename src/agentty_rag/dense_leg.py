"""The session's embedding server: one bounded probe, cached query embeddings, truthful degradation.

* At start (or first use) one probe with short timeouts (0.5 s to connect, 1 s to answer) learns whether
  the server embeds with the configured model and the vectors' dimension. If it fails, the session is
  lexical for good and every header says why; no later search pays a network timeout.
* A failure while embedding one query degrades that query to BM25 (its header says so). After three
  failures in a row the leg is switched off with one warning, and probed again after a cool-down
  (``AGENTTY_RAG_DENSE_RETRY_S``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentty_rag.config import Settings
from agentty_rag.index.dense import EmbeddingError, EmbeddingProfile, OllamaEmbedder, normalise_host, probe

log = logging.getLogger(__name__)

FAILURES_BEFORE_OFF = 3
_CACHE_SIZE = 256


@dataclass(frozen=True)
class DenseStatus:
    """``off`` (by setting), ``unprobed``, ``ready`` or ``unavailable``, and why."""

    state: str
    reason: str = ""
    profile: EmbeddingProfile | None = None


class DenseLeg:
    """Thread-safe access to the embedding server for one session."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.host = normalise_host(settings.ollama_host)
        self.status = DenseStatus("unprobed") if settings.dense else DenseStatus("off", "AGENTTY_RAG_DENSE=0")
        self._lock = threading.Lock()
        self.ever_ready = False  # it answered once this session: losing it later is news
        self._failures = 0
        self._retry_at: float | None = None
        self._cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._query_embedder: OllamaEmbedder | None = None
        self._document_embedder: OllamaEmbedder | None = None

    def ensure(self) -> DenseStatus:
        """Probe once (bounded); later calls return the known status (or re-probe after a cool-down)."""
        with self._lock:
            due = self._retry_at is not None and time.monotonic() >= self._retry_at
            if self.status.state == "unprobed" or due:
                self._probe()
            return self.status

    def _probe(self) -> None:
        result = probe(self.host, self.settings.embed_model)
        self._retry_at = None
        self.close()
        if result.ok and result.profile is not None:
            self.status = DenseStatus("ready", "", result.profile)
            self.ever_ready = True
            self._failures = 0
            timeout = self.settings.embed_timeout_ms / 1000
            self._query_embedder = OllamaEmbedder(self.host, self.settings.embed_model, 0.5, timeout)
            self._document_embedder = OllamaEmbedder(self.host, self.settings.embed_model, 0.5, 60.0)
            log.info("dense leg ready: %s (%d-d) at %s", result.profile.model, result.profile.dimension, self.host)
        else:
            self.status = DenseStatus("unavailable", result.reason)
            log.info("dense leg unavailable: %s", result.reason)

    def query_vector(self, query: str) -> tuple[npt.NDArray[np.float32] | None, str]:
        """The query's unit vector, or (None, why it is missing) when the leg is off or the request failed."""
        status = self.ensure()
        if status.state != "ready" or self._query_embedder is None or status.profile is None:
            return None, ""
        key = f"{status.profile.key}\0{query}"
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached, ""
        try:
            vector = self._query_embedder.embed([query], "query")[0]
        except EmbeddingError as error:
            self._failed(error.reason)
            return None, error.reason
        with self._lock:
            self._failures = 0
            self._cache[key] = vector
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector, ""

    def _failed(self, reason: str) -> None:
        with self._lock:
            self._failures += 1
            if self._failures >= FAILURES_BEFORE_OFF and self.status.state == "ready":
                self.status = DenseStatus("unavailable", f"{reason} ({self._failures} failures in a row)")
                cool_down = self.settings.dense_retry_s
                self._retry_at = time.monotonic() + cool_down
                log.warning(
                    "the embedding server failed %d times (%s); searching with BM25 only, trying again in %d s",
                    self._failures,
                    reason,
                    cool_down,
                )

    def document_embedder(self) -> OllamaEmbedder | None:
        status = self.ensure()
        return self._document_embedder if status.state == "ready" else None

    def document_failed(self, reason: str) -> None:
        """An indexing batch failed: count it like a query failure."""
        self._failed(reason)

    def close(self) -> None:
        """Close the HTTP connections (a later use opens new ones)."""
        for embedder in (self._query_embedder, self._document_embedder):
            if embedder is not None:
                embedder.close()
        self._query_embedder = self._document_embedder = None

    def describe(self) -> str:
        status = self.status
        if status.state == "ready" and status.profile is not None:
            return f"ready: {status.profile.model} ({status.profile.dimension}-d) at {self.host}"
        if status.state == "off":
            return "off (AGENTTY_RAG_DENSE=0)"
        if status.state == "unprobed":
            return f"not probed yet ({self.settings.embed_model} at {self.host})"
        return f"unavailable: {status.reason}"


__all__ = ["FAILURES_BEFORE_OFF", "DenseLeg", "DenseStatus"]
