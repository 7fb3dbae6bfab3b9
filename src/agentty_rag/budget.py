"""Fit ranked hits into one aggregate output budget without reordering them.

The budget covers the passage bodies of one result (headers and provenance lines are not counted). Bytes are
shared out by water-filling: every passage may take an equal share, and what a short passage does not need
flows to the others. A passage over its allowance keeps its first whole lines and is marked as trimmed; the
best hit is always kept, and the tail is dropped when the budget cannot give each passage a legible minimum.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.types import Hit

# The least a kept passage may be given: below this, a trimmed excerpt is not worth its header.
MIN_PASSAGE_BYTES = 240
TRIM_MARKER = "…"


@dataclass(frozen=True, slots=True)
class Passage:
    """A hit as it will be shown: its (possibly trimmed) text and the lines that text spans."""

    hit: Hit
    text: str
    start_line: int
    end_line: int
    trimmed: bool
    relevance: float  # score relative to the best hit of the same result (1.0 = best)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def water_fill(needs: list[int], budget: int) -> list[int]:
    """Allowances: equal shares of ``budget``, with what short passages leave over given to the rest.

    Returns a list as long as ``needs`` whose sum never exceeds ``budget`` and where no entry exceeds its need.
    """
    allowances = [0] * len(needs)
    open_items = list(range(len(needs)))
    remaining = budget
    while open_items and remaining > 0:
        share = remaining // len(open_items)
        satisfied = [i for i in open_items if needs[i] - allowances[i] <= share]
        if not satisfied:
            for i in open_items:
                allowances[i] += share
            remaining -= share * len(open_items)
            break
        for i in satisfied:
            remaining -= needs[i] - allowances[i]
            allowances[i] = needs[i]
        open_items = [i for i in open_items if i not in satisfied]
    return allowances


def trim_to(text: str, allowance: int) -> tuple[str, int, bool]:
    """The longest run of whole leading lines within ``allowance`` bytes (marker included).

    Returns (text, number of lines kept, trimmed). A first line longer than the allowance is cut on a
    character boundary, never inside a UTF-8 sequence.
    """
    if utf8_len(text) <= allowance:
        return text, text.count("\n") + 1, False
    room = allowance - utf8_len("\n" + TRIM_MARKER)
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    if not kept:
        encoded = text.split("\n", 1)[0].encode("utf-8")[: max(room, 0)]
        first = encoded.decode("utf-8", "ignore")
        return first + TRIM_MARKER, 1, True
    return "\n".join(kept) + "\n" + TRIM_MARKER, len(kept), True


def fit(hits: tuple[Hit, ...], budget: int) -> list[Passage]:
    """Passages for ``hits`` (in their order) whose bodies total at most ``budget`` bytes."""
    if not hits:
        return []
    count = max(1, min(len(hits), budget // MIN_PASSAGE_BYTES))
    kept = hits[:count]
    top = max(kept[0].score, 1e-12)
    allowances = water_fill([utf8_len(h.chunk.text) for h in kept], budget)
    passages: list[Passage] = []
    for hit, allowance in zip(kept, allowances, strict=True):
        text, lines, trimmed = trim_to(hit.chunk.text, allowance)
        end = hit.chunk.start_line + lines - 1 if trimmed else hit.chunk.end_line
        passages.append(
            Passage(hit, text, hit.chunk.start_line, min(end, hit.chunk.end_line), trimmed, hit.score / top)
        )
    return passages


__all__ = ["MIN_PASSAGE_BYTES", "Passage", "fit", "trim_to", "utf8_len", "water_fill"]
