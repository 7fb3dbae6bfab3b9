"""The settings of the generation stages (multi-query expansion, HyDE) and their generator.

Declared like every other stage (see ``stages.py``); a module of its own only to keep ``stages.py`` short.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.config.variables import choice, flag, integer, text


@dataclass(frozen=True)
class GenerationSettings:
    """Generation: the optional stages that ask a small local model to reword the query (off by default)."""

    expand: bool = flag(
        "AGENTTY_RAG_EXPAND",
        False,
        "Multi-query expansion: the generator writes up to three rewordings, each is searched and the lists "
        "are fused by rank with the original weighted highest (off: a 135M stand-in cannot show it helps).",
    )
    hyde: bool = flag(
        "AGENTTY_RAG_HYDE",
        False,
        "HyDE: the generator writes a short hypothetical passage (for code, a plausible function), which is "
        "searched (and embedded when the dense leg is up) and fused by rank with the original (off, as above).",
    )
    gen_backend: str = choice(
        "AGENTTY_RAG_GEN_BACKEND",
        "ollama",
        "Where generations come from: `ollama` (a server speaking Ollama's API) or `fake` (deterministic echo "
        "answers made in-process, for tests: no model, no meaning).",
        choices=("ollama", "fake"),
    )
    gen_model: str = text(
        "AGENTTY_RAG_GEN_MODEL",
        "qwen2.5:0.5b",
        "The generation model the expansion stages ask for, on the Ollama host.",
    )
    gen_timeout_ms: int = integer(
        "AGENTTY_RAG_GEN_TIMEOUT_MS",
        2000,
        "Longest wait for one generated answer; a stage that gets none is skipped and the header says why.",
        low=100,
        high=60_000,
    )


__all__ = ["GenerationSettings"]
