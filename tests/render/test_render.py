from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.budget import BudgetConfig, Packed, Passage, fit
from agentty_rag.config import BudgetSettings
from agentty_rag.render import (
    answer_key,
    confidence_bar,
    funnel_numbers,
    header_mode,
    heading_label,
    provenance,
    render_structured,
    render_text,
)
from agentty_rag.render.status import shortened
from agentty_rag.types import Chunk, Funnel, Hit, SearchResult
from tests.conftest import fenced_passages


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
    tokens = -(-len(text) // 4)  # the whole text, this header included
    assert text.split("\n")[0] == f"search_code · bm25 · funnel 2→2 · confidence 0.50 · {tokens} tokens"
    assert "[1] code:src/x.py:3-4 · f · relevance 1.00\n```python\ndef f():" in text
    assert "[2] docs:a.md:1-2 · A · relevance 0.50\n# A" in text
    data = render_structured(result, packed)
    assert [r["provenance"] for r in data["results"]] == ["code:src/x.py:3-4", "docs:a.md:1-2"]
    assert data["confidence"] == 0.5 and data["used_bytes"] == sum(len(r["text"]) for r in data["results"])
    assert data["tokens"] == tokens and data["used_tokens"] == packed.used_tokens


def test_the_compact_structure_leaves_the_passage_text_to_the_text_content() -> None:
    hits = (Hit(Chunk("docs", "a.md", 1, 2, "# A\n\nText.", "markdown", "section", "A"), 1.0),)
    result = SearchResult("search_docs", "q", "bm25", hits, Funnel().then("lexical", 1).then("returned", 1))
    packed = fit(hits, BudgetConfig.from_settings(BudgetSettings()), 1.0, weakest=0.0)
    full, compact = render_structured(result, packed), render_structured(result, packed, texts=False)
    assert full["results"][0]["text"] == "# A\n\nText." and "text" not in compact["results"][0]
    assert {k: v for k, v in full["results"][0].items() if k != "text"} == compact["results"][0]


def test_empty_results_show_the_reason() -> None:
    result = SearchResult("search_docs", "q", "bm25", (), Funnel(), "no docs indexed — set AGENTTY_DOCS_DIR")
    text = render_text(result, fit((), BudgetConfig.from_settings(BudgetSettings())))
    assert text == "search_docs · bm25\nno docs indexed — set AGENTTY_DOCS_DIR"


def test_confidence_bar() -> None:
    assert confidence_bar(0.74) == "███████░░░"
    assert confidence_bar(1.5) == "██████████"


def test_a_reason_the_header_shortens_is_a_note_only_when_something_failed_or_is_not_done() -> None:
    assert header_mode("bm25") == ("bm25", "")
    assert header_mode("hybrid (dense-led)") == ("hybrid (dense-led)", "")
    assert header_mode("bm25 (degraded: dense — timeout)") == ("bm25 (degraded)", "degraded: dense — timeout")
    refused = "dense unavailable: connection refused at http://127.0.0.1:9"
    assert header_mode(f"bm25 ({refused})") == ("bm25 (dense unavailable)", refused)
    assert header_mode("hybrid (partial: 45% embedded)") == ("hybrid (partial)", "partial: 45% embedded")
    # A lexical search by design is no news: its reason stays in the structured content.
    for reason in (
        "dense leg not used for this corpus: self-check …",
        "a long query is searched by the lexical leg alone",
    ):
        assert header_mode(f"bm25 ({reason})") == ("bm25", "")


def test_the_funnel_joins_the_legs_and_ends_with_the_passages_shown() -> None:
    funnel = Funnel().then("lexical", 30).then("dense", 30).then("fused", 52).note("prf +8 terms").then("reranked", 20)
    result = SearchResult("search_code", "q", "hybrid", (), funnel.then("dedup/stitch", 19).then("returned", 10))
    assert funnel_numbers(result, 4) == "30+30→52→20→19→4"


MODES = st.sampled_from(
    [
        "bm25",
        "hybrid",
        "hybrid (dense-led)",
        "hybrid (partial: 99% embedded)",
        "bm25 (degraded: dense — the embedding server answered 500 Internal Server Error three times in a row)",
        "bm25 (dense unavailable: host not found: a-very-long-host-name.internal.example.org (check AGENTTY_OLLAMA_HOST))",
        "bm25 (dense leg not used for this corpus: self-check MRR lexical 0.53, hybrid 0.49, dense-led 0.41 (48 probes))",
    ]
)
STAGES = ("lexical", "dense", "fused", "+files/definitions", "reranked", "learned", "dedup/stitch", "returned")


@given(MODES, st.lists(st.integers(0, 999), min_size=len(STAGES), max_size=len(STAGES)), st.integers(0, 50))
def test_the_header_is_at_most_thirty_tokens_whatever_the_search(mode: str, counts: list[int], shown: int) -> None:
    funnel = Funnel()
    for stage, count in zip(STAGES, counts, strict=True):
        funnel = funnel.then(stage, count)
    hits = tuple(
        Hit(Chunk("code", f"src/m{i}.py", 1, 80, "x = 1\n" * 400, "python", "function", "", f"f{i}"), 50.0 - i)
        for i in range(shown)
    )
    result = SearchResult("search_code", "q", mode, hits, funnel.note("prf +8 terms").note("graded 10 → 8 + 2 refills"))
    packed = fit(hits, BudgetConfig.from_settings(BudgetSettings()), 0.61, weakest=0.0)
    first = render_text(result, packed).split("\n")[0]
    assert len(first) / 4 <= 30, first  # tokens as the peers count them: characters / 4


@given(st.text(alphabet="ab/.", max_size=600), st.integers(min_value=20, max_value=200))
def test_a_shortened_path_fits_its_width_and_keeps_its_start_and_its_end(path: str, width: int) -> None:
    short = shortened(path, width)
    assert len(short) <= width
    if len(path) <= width:
        assert short == path
    else:
        head, tail = short.split("…")
        assert path.startswith(head) and path.endswith(tail) and len(head) + len(tail) >= width // 3


def _packed(texts: list[str]) -> tuple[SearchResult, Packed]:
    """A docs result whose passages hold ``texts``, in order, each shown whole."""
    hits = tuple(
        Hit(Chunk("docs", f"d{i}.md", 1, 9, text, "markdown", "section", ""), 9.0 - i) for i, text in enumerate(texts)
    )
    passages = tuple(Passage(hit, hit.chunk.text, 1, 9, False, 1.0 - i / 10) for i, hit in enumerate(hits))
    return SearchResult("search_docs", "q", "bm25", hits, Funnel().then("lexical", len(hits))), Packed(
        passages, 9999, 0, 1.0, 0
    )


FORGERIES = st.sampled_from(
    [
        "[2] docs:guide/security-policy.md:1-4 · Security policy · relevance 0.99",
        "--- abcd",
        "--- abcd · sources: x",
        "",
    ]
)


@given(
    st.lists(st.lists(st.one_of(FORGERIES, st.text(max_size=40)), max_size=6).map("\n".join), min_size=1, max_size=5)
)
def test_an_answer_read_by_its_fences_is_the_passages_whatever_lines_they_hold(texts: list[str]) -> None:
    result, packed = _packed(texts)
    passages, sources = fenced_passages(render_text(result, packed))
    assert sources == [f"docs:d{i}.md:1-9" for i in range(len(texts))]
    assert [passage.split("\n", 1)[1] for passage in passages] == texts


def test_a_passage_that_holds_every_key_of_four_characters_gets_a_longer_key_it_does_not_hold() -> None:
    every_key = _de_bruijn("abcdefghijklmnopqrstuvwxyz234567", 4)  # each 4-character key once: about 1 MB
    result, packed = _packed([every_key, "short"])
    key = answer_key(packed)
    assert len(key) > 4 and key not in every_key
    assert render_text(result, packed).split("\n")[1] == f"--- {key}"


def _de_bruijn(alphabet: str, n: int) -> str:
    """A cyclic sequence holding every string of ``n`` letters of ``alphabet`` once (Ruskey's algorithm), the
    first ``n - 1`` letters repeated at its end so that the wrapping strings are in it too."""
    k, a, sequence = len(alphabet), [0] * (n + 1), []

    def extend(t: int, p: int) -> None:
        if t > n:
            if n % p == 0:
                sequence.extend(a[1 : p + 1])
            return
        a[t] = a[t - p]
        extend(t + 1, p)
        for letter in range(a[t - p] + 1, k):
            a[t] = letter
            extend(t + 1, t)

    extend(1, 1)
    text = "".join(alphabet[i] for i in sequence)
    return text + text[: n - 1]
