"""Tokenization for engineers' text: words stemmed, identifiers kept whole *and* split.

``getUserToken`` gives ``getusertoken`` (the whole identifier, unstemmed, so an exact name ranks first) and
``get``, ``user``, ``token`` (its parts, stemmed, so prose about "user tokens" finds it). ``snake_case``,
``kebab-case``, dotted names (``auth.token_ttl``), paths (``src/auth/token.py``), ``Rust::paths`` and error
codes (``SHP-4031``) are handled the same way. Plain words are lowercased, stop words dropped, and stemmed
with the Snowball English stemmer.

For source code, a language's keywords are dropped where they stand alone: ``def``, ``return`` or ``public``
say nothing about what a function does (``has_delete_permission`` keeps its ``delete``).

The same function tokenizes documents and queries, so both sides always agree. ``TOKENIZER_VERSION`` changes
whenever the output for some input changes: a persisted index built with another version is rebuilt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain

import Stemmer

TOKENIZER_VERSION = "4"

# A compound: word characters joined by ".", "-", "/" or "::" (no spaces).
_COMPOUND = re.compile(r"\w+(?:(?:::|[./\-])\w+)*")
_SEGMENT_SPLIT = re.compile(r"::|[./\-]")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# English stop words: the bm25s list (the same one its "en" option uses) plus a few function words.
STOPWORDS_EN = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with i me my we our you your he she him her its them what which who whom do does did
    can could should would may might must shall has have had been being am were so than too very just also
    how when where why here all any both each few more most other some only own same s t don now""".split()
)

_MIN_LENGTH = 2
# Distinct compounds remembered (per set of keywords) before the memory is cleared.
_MEMO_SIZE = 500_000


class _Memo(dict[str, tuple[str, ...]]):
    """Each compound's terms where it stands in a text (none for a standalone keyword), worked out on first
    use: a text's terms are then one dictionary lookup per compound."""

    def __init__(self, tokenizer: Tokenizer, keywords: frozenset[str]) -> None:
        super().__init__()
        self._tokenizer = tokenizer
        self._keywords = keywords

    def __missing__(self, compound: str) -> tuple[str, ...]:
        keywords = self._keywords
        terms = () if keywords and compound.lower() in keywords else self._tokenizer.compound_terms(compound)
        if len(self) > _MEMO_SIZE:
            self.clear()
        self[compound] = terms
        return terms


class Tokenizer:
    """Tokenizes text; memoizes the terms of each distinct compound."""

    def __init__(self, extra_stopwords: Iterable[str] = ()) -> None:
        self.stopwords = STOPWORDS_EN | frozenset(extra_stopwords)
        self._stemmer = Stemmer.Stemmer("english")
        self._cache: dict[str, tuple[str, ...]] = {}
        self._memos: dict[frozenset[str], _Memo] = {}

    def _stem(self, word: str) -> str:
        return str(self._stemmer.stemWord(word))

    def compound_terms(self, compound: str) -> tuple[str, ...]:
        """Terms of one compound token (memoized)."""
        cached = self._cache.get(compound)
        if cached is not None:
            return cached
        terms: list[str] = []
        lowered = compound.lower()
        segments = [s for s in _SEGMENT_SPLIT.split(compound) if s]
        # camelCase splitting is ASCII-only: for other scripts, case does not mark word boundaries reliably.
        if compound.isascii():
            parts = [p for s in segments for chunk in s.split("_") if chunk for p in _PART.findall(chunk)]
        else:
            parts = [chunk for s in segments for chunk in s.split("_") if chunk]
        if len(parts) > 1:
            # An identifier or a path: the whole thing, each structured segment whole, and the parts.
            if len(lowered) >= _MIN_LENGTH:
                terms.append(lowered)
            if len(segments) > 1:
                for segment in segments:
                    seg = segment.lower().strip("_")
                    if seg != lowered and len(_PART.findall(segment)) > 1 and len(seg) >= _MIN_LENGTH:
                        terms.append(seg)
        for part in parts:
            low = part.lower()
            if len(low) < _MIN_LENGTH or low in self.stopwords:
                continue
            terms.append(low if low.isdigit() else self._stem(low))
        result = tuple(terms)
        if len(self._cache) > _MEMO_SIZE:
            self._cache.clear()
        self._cache[compound] = result
        return result

    def tokenize(self, text: str, keywords: frozenset[str] = frozenset()) -> list[str]:
        """All terms of ``text`` in order (with repeats).

        Args:
            text: what to tokenize.
            keywords: a language's reserved words, dropped where they stand alone (never inside an identifier).
        """
        return self._terms(text, keywords)

    def tokenize_words(self, text: str) -> list[tuple[str, ...]]:
        """The terms of each whitespace-separated word of ``text``, in order: ``tokenize(text)`` is all of them in
        a row (a compound never spans whitespace). A query is read this way once, so that the terms of its
        opening words come from the same pass."""
        return [tuple(self._terms(word)) for word in text.split()]

    def _terms(self, text: str, keywords: frozenset[str] = frozenset()) -> list[str]:
        memo = self._memos.get(keywords)
        if memo is None:
            memo = self._memos[keywords] = _Memo(self, keywords)
        return list(chain.from_iterable(map(memo.__getitem__, _COMPOUND.findall(text))))


def path_words(path: str) -> str:
    """A file path as words for the path field: folders and the file name without its extension."""
    stem, dot, ext = path.rpartition(".")
    base = stem if dot and "/" not in ext else path
    return base.replace("/", " ").replace("\\", " ")


__all__ = ["STOPWORDS_EN", "TOKENIZER_VERSION", "Tokenizer", "path_words"]
