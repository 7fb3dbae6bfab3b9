"""The search path, top to bottom: candidates -> fused -> deduplicated -> top k.

Ranking only: nothing here formats text or counts output bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.types import Funnel, Hit

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Filters:
    """Restrictions applied inside retrieval, before the candidate pool is cut.

    Args:
        scope: a path prefix the chunk's ``ref`` must equal or lie under (a file or a folder).
        sources: source kinds admitted (``docs``, ``skill``, ``memory``, ``code``).
        languages: languages admitted (code).
    """

    scope: str | None = None
    sources: tuple[str, ...] | None = None
    languages: tuple[str, ...] | None = None

    @property
    def active(self) -> bool:
        return self.scope is not None or self.sources is not None or self.languages is not None

    def key(self) -> str:
        return repr((self.scope, self.sources, self.languages))

    def admits(self, source: str, ref: str, language: str) -> bool:
        if self.sources is not None and source not in self.sources:
            return False
        if self.languages is not None and language not in self.languages:
            return False
        if self.scope is not None:
            if source not in ("docs", "code"):
                return False  # skills and memory have no path to scope by
            if self.scope and ref != self.scope and not ref.startswith(self.scope.rstrip("/") + "/"):
                return False
        return True


@dataclass(frozen=True)
class Retrieved:
    hits: tuple[Hit, ...]
    funnel: Funnel
    mode: str


def candidate_pool(k: int) -> int:
    """How many candidates each leg contributes: clamp(k x 6, 30, 160)."""
    return max(30, min(160, k * 6))


def _fingerprint(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def deduplicate(hits: list[Hit]) -> list[Hit]:
    """Collapse passages with the same text (whitespace and case aside), keeping the first (best) one."""
    kept: dict[str, int] = {}
    out: list[Hit] = []
    for hit in hits:
        key = _fingerprint(hit.chunk.text)
        index = kept.get(key)
        if index is None:
            kept[key] = len(out)
            out.append(hit)
        else:
            first = out[index]
            out[index] = Hit(first.chunk, first.score, (*first.also, hit.chunk.provenance))
    return out


def search(index: CorpusIndex, query: str, k: int, filters: Filters) -> Retrieved:
    """Rank the index's chunks for ``query`` and return the best ``k`` (fewer when fewer match)."""
    allowed = index.allowed(filters.key(), filters.admits) if filters.active else None
    candidates = index.lexical_search(query, candidate_pool(k), allowed)
    funnel = Funnel().then("lexical", len(candidates))
    chunks = index.chunks([slot for slot, _ in candidates])
    hits = [Hit(chunks[slot], score) for slot, score in candidates if slot in chunks]
    # Deterministic order: score first, then the chunk's content-derived id (never insertion order).
    hits.sort(key=lambda h: (-round(h.score, 9), h.chunk.chunk_id))
    unique = deduplicate(hits)
    funnel = funnel.then("dedup", len(unique))
    top = tuple(unique[:k])
    return Retrieved(top, funnel.then("returned", len(top)), "bm25")


__all__ = ["Filters", "Retrieved", "candidate_pool", "deduplicate", "search"]
