"""What a query says besides its words: how much each term counts, which names and identifiers it holds, how
identifier-like it is, and how those match a definition or a file name. Small pure functions over strings;
``retrieve.parsed`` applies them once per search.

A short question weighs each of its terms once. A long one — an issue with a traceback, code and prose —
repeats what it is about: a term's weight grows (with saturation) with how often the query uses it, and the
opening words, where an issue states its subject, count double.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

# A name a query may ask for: an identifier, possibly qualified (Rails::Engine, fmt.format_to, self->next).
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:::|->|\.|\\|#)[A-Za-z_$][\w$]*)*")
_QUALIFIER = re.compile(r"::|->|\.|\\|#")
# A camelCase hump (getModel, HTTPServer): the one test of it.
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
# A capitalised word (Request, Deferred, Mutex): in a question about code, often the name of a type.
_TYPE_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*")
# The words of a name or a question, camelCase split (getHTTPClient -> get, HTTP, Client; utf8 stays whole).
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Za-z][a-z0-9]*")
# An identifier the reranker looks for verbatim: anything in backticks, or a word joined by . :: -> - /.
_IDENTIFIER = re.compile(r"`([^`]+)`|([A-Za-z_$][\w$]*(?:(?:\.|::|->|-|/)[\w$]+)*)")
_TESTS_WANTED = re.compile(r"\b(tests?|testing|tested|specs?|pytest|unittest|fixtures?|mocks?|mocking)\b", re.I)
_EXAMPLES_WANTED = re.compile(r"\b(examples?|samples?|demos?|benchmarks?|benchmarking)\b", re.I)
# A question about a change or a version: what changed, since when, what was added, removed, renamed or
# deprecated, what breaks on an upgrade, what a release brought, how something used to work; or a version
# number (``2.0``, ``3.x``, ``v2``; not an address such as ``127.0.0.1``). "change" alone is not one: "how do
# I change the port" is a how-to.
_CHANGE_WORDS = re.compile(
    r"\b(changed|changelogs?|change\s?logs?|release\s?notes?|releases?|released|versions?|versioned|since"
    r"|deprecat\w*|removed|removal|added|introduced|breaking|upgrad\w*|migrat\w*|renamed|regressions?"
    r"|new\s+in|what'?s\s+new|what\s+is\s+new|whats\s+new|used\s+to|no\s+longer|any\s?more)\b",
    re.I,
)
_VERSION = re.compile(r"(?<![\w.])(v\d+(\.\d+)*|\d+\.(\d+|x)(\.\d+)?)(?![\w]|\.\w)", re.I)
# A query's words as the fusion weighs them (quoted strings whole), and a question's opening.
_LEAN_WORD = re.compile(r"`[^`]+`|\"[^\"]+\"|[\w$.:/\\-]+")
_QUESTION = re.compile(r"^(how|what|where|when|why|which|who|does|do|is|are|can|should)\b|\?\s*$", re.I)

# How fast a repeated query term stops gaining weight (Okapi's k3; weight = (k3 + 1) qtf / (k3 + qtf)).
QTF_SATURATION = 1.2
# A query of more than this many distinct terms is long: an issue, a log, a pasted file.
LONG_QUERY_TERMS = 30
# The opening words of a query, where it says what it is about (a long one mentions tests in passing).
OPENING_WORDS = 16


def term_weights(
    terms: Sequence[str], opening: Iterable[str] = (), opening_boost: float = 0.0, by_count: bool = True
) -> dict[str, float]:
    """Weight of each distinct query term: saturating in its count, raised for the terms of the opening.

    Args:
        terms: the query's terms in order, with repeats.
        opening: the terms of the query's opening words.
        opening_boost: how much more those count (0: no difference).
        by_count: weigh repeated terms more (else each distinct term weighs 1).
    """
    counts = Counter(terms)
    first = set(opening)
    weights: dict[str, float] = {}
    for term, count in counts.items():
        weight = (QTF_SATURATION + 1.0) * count / (QTF_SATURATION + count) if by_count else 1.0
        weights[term] = weight * (1.0 + opening_boost) if term in first else weight
    return weights


def opening_words(text: str, count: int = OPENING_WORDS) -> str:
    """The first ``count`` words of a text."""
    return " ".join(text.split()[:count])


def looks_like_identifier(word: str, codes: bool = True) -> bool:
    """``get_model``, ``getModel``, ``auth.token_ttl``, ``Rails::Engine``, ``io/ascii``: not a plain English word;
    with ``codes``, neither is an error code or a constant (``SHP-4031``, ``HTTP``)."""
    if len(word) < 3:
        return False
    if any(sep in word for sep in ("_", ".", "::", "->", "/")) or _CAMEL.search(word):
        return True
    if not codes:
        return False
    if "-" in word and any(ch.isdigit() for ch in word):
        return True
    return word.isupper() and any(ch.isalpha() for ch in word)


def asked_names(query: str) -> tuple[tuple[str, ...], bool]:
    """The definition names a query asks for, and whether the query is nothing but a name.

    A query of one identifier (``Command``, ``basic_format_args``, ``Rails::Engine``, ``formatter``) asks
    for that definition: the name is its last part, and the qualified form is kept too. In a longer query,
    identifier-shaped words (``getModel``, ``get_model``, qualified names) are names it mentions.
    """
    text = query.strip().strip("`'\"").removesuffix("()")
    if _NAME.fullmatch(text):
        last = _QUALIFIER.split(text)[-1]
        names = [last] if last == text else [last, text]
        return tuple(dict.fromkeys(names)), True
    found: list[str] = []
    for match in _NAME.finditer(query):
        word = match.group(0).rstrip(".")
        # A qualified name (``App\Http``, ``Foo#bar`` too), an identifier (not an error code or a constant:
        # ``HTTP`` is not asked for), or a capitalised type name.
        if not (_QUALIFIER.search(word) or looks_like_identifier(word, codes=False) or _TYPE_NAME.fullmatch(word)):
            continue
        last = _QUALIFIER.split(word)[-1]
        for name in (last, word):
            if len(name) >= 3 and name not in found:
                found.append(name)
    return tuple(found), False


def compound_candidates(query: str, stopwords: frozenset[str], longest: int = 3) -> list[str]:
    """Identifiers a question may be spelling out in words: adjacent words joined as one identifier
    (``event loop`` -> ``eventloop``, ``event_loop``, ``event-loop``), with the last word also singular
    (``type adapter factories`` -> ``typeadapterfactory``). Only candidates: the caller keeps those the
    index holds."""
    words = [w.lower() for w in _WORD.findall(query)]
    out: list[str] = []
    for size in range(2, longest + 1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if any(w in stopwords or len(w) < 2 for w in run):
                continue
            for last in dict.fromkeys((run[-1], *_singular(run[-1]))):
                parts = [*run[:-1], last]
                for joiner in ("", "_", "-"):
                    candidate = joiner.join(parts)
                    if candidate not in out:
                        out.append(candidate)
    return out


def _singular(word: str) -> tuple[str, ...]:
    if word.endswith("ies") and len(word) > 4:
        return (word[:-3] + "y",)
    if word.endswith("es") and len(word) > 4:
        return (word[:-2], word[:-1])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return (word[:-1],)
    return ()


def query_identifiers(text: str) -> tuple[str, ...]:
    """Identifier-like words (``get_model``, ``SHP-4031``) and anything in backticks, lower case, in order."""
    found: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        quoted, bare = match.groups()
        word = (quoted or bare or "").strip().strip(".,;:()")
        if word and (quoted or looks_like_identifier(word)) and word.lower() not in found:
            found.append(word.lower())
    return tuple(found)


def query_phrases(text: str) -> tuple[str, ...]:
    """Phrases the query quotes: "double quoted" (3+ characters) or 'single quoted' (6+, to skip apostrophes)."""
    found = []
    for double, single in re.findall(r"\"([^\"]{3,})\"|'([^']{6,})'", text):
        phrase = (double or single).strip().lower()
        if phrase:
            found.append(phrase)
    return tuple(found)


def asks_for_tests(opening: str) -> bool:
    """The query's opening words (``opening_words``) ask about tests."""
    return _TESTS_WANTED.search(opening) is not None


