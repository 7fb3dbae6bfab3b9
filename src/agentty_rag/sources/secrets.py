"""Secrets in indexed text are replaced before anything is stored, embedded or returned.

The formats come from detect-secrets' high-confidence detectors (AWS, GitHub, GitLab, Slack, private keys,
JSON Web Tokens, Stripe, OpenAI, PyPI, SendGrid, npm), each secret replaced whole (a pattern that captures
only a token's prefix is taken to its end), plus three of agentty-rag's own, narrower than detect-secrets'
keyword, basic-auth and entropy detectors, whose false positives on real code were measured:

* GitHub's fine-grained tokens (``github_pat_…``), which detect-secrets does not know;
* a quoted value of 8 characters or more assigned to a name that says it is secret (``password``,
  ``secret``, ``token``, ``api_key``, ``access_key``, ``private_key``, ``passphrase``, ``credential``),
  unless it reads as a placeholder, a template, a name or a path rather than a value;
* the password of a URL's credentials (``postgres://admin:PASSWORD@host``), unless a placeholder.

A free-standing high-entropy string is not redacted: on real code it flags hashes, test vectors and
identifiers far more often than secrets. A secret becomes ``[redacted Private Key]`` with its line breaks
kept, so every line number stays right. A detector runs only on text holding one of its literal markers,
which keeps the cost at a few milliseconds per MiB of ordinary source.

Tutorials keep their examples. The formats with a known shape (every detect-secrets detector above, and
``github_pat_…``) are redacted in every kind, in any context. The two keyword-only detectors
(``KEYWORD_ONLY``: a secret-sounding name with a quoted value, a URL's password) are where a tutorial's
``SECRET_KEY = "09d25e…"`` or ``"hashed_password": "fakehashedsecret2"`` would be lost, so in prose (every
kind but code) one of their matches is kept when

* its value is an obvious example: under 24 characters and holding ``fake``, ``test``, ``demo``, ``mock``,
  ``sample``, ``example``, ``dummy``, ``secret``, ``passw``, ``xxx``, ``changeme``, ``your-`` / ``your_``
  or ``placeholder``; or
* it is a secret-sounding name's value (not a URL's password) inside a closed fenced block of a Markdown
  document someone wrote for readers (a docs file, a skill), whose info string names a programming language
  (`` ```python ``): an example program. A block of shell, environment, configuration or plain text (or with
  no language) is where real secrets get pasted, so it keeps nothing; nor does a fence that never closes,
  a memory fact (an agent may have noted a value it saw) or another server's resource.

Source code is unchanged: every match is redacted there, examples included.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentty_rag.source_kinds import source_spec

# Lower-case substrings without which a detector cannot match (checked before its regular expressions run).
_MARKERS: dict[str, tuple[str, ...]] = {
    "aws.AWSKeyDetector": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "github_token.GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab_token.GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-")
    + ("glimt-", "glptt-", "glagent-", "gloas-"),
    "slack.SlackDetector": ("xox", "hooks.slack.com"),
    "private_key.PrivateKeyDetector": ("private key", "putty-user-key-file"),
    "jwt.JwtTokenDetector": ("eyj",),
    "stripe.StripeDetector": ("k_live_",),
    "openai.OpenAIDetector": ("t3blbkfj",),
    "pypi_token.PypiTokenDetector": ("pypi-ag",),
    "sendgrid.SendGridDetector": ("sg.",),
    "npm.NpmDetector": ("_authtoken",),
}
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")
# A capture group shorter than this is a prefix (``ghp``), not the secret: the whole match is.
_MIN_SECRET_CHARS = 12

# agentty-rag's own detectors: (kind, markers, pattern whose group "value" is the secret).
_SECRET_WORDS = (
    r"passw(?:or)?d|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential"
)
_SECRET_NAME = rf"[A-Za-z0-9_.-]*(?:{_SECRET_WORDS})[A-Za-z0-9_.-]*"
_OWN: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("GitHub Token", ("github_pat_",), re.compile(r"(?P<value>\bgithub_pat_[A-Za-z0-9_]{22,255})")),
    (
        "Secret Keyword",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        re.compile(
            rf"(?i)(?<![A-Za-z0-9]){_SECRET_NAME}[\"']?\s*(?::=|=>|=(?!=)|:)\s*[rbu]?(?P<quote>[\"'`])"
            r"(?P<value>[^\"'`\s\\]{8,256})(?P=quote)"
        ),
    ),
    (
        "Basic Auth Credentials",
        ("://",),
        re.compile(
            r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@'\"<>`]{1,128}:(?P<value>[^\s/@'\"<>`]{1,256})@[A-Za-z0-9\[]"
        ),
    ),
)
# Where a "Secret Keyword" match can hold its secret-sounding word, and the characters of a name before it.
_SECRET_WORD = re.compile(rf"(?i){_SECRET_WORDS}")
_SECRET_WORD_LOWER = re.compile(_SECRET_WORDS)  # in an ASCII text's lower case: the same words, ten times faster
_NAME_CHAR = re.compile(r"(?i)[A-Za-z0-9_.-]")
# The longest scheme the "Basic Auth Credentials" pattern takes (a letter, then 1 to 20 characters).
_SCHEME_CHARS = 21
# Values that are not secrets: templates and variables, placeholders, and names of things.
_TEMPLATE = re.compile(r"[${}<>%*]|\.\.\.")
_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|changeme|change_me|your[_-]|xxxx|dummy|sample|redacted|^(?:password|secret|token|pass|none|null|undefined|true|false)$"
)
# The detectors that judge by a name or a URL's shape alone, not by the secret's own format.
KEYWORD_ONLY = frozenset({"Secret Keyword", "Basic Auth Credentials"})
# What marks a short value in prose as an example (a tutorial's "fakehashedsecret", "test-password").
_EXAMPLE = re.compile(
    r"(?i)fake|test|demo|mock|sample|example|dummy|secret|passw|xxx|changeme|change_me|your[_-]|placeholder"
)
_EXAMPLE_CHARS = 24
# Kinds whose Markdown is written for readers: a keyword match in a fenced program there is an example.
_FENCED_EXAMPLE_KINDS = frozenset({"docs", "skill"})
# An opening or closing fence (CommonMark: three or more backticks or tildes, indented up to three spaces).
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.MULTILINE)
# Info strings that name a programming language (the first word, lower case, braces and a dot taken off).
_PROGRAM_LANGUAGES = frozenset(
    {
        "python", "py", "python3", "pycon", "javascript", "js", "jsx", "mjs", "typescript", "ts", "tsx",
        "go", "golang", "rust", "rs", "java", "kotlin", "kt", "scala", "groovy", "ruby", "rb", "php", "csharp",
        "cs", "c#", "fsharp", "c", "cpp", "c++", "objc", "swift", "dart", "elixir", "erlang", "haskell",
        "clojure", "lua", "perl", "r", "julia", "zig", "nim", "ocaml", "vue", "svelte",
    }
)  # fmt: skip
_NAME_LIKE = re.compile(r"[A-Za-z_.:/-]+")  # no digit: a constant, a dotted key, a header name, a path
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|---- END SSH2 ENCRYPTED PRIVATE KEY ----")
# A private key block is cut at its END line, or after this many characters when there is none.
_KEY_BLOCK_CHARS = 16384


@dataclass(frozen=True)
class Redacted:
    """Text with its secrets replaced, and how many of each kind were found."""

    text: str
    found: Counter[str]


@functools.cache
def _detectors() -> tuple[tuple[Any, tuple[str, ...]], ...]:
    """(detector, markers) pairs; detect-secrets is imported only when text is first checked."""
    import importlib

    loaded = []
    for path, markers in _MARKERS.items():
        module, name = path.split(".")
        loaded.append((getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)(), markers))
    return tuple(loaded)


def _spans(detector: Any, text: str) -> Iterator[tuple[int, int]]:
    """Where a detector's secrets sit in ``text``: the captured secret when its pattern captures it, the whole
    match when the group is only a prefix (GitHub's ``(ghp|gho|…)_`` captures three letters)."""
    for pattern in detector.denylist:
        for match in pattern.finditer(text):
            groups = [i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)]
            group = max(groups, key=lambda i: len(match.group(i)), default=0)
            yield match.span(group if group and len(match.group(group)) >= _MIN_SECRET_CHARS else 0)


