"""Explainable features of a (query, passage) pair, for the reranker. Small pure functions over plain data.

Every feature is in [0, 1]. Term shares are weighted by inverse document frequency, so a rare query word
(``savepoint``) counts for more than a common one (``return``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentty_rag.types import DEFINITION_KINDS, Chunk

_TEST_DIR = re.compile(r"(^|/)(tests?|__tests__|testing|spec|specs|test_?utils|fixtures?|testdata|__mocks__)/", re.I)
_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]+|[^/]+_test\.\w+|[^/]+\.(test|spec)\.\w+|[^/]+_spec\.\w+|Test[A-Z][^/]*|[^/]+Tests?\.\w+"
    r"|conftest\.py)$"
)
_LOW_VALUE_DIR = re.compile(r"(^|/)(examples?|samples?|demos?|benchmarks?|bench|docs?|scripts/dev|compat)/", re.I)
_LINK = re.compile(r"\]\(|<a\s|:(ref|doc):`|https?://")
# A changelog or release notes, by its file's name (CHANGELOG.md, CHANGES.rst, HISTORY.md, NEWS,
# RELEASE-NOTES-3.2.txt, release_notes.md, whatsnew.rst) or by the folder that keeps them (releases/,
# changelog/, changelog.d/, release-notes/, whatsnew/, newsfragments/). A guide to upgrading or migrating is
# read to do something, as the guide is: never one.
_CHANGELOG_NAME = re.compile(
    r"^(change[-_ ]?logs?|changes|history|news|release[-_ ]?notes?|releases|whats[-_ ]?new)([-_. ].*)?$", re.I
)
_CHANGELOG_DIR = re.compile(
    r"(^|/)(releases|release[-_]?notes|change[-_]?logs?|changelog\.d|changes|whats[-_]?new|newsfragments)/", re.I
)
_UPGRADE_GUIDE = re.compile(r"upgrad|migrat|porting", re.I)


@dataclass(frozen=True)
class QueryProfile:
    """What the reranker knows about a query: what ``parsed.ParsedQuery`` read of it, and its terms' IDF.

    Args:
        terms: its distinct index terms, in query order.
        idf: each term's inverse document frequency in the corpus.
        identifiers: identifier-like words (``get_model``, ``SHP-4031``, anything in backticks), lower case.
        phrases: quoted phrases, lower case.
        wants_tests: the query asks about tests, so test files are not demoted.
        wants_examples: the query asks about examples, samples, demos or benchmarks, so those are not demoted.
        bare_name: the query is nothing but a name (``Session``, ``Rails::Engine``).
        wants_changes: the query asks about a change or a version, so changelogs are not demoted.
        dense_share: the dense leg's share of the fusion's weight for this search (0: lexical alone).
        lexical_evidence: how much the features that count the query's words weigh (1; less where the
            dense leg leads on this corpus).
    """

    text: str
    terms: tuple[str, ...]
    idf: Mapping[str, float]
    identifiers: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    wants_tests: bool = False
    wants_examples: bool = False
    bare_name: bool = False
    dense_share: float = 0.0
    lexical_evidence: float = 1.0
    wants_changes: bool = False

    @functools.cached_property
    def idf_total(self) -> float:
        """The IDF of all its terms (the denominator of every share)."""
        return sum(self.idf.get(t, 0.0) for t in self.terms)


@dataclass(frozen=True)
class Candidate:
    """A passage as the reranker sees it: its fused score, and the terms of its text, name and context."""

    chunk: Chunk
    score: float
    terms: frozenset[str]
    name_terms: frozenset[str]
    context_terms: frozenset[str]
    term_ids: frozenset[int] = frozenset()  # every term of the passage, for similarity between passages
    key: str = ""  # the chunk's id, worked out once (ties in every order are broken by it)
    # Code with file ranking: its file's evidence, relative to the best file's (0 to 1) ...
    file_score: float = 0.0  # BM25 of the file as one document
    file_sum: float = 0.0  # the sum of the file's best chunk scores
    # ... and how it answers the names the query asks for (see ``query.definition_match``, ``named_file``), and
    # whether the file is named with the question's words (``query.named_with``).
    defines_asked: float = 0.0
    named_file: float = 0.0
    named_with: float = 0.0
    # The dense leg's evidence, on the query's own scale (``fusion.relative_similarities``): the passage's
    # similarity, its file's best, and its file's sum over the best chunks relative to the best file's.
    dense: float = 0.0
    file_dense: float = 0.0
    file_dense_sum: float = 0.0


def key_of(candidate: Candidate) -> str:
    """The candidate's chunk id (remembered when it was built)."""
    return candidate.key or candidate.chunk.chunk_id


def weighted_share(found: Iterable[str], profile: QueryProfile) -> float:
    """IDF-weighted share of the query's terms that are in ``found``."""
    total = profile.idf_total
    if total <= 0:
        return 0.0
    present = found if isinstance(found, (set, frozenset)) else set(found)
    return sum(profile.idf.get(t, 0.0) for t in profile.terms if t in present) / total


def coverage(candidate: Candidate, profile: QueryProfile) -> float:
    """How much of the query the passage holds anywhere."""
    return weighted_share(candidate.terms, profile)


def name_match(candidate: Candidate, profile: QueryProfile) -> float:
    """How much of the query the passage's own name holds (function name, deepest heading, skill name)."""
    return weighted_share(candidate.name_terms, profile)


