"""rag-bench suite end to end: real workspaces built here, real indexes, through the command line."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentty_rag.bench.ladder import GENERATION_RUNGS, RUNGS
from agentty_rag.bench.run import TOKEN_BUDGETS, TOKEN_FIGURES
from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.bench.conftest import rag_bench
from tests.conftest import FIXTURES, LEXICAL

QUALITY = ("recall@1", "recall@5", "recall@10", "hit@1", "hit@5", "hit@10", "mrr", "ndcg@10")


def _jsonl(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")


def _lines(name: str, count: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "queries" / name).read_text().splitlines()[:count]]


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two workspaces and a manifest: a code workspace labeled by whole files (with categories), listed twice
    to be scored at both levels, and a docs workspace whose docs folder only its manifest entry names."""
    base = tmp_path_factory.mktemp("suite")
    shutil.copytree(FIXTURES / "code", base / "repos" / "shop")
    shutil.copytree(FIXTURES / "docs", base / "repos" / "handbook" / "manual")
    code = [
        {
            "id": q["id"],
            "query": q["query"],
            "relevant": sorted({label.split(":")[0] for label in q["relevant"]}),
            "category": "symbol" if number % 3 == 0 else "semantic",
        }
        for number, q in enumerate(_lines("code.jsonl", 15))
    ]
    _jsonl(base / "queries" / "shop.jsonl", code)
    docs = [q for q in _lines("docs.jsonl", 12) if not any(r.startswith(("skill:", "memory:")) for r in q["relevant"])]
    _jsonl(base / "queries" / "handbook.jsonl", docs)
    (base / "suite.toml").write_text(
        """# two views of one code workspace, and a docs workspace
[suite]
level = "passage"

[[workspace]]
path = "repos/shop"
queries = "queries/shop.jsonl"

[[workspace]]
name = "shop by file"
path = "repos/shop"
queries = "queries/shop.jsonl"
level = "file"

[[workspace]]
path = "repos/handbook"
queries = "queries/handbook.jsonl"
corpus = "docs"
level = "file"

[workspace.env]
AGENTTY_DOCS_DIR = "manual"
""",
        encoding="utf-8",
    )
    return base


