"""Merge what belongs together, collapse what repeats.

* **Stitching**: passages of the same file whose line spans overlap, touch, or leave one line between them
  become one passage spanning both; it takes the better rank and score, and its provenance covers both.
* **Near-duplicates**: a passage whose word shingles are 90 % contained in a better-ranked passage (the same
  paragraph in two docs, a copied function) is dropped, and its provenance is listed under ``also``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from agentty_rag.types import Chunk, Hit

_WORDS = re.compile(r"\w+")
# A passage is a near-duplicate when this share of its shingles appears in a better passage.
NEAR_DUPLICATE_CONTAINMENT = 0.9
_SHINGLE = 4
_MAX_GAP_LINES = 1
# A stitched passage names every symbol (or heading path) it spans, joined by these.
SEPARATOR_SYMBOLS = ", "
SEPARATOR_CONTEXTS = " | "


def _merge_text(first: Chunk, second: Chunk) -> str:
    """Text of ``first`` followed by what ``second`` adds (``first`` starts no later than ``second``)."""
    if second.end_line <= first.end_line and second.text in first.text:
        return first.text
    gap = second.start_line - first.end_line - 1
    if gap >= 0:
        return first.text + "\n" * (gap + 1) + second.text
    # Overlapping: find where second's text picks up after first's (exact for overlapping prose windows).
    for size in range(min(len(first.text), len(second.text)), 0, -1):
        if second.text.startswith(first.text[-size:]):
            return first.text + second.text[size:]
    skip = first.end_line - second.start_line + 1
    rest = second.text.split("\n")[skip:]
    return "\n".join([first.text, *rest]) if rest else first.text


def merge_chunks(a: Chunk, b: Chunk) -> Chunk:
    first, second = (a, b) if (a.start_line, a.end_line) <= (b.start_line, b.end_line) else (b, a)
    symbols = [s for part in (first.symbol, second.symbol) for s in part.split(SEPARATOR_SYMBOLS) if s]
    contexts = [c for part in (first.context, second.context) for c in part.split(SEPARATOR_CONTEXTS) if c]
    kinds = [k for part in (first.kind, second.kind) for k in part.split("+")]
    return replace(
        first,
        start_line=min(a.start_line, b.start_line),
        end_line=max(a.end_line, b.end_line),
        text=_merge_text(first, second),
        symbol=SEPARATOR_SYMBOLS.join(dict.fromkeys(symbols)),
        # code keeps its enclosing signature; prose lists every heading path it now spans
        context=first.context if first.source == "code" else SEPARATOR_CONTEXTS.join(dict.fromkeys(contexts)),
        kind="+".join(dict.fromkeys(kinds)),
    )


def _neighbours(a: Chunk, b: Chunk) -> bool:
    """Same file, and the spans overlap, touch, or leave at most one line between them."""
    if (a.source, a.ref) != (b.source, b.ref) or a.source == "memory":
        return False  # facts of one memory log are separate entries, not spans of one text
    return b.start_line <= a.end_line + 1 + _MAX_GAP_LINES and a.start_line <= b.end_line + 1 + _MAX_GAP_LINES


def assemble(hits: list[Hit], k: int, stitching: bool = True, reach: int = 0) -> list[Hit]:
    """The final ``k`` passages: stitch neighbours among the hits that made the cut, then refill.

    Hits ranked within the first ``k`` are merged with their neighbours; when merging (or collapsing a
    near-duplicate) frees a slot, the next-ranked hit fills it, unless it only neighbours or repeats a
    passage already shown (it did not make the cut). The requested ``k`` is returned when that many distinct
    passages exist.
    """
    out: list[Hit] = []
    shingles: list[frozenset[tuple[str, ...]]] = []
    horizon = max(k, reach)
    for rank, hit in enumerate(hits):
        if len(out) >= k and rank >= horizon:
            break
        if stitching:
            near = next((i for i, kept in enumerate(out) if _neighbours(kept.chunk, hit.chunk)), None)
            if near is None and len(out) >= k:
                continue  # past the cut, only a neighbour of a shown passage is of use
            if near is not None:
                if rank < horizon:
                    kept = out[near]
                    also = tuple(dict.fromkeys((*kept.also, *hit.also)))
                    out[near] = Hit(merge_chunks(kept.chunk, hit.chunk), max(kept.score, hit.score), also)
                    shingles[near] = _shingles(out[near].chunk.text)
                continue
            own = _shingles(hit.chunk.text)
            owner = next(
                (
                    i
                    for i, other in enumerate(shingles)
                    if own and len(own & other) >= NEAR_DUPLICATE_CONTAINMENT * len(own)
                ),
                None,
            )
            if owner is not None:
                kept = out[owner]
                out[owner] = Hit(kept.chunk, kept.score, tuple(dict.fromkeys((*kept.also, hit.chunk.provenance))))
                continue
        else:
            own = frozenset()
        if len(out) < k:
            out.append(hit)
            shingles.append(own)
    return out


@functools.lru_cache(maxsize=16384)
def _shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    if len(words) < _SHINGLE:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(tuple(words[i : i + _SHINGLE]) for i in range(len(words) - _SHINGLE + 1))


__all__ = ["NEAR_DUPLICATE_CONTAINMENT", "SEPARATOR_CONTEXTS", "SEPARATOR_SYMBOLS", "assemble", "merge_chunks"]