def context_match(candidate: Candidate, profile: QueryProfile) -> float:
    """How much of the query its context holds: enclosing symbols or headings, and the file path."""
    return weighted_share(candidate.context_terms, profile)


def phrase_match(candidate: Candidate, profile: QueryProfile) -> float:
    """1 when a quoted phrase of the query appears verbatim."""
    if not profile.phrases:
        return 0.0
    text = candidate.chunk.text.lower()
    return 1.0 if any(p in text for p in profile.phrases) else 0.0


def identifier_match(candidate: Candidate, profile: QueryProfile) -> float:
    """Share of the query's identifiers that appear verbatim in the passage or its symbol path."""
    if not profile.identifiers:
        return 0.0
    haystack = f"{candidate.chunk.text}\n{candidate.chunk.symbol}\n{candidate.chunk.context}".lower()
    return sum(1 for ident in profile.identifiers if ident in haystack) / len(profile.identifiers)


def own_name(chunk: Chunk) -> str:
    """The name a passage is about: the last part of a symbol path, the deepest heading, a skill or fact id."""
    return chunk.own_name


def defines_identifier(candidate: Candidate, profile: QueryProfile) -> float:
    """1 when the passage defines (is named after) an identifier the query names: the definition, not a use."""
    name = own_name(candidate.chunk).lower()
    return 1.0 if name and any(ident == name or ident.endswith("." + name) for ident in profile.identifiers) else 0.0


def defines_bare_name(candidate: Candidate, profile: QueryProfile) -> float:
    """For a query that is nothing but a name, how well the passage defines it: the definition leads its file
    (``class Session`` before the ``session()`` helper in ``sessions.py``)."""
    return candidate.defines_asked if profile.bare_name else 0.0


def is_definition(chunk: Chunk) -> float:
    return 1.0 if chunk.spec.code and chunk.kind in DEFINITION_KINDS else 0.0


@functools.lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    return _TEST_DIR.search(path) is not None or _TEST_FILE.search(path) is not None


@functools.lru_cache(maxsize=65536)
def _low_value(path: str) -> bool:
    return _LOW_VALUE_DIR.search(path) is not None


def test_file(chunk: Chunk, profile: QueryProfile) -> float:
    """1 for code in a test file, unless the query asks about tests."""
    return 1.0 if chunk.spec.code and not profile.wants_tests and is_test_path(chunk.ref) else 0.0


def low_value_path(chunk: Chunk) -> float:
    """1 for code under examples, samples, benchmarks, docs or compatibility shims."""
    return 1.0 if chunk.spec.code and _low_value(chunk.ref) else 0.0


def secondary_file(chunk: Chunk, profile: QueryProfile) -> bool:
    """Code a question rarely wants unless it says so: a test, fixture or mock (unless it asks about tests),
    or an example, sample, demo, benchmark, doc or compatibility shim (unless it asks about examples)."""
    if test_file(chunk, profile):
        return True
    return bool(low_value_path(chunk)) and not profile.wants_examples


def tiny(chunk: Chunk) -> float:
    """1 for a passage of one or two lines: rarely the answer, often a stray import or constant."""
    text, start, lines = chunk.text, 0, 0
    while start <= len(text):  # line by line, stopping at the third line that is not blank
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if text[start:end].strip():
            lines += 1
            if lines > 2:
                return 0.0
        start = end + 1
    return 1.0


@functools.lru_cache(maxsize=65536)
def is_changelog_path(path: str) -> bool:
    """A changelog or release notes, by its path: its file's name (``CHANGELOG.md``, ``RELEASE-NOTES-3.2.txt``)
    or a folder of them (``releases/``, ``changelog/``), unless the file is an upgrade or migration guide
    (``releases/upgrade-v2-to-v3.md``, ``UPGRADING.md``)."""
    name = path.rsplit("/", 1)[-1]
    if _UPGRADE_GUIDE.search(name):
        return False
    return _CHANGELOG_NAME.match(name) is not None or _CHANGELOG_DIR.search(path) is not None


def changelog_passage(chunk: Chunk, profile: QueryProfile) -> float:
    """1 for a passage of a changelog or release notes when the query does not ask about a change or a
    version: a changelog says every feature's name once a release, and answers how-to questions about none."""
    if chunk.spec.code or not chunk.spec.located or profile.wants_changes:
        return 0.0
    return 1.0 if is_changelog_path(chunk.ref) else 0.0


def link_heavy(chunk: Chunk) -> float:
    """Share of a docs passage's lines that are links: an index page mentions every word and answers none."""
    if chunk.spec.code:
        return 0.0
    lines = [line for line in chunk.text.split("\n") if line.strip()]
    if len(lines) < 3:
        return 0.0
    return sum(1 for line in lines if _LINK.search(line)) / len(lines)


__all__ = [
    "Candidate",
    "QueryProfile",
    "changelog_passage",
    "context_match",
    "coverage",
    "defines_bare_name",
    "defines_identifier",
    "identifier_match",
    "is_changelog_path",
    "is_definition",
    "is_test_path",
    "key_of",
    "link_heavy",
    "low_value_path",
    "name_match",
    "own_name",
    "phrase_match",
    "secondary_file",
    "test_file",
    "tiny",
    "weighted_share",
]
