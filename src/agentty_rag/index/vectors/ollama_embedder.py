"""Embeddings from an Ollama server (or anything speaking its ``/api/embed``), over the shared client
(``ollama_api/client.py``).

Three kinds of request, each with its own timeouts, which bound the whole answer (``ollama_api/deadline.py``),
not each read: the probe (0.5 s to connect, 1.5 s in all, on a connection of its own), a query (0.5 s plus
``AGENTTY_RAG_EMBED_TIMEOUT_MS``) and a batch of passages (60.5 s). Queries and passages keep one client each,
so a long indexing batch never holds up a search. Every answer is checked before its vectors are used
(``dense.checked_vectors``): a bad one is an ``EmbeddingError``, as a timeout is.

The probe first opens a plain TCP connection to the server's port: when nothing listens there (the usual
case without Ollama), it fails within the connect timeout without loading the HTTP client at all.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Literal

import numpy as np

from agentty_rag.config import DenseSettings
from agentty_rag.index.vectors.dense import EmbeddingError, Matrix, Role, checked_vectors, prefixes
from agentty_rag.ollama_api.client import (
    CONNECT_S,
    PROBE_READ_S,
    client,
    failure,
    normalise_host,
    request_errors,
    unreachable,
)

if TYPE_CHECKING:
    import ollama

DOCUMENT_READ_S = 60.0
# The roles that keep a client of their own (a probe opens one and closes it).
Kept = Literal["query", "document"]


class OllamaEmbedder:
    """The ``Embedder`` of a model served over Ollama's HTTP API."""

    def __init__(self, host: str, model: str, query_read_s: float = 10.0) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.where = f"at {self.host}"
        self._read_s: dict[Kept, float] = {"query": query_read_s, "document": DOCUMENT_READ_S}
        self._clients: dict[Kept, ollama.Client] = {}
        self._guard = threading.Lock()

    @classmethod
    def from_settings(cls, settings: DenseSettings) -> OllamaEmbedder:
        return cls(settings.ollama_host, settings.embed_model, settings.embed_timeout_ms / 1000)

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role == "query" or role == "document":
            return self._embed(self._client_for(role), texts, role)
        # One bounded request (a probe's: about 1.5 s at most; a long probe's: a batch's) on a connection of its own.
        closed = unreachable(self.host, CONNECT_S)
        if closed:
            raise EmbeddingError(closed)
        probing = client(self.host, CONNECT_S, PROBE_READ_S if role == "probe" else DOCUMENT_READ_S)
        try:
            return self._embed(probing, texts, "query")
        finally:
            probing.close()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        with self._guard:
            clients, self._clients = list(self._clients.values()), {}
        for kept in clients:
            kept.close()  # type: ignore[no-untyped-call]

    def _client_for(self, role: Kept) -> ollama.Client:
        with self._guard:
            kept = self._clients.get(role)
            if kept is None:
                kept = self._clients[role] = client(self.host, CONNECT_S, self._read_s[role])
            return kept

    def _embed(self, connection: ollama.Client, texts: list[str], role: Kept) -> Matrix:
        if not texts:
            return np.zeros((0, 0), np.float32)
        query_prefix, document_prefix = prefixes(self.model)
        prefix = query_prefix if role == "query" else document_prefix
        try:
            response = connection.embed(model=self.model, input=[prefix + t for t in texts], truncate=True)
        except request_errors() as error:
            raise EmbeddingError(failure(error, self.host, "timeout", self.model)) from error
        return checked_vectors(list(response.embeddings or ()), len(texts))


__all__ = ["OllamaEmbedder"]