def _own_spans(text: str, lowered: str, prose: _Prose | None) -> Iterator[tuple[int, int, str]]:
    """The secrets agentty-rag's own detectors find: (start, end, kind); in prose, without its examples."""
    for kind, markers, pattern in _OWN:
        if not any(marker in lowered for marker in markers):
            continue
        if kind == "Secret Keyword":
            matches = _keyword_matches(pattern, text, lowered)
        elif kind == "Basic Auth Credentials":
            matches = _url_matches(pattern, text)
        else:
            matches = pattern.finditer(text)
        for match in matches:
            value = match.group("value")
            if kind not in KEYWORD_ONLY:
                yield (*match.span("value"), kind)
            elif _is_secret_value(value) and not (prose is not None and prose.example(kind, match)):
                yield (*match.span("value"), kind)


def _keyword_matches(pattern: re.Pattern[str], text: str, lowered: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for the "Secret Keyword" pattern, tried only where a match can start.

    A match's name holds a secret-sounding word, with only name characters between the match's start and the
    word, so every match starts in the run of name characters just before a word that ``_SECRET_WORD`` finds
    (a word it skips overlaps one it found, and no start fits inside a word). Those starts are tried in
    order, each once, with ``pattern.match`` (whose look-behind sees the text before it): the same matches as
    the pattern's own scan, which tries every position of the text and costs seconds on a large tree. An
    ASCII text's words are found in its lower case (``lowered``: the same positions, and no character there
    that ignoring case would match otherwise).
    """
    words = _SECRET_WORD_LOWER.finditer(lowered) if text.isascii() else _SECRET_WORD.finditer(text)
    cursor = 0  # no match starts before it: the end of the last one
    for word in words:
        end = word.start()
        if end < cursor:
            continue
        start = end
        while start > cursor and _NAME_CHAR.match(text, start - 1):
            start -= 1
        match = _first_match(pattern, text, range(start, end + 1))
        if match is not None:
            yield match
            cursor = match.end()
        else:
            cursor = end + 1  # every start up to the word's was tried


def _url_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for the "Basic Auth Credentials" pattern, tried only where a match can
    start: 2 to ``_SCHEME_CHARS`` characters before a ``://`` (a scheme holds no colon, so the first one after
    the start), each start once, in order."""
    cursor = 0  # no match starts before it
    at = text.find("://")
    while at != -1:
        match = _first_match(pattern, text, range(max(cursor, at - _SCHEME_CHARS), at - 1))
        if match is not None:
            yield match
            cursor = match.end()
        else:
            cursor = max(cursor, at - 1)
        at = text.find("://", max(at + 3, cursor))


