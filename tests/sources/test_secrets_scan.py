"""The own detectors' narrowed scans find exactly what their patterns' full scans find: the "Secret Keyword"
pattern tried only before a secret-sounding word, the "Basic Auth Credentials" one only before a ``://``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.sources import secrets

KEYWORD = next(pattern for kind, _, pattern in secrets._OWN if kind == "Secret Keyword")
URL = next(pattern for kind, _, pattern in secrets._OWN if kind == "Basic Auth Credentials")

# Pieces that make matches, near misses and the characters that ignoring case matches beyond ASCII
# (the Kelvin sign, the long s, the dotted capital I).
KEYWORD_PIECES = st.sampled_from(
    ["password", "PassWd", "pwd", "secret", "secretoken", "TOKEN", "api_key", "api-key", "apikey", "access_key",
     "private-key", "credential", "_", ".", "-", "x", "K", "\u212a", "\u017fecret", "\u0130", "=", " = ", ":",
     "=>", ":=", "==", '"', "'", "`", "r'", " ", "\n", "abcdefgh1234", "a1b2c3d4e5", "\\", "$"]
)  # fmt: skip
URL_PIECES = st.sampled_from(
    ["://", "http", "postgres", "a", "Z9", "+", ".", "-", ":", "/", "@", "user", "pass", "host", " ", "\n", "'",
     "[", "x" * 19, "é"]
)  # fmt: skip


NAME = st.text(alphabet="aZ09_.-K\u212a", max_size=6)
ASSIGNMENT = st.tuples(
    NAME,
    KEYWORD_PIECES,
    NAME,
    st.sampled_from(["", '"', "'"]),
    st.sampled_from(["=", " = ", ":", "=>", ":=", "==", "\n=\n"]),
    st.sampled_from(["", "r", "b"]),
    st.sampled_from(['"', "'", "`"]),
    st.sampled_from(["abcdefgh1234", "short", "a1 b2c3d4e5f6", "Qw7Er9Ty2Ui4Op6As8"]),
    st.sampled_from(['"', "'", "`", ""]),
).map("".join)


def _spans(matches: object) -> list[tuple[int, int]]:
    return [match.span() for match in matches]  # type: ignore[attr-defined]


@settings(max_examples=600, deadline=None)
@given(st.lists(KEYWORD_PIECES, max_size=14).map("".join))
def test_the_keyword_scan_finds_what_the_whole_pattern_finds(text: str) -> None:
    assert _spans(secrets._keyword_matches(KEYWORD, text, text.lower())) == _spans(KEYWORD.finditer(text))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(ASSIGNMENT, KEYWORD_PIECES), max_size=5).map(" ".join))
def test_the_keyword_scan_finds_the_whole_pattern_s_assignments(text: str) -> None:
    assert _spans(secrets._keyword_matches(KEYWORD, text, text.lower())) == _spans(KEYWORD.finditer(text))


@settings(max_examples=600, deadline=None)
@given(st.lists(URL_PIECES, max_size=16).map("".join))
def test_the_url_scan_finds_what_the_whole_pattern_finds(text: str) -> None:
    assert _spans(secrets._url_matches(URL, text)) == _spans(URL.finditer(text))


def test_the_scans_find_every_secret_of_a_long_text() -> None:
    line = 'db = "postgres://admin:Pg-Adm1n-S3cret@db.internal/app"\nAPP.db_password = "Qw7Er9Ty2Ui4Op6As8"\n'
    text = ("x = compute(token_count)\n" * 50 + line) * 20
    keyword = _spans(secrets._keyword_matches(KEYWORD, text, text.lower()))
    url = _spans(secrets._url_matches(URL, text))
    assert len(keyword) == 20 and keyword == _spans(KEYWORD.finditer(text))
    assert len(url) == 20 and url == _spans(URL.finditer(text))
    assert {text[start:end] for start, end in keyword} == {'APP.db_password = "Qw7Er9Ty2Ui4Op6As8"'}
    assert re.search("Pg-Adm1n-S3cret|Qw7Er9Ty2Ui4Op6As8", secrets.redact(text).text) is None
