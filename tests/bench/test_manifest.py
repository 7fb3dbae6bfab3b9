"""Reading a suite manifest: what it resolves to, and the line each problem is reported at."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentty_rag.bench.manifest import ManifestError, load_manifest
from tests.conftest import REPO, write

GOOD = """[suite]
level = "passage"

[suite.env]
AGENTTY_RAG_RERANK = false
AGENTTY_RAG_CODE_MAX_FILES = 5000

[[workspace]]
path = "repos/api"
queries = "q/api.jsonl"

[[workspace]]
name = "handbook"
path = "repos/web"
queries = "q/web.jsonl"
corpus = "docs"
level = "file"

[workspace.env]
AGENTTY_DOCS_DIR = "manual"
AGENTTY_RAG_RERANK = 1
"""


def _layout(root: Path) -> None:
    write(root, {"repos/api/a.py": "x = 1\n", "repos/web/manual/x.md": "# X\n", "q/api.jsonl": "", "q/web.jsonl": ""})


def test_paths_start_at_the_manifest_folder_and_defaults_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _layout(tmp_path)
    (tmp_path / "suite.toml").write_text(GOOD)
    monkeypatch.chdir(tmp_path / "repos")
    api, handbook = load_manifest(Path("../suite.toml")).workspaces
    assert (api.name, api.root, api.queries) == ("api", tmp_path / "repos/api", tmp_path / "q/api.jsonl")
    assert (api.corpus, api.level, api.line) == ("code", "passage", 8)
    assert api.env == {"AGENTTY_RAG_RERANK": "0", "AGENTTY_RAG_CODE_MAX_FILES": "5000"}
    assert (handbook.name, handbook.corpus, handbook.level, handbook.line) == ("handbook", "docs", "file", 12)
    assert handbook.env == {
        "AGENTTY_RAG_RERANK": "1",
        "AGENTTY_RAG_CODE_MAX_FILES": "5000",
        "AGENTTY_DOCS_DIR": "manual",
    }


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (('queries = "q/api.jsonl"', "queries = "), 10, "not TOML (Invalid value)"),
        (
            ('level = "file"', 'levels = "file"'),
            17,
            "unknown key 'levels' in [[workspace]] (known: name, path, queries",
        ),
        (('queries = "q/web.jsonl"\n', ""), 12, '[[workspace]] needs "queries": a JSONL file of labeled queries'),
        (('path = "repos/api"', 'path = "repos/apx"'), 9, '"path" is not a folder: '),
        (('queries = "q/api.jsonl"', 'queries = "q"'), 10, '"queries" is not a file: '),
        (('level = "passage"', 'level = "chunk"'), 2, "\"level\" must be file or passage (got 'chunk')"),
        (('corpus = "docs"', "corpus = 3"), 16, '"corpus" must be docs or code (got 3)'),
        (
            ("AGENTTY_RAG_RERANK = 1", "AGENTTY_RAG_RERANKER = 1"),
            21,
            "AGENTTY_RAG_RERANKER is not an agentty-rag variable",
        ),
        (
            ("AGENTTY_RAG_RERANK = false", 'AGENTTY_RAG_RERANK = "maybe"'),
            5,
            "AGENTTY_RAG_RERANK='maybe' is not a boolean",
        ),
        (
            ("AGENTTY_RAG_CODE_MAX_FILES = 5000", "AGENTTY_RAG_CODE_MAX_FILES = [1]"),
            6,
            "AGENTTY_RAG_CODE_MAX_FILES must be a string, a number or a boolean",
        ),
        (('name = "handbook"', 'name = "api"'), 12, 'two workspaces are named "api" (first at line 8)'),
        (("[suite.env]", "[suites.env]"), 4, "unknown key 'suites' in the manifest (known: suite, workspace)"),
    ],
)
def test_a_problem_names_the_manifest_line(tmp_path: Path, change: tuple[str, str], line: int, message: str) -> None:
    _layout(tmp_path)
    manifest = tmp_path / "suite.toml"
    assert change[0] in GOOD
    manifest.write_text(GOOD.replace(change[0], change[1], 1))
    with pytest.raises(ManifestError, match=f"^{re.escape(str(manifest))}:{line}: {re.escape(message)}"):
        load_manifest(manifest)


def test_a_manifest_without_workspaces_or_unreadable_says_so(tmp_path: Path) -> None:
    manifest = tmp_path / "suite.toml"
    manifest.write_text('[suite]\nlevel = "file"\n')
    with pytest.raises(ManifestError, match=r"suite\.toml: no \[\[workspace\]\] tables"):
        load_manifest(manifest)
    with pytest.raises(ManifestError, match=r"missing\.toml: cannot read"):
        load_manifest(tmp_path / "missing.toml")


def test_the_documented_example_manifest_reads(tmp_path: Path) -> None:
    page = (REPO / "docs" / "rag-bench.md").read_text(encoding="utf-8")
    examples = [block for block in re.findall(r"```toml\n(.*?)```", page, re.S) if "[[workspace]]" in block]
    assert len(examples) == 1
    write(
        tmp_path,
        {
            "services/billing/a.py": "",
            "handbook/manual/a.md": "",
            "bench/queries/billing.jsonl": "",
            "bench/queries/handbook.jsonl": "",
        },
    )
    (tmp_path / "bench" / "suite.toml").write_text(examples[0])
    billing, handbook = load_manifest(tmp_path / "bench" / "suite.toml").workspaces
    assert (billing.name, billing.corpus, billing.level) == ("billing", "code", "file")
    assert (handbook.name, handbook.corpus, handbook.level, handbook.env["AGENTTY_DOCS_DIR"]) == (
        "handbook",
        "docs",
        "passage",
        "manual",
    )