def _first_match(pattern: re.Pattern[str], text: str, positions: range) -> re.Match[str] | None:
    """The match of ``pattern`` at the first of ``positions`` where it matches (None when none does)."""
    for position in positions:
        match = pattern.match(text, position)
        if match is not None:
            return match
    return None


class _Prose:
    """What decides, in one prose document, whether a keyword-only match is a tutorial's example."""

    def __init__(self, text: str, fenced: bool) -> None:
        self._text = text
        self._fenced = fenced
        self._programs: list[tuple[int, int]] | None = None  # found at the first match that asks

    def example(self, kind: str, match: re.Match[str]) -> bool:
        value = match.group("value")
        if len(value) < _EXAMPLE_CHARS and _EXAMPLE.search(value):
            return True
        if kind != "Secret Keyword" or not self._fenced:
            return False
        if self._programs is None:
            self._programs = _fenced_programs(self._text)
        start, end = match.span()
        return any(first <= start and end <= last for first, last in self._programs)


def _fenced_programs(text: str) -> list[tuple[int, int]]:
    """The spans of the closed fenced blocks of a Markdown text whose info string names a programming
    language (a fence left open covers nothing: it would otherwise reach the end of the document)."""
    spans: list[tuple[int, int]] = []
    opening: re.Match[str] | None = None
    for fence in _FENCE.finditer(text):
        mark = fence.group("fence")
        if opening is None:
            if not (mark[0] == "`" and "`" in fence.group("info")):  # a backtick fence's info has no backtick
                opening = fence
            continue
        opened = opening.group("fence")
        if mark[0] == opened[0] and len(mark) >= len(opened) and not fence.group("info").strip():
            if _language(opening.group("info")) in _PROGRAM_LANGUAGES:
                spans.append((opening.end(), fence.start()))
            opening = None
    return spans


