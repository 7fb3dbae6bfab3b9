"""The optional dense leg: embeddings from an Ollama server, and exact cosine search over them.

This is the only module that talks to the network. An ``Embedder`` turns texts into L2-normalised vectors;
``OllamaEmbedder`` does it through the ``ollama`` client with short timeouts, adding the query/document
prefixes a model family expects:

* nomic-embed-text and other ``nomic`` models: ``search_query: `` / ``search_document: ``;
* E5 models (a name with ``e5``): ``query: `` / ``passage: ``;
* BGE and mxbai-embed-large: the query instruction ``Represent this sentence for searching relevant
  passages: `` (documents unprefixed);
* any other model: no prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import EmbeddingError

Kind = Literal["query", "document"]
Matrix = npt.NDArray[np.float32]

_RETRIEVAL_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def prefixes(model: str) -> tuple[str, str]:
    """(query prefix, document prefix) for a model name."""
    name = model.lower()
    if "nomic" in name:
        return "search_query: ", "search_document: "
    if re.search(r"(^|[^a-z])e5([^a-z]|$)", name):
        return "query: ", "passage: "
    if "bge" in name or "mxbai" in name:
        return _RETRIEVAL_INSTRUCTION, ""
    return "", ""


def normalise_host(host: str) -> str:
    """``127.0.0.1:11434`` -> ``http://127.0.0.1:11434`` (a scheme given by the user is kept)."""
    host = host.strip().rstrip("/")
    return host if "://" in host else f"http://{host}"


@dataclass(frozen=True)
class EmbeddingProfile:
    """What vectors depend on: the model, its dimension and the prefixes. Independent of the host."""

    model: str
    dimension: int

    @property
    def key(self) -> str:
        query, document = prefixes(self.model)
        return f"{self.model}|{self.dimension}|{query}|{document}"

    def to_json(self) -> dict[str, object]:
        query, document = prefixes(self.model)
        return {"model": self.model, "dimension": self.dimension, "query_prefix": query, "document_prefix": document}


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors (one row per text)."""

    model: str

    def embed(self, texts: list[str], kind: Kind) -> Matrix: ...


def normalise(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (rows / norms).astype(np.float32)
    return result


class OllamaEmbedder:
    """Embeddings from an Ollama server (or anything speaking its ``/api/embed``)."""

    def __init__(self, host: str, model: str, connect_s: float = 0.5, read_s: float = 10.0) -> None:
        import httpx
        import ollama

        self.host = normalise_host(host)
        self.model = model
        self._client = ollama.Client(host=self.host, timeout=httpx.Timeout(read_s, connect=connect_s))

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        import httpx
        import ollama

        if not texts:
            return np.zeros((0, 0), np.float32)
        query_prefix, document_prefix = prefixes(self.model)
        prefix = query_prefix if kind == "query" else document_prefix
        try:
            response = self._client.embed(model=self.model, input=[prefix + t for t in texts], truncate=True)
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

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]


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


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    reason: str = ""
    profile: EmbeddingProfile | None = None
    seconds: float = 0.0


def probe(host: str, model: str, connect_s: float = 0.5, read_s: float = 1.0) -> ProbeResult:
    """One bounded request (about ``connect_s + read_s`` at most): does the server embed with this model?"""
    import time

    started = time.perf_counter()
    embedder = OllamaEmbedder(host, model, connect_s, read_s)
    try:
        vectors = embedder.embed(["probe"], "query")
    except EmbeddingError as error:
        return ProbeResult(False, error.reason, seconds=time.perf_counter() - started)
    finally:
        embedder.close()
    dimension = int(vectors.shape[1])
    return ProbeResult(True, "", EmbeddingProfile(model, dimension), time.perf_counter() - started)


class DenseIndex:
    """Unit vectors by slot, and exact cosine top-k over the live, allowed ones."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.matrix: Matrix = np.zeros((0, dimension), np.float32)
        self.present = np.zeros(0, bool)

    def _grow(self, capacity: int) -> None:
        if capacity <= len(self.present):
            return
        size = max(capacity, 2 * len(self.present), 64)
        matrix = np.zeros((size, self.dimension), np.float32)
        matrix[: len(self.matrix)] = self.matrix
        present = np.zeros(size, bool)
        present[: len(self.present)] = self.present
        self.matrix, self.present = matrix, present

    def put(self, slots: list[int], vectors: Matrix) -> None:
        if not slots:
            return
        self._grow(max(slots) + 1)
        self.matrix[slots] = vectors
        self.present[slots] = True

    def drop(self, slots: list[int]) -> None:
        for slot in slots:
            if slot < len(self.present):
                self.present[slot] = False

    def count(self, alive: npt.NDArray[np.bool_]) -> int:
        n = min(len(alive), len(self.present))
        return int((self.present[:n] & alive[:n]).sum())

    def search(
        self, query: Matrix, pool: int, alive: npt.NDArray[np.bool_], allowed: npt.NDArray[np.bool_] | None = None
    ) -> list[tuple[int, float]]:
        """The ``pool`` slots most similar to ``query`` (a unit vector), best first."""
        n = min(len(alive), len(self.present))
        usable = self.present[:n] & alive[:n]
        if allowed is not None:
            m = min(n, len(allowed))
            usable[:m] &= allowed[:m]
            usable[m:] = False
        slots = np.flatnonzero(usable)
        if len(slots) == 0:
            return []
        scores = self.matrix[slots] @ query.reshape(-1).astype(np.float32)
        if len(slots) > pool:
            top = np.argpartition(-scores, pool - 1)[:pool]
        else:
            top = np.arange(len(slots))
        order = top[np.lexsort((slots[top], -scores[top]))]
        return [(int(slots[i]), float(scores[i])) for i in order]


__all__ = [
    "DenseIndex",
    "Embedder",
    "EmbeddingError",
    "EmbeddingProfile",
    "OllamaEmbedder",
    "ProbeResult",
    "normalise",
    "normalise_host",
    "prefixes",
    "probe",
]
