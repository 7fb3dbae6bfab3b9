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
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

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
# Values that are not secrets: templates and variables, placeholders, and names of things.
_TEMPLATE = re.compile(r"[${}<>%*]|\.\.\.")
_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|changeme|change_me|your[_-]|xxxx|dummy|sample|redacted|^(?:password|secret|token|pass|none|null|undefined|true|false)$"
)
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


def _own_spans(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    """The secrets agentty-rag's own detectors find: (start, end, kind)."""
    for kind, markers, pattern in _OWN:
        if not any(marker in lowered for marker in markers):
            continue
        for match in pattern.finditer(text):
            value = match.group("value")
            if kind == "GitHub Token" or _is_secret_value(value):
                yield (*match.span("value"), kind)


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


def redact(text: str) -> Redacted:
    """Replace every secret the detectors recognise, keeping the line breaks inside it."""
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
    spans.extend(_own_spans(text, lowered))
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


__all__ = ["Redacted", "redact"]