def _language(info: str) -> str:
    """The language an info string names: ``python`` for ``Python hl_lines="3"`` or ``{.python}``."""
    words = info.strip().lstrip("{").split()
    return words[0].lstrip(".").rstrip("}").lower() if words else ""


def _is_secret_value(value: str) -> bool:
    """Whether an assigned or URL value reads as a secret rather than a placeholder, a template or a name."""
    if _TEMPLATE.search(value) or _NAME_LIKE.fullmatch(value):
        return False
    if len(value) < _MIN_SECRET_CHARS * 2 and _PLACEHOLDER.search(value):  # "your-api-key", not AKIA…EXAMPLE…
        return False
    if len(set(value)) < 4:  # "aaaaaaaa", "12121212"
        return False
    return not value.isdigit()


def _whole_secret(detector: Any, text: str, start: int, end: int) -> tuple[int, int] | None:
    """The full extent of a match (a key block to its END line, a token to its last character), or None
    for a match the detector itself would not report."""
    kind = detector.secret_type
    if kind == "Private Key":
        line_start = text.rfind("\n", 0, start) + 1
        close = _KEY_END.search(text, end, end + _KEY_BLOCK_CHARS)
        return line_start, close.end() if close else min(len(text), end + _KEY_BLOCK_CHARS)
    if kind == "JSON Web Token":
        tail = _TOKEN_TAIL.match(text, end)
        end = tail.end() if tail else end
        return (start, end) if detector.is_formally_valid(text[start:end]) else None
    return start, end


def redact(text: str, kind: str = "code", fmt: str = "text") -> Redacted:
    """Replace every secret the detectors recognise, keeping the line breaks inside it.

    Args:
        text: the text to clear.
        kind: the source kind it comes from (``SOURCES``): in prose (every kind but code) a keyword-only
            match that is plainly an example is kept (see the module's text).
        fmt: the text's format (``markdown``: its fenced blocks are known).
    """
    prose = None if source_spec(kind).code else _Prose(text, kind in _FENCED_EXAMPLE_KINDS and fmt == "markdown")
    lowered = text.lower()
    found: Counter[str] = Counter()
    spans: list[tuple[int, int, str]] = []
    for detector, markers in _detectors():
        if not any(marker in lowered for marker in markers):
            continue
        for start, end in _spans(detector, text):
            whole = _whole_secret(detector, text, start, end)
            if whole is not None:
                spans.append((*whole, detector.secret_type))
    spans.extend(_own_spans(text, lowered, prose))
    if not spans:
        return Redacted(text, found)
    parts: list[str] = []
    cursor = 0
    for start, end, kind in sorted(spans):
        if end <= cursor:  # inside a secret already replaced
            continue
        start = max(start, cursor)
        parts.extend((text[cursor:start], f"[redacted {kind}]", "\n" * text.count("\n", start, end)))
        found[kind] += 1
        cursor = end
    parts.append(text[cursor:])
    return Redacted("".join(parts), found)


__all__ = ["KEYWORD_ONLY", "Redacted", "redact"]