def asks_for_examples(opening: str) -> bool:
    """The query's opening words ask about examples, samples, demos or benchmarks."""
    return _EXAMPLES_WANTED.search(opening) is not None


def asks_about_changes(text: str) -> bool:
    """The query asks about a change or a version (``what changed in 2.0``, ``deprecated since``, ``used to``),
    so a changelog or release notes may answer it (``features.changelog_passage``)."""
    return _CHANGE_WORDS.search(text) is not None or _VERSION.search(text) is not None


def lexical_lean(query: str) -> float:
    """In [0, 1]: 1 for a query of identifiers, error codes or quoted strings; 0 for a plain question."""
    words = _LEAN_WORD.findall(query)
    if not words:
        return 0.0
    exact = sum(1 for w in words if w[0] in '`"' or looks_like_identifier(w.strip(".,;:?!()")))
    if exact == 0:
        return 0.0
    share = exact / len(words)
    if _QUESTION.search(query.strip()) and len(words) >= 5:
        share /= 2  # a question that names an identifier: both legs have something to say
    return min(1.0, share * 2)


def split_qualified(name: str) -> list[str]:
    """``Rails::Engine`` -> [Rails, Engine]; ``a.b->c`` -> [a, b, c]."""
    return [part for part in _QUALIFIER.split(name) if part]


