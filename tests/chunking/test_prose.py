from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.chunking import ChunkingConfig, chunk_document
from agentty_rag.chunking.prose import chunk_prose, split_sections
from agentty_rag.config import ChunkingSettings
from agentty_rag.sources.text import decode
from agentty_rag.types import Document


def _doc(text: str, fmt: str = "markdown", source: str = "docs") -> Document:
    return Document(source, "guide.md", text, language=fmt)  # type: ignore[arg-type]


NESTED = """\
---
title: front matter is not indexed
---
# Guide

Intro.

## Auth

About auth.

```bash
# this comment is not a heading
shipyard token refresh
```

### Tokens

Tokens expire after 24 hours.

#### Rotation

Rotate weekly.

## Deploys

Ship it.
"""


def test_nested_headings_give_heading_paths_and_exact_lines() -> None:
    chunks = chunk_prose(_doc(NESTED), 1200, 150)
    assert [(c.context, c.start_line, c.end_line) for c in chunks] == [
        ("Guide", 4, 6),
        ("Guide > Auth", 8, 15),
        ("Guide > Auth > Tokens", 17, 19),
        ("Guide > Auth > Tokens > Rotation", 21, 23),
        ("Guide > Deploys", 25, 27),
    ]
    lines = NESTED.split("\n")
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line]).strip()
    assert "# this comment is not a heading" in chunks[1].text


def test_crlf_and_missing_trailing_newline() -> None:
    text = "# One\r\n\r\nFirst.\r\n\r\n# Two\r\n\r\nSecond."
    chunks = chunk_prose(_doc(text), 1200, 150)
    assert [(c.context, c.start_line, c.end_line, c.text) for c in chunks] == [
        ("One", 1, 3, "# One\n\nFirst."),
        ("Two", 5, 7, "# Two\n\nSecond."),
    ]


def test_setext_headings_and_thematic_breaks() -> None:
    text = "Title\n=====\n\nBody.\n\nSub\n---\n\nMore.\n\nparagraph one\nparagraph two\n---\n"
    sections = split_sections(text, "markdown")
    assert [s.path for s in sections] == [("Title",), ("Title", "Sub")]


def test_rst_titles_take_levels_in_order_of_appearance() -> None:
    text = "=====\nGuide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun it.\n\nLinux\n~~~~~\n\nApt.\n\nUsage\n-------\n\nUse.\n"
    sections = split_sections(text, "rst")
    assert [s.path for s in sections] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Linux"),
        ("Guide", "Usage"),
    ]


def test_asciidoc_titles_outside_listing_blocks() -> None:
    text = "= Book\n\n== Chapter\n\nText.\n\n----\n== not a title inside a listing\n----\n\n=== Section\n\nMore.\n"
    assert [s.path for s in split_sections(text, "asciidoc")] == [
        ("Book",),
        ("Book", "Chapter"),
        ("Book", "Chapter", "Section"),
    ]


def test_a_two_megabyte_single_line_is_cut_into_bounded_windows_on_spaces() -> None:
    words = ("alpha beta gamma delta " * 100_000).strip()
    assert len(words) > 2_000_000
    chunks = chunk_prose(_doc(words, "text"), 1200, 150)
    assert all(len(c.text) <= 1800 for c in chunks)
    assert all(c.start_line == c.end_line == 1 for c in chunks)
    words_set = {"alpha", "beta", "gamma", "delta"}
    assert all(c.text.split()[0] in words_set and c.text.split()[-1] in words_set for c in chunks)


def test_non_utf8_bytes_are_refused_before_chunking() -> None:
    assert decode(b"# Title\n\ncaf\xe9 au lait\n").skip_reason == "undecodable"


def test_long_sections_pack_paragraphs_with_overlap_that_starts_on_a_word() -> None:
    paragraph = "The deploy controller waits for health checks before it shifts traffic. " * 6
    text = "# Rollouts\n\n" + "\n\n".join(paragraph.strip() for _ in range(8)) + "\n"
    chunks = chunk_prose(_doc(text), 700, 120)
    assert len(chunks) > 3
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert current.start_line <= previous.end_line + 1
        assert current.text[0].isalnum() or current.text[0] in "#`"
        assert text.find(current.text) >= 0  # an exact slice of the document
    assert all(c.context == "Rollouts" for c in chunks)


def test_skills_and_memory_keep_their_kind() -> None:
    config = ChunkingConfig.from_settings(ChunkingSettings())
    assert {c.kind for c in chunk_document(_doc("# Steps\n\nDo it.", source="skill"), config)} == {"skill"}
    assert {c.kind for c in chunk_document(_doc("A fact.", "text", source="memory"), config)} == {"fact"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["# Head", "## Sub", "word " * 30, "", "```", "text. More text!", "é" * 50]), max_size=40)
)
def test_chunks_are_exact_non_empty_slices_for_any_markdown(parts: list[str]) -> None:
    text = "\n".join(parts)
    chunks = chunk_prose(_doc(text), 300, 60)
    lines = text.split("\n")
    for chunk in chunks:
        assert chunk.text.strip() == chunk.text and chunk.text
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        window = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.text in window
        assert not re.match(r"\w", window[window.find(chunk.text) - 1 : window.find(chunk.text)] or " ") or (
            window.find(chunk.text) == 0
        )
