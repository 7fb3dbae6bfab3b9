"""Fit ranked hits into one aggregate output budget. None of this changes the ranking: it only decides how
many bytes each passage may use, and which of its bytes they are.

Relevance is the passage's score scaled so that the best hit is 1 and the weakest candidate the ranking
considered is 0: ``(score - weakest) / (best - weakest)``.

1. **Relevance floor**: a passage is kept only if its relevance is at least ``relevance_floor`` (the best hit
   is always kept).
2. **Confidence-scaled total**: the budget for this result ramps linearly from ``confidence_floor`` of the
   aggregate budget at confidence 0 to all of it at confidence 1.
3. **Water-filling**: a passage of relevance r deserves ``r ** gamma`` of its length (at least a legible
   minimum — 240 bytes of prose, 480 of code, and for code at least a fifth of it; the two best hits all of
   it). A code passage deserves at most ``code_passage_bytes`` (the best one) or half of it (the others): a
   definition can be long and stitching joins neighbours, while an agent reading in order wants the lines that
   answer and opens the file for the rest (a prose chunk is already a section of a readable size). When what
   the passages deserve exceeds the total, the total is shared in proportion to ``r ** gamma`` instead, each
   first getting the minimum, and bytes a short passage does not need flow to the others. The tail is
   dropped when the total cannot give every passage its minimum.
4. **Extractive compression** of passages longer than their share (see ``compress``).

The budget covers the passage bodies only; headers and provenance lines are counted separately.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.budget.allocate import scaled_total, water_fill
from agentty_rag.budget.compress import Evidence, Excerpt, code_lines, extract_prose, leading_lines, whole
from agentty_rag.budget.tokens import estimate_tokens, utf8_len
from agentty_rag.config import BudgetSettings
from agentty_rag.retrieve.relevance import relevances
from agentty_rag.types import Hit

# The least a kept passage may be given: below this, an excerpt is not worth its header. Code needs more:
# a legible window is a signature and a few lines of body. These, WHOLE_TOP and the code share were chosen
# with rag-bench's token-economy table on the fixtures (answer retention against tokens saved).
MIN_PASSAGE_BYTES = 240
MIN_CODE_BYTES = 480
MIN_CODE_SHARE = 0.2
WHOLE_TOP = 2


@dataclass(frozen=True)
class BudgetConfig:
    """The token-economy levers: the six budget settings (``from_settings``), then constants tuned with
    rag-bench."""

    total_bytes: int
    relevance_floor: float
    gamma: float
    confidence_floor: float
    extractive: bool
    min_passage_bytes: int = MIN_PASSAGE_BYTES
    min_share: float = 0.0  # the least share of its length a kept prose passage deserves
    min_share_code: float = MIN_CODE_SHARE  # the same for code, whose answer is often far from the query's words
    min_code_bytes: int = MIN_CODE_BYTES
    whole_top: int = WHOLE_TOP  # this many best passages deserve all of their length
    code_passage_bytes: int = 0  # code: the best passage's cap, half of it the others' (0: none)

    @classmethod
    def from_settings(cls, settings: BudgetSettings) -> BudgetConfig:
        return cls(
            settings.output_bytes,
            settings.relevance_floor,
            settings.budget_gamma,
            settings.conf_budget_floor,
            settings.extractive,
            code_passage_bytes=settings.code_passage_bytes,
        )


@dataclass(frozen=True, slots=True)
class Passage:
    """A hit as it will be shown: its text, the lines that text spans, and whether it was compressed."""

    hit: Hit
    text: str
    start_line: int
    end_line: int
    compressed: bool
    relevance: float  # score relative to the best hit of the same result (1.0 = best)


@dataclass(frozen=True)
class Packed:
    """The passages of one result and what the budget did."""

    passages: tuple[Passage, ...]
    total_bytes: int  # after confidence scaling
    used_bytes: int
    confidence: float
    dropped_by_floor: int

    @property
    def compressed(self) -> int:
        return sum(1 for p in self.passages if p.compressed)

    @property
    def used_tokens(self) -> int:
        return estimate_tokens(self.used_bytes)

    @property
    def total_tokens(self) -> int:
        return estimate_tokens(self.total_bytes)


def passage_caps(passage_bytes: int, minimums: list[int]) -> list[int]:
    """Each passage's cap: ``passage_bytes`` for the best, half of it for the others, never below a passage's
    legible minimum."""
    return [max(passage_bytes if rank == 0 else passage_bytes // 2, minimum) for rank, minimum in enumerate(minimums)]


def _shrink(hit: Hit, allowance: int, config: BudgetConfig, evidence: Evidence | None) -> Excerpt:
    text = hit.chunk.text
    if utf8_len(text) <= allowance:
        return whole(text)
    if not config.extractive or evidence is None:
        return leading_lines(text, allowance)
    prose = not hit.chunk.spec.code and hit.chunk.language not in ("config", "yaml", "toml", "json")
    return extract_prose(text, allowance, evidence) if prose else code_lines(text, allowance, evidence)


def fit(
    hits: tuple[Hit, ...],
    config: BudgetConfig,
    confidence: float = 1.0,
    evidence: Evidence | None = None,
    weakest: float | None = None,
) -> Packed:
    """Passages for ``hits`` (in their order) whose bodies total at most the (confidence-scaled) budget.

    Args:
        hits: ranked hits, best first.
        config: the levers.
        confidence: the retrieval's confidence in [0, 1].
        evidence: scores a piece of text by the query terms it holds (for extractive compression).
        weakest: the lowest score among the candidates the ranking considered (relevance 0).
    """
    budget = scaled_total(config.total_bytes, confidence, config.confidence_floor)
    if not hits:
        return Packed((), budget, 0, confidence, 0)
    relevance = relevances([h.score for h in hits], weakest)
    kept = 1
    while kept < len(hits) and relevance[kept] >= config.relevance_floor:
        kept += 1
    room = max(1, budget // config.min_passage_bytes)
    chosen = hits[: min(kept, room)]
    weights = [relevance[i] ** config.gamma for i in range(len(chosen))]
    needs = [utf8_len(h.chunk.text) for h in chosen]
    # What each passage deserves: about relevance ** gamma of its length, never less than a legible minimum;
    # the best hit deserves all of it.
    floors = [config.min_share_code if h.chunk.spec.code else config.min_share for h in chosen]
    shares = [floor + (1.0 - floor) * weight for floor, weight in zip(floors, weights, strict=True)]
    shares = [1.0 if rank < config.whole_top else share for rank, share in enumerate(shares)]
    minimums = [config.min_code_bytes if h.chunk.spec.code else config.min_passage_bytes for h in chosen]
    deserved = [
        min(need, max(minimum, int(need * share))) for need, share, minimum in zip(needs, shares, minimums, strict=True)
    ]
    if config.code_passage_bytes:
        caps = passage_caps(config.code_passage_bytes, minimums)
        deserved = [
            min(share, cap) if hit.chunk.spec.code else share
            for hit, share, cap in zip(chosen, deserved, caps, strict=True)
        ]
    if sum(deserved) <= budget:
        allowances = deserved
    else:
        allowances = water_fill(deserved, weights, budget, config.min_passage_bytes)
    passages = []
    for index, (hit, allowance) in enumerate(zip(chosen, allowances, strict=True)):
        excerpt = _shrink(hit, allowance, config, evidence)
        start = hit.chunk.start_line + excerpt.first_line
        end = min(hit.chunk.start_line + excerpt.last_line, hit.chunk.end_line)
        if not excerpt.compressed:
            start, end = hit.chunk.start_line, hit.chunk.end_line
        passages.append(Passage(hit, excerpt.text, start, end, excerpt.compressed, relevance[index]))
    used = sum(utf8_len(p.text) for p in passages)
    return Packed(tuple(passages), budget, used, confidence, len(hits) - kept)


__all__ = [
    "MIN_PASSAGE_BYTES",
    "BudgetConfig",
    "Packed",
    "Passage",
    "estimate_tokens",
    "fit",
    "relevances",
    "utf8_len",
]
