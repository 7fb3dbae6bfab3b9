"""The docs a user reads: a short README linking every page, pages that name only what exists, and the
generated pages (configuration, command line, benchmarks) equal to what their sources give."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentty_rag.errors import ResultFileError
from agentty_rag.reference import END, PAGES, rewrite, stale
from agentty_rag.reference.__main__ import main as reference_main
from agentty_rag.reference.benchmarks import from_rag_bench, load, page_part
from tests.conftest import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _links(page: Path) -> list[str]:
    """The link targets of a page, outside code (a link shown as an example is not one)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return _LINK.findall(re.sub(r"``.*?``|`[^`\n]*`", "", text))


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_starts_with_the_two_commands_for_a_fresh_machine() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert "pip install ." in blocks[0] and "agentty-rag search-docs" in blocks[0]
    assert blocks[1].strip() == ".ci/run" and "pytest" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / target.split("#")[0]).resolve() for target in _links(README)}
    assert [p.relative_to(REPO).as_posix() for p in _pages() if p.resolve() not in linked] == []
    assert len(_pages()) >= 10


def test_every_link_of_the_readme_and_the_docs_reaches_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in [README, *_pages()]:
        for target in _links(page):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_user_docs_describe_the_product_not_a_lab() -> None:
    lab = re.compile(r"\.\./shared/bench|this 2-core machine|this machine \(|shared machine|before →|→ now")
    found = [
        f"{page.relative_to(REPO)}: {match.group(0)}"
        for page in [README, *_pages()]
        for match in lab.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_generated_pages_are_what_their_sources_give() -> None:
    assert stale(REPO) == [], "a generated page drifted: run python -m agentty_rag.reference"
    assert reference_main(["--check", "--root", str(REPO)]) == 0


def test_the_check_names_a_page_that_differs_and_writing_repairs_only_its_generated_part(tmp_path: Path) -> None:
    for page in PAGES:
        target = tmp_path / page.page
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((REPO / page.page).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "docs" / "benchmarks").mkdir(exist_ok=True)
    for result in (DOCS / "benchmarks").glob("*.json"):
        (tmp_path / "docs" / "benchmarks" / result.name).write_text(result.read_text(encoding="utf-8"))
    cli = tmp_path / "docs" / "cli.md"
    original = cli.read_text(encoding="utf-8")
    cli.write_text(original.replace("HTTP port", "HTTP port (old text)") + "\nA note after the part.\n")
    assert stale(tmp_path) == ["docs/cli.md"]
    assert reference_main(["--check", "--root", str(tmp_path)]) == 1
    assert reference_main(["--root", str(tmp_path)]) == 0
    assert cli.read_text(encoding="utf-8") == original + "\nA note after the part.\n"
    with pytest.raises(ValueError, match="has no generated part"):
        rewrite("# a page without the markers\n", PAGES[0], tmp_path)


def test_the_command_line_reference_covers_every_command_of_both_programs() -> None:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    for command in ("serve", "search-docs", "search-code", "index", "status", "inject", "feedback", "proactive"):
        assert f"### `agentty-rag {command}`" in text
    for command in ("docs", "code", "suite", "make-suite", "scale"):
        assert f"### `rag-bench {command}`" in text
    assert "agentty-rag [--root DIR] index [docs|code|all] [--rebuild] [--backend local|qdrant] [--dry-run]" in text
    assert "agentty-rag [--root DIR] init claude-code|codex|cursor|vscode|gemini|windsurf|opencode" in text


def test_configuration_page_lists_the_settings_between_its_markers() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    part = text[text.index(PAGES[0].begin) : text.index(END)]
    assert "| `AGENTTY_RAG_OUTPUT_BYTES` | int | 12288 | 2048–65536 |" in part


# -- benchmark result files --------------------------------------------------------------------------------------


def _report() -> dict[str, object]:
    rung = {"recall@1": 0.5, "recall@5": 0.75, "recall@10": 1.0, "mrr": 0.625, "ndcg@10": 0.7, "ms_p50": 1.25}
    return {
        "version": "9.9",
        "machine": {"cores": 2, "python": "3.11.7", "platform": "Linux"},
        "rungs": [{"rung": "bm25", "default": False, **rung}, {"rung": "+budget", "default": True, **rung}],
    }


def test_a_rag_bench_report_becomes_a_dated_section_with_its_machine_command_and_default_row(tmp_path: Path) -> None:
    result = from_rag_bench(_report(), "Shop", "rag-bench code --root shop", "A shop.", "BM25 mode", "2026-01-02")
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs" / "benchmarks" / "shop.json").write_text(json.dumps(result))
    part = page_part(tmp_path)
    assert part.startswith(
        "## Shop\n\nA shop.\n\nMeasured on 2026-01-02 (2 cores, Python 3.11.7, Linux, agentty-rag 9.9)."
    )
    assert "```sh\nrag-bench code --root shop\n```" in part and "Configuration: BM25 mode." in part
    assert "| bm25 | 0.500 | 0.750 | 1.000 | 0.625 | 0.700 | 1.2 |" in part
    assert "| **+budget (default)** | 0.500 |" in part


def test_a_report_s_token_figures_become_columns_and_the_baseline_shows_none(tmp_path: Path) -> None:
    rung = {"recall@1": 0.5, "recall@5": 0.75, "recall@10": 1.0, "mrr": 0.625, "ndcg@10": 0.7, "ms_p50": 1.25}
    tokens = {"tokens@500": 0.25, "tokens@1k": 0.5, "tokens@2k": 0.75, "tokens@4k": 1.0, "expected_tokens": 1234.4}
    rungs = [{"rung": "baseline", **rung}, {"rung": "bm25", **rung, **tokens}]
    report = {**_report(), "rungs": rungs}
    result = from_rag_bench(report, "Shop", "rag-bench code", "A shop.", "BM25 mode", "2026-01-02")
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs" / "benchmarks" / "shop.json").write_text(json.dumps(result))
    part = page_part(tmp_path)
    assert "| nDCG@10 | ≤500 tokens | ≤1k tokens | ≤2k tokens | ≤4k tokens | expected tokens | ms p50 |" in part
    assert "| baseline | 0.500 | 0.750 | 1.000 | 0.625 | 0.700 | - | - | - | - | - | 1.2 |" in part
    assert "| bm25 | 0.500 | 0.750 | 1.000 | 0.625 | 0.700 | 0.250 | 0.500 | 0.750 | 1.000 | 1,234 | 1.2 |" in part


def test_sections_follow_their_order_and_a_broken_result_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "benchmarks"
    folder.mkdir(parents=True)
    for name, order in (("a.json", 20), ("b.json", 10)):
        result = from_rag_bench(_report(), name, "cmd", "about", "config", "2026-01-02")
        (folder / name).write_text(json.dumps({**result, "order": order}))
    assert [r["set"] for r in load(folder)] == ["b.json", "a.json"]
    (folder / "c.json").write_text(json.dumps({"set": "c", "date": "yesterday"}))
    with pytest.raises(ResultFileError, match=r"c\.json: missing about, machine, command"):
        load(folder)
    (folder / "c.json").write_text(json.dumps({**result, "date": "2026-1-2"}))
    with pytest.raises(ResultFileError, match=r"c\.json: date must be YYYY-MM-DD"):
        load(folder)


def test_the_committed_result_files_are_dated_and_name_their_machine() -> None:
    results = load(DOCS / "benchmarks")
    assert results and all(r["machine"]["cores"] >= 1 and r["command"] for r in results)