def definition_match(symbol: str, names: Sequence[str]) -> float:
    """How well a definition (its symbol path, ``Rails.Engine``) matches the names a query asks for.

    1 when its own name is one of them with the same case and any qualifier the query gives agrees
    (``Rails::Engine`` and ``Rails.Engine``); 0.75 with the same case but another qualifier; 0.5 when only
    the case differs (``session`` for ``Session``); 0 otherwise.
    """
    if not symbol or not names:
        return 0.0
    own = symbol.rsplit(".", 1)[-1]
    best = 0.0
    for name in names:
        parts = [p for p in _QUALIFIER.split(name) if p]
        if not parts:
            continue
        if parts[-1] == own:
            qualified = ".".join(parts)
            agrees = len(parts) == 1 or symbol == qualified or symbol.endswith("." + qualified)
            best = max(best, 1.0 if agrees else 0.75)
        elif parts[-1].lower() == own.lower():
            best = max(best, 0.5)
    return best


def named_file(ref: str, names: Sequence[str]) -> float:
    """Whether the file is named after a name the query asks for: 1 for the same spelling (``Request.swift``
    for ``Request``), 0.5 when only case, ``_``/``-`` or a plural ``s`` differ (``sessions.py`` for
    ``Session``, ``engine.rb`` for ``Rails::Engine``), else 0."""
    stem = _file_stem(ref)
    if not stem:
        return 0.0
    loose = _loose(stem)
    best = 0.0
    for name in names:
        last = _QUALIFIER.split(name)[-1]
        if last == stem:
            return 1.0
        other = _loose(last)
        if other and (loose == other or loose.rstrip("s") == other or loose == other.rstrip("s")):
            best = 0.5
    return best


def question_words(query: str, stopwords: frozenset[str], names: Sequence[str] = ()) -> tuple[str, ...]:
    """The prose words a question may name a file with: lower case, three letters or more, no stop words, and
    camelCase split like a file name is. The words of the ``names`` it asks for are left out: a file named
    after a name has its own evidence (``named_file``)."""
    of_names = {w.lower() for name in names for w in _WORD.findall(name)}
    words = (w.lower() for w in _WORD.findall(query))
    return tuple(dict.fromkeys(w for w in words if len(w) > 2 and w not in stopwords and w not in of_names))


def named_with(ref: str, words: Sequence[str]) -> float:
    """1 when every word of the file name's stem is one of ``words``, as it is or as its singular or plural
    (``completions.go`` for "shell completion request handling", ``routes_reloader.rb`` for "application
    routes reloader"), else 0. A stem with a word of one or two letters (``fs-poll``) is not matched: the
    question's words have three letters or more."""
    if not words:
        return 0.0
    parts = [w.lower() for w in _WORD.findall(_file_stem(ref))]
    if not parts:
        return 0.0
    return 1.0 if all(any(_same_word(part, word) for word in words) for part in parts) else 0.0


def _file_stem(ref: str) -> str:
    """The file name without its extensions (``Builders.common.kt`` -> ``Builders``; a dotfile keeps its name)."""
    base = ref.rsplit("/", 1)[-1]
    return base.split(".", 1)[0] if not base.startswith(".") else base


def _same_word(a: str, b: str) -> bool:
    return a == b or a in _singular(b) or b in _singular(a)


def _loose(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


__all__ = [
    "LONG_QUERY_TERMS",
    "OPENING_WORDS",
    "QTF_SATURATION",
    "asked_names",
    "asks_about_changes",
    "asks_for_examples",
    "asks_for_tests",
    "compound_candidates",
    "definition_match",
    "lexical_lean",
    "looks_like_identifier",
    "named_file",
    "named_with",
    "opening_words",
    "query_identifiers",
    "query_phrases",
    "question_words",
    "split_qualified",
    "term_weights",
]