def test_per_workspace_rows_macro_means_categories_and_untouched_workspaces(suite_dir: Path, tmp_path: Path) -> None:
    before = _snapshot(suite_dir / "repos")
    out = tmp_path / "suite.json"
    # run from elsewhere: the manifest's relative paths start at its own folder
    result = rag_bench("suite", str(suite_dir / "suite.toml"), "--json", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _snapshot(suite_dir / "repos") == before  # nothing written, nothing left behind
    data = json.loads(out.read_text())
    runs = {w["name"]: w for w in data["workspaces"]}
    assert list(runs) == ["shop", "shop by file", "handbook"]
    assert [(w["corpus"], w["level"], w["query_count"]) for w in runs.values()] == [
        ("code", "passage", 15),
        ("code", "file", 15),
        ("docs", "file", len(_jsonl_ids(suite_dir / "queries" / "handbook.jsonl"))),
    ]
    assert runs["handbook"]["env"] == {"AGENTTY_DOCS_DIR": "manual"} and runs["handbook"]["corpus_size"]["files"] > 50
    dense_ran = runs["shop"]["dense"]["state"] == "ready"
    skipped = {line.split(" ", 1)[0] for line in runs["shop"]["skipped_rungs"]}
    dense_rungs = {"+dense", "dense-only", "dense+stages"}
    assert skipped <= {*dense_rungs, *GENERATION_RUNGS}
    ladder = [r for r in RUNGS if (dense_ran or r not in dense_rungs) and r not in skipped]
    assert data["rungs"] == ladder and data["reported_rung"] == "+budget"
    for index, rung in enumerate(ladder):
        rows = [w["rungs"][index] for w in runs.values()]
        assert {row["rung"] for row in rows} == {rung}
        macro, pooled = data["macro"][index], data["all_queries"][index]
        for key in QUALITY:
            assert math.isclose(macro[key], sum(row[key] for row in rows) / 3)
        every = [q for row in rows for q in row["per_query"]]
        assert pooled["queries"] == len(every) and math.isclose(pooled["mrr"], sum(q["rr"] for q in every) / len(every))
        _assert_token_means(rung, rows, macro, pooled, every)
        symbol = [q for q in rows[0]["per_query"] + rows[1]["per_query"] if q.get("category") == "symbol"]
        assert data["categories"][rung]["symbol"]["queries"] == len(symbol) == 10
        assert math.isclose(data["categories"][rung]["symbol"]["ndcg@10"], sum(q["ndcg@10"] for q in symbol) / 10)
    # the file level ranks distinct files: a file's later passages cannot push another file down
    shop, by_file = _rung(runs["shop"], "+budget"), _rung(runs["shop by file"], "+budget")
    assert by_file["mrr"] >= shop["mrr"] and by_file["ndcg@10"] >= shop["ndcg@10"]
    printed = result.stdout
    assert "macro mean over 3 workspaces" in printed and "per workspace · rung +budget" in printed
    assert [row["rung"] for row in data["macro"] if row["default"]] == ["+budget"]
    assert "\n+budget (default) " in printed  # the macro table marks the default configuration
    assert "shop by file" in printed and "category semantic" in printed and "category symbol" in printed
    assert (
        "macro mean · token efficiency: " in printed and "per workspace · rung +budget · token efficiency: " in printed
    )
    tokens_table = printed.split("per workspace · rung +budget · token efficiency: ")[1]
    for name in ("shop by file", "macro mean", "all queries", "category symbol"):
        assert re.search(rf"^{name} .* \d\.\d{{3}} +[\d,]+$", tokens_table, re.M), name


def _assert_token_means(
    rung: str, rows: list[dict[str, Any]], macro: dict[str, Any], pooled: dict[str, Any], every: list[dict[str, Any]]
) -> None:
    """Every rung but the baseline carries token figures: the macro mean averages the workspaces', the pooled
    row counts every query alike (the referee's way)."""
    if rung == "baseline":
        assert not set(TOKEN_FIGURES) & {*macro, *pooled}
        return
    for key in TOKEN_FIGURES:
        assert math.isclose(macro[key], sum(row[key] for row in rows) / len(rows))
    hits = [q["tokens_to_hit"] for q in every]
    assert math.isclose(pooled["expected_tokens"], sum(32_000 if t is None else t for t in hits) / len(hits))
    for key, budget in TOKEN_BUDGETS:
        assert math.isclose(pooled[key], sum(1 for t in hits if t is not None and t <= budget) / len(hits))


def _rung(workspace: dict[str, Any], name: str) -> dict[str, Any]:
    return next(row for row in workspace["rungs"] if row["rung"] == name)


def _jsonl_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_suite_figures_are_the_single_run_figures(suite_dir: Path, tmp_path: Path) -> None:
    suite_json, single_json = tmp_path / "suite.json", tmp_path / "single.json"
    rungs = "bm25,+rerank,+budget"
    suite = rag_bench(
        "suite", str(suite_dir / "suite.toml"), "--only", "shop", "--rungs", rungs, "--json", str(suite_json)
    )
    assert suite.returncode == 0, suite.stderr
    single = rag_bench(
        "code",
        "--root",
        str(suite_dir / "repos" / "shop"),
        "--queries",
        str(suite_dir / "queries" / "shop.jsonl"),
        "--level",
        "passage",
        "--rungs",
        rungs,
        "--no-timings",
        "--json",
        str(single_json),
    )
    assert single.returncode == 0, single.stderr
    (workspace,) = json.loads(suite_json.read_text())["workspaces"]
    for ours, theirs in zip(workspace["rungs"], json.loads(single_json.read_text())["rungs"], strict=True):
        assert ours["rung"] == theirs["rung"]
        assert {k: ours[k] for k in QUALITY} == {k: theirs[k] for k in QUALITY}


def test_current_configuration_scores_what_search_code_returns(suite_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "current.json"
    result = rag_bench(
        "suite", str(suite_dir / "suite.toml"), "--only", "shop,shop by file", "--config", "current", "--json", str(out)
    )
    assert result.returncode == 0, result.stderr
    runs = {w["name"]: w["rungs"][0] for w in json.loads(out.read_text())["workspaces"]}
    assert runs["shop"]["rung"] == "current"
    passage_level = {q["id"]: q for q in runs["shop"]["per_query"]}
    file_level = {q["id"]: q for q in runs["shop by file"]["per_query"]}
    root = tmp_path / "shop"
    shutil.copytree(suite_dir / "repos" / "shop", root)
    workspace = Workspace(root, load_settings(LEXICAL))
    for line in (suite_dir / "queries" / "shop.jsonl").read_text().splitlines():
        query = json.loads(line)
        passages = [p.hit.chunk for p in workspace.search_code(query["query"], k=10).packed.passages]
        # semble-style NDCG@10: a labeled file counts at the position of the first passage from it
        found = {next((i for i, c in enumerate(passages, 1) if c.ref == path), 0) for path in query["relevant"]} - {0}
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(10, len(query["relevant"])) + 1))
        assert math.isclose(passage_level[query["id"]]["ndcg@10"], sum(1 / math.log2(p + 1) for p in found) / ideal)
        # file localization: the first labeled file among the distinct files
        files = list(dict.fromkeys(c.ref for c in passages))
        rank = next((i for i, f in enumerate(files, 1) if f in query["relevant"]), None)
        assert file_level[query["id"]]["rr"] == (1 / rank if rank else 0.0)
    workspace.close()


