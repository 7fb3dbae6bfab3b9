"""Structural chunking for prose: headings first, then paragraphs, sentences, and a hard window.

A document is cut into sections at its headings (Markdown ATX and setext, reStructuredText and plain-text
underlined titles, AsciiDoc ``=`` titles); each section keeps its heading path (``Guide > Auth > Tokens``).
A section that fits stays whole. A longer one is packed greedily from its paragraphs (a fenced code block is
one paragraph); a paragraph too long to pack is split into sentences (lines, for code), and a sentence too
long into windows that end on whitespace. Consecutive chunks of one section overlap by a few words, never
starting mid-word.

Every unit is a span of character offsets into the original text, so a chunk's text is an exact slice of
the file and its line numbers are exact.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from agentty_rag.types import Chunk, Document

# A section may exceed the target by this factor and still stay whole.
_WHOLE_SECTION_SLACK = 1.5

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}[ \t]*$")
_ADOC_TITLE = re.compile(r"^(={1,6})[ \t]+(\S.*?)[ \t]*$")
_ADOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,})[ \t]*$")
# The break after a sentence: its ``.``, ``!`` or ``?`` and closing quotes or brackets, then white space.
# Sections are cut here, and so are the passages budget/compress.py shortens.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")
_LIST_OR_QUOTE = re.compile(r"^ {0,3}(?:[-*+>]|\d+[.)])[ \t]")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's span: ``start``/``end`` are character offsets; ``body_start`` is after the heading line."""

    path: tuple[str, ...]
    start: int
    end: int
    body_start: int


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    code: bool = False  # a fenced block or literal text: split by lines, never by sentences


class LineIndex:
    """Offsets of line starts, for offset -> 1-based line number."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def _lines_with_offsets(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        out.append((offset, line.rstrip("\r")))
        offset += len(line) + 1
    return out


def _markdown_headings(lines: list[tuple[int, str]]) -> Iterator[tuple[int, int, str, int]]:
    """(level, line index of the heading's first line, title, line index after the heading)."""
    fence: str | None = None
    previous_blank = True
    in_front_matter = bool(lines) and lines[0][1].strip() == "---"
    for i, (_, line) in enumerate(lines):
        if in_front_matter:
            if i > 0 and line.strip() in ("---", "..."):
                in_front_matter = False
            previous_blank = True
            continue
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            previous_blank = False
            continue
        if fence_match:
            fence = fence_match.group(1)
            previous_blank = False
            continue
        atx = _ATX.match(line)
        if atx:
            yield len(atx.group(1)), i, (atx.group(2) or "").strip(), i + 1
            previous_blank = False
            continue
        setext = _SETEXT.match(line)
        if setext and i > 0 and not previous_blank:
            title = lines[i - 1][1].strip()
            if title and not _LIST_OR_QUOTE.match(lines[i - 1][1]) and not _ATX.match(lines[i - 1][1]):
                if i < 2 or not lines[i - 2][1].strip():  # a one-line paragraph: a heading, not a rule
                    yield (1 if setext.group(1)[0] == "=" else 2), i - 1, title, i + 1
                    previous_blank = True
                    continue
        previous_blank = not line.strip()


def _underlined_headings(lines: list[tuple[int, str]]) -> Iterator[tuple[int, int, str, int]]:
    """reStructuredText / plain-text titles: a line underlined (and maybe overlined) with punctuation."""
    styles: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines) - 1:
        title = lines[i][1]
        under = _RST_UNDERLINE.match(lines[i + 1][1])
        stripped = title.strip()
        if (
            under
            and stripped
            and not title[0].isspace()
            and not _RST_UNDERLINE.match(title)
            and len(lines[i + 1][1].rstrip()) >= min(len(stripped), 3)
        ):
            char = under.group(1)
            over = i > 0 and lines[i - 1][1].rstrip() == lines[i + 1][1].rstrip()
            style = (char, over)
            if style not in styles:
                styles.append(style)
            first = i - 1 if over else i
            yield styles.index(style) + 1, first, stripped, i + 2
            i += 2
            continue
        i += 1


