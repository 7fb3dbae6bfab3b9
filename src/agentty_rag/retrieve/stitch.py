"""Merge what belongs together, collapse what repeats.

* **Duplicates**: passages with the same text (whitespace and case aside) collapse into the best one.
* **Stitching**: passages of the same file whose line spans overlap, touch, or leave one line between them
  become one passage spanning both; it takes the better rank and score, its provenance covers both, and it
  carries both as its ``parts`` (each keeps its own symbol or heading path).
* **Near-duplicates**: a passage whose word shingles are 90 % contained in a better-ranked passage (the same
  paragraph in two docs, a copied function) is dropped, and its provenance is listed under ``also``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from agentty_rag.types import Chunk, Hit

_WORDS = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")
# A passage is a near-duplicate when this share of its shingles appears in a better passage.
NEAR_DUPLICATE_CONTAINMENT = 0.9
_SHINGLE = 4
_MAX_GAP_LINES = 1


@functools.lru_cache(maxsize=16384)
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
            out[index] = replace(first, also=(*first.also, hit.chunk.provenance))
    return out


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


def stitch(a: Hit, b: Hit) -> Hit:
    """One passage spanning two neighbouring hits: their lines and text joined, the better score, every part
    and duplicate of both (the earlier-starting hit's first)."""
    first, second = (
        (a, b) if (a.chunk.start_line, a.chunk.end_line) <= (b.chunk.start_line, b.chunk.end_line) else (b, a)
    )
    chunk = replace(
        first.chunk,
        start_line=min(a.chunk.start_line, b.chunk.start_line),
        end_line=max(a.chunk.end_line, b.chunk.end_line),
        text=_merge_text(first.chunk, second.chunk),
    )
    also = tuple(dict.fromkeys((*a.also, *b.also)))
    return Hit(chunk, max(a.score, b.score), also, (*first.pieces, *second.pieces))


def _neighbours(a: Chunk, b: Chunk) -> bool:
    """Same file of a kind that is stitched, and the spans overlap, touch, or leave at most one line between."""
    if (a.source, a.ref) != (b.source, b.ref) or not a.spec.stitched:
        return False  # e.g. the facts of one memory log are separate entries, not spans of one text
    return b.start_line <= a.end_line + 1 + _MAX_GAP_LINES and a.start_line <= b.end_line + 1 + _MAX_GAP_LINES


def opens_members(header: Chunk, following: Chunk) -> bool:
    """Whether ``header`` is the head of a definition split into its members (a class's line, docstring and
    fields) and ``following`` its first member, right after it in the same file: the head alone answers
    little (``class ProgressBar(Generic[V]):``), so it is shown with its body's start."""
    return (
        header.spec.code
        and bool(header.symbol)
        and (header.source, header.ref) == (following.source, following.ref)
        and following.symbol.startswith(header.symbol + ".")
        and header.end_line < following.start_line <= header.end_line + 1 + _MAX_GAP_LINES
    )


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
                    out[near] = stitch(out[near], hit)
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
                out[owner] = replace(kept, also=tuple(dict.fromkeys((*kept.also, hit.chunk.provenance))))
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


__all__ = ["NEAR_DUPLICATE_CONTAINMENT", "assemble", "deduplicate", "opens_members", "stitch"]