def test_a_bad_queries_line_stops_the_suite_before_any_index_is_built(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.py").write_text("def parse():\n    return 1\n")
    (tmp_path / "two").mkdir()
    _jsonl(tmp_path / "one.jsonl", [{"query": "parse", "relevant": ["a.py"]}])
    (tmp_path / "two.jsonl").write_text('{"query": "parse", "relevant": ["a.py"]}\n{"query": "x"}\n')
    manifest = tmp_path / "suite.toml"
    manifest.write_text(
        '[[workspace]]\npath = "one"\nqueries = "one.jsonl"\n\n[[workspace]]\npath = "two"\nqueries = "two.jsonl"\n'
    )
    result = rag_bench("suite", str(manifest))
    assert result.returncode == 2 and result.stdout == ""
    assert f'{tmp_path / "two.jsonl"}:2: "relevant" must be a non-empty list of strings' in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--only", "nowhere"), "--only: no workspace named nowhere; known: a"),
        (("--rungs", "bm25,nonsense"), "unknown rung(s) nonsense"),
        (("-k", "0"), "-k must be from 1 to 50"),
    ],
)
def test_bad_suite_arguments_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "a").mkdir()
    _jsonl(tmp_path / "a.jsonl", [{"query": "x", "relevant": ["x.py"]}])
    (tmp_path / "suite.toml").write_text('[[workspace]]\npath = "a"\nqueries = "a.jsonl"\n')
    result = rag_bench("suite", str(tmp_path / "suite.toml"), *args)
    assert result.returncode == 2 and message in result.stderr
    rooted = rag_bench("--root", str(tmp_path), "suite", str(tmp_path / "suite.toml"))
    assert rooted.returncode == 2 and "--root applies to docs and code" in rooted.stderr


def test_a_bad_manifest_line_exits_2_naming_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    manifest = tmp_path / "suite.toml"
    manifest.write_text('[suite]\nlevel = "passage"\n\n[[workspace]]\npath = "a"\nquerys = "a.jsonl"\n')
    result = rag_bench("suite", str(manifest))
    assert result.returncode == 2
    assert f"rag-bench: {manifest}:6: unknown key 'querys' in [[workspace]]" in result.stderr


def test_suite_reads_docs_labels_relative_to_the_workspace_and_warns_of_labels_matching_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "wiki" / "manual").mkdir(parents=True)
    (tmp_path / "wiki" / "manual" / "install.md").write_text("# Install\n\nRun the installer with --prefix.\n")
    labels = {"q1": "manual/install.md", "q2": "install.md#Uninstall"}
    _jsonl(
        tmp_path / "wiki.jsonl", [{"id": i, "query": "installer prefix", "relevant": [r]} for i, r in labels.items()]
    )
    (tmp_path / "suite.toml").write_text(
        '[[workspace]]\npath = "wiki"\nqueries = "wiki.jsonl"\ncorpus = "docs"\n\n'
        '[workspace.env]\nAGENTTY_DOCS_DIR = "manual"\n'
    )
    out = tmp_path / "suite.json"
    result = rag_bench("suite", str(tmp_path / "suite.toml"), "--rungs", "bm25", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "query q1" not in result.stderr
    assert "wiki: query q2: the heading 'Uninstall' names no passage of docs:manual/install.md" in result.stderr
    (workspace,) = json.loads(out.read_text())["workspaces"]
    # file level: both find install.md first; read as written, q1's label would score 0
    assert _rung(workspace, "bm25")["recall@1"] == 1.0
