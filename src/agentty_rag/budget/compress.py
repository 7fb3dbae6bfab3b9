"""Make a passage fit its allowance while keeping what the query needs.

* Prose: the passage is cut into units (sentences, and lines that are headings, list items or table rows);
  each unit is scored by the rare-term weight of the query terms it holds; the best units that fit are kept
  and re-emitted in their original order, with ``…`` where something was left out. The heading line is kept
  when it fits: it says where the excerpt comes from.
* Code and config: whole lines — the definition's signature line and every line that holds the query's terms,
  heaviest first while they fit, each grown by the lines around it — with ``…`` where lines were left out.
* Without extraction (``AGENTTY_RAG_EXTRACTIVE=0``): the passage's first whole lines.

Bytes are UTF-8 bytes. No character is ever split; code is never cut inside a line, except a single line
longer than the whole allowance.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from agentty_rag.budget.tokens import cut_utf8, utf8_len
from agentty_rag.chunking.prose import SENTENCE_END

GAP = "…"
_GAP_BYTES = utf8_len(GAP)
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


def code_lines(text: str, allowance: int, evidence: Evidence) -> Excerpt:
    """The definition's signature line and every line that holds the query's evidence, heaviest first while
    they fit, each run grown by the lines around it (after before before) into what is left of the room;
    ``…`` marks what was left out. No matching line is dropped while the allowance can hold it."""
    if utf8_len(text) <= allowance:
        return whole(text)
    lines = text.split("\n")
    weights = [evidence(line) if line.strip() else 0.0 for line in lines]
    if max(weights, default=0.0) <= 0:
        return leading_lines(text, allowance)
    chosen = LineSelection(lines)
    chosen.add_if_within(0, allowance)  # the signature says what the excerpt is of
    for index in sorted(range(len(lines)), key=lambda i: (-weights[i], i)):
        if weights[index] <= 0:
            break
        chosen.add_if_within(index, allowance)
    if not any(weights[i] > 0 for i in chosen.lines):
        return leading_lines(text, allowance)
    # Grow around the lines that hold evidence first, then around the signature too; a body follows its
    # matching line: after it, then before.
    for evidence_only in (True, False):
        grown = True
        while grown:
            grown = False
            around = (i for i in chosen.lines if weights[i] > 0 or not evidence_only)
            for index in sorted(around, key=lambda i: (-weights[i], i)):
                if any(chosen.add_if_within(neighbour, allowance) for neighbour in (index + 1, index - 1)):
                    grown = True
    kept = chosen.lines
    return Excerpt(_join_lines(lines, set(kept)), kept[0], kept[-1], True)


class LineSelection:
    """Lines chosen from a text, in order, and the UTF-8 size ``_join_lines`` gives them, kept up to date as
    lines are added: joining them again for every line tried would cost the square of the passage's length."""

    def __init__(self, lines: list[str]) -> None:
        self._sizes = [utf8_len(line) for line in lines]
        self.lines: list[int] = []
        self.size = 0

    def size_with(self, index: int) -> int:
        """The size once ``index`` is added: the line and its line break, and one more or one fewer ``…`` (and
        its break) where it opens or closes a gap."""
        last = len(self._sizes) - 1
        at = bisect.bisect_left(self.lines, index)
        before = self.lines[at - 1] if at > 0 else None
        after = self.lines[at] if at < len(self.lines) else None
        gaps_now = 0 if not self.lines else 1  # the one gap ``index`` sits in (an edge or between two runs)
        gaps_then = (index > 0 if before is None else index != before + 1) + (
            index < last if after is None else after != index + 1
        )
        breaks = 1 if self.lines else 0  # the first part needs no break before it
        return self.size + self._sizes[index] + breaks + (gaps_then - gaps_now) * (_GAP_BYTES + 1)

    def add_if_within(self, index: int, allowance: int) -> bool:
        """Add the line ``index`` when it is a line of the text not chosen yet and the selection still fits."""
        if not 0 <= index < len(self._sizes) or (self.lines and self._contains(index)):
            return False
        size = self.size_with(index)
        if size > allowance:
            return False
        bisect.insort(self.lines, index)
        self.size = size
        return True

    def _contains(self, index: int) -> bool:
        at = bisect.bisect_left(self.lines, index)
        return at < len(self.lines) and self.lines[at] == index


def _join_lines(lines: list[str], selection: set[int]) -> str:
    """The selected lines, each run of consecutive ones as it is, ``…`` between runs and wherever the text goes
    on before or after them."""
    parts: list[str] = []
    previous = -1
    for index in sorted(selection):
        if index != previous + 1:
            parts.append(GAP)
        parts.append(lines[index])
        previous = index
    if selection and previous < len(lines) - 1:
        parts.append(GAP)
    return "\n".join(parts)


__all__ = ["GAP", "Excerpt", "LineSelection", "code_lines", "extract_prose", "leading_lines", "whole"]
