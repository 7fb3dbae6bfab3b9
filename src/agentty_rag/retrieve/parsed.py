"""A query read once. ``parse_query`` tokenizes it in one pass and reads what it says (the names it asks for,
its identifiers and quoted phrases, whether it asks about tests or a change, how identifier-like it is) at the top of a
search; every step below reads the ``ParsedQuery`` it is handed, never the text again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from agentty_rag.index.lexical.tokenize import STOPWORDS_EN, Tokenizer
from agentty_rag.retrieve.query import (
    LONG_QUERY_TERMS,
    OPENING_WORDS,
    asked_names,
    asks_about_changes,
    asks_for_examples,
    asks_for_tests,
    compound_candidates,
    lexical_lean,
    opening_words,
    query_identifiers,
    query_phrases,
    question_words,
)


@dataclass(frozen=True)
class ParsedQuery:
    """A query as a search reads it (``parse_query``); what only some searches need is read when first asked for.

    Args:
        text: the query as given: what is embedded, and what a generation stage's prompt quotes.
        terms: its index terms in order, with repeats.
        opening: the terms of its first ``OPENING_WORDS`` words, where a long query says what it is about.
        names: the definition names it asks for or mentions (``query.asked_names``).
        bare_name: it is nothing but a name (``Session``, ``Rails::Engine``).
        identifiers: identifier-like words and anything in backticks, lower case (``query.query_identifiers``).
        phrases: the phrases it quotes, lower case.
        wants_tests: its opening words ask about tests.
        wants_examples: its opening words ask about examples, samples, demos or benchmarks.
        wants_changes: it asks about a change or a version (``query.asks_about_changes``).
    """

    text: str
    terms: tuple[str, ...]
    opening: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    bare_name: bool = False
    identifiers: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    wants_tests: bool = False
    wants_examples: bool = False
    wants_changes: bool = False

    @functools.cached_property
    def term_set(self) -> frozenset[str]:
        """Its distinct terms."""
        return frozenset(self.terms)

    @functools.cached_property
    def distinct(self) -> tuple[str, ...]:
        """Its distinct terms, in query order."""
        return tuple(dict.fromkeys(self.terms))

    @property
    def long(self) -> bool:
        """More than ``LONG_QUERY_TERMS`` distinct terms: an issue, a pasted log."""
        return len(self.term_set) > LONG_QUERY_TERMS

    @functools.cached_property
    def lean(self) -> float:
        """How identifier-like it is, in [0, 1] (``query.lexical_lean``): how the fusion weighs the legs."""
        return lexical_lean(self.text)

    @functools.cached_property
    def compounds(self) -> tuple[str, ...]:
        """Identifiers it may spell out in words (``query.compound_candidates``); the index keeps those it holds."""
        return tuple(compound_candidates(self.text, STOPWORDS_EN))

    @functools.cached_property
    def words(self) -> tuple[str, ...]:
        """The prose words a file may be named with, its names' words left out (``query.question_words``)."""
        return question_words(self.text, STOPWORDS_EN, self.names)


def parse_query(text: str, tokenizer: Tokenizer) -> ParsedQuery:
    """Read ``text`` once: its terms, by the index's ``tokenizer`` in one pass, and what it says."""
    by_word = tokenizer.tokenize_words(text)
    opening = opening_words(text)
    names, bare = asked_names(text)
    return ParsedQuery(
        text,
        terms=tuple(term for word in by_word for term in word),
        opening=tuple(term for word in by_word[:OPENING_WORDS] for term in word),
        names=names,
        bare_name=bare,
        identifiers=query_identifiers(text),
        phrases=query_phrases(text),
        wants_tests=asks_for_tests(opening),
        wants_examples=asks_for_examples(opening),
        wants_changes=asks_about_changes(text),
    )


__all__ = ["ParsedQuery", "parse_query"]