def _asciidoc_headings(lines: list[tuple[int, str]]) -> Iterator[tuple[int, int, str, int]]:
    delimiter: str | None = None
    for i, (_, line) in enumerate(lines):
        block = _ADOC_DELIMITER.match(line)
        if block:
            delimiter = None if delimiter == block.group(1) else (delimiter or block.group(1))
            continue
        if delimiter is None:
            title = _ADOC_TITLE.match(line)
            if title:
                yield len(title.group(1)), i, title.group(2), i + 1


def split_sections(text: str, fmt: str) -> list[Section]:
    """Cut ``text`` at its headings. Text before the first heading is a section with an empty path."""
    lines = _lines_with_offsets(text)
    if fmt == "markdown":
        headings = list(_markdown_headings(lines))
    elif fmt in ("rst", "text"):
        headings = list(_underlined_headings(lines))
    elif fmt == "asciidoc":
        headings = list(_asciidoc_headings(lines))
    else:
        headings = []
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body_from = 0
    if fmt == "markdown" and lines and lines[0][1].strip() == "---":
        closing = next((i for i in range(1, len(lines)) if lines[i][1].strip() in ("---", "...")), None)
        if closing is not None:
            body_from = lines[closing + 1][0] if closing + 1 < len(lines) else len(text)
    first_start = lines[headings[0][1]][0] if headings else len(text)
    if text[body_from:first_start].strip():
        sections.append(Section((), body_from, first_start, body_from))
    for n, (level, line_i, title, after_i) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        start = lines[line_i][0]
        end = lines[headings[n + 1][1]][0] if n + 1 < len(headings) else len(text)
        body_start = lines[after_i][0] if after_i < len(lines) else len(text)
        sections.append(Section(tuple(t for _, t in stack if t), start, end, min(body_start, end)))
    return sections


def _paragraphs(text: str, start: int, end: int, fmt: str) -> list[Span]:
    """Blank-line separated blocks of ``text[start:end]``; a fenced block is one unit, marked as code."""
    spans: list[Span] = []
    block_start: int | None = None
    block_end = start
    block_code = False
    fence: str | None = None
    offset = start
    for line in text[start:end].split("\n"):
        line_end = offset + len(line)
        fence_match = _FENCE.match(line) if fmt == "markdown" else None
        if fence is not None:
            block_end = line_end
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
        elif fence_match:
            if block_start is not None:
                spans.append(Span(block_start, block_end, block_code))
            block_start, block_end, block_code, fence = offset, line_end, True, fence_match.group(1)
        elif line.strip():
            if block_start is None:
                block_start, block_code = offset, fmt == "config"
            block_end = line_end
        elif block_start is not None:
            spans.append(Span(block_start, block_end, block_code))
            block_start = None
        offset = line_end + 1
    if block_start is not None:
        spans.append(Span(block_start, block_end, block_code))
    return [s for s in spans if text[s.start : s.end].strip()]


def _split_long(text: str, span: Span, limit: int) -> list[Span]:
    """Split a span longer than ``limit``: code by lines, prose by sentences, then windows on whitespace."""
    pieces: list[Span] = []
    if span.code:
        cuts = [span.start] + [span.start + m.end() for m in re.finditer("\n", text[span.start : span.end])]
    else:
        body = text[span.start : span.end]
        cuts = [span.start] + [span.start + m.end() for m in SENTENCE_END.finditer(body)]
    cuts.append(span.end)
    for a, b in zip(cuts, cuts[1:], strict=False):
        while b > a and text[b - 1].isspace():
            b -= 1
        if b <= a:
            continue
        if b - a <= limit:
            pieces.append(Span(a, b, span.code))
        else:
            pieces.extend(_windows(text, a, b, limit, span.code))
    return pieces


