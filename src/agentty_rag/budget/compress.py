"""Make a passage fit its allowance while keeping what the query needs.

* Prose: the passage is cut into units (sentences, and lines that are headings, list items or table rows);
  each unit is scored by the rare-term weight of the query terms it holds; the best units that fit are kept
  and re-emitted in their original order, with ``…`` where something was left out. The heading line is kept
  when it fits: it says where the excerpt comes from.
* Code and config: a contiguous window of whole lines, placed where the query's terms weigh most, and the
  definition's signature line in front of it (then ``…``) when the window does not start there.
* Without extraction (``AGENTTY_RAG_EXTRACTIVE=0``): the passage's first whole lines.

Bytes are UTF-8 bytes. No character is ever split; code is never cut inside a line, except a single line
longer than the whole allowance.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agentty_rag.budget.tokens import cut_utf8, utf8_len
from agentty_rag.chunking.prose import SENTENCE_END

GAP = "…"
Evidence = Callable[[str], float]

_STRUCTURAL = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s|\||>|```|~~~|=+\s*$|-+\s*$)")


@dataclass(frozen=True)
class Excerpt:
    """What is shown of a passage: the text, the lines of the chunk it covers (0-based, inclusive) when it is
    one contiguous window, and whether anything was left out."""

    text: str
    first_line: int
    last_line: int
    compressed: bool


def whole(text: str) -> Excerpt:
    return Excerpt(text, 0, text.count("\n"), False)


def leading_lines(text: str, allowance: int) -> Excerpt:
    """The first whole lines that fit, then ``…`` (a first line longer than the allowance is cut)."""
    if utf8_len(text) <= allowance:
        return whole(text)
    room = allowance - utf8_len("\n" + GAP)
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    if not kept:
        return Excerpt(cut_utf8(text.split("\n", 1)[0], allowance - utf8_len(GAP)) + GAP, 0, 0, True)
    return Excerpt("\n".join(kept) + "\n" + GAP, 0, len(kept) - 1, True)


def _units(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of sentences and structural lines, in order, covering the text."""
    spans: list[tuple[int, int]] = []
    offset = 0
    in_fence = False
    for line in text.split("\n"):
        end = offset + len(line)
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        if not stripped:
            pass
        elif in_fence or _STRUCTURAL.match(line) or len(line) < 80:
            spans.append((offset, end))
        else:
            cuts = [0] + [m.end() for m in SENTENCE_END.finditer(line)] + [len(line)]
            for a, b in zip(cuts, cuts[1:], strict=False):
                piece = line[a:b].rstrip()
                if piece.strip():
                    spans.append((offset + a, offset + a + len(piece)))
        offset = end + 1
    return spans


def extract_prose(text: str, allowance: int, evidence: Evidence) -> Excerpt:
    """The query's best sentences within ``allowance`` bytes, in their original order, gaps marked ``…``."""
    if utf8_len(text) <= allowance:
        return whole(text)
    units = _units(text)
    scores = [evidence(text[a:b]) for a, b in units]
    if not units or max(scores, default=0.0) <= 0:
        return leading_lines(text, allowance)
    chosen: set[int] = set()

    def cost(selection: set[int]) -> int:
        return utf8_len(_join(text, units, selection))

    heading = 0 if text.lstrip().startswith(("#", "=")) else None
    if heading is not None and cost({heading}) <= allowance:
        chosen.add(heading)
    for index in sorted(range(len(units)), key=lambda i: (-scores[i], i)):
        if scores[index] <= 0:
            break
        if index not in chosen and cost(chosen | {index}) <= allowance:
            chosen.add(index)
    if not chosen or all(scores[i] <= 0 for i in chosen):
        return leading_lines(text, allowance)
    # Fill what is left with the units next to those kept: an answer often sits beside the sentence that
    # holds the query's words.
    grown = True
    while grown:
        grown = False
        for index in sorted(chosen):
            for neighbour in (index + 1, index - 1):
                if 0 <= neighbour < len(units) and neighbour not in chosen and cost(chosen | {neighbour}) <= allowance:
                    chosen.add(neighbour)
                    grown = True
    return Excerpt(_join(text, units, chosen), 0, text.count("\n"), True)


def _join(text: str, units: list[tuple[int, int]], selection: set[int]) -> str:
    """The selected units: each run of consecutive units as its exact slice of the text, ``…`` between runs
    and wherever the text goes on before or after them."""
    runs: list[list[int]] = []
    for index in sorted(selection):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    parts: list[str] = []
    for first, last in runs:
        if first > 0:
            parts.append(GAP)
        parts.append(text[units[first][0] : units[last][1]])
    if runs and runs[-1][1] < len(units) - 1:
        parts.append(GAP)
    return "\n".join(parts)


def _best_window(sizes: list[int], weights: list[float], room: int, start_at: int = 0) -> tuple[float, int, int]:
    """(weight, first, last) of the heaviest run of whole lines from ``start_at`` within ``room`` bytes.

    Ties go to the earliest window; (-1, 0, -1) when not even one line fits.
    """
    best = (-1.0, 0, -1)
    first, used, weight = start_at, 0, 0.0
    for last in range(start_at, len(sizes)):
        used += sizes[last]
        weight += weights[last]
        while used > room and first <= last:
            used -= sizes[first]
            weight -= weights[first]
            first += 1
        if first <= last and weight > best[0] + 1e-9:
            best = (weight, first, last)
    if best[2] < 0:
        return best
    # Use the rest of the room: lines after the evidence first (a body follows its signature), then before.
    weight, first, last = best
    used = sum(sizes[first : last + 1])
    while last + 1 < len(sizes) and used + sizes[last + 1] <= room:
        last += 1
        used += sizes[last]
    while first - 1 >= start_at and used + sizes[first - 1] <= room:
        first -= 1
        used += sizes[first]
    return (weight, first, last)


def code_window(text: str, allowance: int, evidence: Evidence) -> Excerpt:
    """A contiguous window of whole lines where the query's evidence is strongest, after the signature line."""
    if utf8_len(text) <= allowance:
        return whole(text)
    lines = text.split("\n")
    sizes = [utf8_len(line) + 1 for line in lines]
    weights = [evidence(line) for line in lines]
    if max(weights, default=0.0) <= 0:
        return leading_lines(text, allowance)
    marker = utf8_len(GAP) + 1
    plain = _best_window(sizes, weights, allowance - 2 * marker)
    signed = _best_window(sizes, weights, allowance - 2 * marker - sizes[0], start_at=1)
    use_signature = signed[2] >= 0 and signed[0] + weights[0] >= plain[0] and plain[1] > 0
    weight, first, last = signed if use_signature else plain
    if last < 0:
        return leading_lines(text, allowance)
    parts = [lines[0], GAP] if use_signature and first > 1 else [lines[0]] if use_signature else []
    if not use_signature and first > 0:
        parts.append(GAP)
    parts.append("\n".join(lines[first : last + 1]))
    if last < len(lines) - 1:
        parts.append(GAP)
    shown = "\n".join(parts)
    if utf8_len(shown) > allowance:
        return leading_lines(text, allowance)
    return Excerpt(shown, 0 if use_signature and first == 1 else first, last, True)


__all__ = ["GAP", "Excerpt", "code_window", "extract_prose", "leading_lines", "whole"]
