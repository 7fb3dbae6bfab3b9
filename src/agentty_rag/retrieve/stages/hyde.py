"""HyDE (``AGENTTY_RAG_HYDE``, off by default): the generator writes a short hypothetical answer — for code a
plausible function, for docs a passage — which is searched like a query (lexical leg, and embedded for the
dense leg when it ran) and fused by rank with the original order, which weighs most (``stages.requery``).

(Gao, Ma, Lin and Callan, "Precise Zero-Shot Dense Retrieval without Relevance Labels", ACL 2023.)

Bounded: one generation of at most ``MAX_TOKENS`` tokens within ``AGENTTY_RAG_GEN_TIMEOUT_MS``, then one more
search per leg. When the generator is down, slow or writes nothing, the search goes on without it and the
header says so (``hyde: skipped (generator unavailable: …)``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.generator import Generator, generator_for
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.retrieve.stages.requery import extra_lists, fused_with, one_line, searches_code, skipped

log = logging.getLogger(__name__)

MAX_TOKENS = 128
MAX_CHARS = 1500


def prompt(query: str, code: bool) -> str:
    """What the generator is asked (the query last: after the last colon)."""
    if code:
        return f"Write a short, plausible function from a project's source code that answers: {one_line(query)}"
    return f"Write a short passage from a project's documentation that answers: {one_line(query)}"


def passage(answer: str) -> str:
    """The hypothetical passage: the answer without code fences, cut to ``MAX_CHARS``."""
    lines = [line for line in answer.strip().splitlines() if not line.strip().startswith("```")]
    return "\n".join(lines).strip()[:MAX_CHARS]


@dataclass(frozen=True)
class Hyde:
    """The HyDE stage, asking ``generator``."""

    generator: Generator

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        request = ranking.request
        answer = self.generator.generate(prompt(request.query.text, searches_code(ranking)), MAX_TOKENS)
        text = passage(answer.text)
        if not text:
            return skipped(ranking, "hyde", answer.reason or "the generator wrote nothing")
        log.debug("hyde: %d characters in %.3f s%s", len(text), answer.seconds, " (cached)" * answer.cached)
        extra = extra_lists(request, [text])
        if not extra:
            return skipped(ranking, "hyde", "the generated passage matched nothing")
        ranking = fused_with(ranking, extra, 1, "hyde")
        legs = " and ".join(sorted({name.split(":", 1)[1] for name in extra}))
        note = f"hyde: +1 generated passage of {len(text.split())} words, searched by the {legs} leg"
        note += "s" if " and " in legs else ""
        funnel = ranking.funnel.then("hyde +1 passage", len(ranking.fused))
        return replace(ranking, funnel=funnel, notes=(*ranking.notes, note))


def configured(settings: Settings) -> Hyde | None:
    return Hyde(generator_for(settings)) if settings.hyde else None


KIND = StageKind(configured, (Rung("+hyde", "AGENTTY_RAG_HYDE"),))

__all__ = ["KIND", "Hyde", "passage", "prompt"]
