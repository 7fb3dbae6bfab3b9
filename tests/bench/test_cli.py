"""rag-bench end to end on the committed fixtures, and its handling of bad queries files."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentty_rag.bench.corpus import documented_functions, first_sentence
from agentty_rag.bench.ladder import DENSE_ONLY, DENSE_STAGES, GENERATION_RUNGS, RUNGS
from agentty_rag.bench.run import TOKEN_BUDGETS, TOKEN_FIGURES
from tests.conftest import FIXTURES, fixture_env, run_main, write


def _bench(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag.bench.cli", root, args, env)


def _assert_report(data: dict[str, Any], corpus: str, queries: int) -> None:
    assert data["corpus"] == corpus and data["query_count"] == queries
    assert data["version"] and data["machine"]["cores"] >= 1
    assert set(data["configuration"]) >= {"AGENTTY_RAG_OUTPUT_BYTES", "AGENTTY_RAG_CODE_MAX_FILES"}
    assert data["corpus_size"]["files"] > 0 and data["corpus_size"]["chunks"] > 0
    assert data["index_full_s"] > 0
    dense_ran = data["dense"]["state"] == "ready"
    ran = [row["rung"] for row in data["rungs"]]
    # the generation rungs run only when a generator answers (test_the_generation_rungs_…)
    expected = [
        r
        for r in RUNGS
        if (dense_ran or r not in {"+dense", DENSE_ONLY, DENSE_STAGES}) and (r not in GENERATION_RUNGS or r in ran)
    ]
    assert ran == expected
    assert [row["rung"] for row in data["rungs"] if row["default"]] == ["+budget"]  # the default configuration
    for row in data["rungs"]:
        for metric in ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "ms_p50", "ms_p95"):
            assert 0 <= row[metric] and (metric.startswith("ms") or row[metric] <= 1)
        assert len(row["per_query"]) == queries
        _assert_token_figures(row)


def _assert_token_table(stdout: str, rows: list[dict[str, Any]]) -> None:
    """The terminal's token-efficiency table shows each rung's figures of the JSON, and ``-`` for the baseline."""
    lines = stdout.split("token efficiency: ", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    shown = {line.split("  ")[0].removesuffix(" (default)"): line.split()[-5:] for line in lines}
    assert list(shown) == [row["rung"] for row in rows]
    assert shown.pop("baseline") == ["-"] * 5
    for row in rows[1:]:
        expected = [f"{row[key]:.3f}" for key, _ in TOKEN_BUDGETS] + [f"{row['expected_tokens']:,.0f}"]
        assert shown[row["rung"]] == expected


def _assert_token_figures(row: dict[str, Any]) -> None:
    """Every rung but the baseline carries its token efficiency, row and queries agreeing; the baseline none."""
    if row["rung"] == "baseline":
        assert not set(TOKEN_FIGURES) & set(row) and all("tokens_to_hit" not in q for q in row["per_query"])
        return
    hits = [q["tokens_to_hit"] for q in row["per_query"]]
    for key, budget in TOKEN_BUDGETS:
        assert row[key] == sum(1 for t in hits if t is not None and t <= budget) / len(hits)
    assert row["tokens@500"] <= row["tokens@1k"] <= row["tokens@2k"] <= row["tokens@4k"] <= 1
    assert math.isclose(row["expected_tokens"], sum(32_000 if t is None else t for t in hits) / len(hits))


def test_docs_ladder_with_labeled_queries_timings_and_measure(tmp_path: Path) -> None:
    out = tmp_path / "docs.json"
    result = _bench(
        FIXTURES,
        "docs",
        "--queries",
        str(FIXTURES / "queries" / "docs.jsonl"),
        "--json",
        str(out),
        AGENTTY_RAG_MEASURE="1",
        **fixture_env(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    _assert_report(data, "docs", 128)
    assert set(data["timings"]) == {"cold_open_first_answer_s", "freshness_scan_s", "one_edit_next_answer_s"}
    levers = data["token_economy"]
    assert sorted(levers) == sorted(
        [
            "all levers on",
            "- relevance floor",
            "- water-filling",
            "- confidence scaling",
            "- extractive",
            "- water-filling, - extractive",
            "all levers off",
        ]
    )
    on, off = levers["all levers on"], levers["all levers off"]
    assert 0 < on["bytes_per_query"] < off["bytes_per_query"] <= 12288 + 4096
    assert 0.9 <= on["answer_retention"] <= 1 and off["answer_retention"] == 1.0
    assert "token economy (same ranking)" in result.stdout
    measure = [line for line in result.stdout.splitlines() if line.startswith("MEASURE ")]
    assert len(measure) == 1 and "mode=bm25 queries=128 bytes=" in measure[0] and "answer_retention=" in measure[0]
    assert "baseline" in result.stdout and "cold open + first answer" in result.stdout
    marked = [line.split()[0:2] for line in result.stdout.splitlines() if "(default)" in line]
    assert marked == [["+budget", "(default)"]] * 2  # both tables say which rung the tools run
    assert "+dense skipped: the dense leg is off (AGENTTY_RAG_DENSE=0)" in result.stdout
    _assert_token_table(result.stdout, data["rungs"])
    assert not (FIXTURES / ".agentty").exists()  # the workspace is never written to


def test_code_known_item_and_docstring_sets(tmp_path: Path) -> None:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    out = tmp_path / "code.json"
    known = _bench(root, "code", "--count", "30", "--no-timings", "--json", str(out))
    assert known.returncode == 0, known.stderr
    data = json.loads(out.read_text())
    _assert_report(data, "code", 30)
    assert data["level"] == "passage" and "known-item" in data["queries"]
    _assert_token_table(known.stdout, data["rungs"])
    again = _bench(root, "code", "--count", "30", "--no-timings", "--json", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stderr
    rows_again = json.loads((tmp_path / "again.json").read_text())["rungs"]
    assert [r["mrr"] for r in rows_again] == [r["mrr"] for r in data["rungs"]]  # deterministic
    docstrings = _bench(root, "code", "--docstring-queries", "--no-timings", "--json", str(out), "--rungs", "bm25")
    assert docstrings.returncode == 0, docstrings.stderr
    data = json.loads(out.read_text())
    assert "docstring queries (docs masked)" in data["queries"] and data["query_count"] >= 20
    assert [r["rung"] for r in data["rungs"]] == ["bm25"]
    assert not (root / ".agentty").exists()
    assert (root / "server/auth/tokens.py").read_text() == (FIXTURES / "code/server/auth/tokens.py").read_text()


def test_docstrings_are_found_and_masked_keeping_line_numbers() -> None:
    text = 'def refresh(token):\n    """Refresh an expired token. More."""\n    return token\n'
    (function,) = documented_functions("a.py", text)
    assert (function.symbol, function.sentence) == ("refresh", "Refresh an expired token.")
    start, end, replacement = function.mask
    masked = text[:start] + replacement + text[end:]
    assert "Refresh" not in masked and masked.count("\n") == text.count("\n")
    go = "package x\n\n// Next returns the delay before the next attempt.\nfunc (b *Backoff) Next() int {\n\treturn 1\n}\n"
    (method,) = documented_functions("b.go", go)
    assert (method.symbol, method.sentence) == ("Backoff.Next", "Next returns the delay before the next attempt.")
    assert first_sentence("Compute the p99.\nThen more.") == "Compute the p99."


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json\n", "queries.jsonl:1: not JSON"),
        ('{"query": "x"}\n', 'queries.jsonl:1: "relevant" must be a non-empty list of strings'),
        ('{"relevant": ["a.md"]}\n', 'queries.jsonl:1: "query" must be a non-empty string'),
        (
            '{"id": "a", "query": "x", "relevant": ["a.md"]}\n{"id": "a", "query": "y", "relevant": ["a.md"]}\n',
            "queries.jsonl:2: duplicate id 'a'",
        ),
        ("", "no queries"),
    ],
)
def test_bad_queries_files_exit_2_naming_the_line(tmp_path: Path, content: str, message: str) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(content)
    result = _bench(tmp_path, "docs", "--queries", str(queries))
    assert result.returncode == 2
    assert message in result.stderr


def test_unknown_labels_warn_with_the_query_id_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "install.md").write_text("# Install\n\nRun the installer with --prefix.\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "q1", "query": "installer prefix", "relevant": ["install.md"]}\n'
        '{"id": "q2", "query": "missing page", "relevant": ["nowhere.md"]}\n'
    )
    result = _bench(tmp_path, "docs", "--queries", str(queries), "--no-timings")
    assert result.returncode == 0, result.stderr
    assert "query q2: docs:nowhere.md is not in the docs corpus" in result.stderr
    assert "query q1" not in result.stderr


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    assert _bench(tmp_path, "docs", "--docstring-queries").returncode == 2
    assert _bench(tmp_path, "code", "--rungs", "bm25,nonsense").returncode == 2
    assert _bench(tmp_path / "missing", "code").returncode == 2
    # --root also follows the command, and wins there
    after = _bench(tmp_path, "code", "--root", str(tmp_path / "elsewhere"))
    assert after.returncode == 2 and f"--root {tmp_path / 'elsewhere'} is not a folder" in after.stderr


def test_the_dense_and_generation_rungs_run_against_a_real_embedding_server(tmp_path: Path, compat_server) -> None:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    for name, text in {
        "page1.md": "Change the engine oil of an automobile every ten thousand kilometres.",
        "page2.md": "Bake the dough at two hundred degrees for forty minutes.",
        "page3.md": "File quarterly tax returns before the deadline to avoid penalties.",
    }.items():
        (root / "docs" / name).write_text(f"# Notes\n\n{text}\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "how often should my car get serviced", "relevant": ["page1.md"]}\n')
    server = compat_server("--generator", "echo")
    out = tmp_path / "dense.json"
    result = _bench(
        root,
        "docs",
        "--queries",
        str(queries),
        "--no-timings",
        "--json",
        str(out),
        AGENTTY_RAG_DENSE="1",
        AGENTTY_OLLAMA_HOST=server.host,
        AGENTTY_EMBED_MODEL="all-minilm",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["dense"]["state"] == "ready" and data["dense"]["embedded"] == 3 and data["dense"]["chunks_per_s"] > 0
    rows = {row["rung"]: row for row in data["rungs"]}
    assert list(rows) == list(RUNGS)
    assert rows["+dense"]["mode"] == "hybrid" and rows["bm25"]["mode"] == "bm25"
    assert rows["+dense"]["mrr"] == 1.0 > rows["bm25"]["mrr"]
    # the dense leg alone: the lexical leg weighted 0 finds what the words miss, as the fused rung does
    assert rows["dense-only"]["mrr"] == 1.0
    assert rows["+expand"]["mode"] == rows["+hyde"]["mode"] == "hybrid"  # the echo generator answered
    assert "dense leg query latency" in result.stdout


def test_docs_labels_relative_to_the_workspace_count_and_labels_matching_nothing_warn(tmp_path: Path) -> None:
    write(tmp_path, {"docs/install.md": "# Install\n\nRun the installer with --prefix.\n"})
    labels = {"q1": "docs/install.md", "q2": "install.md#Uninstall"}
    lines = [json.dumps({"id": i, "query": "installer prefix", "relevant": [label]}) for i, label in labels.items()]
    queries = tmp_path / "q.jsonl"
    queries.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report.json"
    result = _bench(tmp_path, "docs", "--queries", str(queries), "--no-timings", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "query q1" not in result.stderr
    assert "query q2: the heading 'Uninstall' names no passage of docs:docs/install.md" in result.stderr
    bm25 = next(row for row in json.loads(out.read_text())["rungs"] if row["rung"] == "bm25")
    # file level (the default with --queries): both find install.md first; without reading q1's label
    # relative to the workspace, q1 would score 0 and recall@1 would be 0.5
    assert bm25["recall@1"] == 1.0


def test_the_generation_rungs_are_skipped_and_say_why_when_no_generator_answers(tmp_path: Path) -> None:
    write(tmp_path, {"docs/install.md": "# Install\n\nRun the installer with --prefix.\n"})
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "installer prefix", "relevant": ["install.md"]}\n')
    out = tmp_path / "gen.json"
    env = {"AGENTTY_OLLAMA_HOST": "127.0.0.1:1"}
    result = _bench(
        tmp_path,
        "docs",
        "--queries",
        str(queries),
        "--no-timings",
        "--rungs",
        "+budget,+expand,+hyde",
        "--json",
        str(out),
        **env,
    )
    assert result.returncode == 0, result.stderr
    assert [row["rung"] for row in json.loads(out.read_text())["rungs"]] == ["+budget"]
    refused = "the generator is unavailable: connection refused at http://127.0.0.1:1"
    assert f"+expand skipped: {refused}" in result.stdout and f"+hyde skipped: {refused}" in result.stdout
