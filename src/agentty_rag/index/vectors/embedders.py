"""Which ``Embedder`` a session uses: ``AGENTTY_EMBED_BACKEND`` names one of ``BACKENDS``.

A new backend is its module, one line here, and its name among the setting's choices in
``config/stages.py`` (a test checks that the two lists agree).
"""

from __future__ import annotations

from collections.abc import Callable

from agentty_rag.config import DenseSettings
from agentty_rag.index.vectors.dense import Embedder
from agentty_rag.index.vectors.fake_embedder import FakeEmbedder
from agentty_rag.index.vectors.ollama_embedder import OllamaEmbedder

BACKENDS: dict[str, Callable[[DenseSettings], Embedder]] = {
    "ollama": OllamaEmbedder.from_settings,
    "fake": FakeEmbedder.from_settings,
}


def make_embedder(settings: DenseSettings) -> Embedder:
    """The configured backend's embedder (nothing is contacted until its first probe)."""
    return BACKENDS[settings.embed_backend](settings)


__all__ = ["BACKENDS", "make_embedder"]
