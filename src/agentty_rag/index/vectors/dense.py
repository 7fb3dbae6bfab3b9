"""The optional dense leg: the ``Embedder`` seam (``base.py`` keeps and searches the vectors it makes).

An ``Embedder`` is a name (its model) and one batch method turning texts into L2-normalised vectors;
``embedders.make_embedder`` picks one by ``AGENTTY_EMBED_BACKEND``: ``LocalEmbedder`` (``local_embedder.py``, a
model in this process), ``OllamaEmbedder`` (``ollama_embedder.py``), ``OpenAIEmbedder`` (``openai_embedder.py``)
or the deterministic ``FakeEmbedder`` (``fake_embedder.py``) for tests. ``probe`` learns from one bounded
batch whether a backend embeds, and with which profile; a backend whose model loads in this process says so
(``loads_in_process``), and the server runs its first probe, the load, as a job. What the vectors depend on is an
``EmbeddingProfile``; its key includes the query/document prefixes a model family expects:

* nomic-embed-text and other ``nomic`` models: ``search_query: `` / ``search_document: ``;
* E5 models (a name with ``e5``): ``query: `` / ``passage: ``;
* BGE and mxbai-embed-large: the query instruction ``Represent this sentence for searching relevant
  passages: `` (documents unprefixed);
* any other model: no prefix.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import EmbeddingError

Matrix = npt.NDArray[np.float32]
Vector = npt.NDArray[np.float32]
# What a batch is for: the start-up probe (bounded, on a connection of its own, the query prefix), the same with
# the long timeout (a batch command's, the server's background probes: a server may still be loading its model),
# a query (the query prefix, the short timeout) or passages (the document prefix, the long timeout).
Role = Literal["probe", "long-probe", "query", "document"]
PROBES: tuple[Role, ...] = ("probe", "long-probe")

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


@dataclass(frozen=True)
class ProbeResult:
    """Whether a backend embeds, and if so with which profile (``reason`` says why not)."""

    ok: bool
    reason: str = ""
    profile: EmbeddingProfile | None = None
    seconds: float = 0.0


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors; every failure is an ``EmbeddingError``.

    A new backend is one module implementing this, plus its line in ``embedders.BACKENDS`` and its name in
    the ``AGENTTY_EMBED_BACKEND`` choices (its own settings, if any, in ``config/stages.py``). A backend
    whose model loads in this process also sets ``loads_in_process = True`` (see ``loads_in_process``).
    """

    @property
    def model(self) -> str:
        """Its name: the model its vectors come from (they are kept under it, see ``EmbeddingProfile``)."""
        ...

    @property
    def where(self) -> str:
        """Where it runs, for status lines: ``at http://127.0.0.1:11434``, ``in-process``."""
        ...

    def embed(self, texts: list[str], role: Role) -> Matrix:
        """One row per text, in order, for ``role``."""
        ...

    def close(self) -> None:
        """Release connections; a later call opens new ones."""
        ...


def loads_in_process(embedder: Embedder) -> bool:
    """Whether the embedder's model loads in this process (a true ``loads_in_process`` attribute): its first
    probe is that load, slow once (about a second) but with no network, so the server runs it as a job
    (``load-embedder``), never inside a request. A server's backend needs no such attribute."""
    return bool(getattr(embedder, "loads_in_process", False))


def probe(embedder: Embedder, role: Role = "probe") -> ProbeResult:
    """One bounded attempt: does the backend embed with its model, and how long are the vectors? ``role``
    bounds the wait: a ``probe``'s short one, or a ``long-probe``'s, for a server that may still be loading its
    model."""
    started = time.perf_counter()
    try:
        vectors = embedder.embed(["probe"], role)
    except EmbeddingError as error:
        return ProbeResult(False, error.reason, seconds=time.perf_counter() - started)
    profile = EmbeddingProfile(embedder.model, int(vectors.shape[1]))
    return ProbeResult(True, "", profile, time.perf_counter() - started)


# The norms float32 works out exactly enough (their squares are normal float32 numbers); beyond them, float64.
_SAFE_NORMS = (1e-18, 1e18)


def checked_vectors(rows: object, count: int) -> Matrix:
    """An embedding server's answer for ``count`` texts as unit vectors (float32), once it is one: a list of
    ``count`` rows of the same length, at least one number each, every number finite, no row all zeros.
    Anything else is an ``EmbeddingError`` saying in one line what was wrong: that batch fails, and no vector
    of it is kept (a zero or NaN vector would rank every chunk alike, for good)."""
    if not isinstance(rows, list | tuple) or len(rows) != count:
        got = len(rows) if isinstance(rows, list | tuple) else type(rows).__name__
        raise EmbeddingError(f"the server returned {got} vectors for {count} texts")
    lengths = {len(row) if isinstance(row, list | tuple) else -1 for row in rows}
    if -1 in lengths:
        raise EmbeddingError("the server's vectors are not lists of numbers")
    if len(lengths) > 1:
        raise EmbeddingError(
            f"the server returned vectors of different lengths ({', '.join(map(str, sorted(lengths)))})"
        )
    if lengths == {0}:
        raise EmbeddingError("the server returned empty vectors")
    try:
        matrix = np.asarray(rows, np.float64).reshape(count, -1)
    except (TypeError, ValueError):
        raise EmbeddingError("the server's vectors are not lists of numbers") from None
    if not np.isfinite(matrix).all():
        raise EmbeddingError("the server returned vectors with NaN or infinite values")
    narrow = matrix.astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):  # judged below: such rows take the float64 way
        norms = np.linalg.norm(narrow, axis=1)
    if ((norms > _SAFE_NORMS[0]) & (norms < _SAFE_NORMS[1])).all():
        return normalise(narrow)  # the usual case, worked out in float32 as ever: the same vectors as before
    wide = np.linalg.norm(matrix, axis=1, keepdims=True)  # numbers whose float32 squares overflow or lose digits
    if not (wide > 0).all():
        raise EmbeddingError("the server returned an all-zero vector")
    unit: Matrix = (matrix / wide).astype(np.float32)
    return unit


def of_shape(vectors: Matrix, count: int, dimension: int) -> Matrix:
    """``vectors`` when they are ``count`` rows of the index's ``dimension`` (the probe's); otherwise an
    ``EmbeddingError``: a server that changed its model, or answers a batch unlike its probe, fails that batch
    (and a vector of another length is never kept)."""
    if vectors.ndim != 2 or len(vectors) != count:
        raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {count} texts")
    if vectors.shape[1] != dimension:
        raise EmbeddingError(f"the server returned {vectors.shape[1]}-d vectors where its probe answered {dimension}-d")
    return vectors


def normalise(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (rows / norms).astype(np.float32)
    return result


__all__ = [
    "checked_vectors",
    "Embedder",
    "EmbeddingError",
    "EmbeddingProfile",
    "loads_in_process",
    "Matrix",
    "ProbeResult",
    "Role",
    "Vector",
    "normalise",
    "of_shape",
    "prefixes",
    "PROBES",
    "probe",
]
