"""rag-bench make-suite: one JSONL set whose queries name their workspace becomes a manifest and queries files."""

from __future__ import annotations

import json
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from tests.bench.conftest import rag_bench
from tests.conftest import write

SET: list[dict[str, Any]] = [
    {
        "id": "a1",
        "repo": "org/alpha",
        "kind": "symbol",
        "query": "parse_header",
        "relevant": [{"path": "net/http.py", "start_line": None, "end_line": None}],
    },
    {
        "id": "b1",
        "repo": "beta",
        "kind": "semantic",
        "query": "retry backoff delay",
        "relevant": [{"path": "retry.go", "start_line": 3, "end_line": 9}, "clock.go"],
    },
    {"id": "a2", "repo": "org/alpha", "query": "split a header line", "relevant": ["net/http.py"], "extra": "ignored"},
]


def _corpora(root: Path) -> Path:
    write(
        root / "corpora",
        {
            "org/alpha/net/http.py": "def parse_header(line):\n    name, _, value = line.partition(':')\n    return name, value\n",
            "beta/retry.go": "package retry\n\n// Delay is the backoff before attempt n.\nfunc Delay(n int) int {\n\treturn 1 << n\n}\n",
            "beta/clock.go": "package retry\n\nfunc Now() int { return 0 }\n",
        },
    )
    return root / "corpora"


def _set(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def _make(entries: list[dict[str, Any]], tmp_path: Path, corpora: Path, *options: str) -> CompletedProcess[str]:
    path = _set(tmp_path / "set.jsonl", entries)
    out = tmp_path / "out"
    return rag_bench("make-suite", str(path), "--by", "repo", "--corpora", str(corpora), "--out", str(out), *options)


def test_a_set_becomes_a_suite_that_runs(tmp_path: Path) -> None:
    corpora = _corpora(tmp_path)
    made = _make(SET, tmp_path, corpora, "--category", "kind", "--level", "passage")
    assert made.returncode == 0, made.stderr
    assert "wrote" in made.stdout and "2 workspaces, 3 queries" in made.stdout
    manifest = (tmp_path / "out" / "suite.toml").read_text()
    assert 'level = "passage"' in manifest and f'path = "{corpora / "org/alpha"}"' in manifest
    assert manifest.index('name = "beta"') < manifest.index('name = "org/alpha"')  # workspaces in name order
    alpha = [json.loads(line) for line in (tmp_path / "out/queries/org/alpha.jsonl").read_text().splitlines()]
    assert alpha == [
        {"id": "a1", "query": "parse_header", "relevant": ["net/http.py"], "category": "symbol"},
        {"id": "a2", "query": "split a header line", "relevant": ["net/http.py"]},
    ]
    (beta,) = [json.loads(line) for line in (tmp_path / "out/queries/beta.jsonl").read_text().splitlines()]
    assert beta["relevant"] == ["retry.go:3-9", "clock.go"]
    out = tmp_path / "suite.json"
    ran = rag_bench("suite", str(tmp_path / "out" / "suite.toml"), "--config", "current", "--json", str(out))
    assert ran.returncode == 0, ran.stderr
    data = json.loads(out.read_text())
    assert [(w["name"], w["query_count"], w["level"]) for w in data["workspaces"]] == [
        ("beta", 1, "passage"),
        ("org/alpha", 2, "passage"),
    ]
    assert sorted(data["categories"]["current"]) == ["semantic", "symbol"]
    assert data["workspaces"][1]["rungs"][0]["per_query"][0]["first_rank"] == 1  # parse_header is found first


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([SET[0], {**SET[1], "repo": None}], 'set.jsonl:2: "repo" must name the workspace\'s folder'),
        (
            [{**SET[0], "repo": "../outside"}],
            "set.jsonl:1: \"repo\" must be a folder under --corpora (got '../outside')",
        ),
        (
            [{**SET[0], "relevant": [{"start_line": 1}]}],
            'set.jsonl:1: each "relevant" item must be a label or an object with a "path"',
        ),
        ([{**SET[0], "relevant": []}], 'set.jsonl:1: "relevant" must be a non-empty list'),
        ([{**SET[0], "query": " "}], 'set.jsonl:1: "query" must be a non-empty string'),
        ([SET[0], SET[0]], "set.jsonl:2: duplicate id 'a1' in workspace 'org/alpha'"),
        ([], "set.jsonl: no queries"),
    ],
)
def test_a_bad_set_line_exits_2_naming_it(tmp_path: Path, entries: list[dict[str, Any]], message: str) -> None:
    made = _make(entries, tmp_path, tmp_path)
    assert made.returncode == 2 and message in made.stderr
    assert not (tmp_path / "out" / "suite.toml").exists()


def test_an_existing_manifest_is_never_replaced_and_a_missing_folder_is_reported(tmp_path: Path) -> None:
    first = _make(SET, tmp_path, tmp_path / "nowhere")
    assert first.returncode == 0 and f"{tmp_path / 'nowhere' / 'beta'} is not a folder yet" in first.stderr
    again = _make(SET, tmp_path, tmp_path)
    assert again.returncode == 2 and "suite.toml exists; remove it or choose another --out" in again.stderr
    rooted = rag_bench(
        "--root",
        str(tmp_path),
        "make-suite",
        str(tmp_path / "set.jsonl"),
        "--by",
        "repo",
        "--corpora",
        ".",
        "--out",
        "x",
    )
    assert rooted.returncode == 2 and "--root applies to docs and code" in rooted.stderr
