from __future__ import annotations

from dataclasses import replace

from agentty_rag.budget import BudgetConfig, fit
from agentty_rag.config import BudgetSettings
from agentty_rag.render import confidence_bar, heading_label, provenance, render_structured, render_text
from agentty_rag.types import Chunk, Funnel, Hit, SearchResult


def test_provenance_forms() -> None:
    assert provenance(Chunk("docs", "guide/auth.md", 20, 44, "x"), 20, 44) == "docs:guide/auth.md:20-44"
    assert provenance(Chunk("skill", "release-checklist", 1, 9, "x"), 1, 9) == "skill:release-checklist"
    assert provenance(Chunk("memory", "MEM-PORTS", 3, 3, "x"), 3, 3) == "memory:MEM-PORTS"
    assert provenance(Chunk("code", "src/x.py", 80, 126, "x"), 80, 126) == "code:src/x.py:80-126"


def test_stitched_heading_paths_read_as_one_label() -> None:
    assert heading_label(["Guide > Auth", "Guide > Auth > Tokens"]) == "Guide > Auth + Tokens"
    assert heading_label(["Keys > Master key", "Keys > Webhook secret"]) == "Keys > Master key + Webhook secret"
    assert heading_label(["Only > One"]) == "Only > One"
    assert heading_label([]) == ""


def test_a_heading_that_holds_a_bar_is_one_heading() -> None:
    assert heading_label(["Tables > A | B"]) == "Tables > A | B"


def test_a_stitched_passage_names_every_part_in_text_and_data() -> None:
    code = [
        Chunk("code", "a.py", 1, 4, "def f():\n    return 1\n\n", "python", "method", "class A:", "A.f"),
        Chunk("code", "a.py", 5, 8, "def g():\n    return 2\n\n", "python", "function", "", "g"),
    ]
    prose = [
        Chunk("docs", "g.md", 1, 3, "# Auth\n\nKeys.", "markdown", "section", "Guide > Auth"),
        Chunk("docs", "g.md", 4, 6, "## Tokens\n\nTTL.", "markdown", "section", "Guide > Auth > Tokens"),
    ]
    hits = (Hit(code[0], 2.0, parts=tuple(code)), Hit(prose[0], 1.0, parts=tuple(prose)))
    result = SearchResult("search_docs", "q", "bm25", hits, Funnel())
    packed = fit(hits, replace(BudgetConfig.from_settings(BudgetSettings()), relevance_floor=0.0), 1.0, weakest=0.0)
    text = render_text(result, packed)
    assert "[1] code:a.py:1-4 · A.f, g · relevance 1.00" in text
    assert "[2] docs:g.md:1-3 · Guide > Auth + Tokens · relevance 0.50" in text
    first, second = render_structured(result, packed)["results"]
    assert (first["symbol"], first["kind"], first["heading"]) == ("A.f, g", "method+function", "")
    assert (second["symbol"], second["kind"]) == ("", "section")
    assert second["heading"] == "Guide > Auth | Guide > Auth > Tokens"


def test_text_and_structured_say_the_same() -> None:
    hits = (
        Hit(Chunk("code", "src/x.py", 3, 4, "def f():\n    return 1", "python", "function", "", "f"), 2.0),
        Hit(Chunk("docs", "a.md", 1, 2, "# A\n\nText.", "markdown", "section", "A"), 1.0),
    )
    result = SearchResult("search_code", "q", "bm25", hits, Funnel().then("lexical", 2).then("returned", 2))
    packed = fit(hits, replace(BudgetConfig.from_settings(BudgetSettings()), relevance_floor=0.0), 0.5, weakest=0.0)
    text = render_text(result, packed)
    assert text.split("\n")[0] == f"search_code · bm25 · funnel 2→2 · confidence 0.50 · {packed.used_tokens} tokens"
    assert "[1] code:src/x.py:3-4 · f · relevance 1.00\n```python\ndef f():" in text
    assert "[2] docs:a.md:1-2 · A · relevance 0.50\n# A" in text
    data = render_structured(result, packed)
    assert [r["provenance"] for r in data["results"]] == ["code:src/x.py:3-4", "docs:a.md:1-2"]
    assert data["confidence"] == 0.5 and data["used_bytes"] == sum(len(r["text"]) for r in data["results"])


def test_empty_results_show_the_reason() -> None:
    result = SearchResult("search_docs", "q", "bm25", (), Funnel(), "no docs indexed — set AGENTTY_DOCS_DIR")
    text = render_text(result, fit((), BudgetConfig.from_settings(BudgetSettings())))
    assert text == "search_docs · bm25\nno docs indexed — set AGENTTY_DOCS_DIR"


def test_confidence_bar() -> None:
    assert confidence_bar(0.74) == "███████░░░"
    assert confidence_bar(1.5) == "██████████"
