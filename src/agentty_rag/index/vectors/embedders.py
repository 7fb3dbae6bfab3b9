"""Which ``Embedder`` a session uses: ``AGENTTY_EMBED_BACKEND`` names one of ``BACKENDS``.

A new backend is its module, one line here, and its name among the setting's choices in
``config/stages.py`` (a test checks that the two lists agree); its own settings, if it has any, are declared
there too. A backend whose model runs in this process sets ``loads_in_process`` (``dense.py``). Nothing else
changes: the session's leg (``workspace/dense_backend.py``) probes, paces and degrades every backend alike.
"""

from __future__ import annotations

from collections.abc import Callable

from agentty_rag.config import Settings
from agentty_rag.index.vectors.dense import Embedder
from agentty_rag.index.vectors.fake_embedder import FakeEmbedder
from agentty_rag.index.vectors.local_embedder import LocalEmbedder
from agentty_rag.index.vectors.ollama_embedder import OllamaEmbedder
from agentty_rag.index.vectors.openai_embedder import OpenAIEmbedder

# Each factory takes the settings it reads (``DenseSettings``, or the whole ``Settings``: the API key is there).
BACKENDS: dict[str, Callable[[Settings], Embedder]] = {
    "local": LocalEmbedder.from_settings,
    "ollama": OllamaEmbedder.from_settings,
    "openai": OpenAIEmbedder.from_settings,
    "fake": FakeEmbedder.from_settings,
}


def make_embedder(settings: Settings) -> Embedder:
    """The configured backend's embedder (nothing is contacted until its first probe)."""
    return BACKENDS[settings.embed_backend](settings)


__all__ = ["BACKENDS", "make_embedder"]
