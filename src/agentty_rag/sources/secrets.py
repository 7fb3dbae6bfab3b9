"""Secrets in indexed text are replaced before anything is stored, embedded or returned.

The formats come from detect-secrets' high-confidence detectors (AWS, GitHub, GitLab, Slack, private keys,
JSON Web Tokens, Stripe, OpenAI, PyPI, SendGrid, npm); the entropy and keyword detectors are left out, they
flag too much ordinary code. A secret becomes ``[redacted Private Key]`` with its line breaks kept, so every
line number stays right. A detector runs only on text holding one of its literal markers, which keeps the
cost at a few milliseconds per MiB of ordinary source.
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
    """Where a detector's secrets sit in ``text``: the captured secret when its pattern has a group."""
    for pattern in detector.denylist:
        for match in pattern.finditer(text):
            group = next((i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)), 0)
            yield match.span(group)


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
