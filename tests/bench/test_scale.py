"""rag-bench scale end to end: real trees, real builds in their own processes, through the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentty_rag.bench import scale
from tests.bench.conftest import rag_bench
from tests.conftest import FIXTURES, write


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_scale_measures_each_tree_where_it_is_and_writes_nothing_there(tmp_path: Path) -> None:
    small, larger = tmp_path / "small", tmp_path / "larger"
    write(small, {"calc.py": "def add_numbers(first, second):\n    return first + second\n" * 3})
    shutil.copytree(FIXTURES / "code", larger)
    before = {tree: _snapshot(tree) for tree in (small, larger)}
    out = tmp_path / "scale.json"
    done = rag_bench("scale", str(small), str(larger), "--queries", "4", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert {tree: _snapshot(tree) for tree in (small, larger)} == before  # no .agentty/, no edit
    rows = json.loads(out.read_text())["trees"]
    assert [row["tree"] for row in rows] == [str(small), str(larger)]
    for row in rows:
        assert row["files"] >= 1 and row["chunks"] >= row["files"]
        assert row["build_s"] > 0 and row["peak_rss_mb"] > 0 and row["disk_mb"] > 0
        assert row["search_p50_ms"] <= row["search_p95_ms"] and row["queries"] >= 1
        assert row["bm25s"]["documents"] == row["files"] and row["bm25s"]["disk_mb"] > 0
        assert row["build_vs_bm25s"] == pytest.approx(row["build_s"] / row["bm25s"]["build_s"])
        assert row["disk_vs_bm25s"] == pytest.approx(row["disk_mb"] / row["bm25s"]["disk_mb"])
        assert len(row["query_texts"]) == row["queries"]  # a peer tool is timed on the same questions
    assert rows[1]["files"] > rows[0]["files"]
    table = done.stdout.splitlines()
    assert table[0] == "rag-bench scale · code index, BM25 mode · 2 trees"
    assert any(line.startswith("larger ") for line in table)
    header = next(line for line in table if line.startswith("tree "))
    assert header.rstrip().endswith("build ÷ bm25s  disk ÷ bm25s")
    larger_line = next(line for line in table if line.startswith("larger "))
    assert larger_line.split()[-2:] == [f"{rows[1]['build_vs_bm25s']:.1f}×", f"{rows[1]['disk_vs_bm25s']:.1f}×"]
    assert not any("backend" in line or "search RSS" in line for line in table)  # asked for by --backends only


def test_scale_applies_the_file_cap_it_is_given(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "code", tree)
    out = tmp_path / "scale.json"
    done = rag_bench("scale", str(tree), "--max-files", "5", "--no-baseline", "--queries", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(out.read_text())["trees"]
    assert row["files"] == 5 and "bm25s" not in row
    assert "build_vs_bm25s" not in row and "disk_vs_bm25s" not in row  # nothing to divide by


def test_scale_measures_each_tree_once_per_backend_it_is_given(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_edge")
    pytest.importorskip("qdrant_client")
    tree = tmp_path / "small"
    write(tree, {"calc.py": "def add_numbers(first, second):\n    return first + second\n" * 3})
    before = _snapshot(tree)
    out = tmp_path / "scale.json"
    done = rag_bench("scale", str(tree), "--backends", "local,qdrant,shared", "--queries", "2", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert _snapshot(tree) == before  # the collection too lives in the temporary folder
    local, qdrant, shared = json.loads(out.read_text())["trees"]
    assert (local["backend"], qdrant["backend"], shared["backend"]) == ("local", "qdrant", "shared")
    assert (
        (local["files"], local["chunks"]) == (qdrant["files"], qdrant["chunks"]) == (shared["files"], shared["chunks"])
    )
    assert local["query_texts"] == qdrant["query_texts"] == shared["query_texts"]  # the same questions
    assert qdrant["qdrant_disk_mb"] > 0 and "qdrant_disk_mb" not in local
    # the shared row's build is a first start from the collection published before it
    assert shared["publish_s"] > 0 and shared["collection_mb"] > 0 and "publish_s" not in local
    for row in (local, qdrant, shared):
        assert row["build_s"] > 0 and row["peak_rss_mb"] > 0 and row["search_peak_rss_mb"] > 0
        assert row["search_p50_ms"] <= row["search_p95_ms"]
    assert "bm25s" in local and "bm25s" not in qdrant and "bm25s" not in shared  # it does not depend on the backend
    for row in (local, qdrant, shared):  # each row's cost against the tree's one reference
        assert row["disk_vs_bm25s"] == pytest.approx(row["disk_mb"] / local["bm25s"]["disk_mb"])
    table = done.stdout.splitlines()
    assert table[0] == "rag-bench scale · code index, BM25 mode · 1 trees · backends local, qdrant, shared"
    assert [line.split()[:2] for line in table if line.startswith("tree ")] == [["tree", "backend"]]
    assert [line.split()[1] for line in table if line.startswith("small ")] == ["local", "qdrant", "shared"]


def test_scale_refuses_a_backend_it_does_not_know(tmp_path: Path) -> None:
    done = rag_bench("scale", str(tmp_path), "--backends", "local,elastic")
    assert done.returncode == 2 and "unknown backend elastic; use local, qdrant, shared" in done.stderr


def test_scale_refuses_a_tree_that_is_not_a_folder(tmp_path: Path) -> None:
    done = rag_bench("scale", str(tmp_path / "missing"))
    assert done.returncode == 2 and "is not a folder" in done.stderr


def test_the_scale_table_divides_the_build_and_the_disk_by_the_reference_s() -> None:
    row: dict[str, Any] = {
        "tree": "/src/big", "backend": "local", "files": 2000, "chunks": 40000, "build_s": 9.0, "peak_rss_mb": 150.0,
        "disk_mb": 25.0, "freshness_ms": 14.0, "search_p50_ms": 40.0, "search_p95_ms": 50.0, "ranking_p50_ms": 11.0,
        "bm25s": {"build_s": 3.0, "query_p50_ms": 0.2, "disk_mb": 5.0},
    }  # fmt: skip
    alone = {**row, "tree": "/src/alone", "bm25s": None}
    row.update(scale.ratios(row, row["bm25s"]))
    assert (row["build_vs_bm25s"], row["disk_vs_bm25s"]) == (3.0, 5.0)
    lines = scale.table([row, alone], by_backend=False).splitlines()
    assert lines[0].split("  ")[0] == "tree" and lines[0].rstrip().endswith("build ÷ bm25s  disk ÷ bm25s")
    assert lines[1].split()[-2:] == ["3.0×", "5.0×"]
    assert lines[2].split()[-2:] == ["—", "—"]  # no reference: nothing to divide by
    assert scale.ratios(row, {"build_s": 0.0, "disk_mb": 0.0}) == {}
