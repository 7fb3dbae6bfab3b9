"""Embeddings from any server speaking OpenAI's ``/v1/embeddings`` (``AGENTTY_EMBED_BACKEND=openai``): LM Studio,
vLLM, llama.cpp's server, text-embeddings-inference, Ollama's ``/v1``, a hosted API.

Nothing is sent anywhere until ``AGENTTY_OPENAI_BASE_URL`` names the server: without it the leg is unavailable
and says so. The request is ``ollama_api/openai_api.py``'s (the model's name, the texts, the key of the
variable ``AGENTTY_OPENAI_API_KEY_ENV`` names); the bounds are the Ollama backend's: the probe (a plain TCP
connection first, then 0.5 s to connect and 1.5 s in all, on a connection of its own), a query (0.5 s plus
``AGENTTY_RAG_EMBED_TIMEOUT_MS``) and a batch of passages (60.5 s), each a whole answer; queries and passages
keep one connection each. Every answer is checked (``dense.checked_vectors``) before its vectors are used.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import numpy as np

from agentty_rag.config import Settings
from agentty_rag.index.vectors.dense import EmbeddingError, Matrix, Role, checked_vectors, prefixes
from agentty_rag.index.vectors.ollama_embedder import DOCUMENT_READ_S
from agentty_rag.ollama_api.client import CONNECT_S, PROBE_READ_S, http_client, normalise_host, unreachable
from agentty_rag.ollama_api.openai_api import SETTING, embeddings

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

Kept = Literal["query", "document"]
UNSET = f"{SETTING} is not set: no embedding server is named, and nothing is sent anywhere"


def _loopback(base: str) -> bool:
    import ipaddress

    host = urlsplit(base).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIEmbedder:
    """The ``Embedder`` of a model served over OpenAI's embeddings API."""

    def __init__(
        self,
        base_url: str | None,
        model: str,
        api_key: str | None = None,
        key_variable: str = "OPENAI_API_KEY",
        query_read_s: float = 10.0,
    ) -> None:
        self.base = normalise_host(base_url) if base_url else None
        self.model = model
        self.where = f"at {self.base}" if self.base else f"nowhere ({SETTING} unset)"
        self.key_variable = key_variable
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._read_s: dict[Kept, float] = {"query": query_read_s, "document": DOCUMENT_READ_S}
        self._clients: dict[Kept, httpx.Client] = {}
        self._guard = threading.Lock()
        if api_key and self.base and self.base.startswith("http://") and not _loopback(self.base):
            log.warning("the API key of %s goes over plain HTTP to %s: use https://", key_variable, self.base)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIEmbedder:
        return cls(
            settings.openai_base_url,
            settings.embed_model,
            settings.openai_api_key,
            settings.openai_api_key_env,
            settings.embed_timeout_ms / 1000,
        )

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if self.base is None:
            raise EmbeddingError(UNSET)
        if role == "query" or role == "document":
            return self._embed(self._client_for(role), self.base, texts, role)
        # One bounded request (a probe's: about 1.5 s at most; a long probe's: a batch's) on a connection of its own.
        closed = unreachable(self.base, CONNECT_S, SETTING)
        if closed:
            raise EmbeddingError(closed)
        probing = http_client(self.base, CONNECT_S, PROBE_READ_S if role == "probe" else DOCUMENT_READ_S, self._headers)
        try:
            return self._embed(probing, self.base, texts, "query")
        finally:
            probing.close()

    def close(self) -> None:
        with self._guard:
            clients, self._clients = list(self._clients.values()), {}
        for kept in clients:
            kept.close()

    def _client_for(self, role: Kept) -> httpx.Client:
        assert self.base is not None
        with self._guard:
            kept = self._clients.get(role)
            if kept is None:
                kept = self._clients[role] = http_client(self.base, CONNECT_S, self._read_s[role], self._headers)
            return kept

    def _embed(self, connection: httpx.Client, base: str, texts: list[str], role: Kept) -> Matrix:
        if not texts:
            return np.zeros((0, 0), np.float32)
        query_prefix, document_prefix = prefixes(self.model)
        prefix = query_prefix if role == "query" else document_prefix
        rows = embeddings(connection, base, self.model, [prefix + t for t in texts], self.key_variable)
        return checked_vectors(rows, len(texts))


__all__ = ["UNSET", "OpenAIEmbedder"]