def _windows(text: str, start: int, end: int, limit: int, code: bool) -> list[Span]:
    """Hard windows of at most ``limit`` characters, each ending on whitespace when there is any."""
    out: list[Span] = []
    while end - start > limit:
        cut = start + limit
        space = max(text.rfind(" ", start + limit // 2, cut), text.rfind("\n", start + limit // 2, cut))
        if space > start:
            cut = space
        out.append(Span(start, cut, code))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        out.append(Span(start, end, code))
    return out


def _overlap_start(text: str, units: list[Span], first_new: int, overlap: int) -> int:
    """Where the next chunk starts so that it repeats at most ``overlap`` characters, on a word boundary."""
    if overlap <= 0 or first_new == 0:
        return units[first_new].start
    new_start = units[first_new].start
    previous_end = units[first_new - 1].end
    j = first_new
    while j > 0 and previous_end - units[j - 1].start <= overlap:
        j -= 1
    if j < first_new:
        return units[j].start
    # No whole unit fits: take the tail of the previous one, starting after a whitespace.
    floor = max(previous_end - overlap, units[first_new - 1].start)
    for pos in range(floor, previous_end):
        if text[pos].isspace():
            nxt = pos + 1
            while nxt < previous_end and text[nxt].isspace():
                nxt += 1
            return nxt if nxt < previous_end else new_start
    return new_start


def pack(text: str, units: list[Span], target: int, overlap: int) -> list[tuple[int, int]]:
    """Greedy packing of units into (start, end) spans of about ``target`` characters, overlapping."""
    hard = int(target * _WHOLE_SECTION_SLACK)
    flat: list[Span] = []
    for unit in units:
        flat.extend(_split_long(text, unit, target) if unit.end - unit.start > hard else [unit])
    chunks: list[tuple[int, int]] = []
    i = 0
    while i < len(flat):
        start = flat[i].start if not chunks else _overlap_start(text, flat, i, overlap)
        j = i
        while j + 1 < len(flat) and flat[j + 1].end - start <= target:
            j += 1
        chunks.append((start, flat[j].end))
        i = j + 1
    return chunks


def chunk_prose(document: Document, target: int, overlap: int, kind: str = "section") -> list[Chunk]:
    """Cut a prose document into chunks that carry heading paths and exact line spans.

    Args:
        document: the text and its provenance; ``document.language`` picks the heading syntax.
        target: chunk size to aim for, in characters.
        overlap: characters repeated between consecutive chunks of one section.
        kind: the chunk kind to record (``section``, ``skill``, ``fact``).
    """
    text = document.text
    index = LineIndex(text)
    fmt = document.language
    chunks: list[Chunk] = []
    for section in split_sections(text, fmt):
        if not text[section.body_start : section.end].strip():
            continue  # a heading with nothing under it but subsections
        body = text[section.start : section.end]
        lead = len(body) - len(body.lstrip())
        start, end = section.start + lead, section.start + len(body.rstrip())
        if end - start <= target * _WHOLE_SECTION_SLACK:
            spans = [(start, end)]
        else:
            spans = pack(text, _paragraphs(text, start, end, fmt), target, overlap)
        for a, b in spans:
            piece = text[a:b].strip()
            if not piece:
                continue
            a += len(text[a:b]) - len(text[a:b].lstrip())
            chunks.append(
                Chunk(
                    source=document.source,
                    ref=document.ref,
                    start_line=document.first_line - 1 + index.line_of(a),
                    end_line=document.first_line - 1 + index.line_of(a + len(piece) - 1),
                    text=piece.replace("\r\n", "\n"),
                    language=fmt,
                    kind=kind,
                    context=" > ".join(section.path),
                    title=document.title,
                )
            )
    return chunks


__all__ = ["SENTENCE_END", "LineIndex", "Section", "chunk_prose", "pack", "split_sections"]
