"""Which resources are text, and how their text is cut."""

from __future__ import annotations

import pytest

from agentty_rag.mcp_resources.model import is_text_type, text_format


@pytest.mark.parametrize(
    ("mime", "text"),
    [
        ("text/markdown", True),
        ("text/plain; charset=utf-8", True),
        ("application/json", True),
        ("application/vnd.api+json", True),
        ("application/x-yaml", True),
        ("image/png", False),
        ("application/octet-stream", False),
        ("application/pdf", False),
        (None, None),
        ("", None),
    ],
)
def test_text_types(mime: str | None, text: bool | None) -> None:
    assert is_text_type(mime) is text


@pytest.mark.parametrize(
    ("mime", "uri", "fmt"),
    [
        ("text/markdown", "wiki://Team/Runbook", "markdown"),
        ("application/json", "db://schema/orders", "config"),
        ("application/ld+json", "x://y", "config"),
        ("text/x-rst", "x://guide", "rst"),
        (None, "file:///design/auth.md", "markdown"),
        ("text/plain", "file:///notes/plan.adoc", "asciidoc"),
        ("text/plain", "wiki://Team/Runbook", "text"),
        (None, "tickets://PRJ-12", "text"),
    ],
)
def test_text_formats_come_from_the_mime_type_else_the_uri(mime: str | None, uri: str, fmt: str) -> None:
    assert text_format(mime, uri) == fmt
