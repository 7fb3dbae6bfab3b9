"""Multi-query expansion (``AGENTTY_RAG_EXPAND``, off by default): the generator writes up to three rewordings of
the query; each is searched (lexical leg, and the dense leg when it ran) and the lists are fused by rank with
the original order, which weighs most (``stages.requery``).

Bounded: one generation of at most ``MAX_TOKENS`` tokens within ``AGENTTY_RAG_GEN_TIMEOUT_MS``, then at most
``MAX_QUERIES`` more searches of the index. When the generator is down, slow or writes nothing usable, the
search goes on without it and the header says so (``expand: skipped (generator unavailable: …)``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

from agentty_rag.config import Settings
from agentty_rag.retrieve.generator import Generator, generator_for
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.retrieve.stages.requery import extra_lists, fused_with, one_line, searches_code, skipped

log = logging.getLogger(__name__)

MAX_QUERIES = 3
MAX_TOKENS = 64
MAX_CHARS = 200  # a longer line is not a search query

_MARKER = re.compile(r"^\s*(?:\d+\s*[.):]|[-*•]|#+)\s*")


def prompt(query: str, code: bool) -> str:
    """What the generator is asked (the query last: after the last colon)."""
    about = "a search of a project's source code" if code else "a search of a project's documentation"
    return f"Write three short alternative search queries, one per line, for {about}: {one_line(query)}"


def rewordings(answer: str, query: str) -> list[str]:
    """The usable queries in the generator's answer, in order: list markers, quotes and emphasis removed;
    preambles (a line ending in a colon), the query itself, repeats and over-long lines left out."""
    seen = {one_line(query).casefold()}
    found: list[str] = []
    for line in answer.splitlines():
        text = _MARKER.sub("", line).replace("**", "").strip().strip("\"'`“”").strip()
        key = text.casefold()
        if not text or text.endswith(":") or len(text) > MAX_CHARS or key in seen:
            continue
        seen.add(key)
        found.append(text)
        if len(found) == MAX_QUERIES:
            break
    return found


@dataclass(frozen=True)
class Expand:
    """The multi-query stage, asking ``generator``."""

    generator: Generator

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        request = ranking.request
        answer = self.generator.generate(prompt(request.query.text, searches_code(ranking)), MAX_TOKENS)
        if not answer.text:
            return skipped(ranking, "expand", answer.reason)
        queries = rewordings(answer.text, request.query.text)
        if not queries:
            return skipped(ranking, "expand", "the generator wrote no usable rewording")
        log.debug("expand: %d rewordings in %.3f s%s", len(queries), answer.seconds, " (cached)" * answer.cached)
        ranking = fused_with(ranking, extra_lists(request, queries), len(queries), "expand")
        note = f"expand: +{len(queries)} queries: " + "; ".join(f"“{q}”" for q in queries)
        funnel = ranking.funnel.then(f"expand +{len(queries)} queries", len(ranking.fused))
        return replace(ranking, funnel=funnel, notes=(*ranking.notes, note))


def configured(settings: Settings) -> Expand | None:
    return Expand(generator_for(settings)) if settings.expand else None


KIND = StageKind(configured, (Rung("+expand", "AGENTTY_RAG_EXPAND"),))

__all__ = ["KIND", "MAX_QUERIES", "Expand", "prompt", "rewordings"]
