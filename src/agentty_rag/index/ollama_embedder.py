"""Embeddings from an Ollama server (or anything speaking its ``/api/embed``): the only network code.

Three kinds of request, each with its own timeouts: the probe (0.5 s to connect, 1 s to answer, on a
connection of its own), a query (``AGENTTY_RAG_EMBED_TIMEOUT_MS``) and a batch of passages (60 s). Queries and
passages keep one client each, so a long indexing batch never holds up a search.

The probe first opens a plain TCP connection to the server's port: when nothing listens there (the usual
case without Ollama), it fails within the connect timeout without loading the HTTP client at all.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Literal

import numpy as np

from agentty_rag.config import DenseSettings
from agentty_rag.index.dense import EmbeddingError, EmbeddingProfile, Matrix, ProbeResult, Vector, normalise, prefixes

if TYPE_CHECKING:
    import ollama

Role = Literal["query", "document"]
CONNECT_S = 0.5
PROBE_READ_S = 1.0
DOCUMENT_READ_S = 60.0


def normalise_host(host: str) -> str:
    """``127.0.0.1:11434`` -> ``http://127.0.0.1:11434`` (a scheme given by the user is kept)."""
    host = host.strip().rstrip("/")
    return host if "://" in host else f"http://{host}"


def connection_failure(host: str) -> str:
    """Why a connection failed, named by its cause: a host name that does not resolve, or a refusal."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(host)
    try:
        socket.getaddrinfo(parts.hostname or "", parts.port or 11434, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return f"host not found: {parts.hostname} (check AGENTTY_OLLAMA_HOST)"
    return f"connection refused at {host}"


def port_of(host: str) -> tuple[str, int]:
    """The (host name, port) an HTTP client connects to for a normalised host: the port given, else the
    scheme's (as the Ollama client does once a scheme is given)."""
    from urllib.parse import urlsplit

    parts = urlsplit(host)
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


def unreachable(host: str, connect_s: float) -> str:
    """Why nothing answers at ``host`` ("" when a TCP connection opens), within ``connect_s``: the same
    reasons a failed request gives, found without the HTTP stack."""
    import socket

    try:
        socket.create_connection(port_of(host), timeout=connect_s).close()
    except TimeoutError:
        return "timeout"
    except (OSError, UnicodeError, ValueError):  # refused, unreachable, a name that does not resolve
        return connection_failure(host)
    return ""


def _client(host: str, connect_s: float, read_s: float) -> ollama.Client:
    # Imported on first use: a lexical session never loads the HTTP stack.
    import httpx
    import ollama

    return ollama.Client(host=host, timeout=httpx.Timeout(read_s, connect=connect_s))


class OllamaEmbedder:
    """The ``Embedder`` of a model served over Ollama's HTTP API."""

    def __init__(self, host: str, model: str, query_read_s: float = 10.0) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.where = f"at {self.host}"
        self._read_s: dict[Role, float] = {"query": query_read_s, "document": DOCUMENT_READ_S}
        self._clients: dict[Role, ollama.Client] = {}
        self._guard = threading.Lock()
        self._dimensions: int | None = None

    @classmethod
    def from_settings(cls, settings: DenseSettings) -> OllamaEmbedder:
        return cls(settings.ollama_host, settings.embed_model, settings.embed_timeout_ms / 1000)

    @property
    def dimensions(self) -> int | None:
        return self._dimensions

    def probe(self) -> ProbeResult:
        """One bounded request (about 1.5 s at most) on a connection of its own."""
        started = time.perf_counter()
        closed = unreachable(self.host, CONNECT_S)
        if closed:
            return ProbeResult(False, closed, seconds=time.perf_counter() - started)
        client = _client(self.host, CONNECT_S, PROBE_READ_S)
        try:
            vectors = self._embed(client, ["probe"], "query")
        except EmbeddingError as error:
            return ProbeResult(False, error.reason, seconds=time.perf_counter() - started)
        finally:
            client.close()  # type: ignore[no-untyped-call]
        self._dimensions = int(vectors.shape[1])
        profile = EmbeddingProfile(self.model, self._dimensions)
        return ProbeResult(True, "", profile, time.perf_counter() - started)

    def embed_documents(self, texts: list[str]) -> Matrix:
        return self._embed(self._client_for("document"), texts, "document")

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._embed(self._client_for("query"), [text], "query")[0]
        return vector

    def close(self) -> None:
        with self._guard:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()  # type: ignore[no-untyped-call]

    def _client_for(self, role: Role) -> ollama.Client:
        with self._guard:
            client = self._clients.get(role)
            if client is None:
                client = self._clients[role] = _client(self.host, CONNECT_S, self._read_s[role])
            return client

    def _embed(self, client: ollama.Client, texts: list[str], role: Role) -> Matrix:
        import httpx
        import ollama

        if not texts:
            return np.zeros((0, 0), np.float32)
        query_prefix, document_prefix = prefixes(self.model)
        prefix = query_prefix if role == "query" else document_prefix
        try:
            response = client.embed(model=self.model, input=[prefix + t for t in texts], truncate=True)
        except ollama.ResponseError as error:
            if error.status_code == 404:
                raise EmbeddingError(f"model {self.model} is not available — run `ollama pull {self.model}`") from error
            raise EmbeddingError(f"server error {error.status_code}: {error.error}") from error
        except httpx.TimeoutException as error:
            raise EmbeddingError("timeout") from error
        except ConnectionError as error:
            raise EmbeddingError(connection_failure(self.host)) from error
        except (httpx.HTTPError, OSError, ValueError) as error:
            raise EmbeddingError(f"{type(error).__name__}: {error}") from error
        vectors = np.asarray(response.embeddings, np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise EmbeddingError(f"the server returned {len(vectors)} vectors for {len(texts)} texts")
        return normalise(vectors)


__all__ = ["OllamaEmbedder", "connection_failure", "normalise_host", "port_of", "unreachable"]
