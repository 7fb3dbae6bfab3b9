"""A deterministic ``Embedder`` made in this process, for tests (``AGENTTY_EMBED_BACKEND=fake``).

No model and no network: a text's vector counts its lower-cased words, each hashed (xxh3, the same in every
process) to one of ``dimension`` slots with a sign, scaled to unit length. Texts that share words point the
same way, so the dense leg's plumbing (profiles, coverage, fusion, the cache, degradation) can be tested
exactly; meaning cannot, and the compat-server tests keep a real model for that.
"""

from __future__ import annotations

import re

import numpy as np
import xxhash

from agentty_rag.config import DenseSettings
from agentty_rag.index.vectors.dense import PROBES, EmbeddingError, Matrix, Role, Vector, normalise

_WORD = re.compile(r"\w+")
DIMENSION = 64


def word_vector(text: str, dimension: int) -> Vector:
    """The signed word counts of ``text`` in ``dimension`` hashed slots (not normalised)."""
    row = np.zeros(dimension, np.float32)
    for word in _WORD.findall(text.lower()):
        digest = xxhash.xxh3_64_intdigest(word.encode("utf-8"))
        row[digest % dimension] += 1.0 if digest >> 63 else -1.0
    return row


class FakeEmbedder:
    """Word-hash vectors of ``dimension`` slots; ``failing`` (a reason) makes every call fail, like a dead server."""

    where = "in-process"

    def __init__(self, model: str = "fake", dimension: int = DIMENSION) -> None:
        self.model = model
        self.failing = ""
        self.requests = 0  # how many embedding requests were made (tests count what a cache saves)
        self._dimension = dimension

    @classmethod
    def from_settings(cls, settings: DenseSettings) -> FakeEmbedder:
        # Its own model name: its vectors are never taken for a real model's of the same name.
        return cls(f"fake-{settings.embed_model}")

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role not in PROBES:
            self.requests += 1
        if self.failing:
            raise EmbeddingError(self.failing)
        if not texts:
            return np.zeros((0, 0), np.float32)
        return normalise(np.stack([word_vector(text, self._dimension) for text in texts]))

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["DIMENSION", "FakeEmbedder", "word_vector"]
