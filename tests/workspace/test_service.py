"""Searches end to end through the service (real files, real index), including every empty-result reason."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.errors import BadRequest
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, fixture_env, write


def _ws(root: Path, **env: str) -> Workspace:
    return Workspace(root, load_settings({**LEXICAL, **env}))


@pytest.fixture(scope="module")
def fixtures_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The committed docs fixtures, with the index kept in a temporary workspace."""
    root = tmp_path_factory.mktemp("ws")
    return Workspace(root, load_settings(fixture_env(root)))


def test_known_passage_comes_first_with_provenance(fixtures_ws: Workspace) -> None:
    outcome = fixtures_ws.search_docs("how can I make the server pick up config edits without restarting it?", k=3)
    first = outcome.structured["results"][0]
    assert (first["path"], first["heading"]) == (
        "docs/guide/configuration.md",
        "Configuring Shipyard > Reloading without a restart",
    )
    assert re.fullmatch(r"docs:docs/guide/configuration\.md:\d+-\d+", first["provenance"])
    # the text of this answer: tests/snapshots/search_docs_config_reload.txt (test_rendered_answers.py)


def test_skill_and_memory_provenance_forms(fixtures_ws: Workspace) -> None:
    skills = fixtures_ws.search_docs("release checklist tag changelog", k=3, sources=["skills"])
    assert {r["provenance"] for r in skills.structured["results"]} <= {
        f"skill:{p.name}" for p in (FIXTURES / "skills").iterdir()
    }
    assert skills.structured["results"][0]["provenance"] == "skill:release-checklist"
    memory = fixtures_ws.search_docs("staging port", k=2, sources=["memory"])
    assert memory.structured["results"][0]["provenance"] == "memory:MEM-STAGING-PORT"


def test_scope_limits_results_inside_retrieval(fixtures_ws: Workspace) -> None:
    outcome = fixtures_ws.search_docs("token", k=4, scope="guide/auth")
    paths = [r["path"] for r in outcome.structured["results"]]
    assert len(paths) == 4 and all(p.startswith("docs/guide/auth/") for p in paths)
    assert [
        r["path"] for r in fixtures_ws.search_docs("token", k=4, scope="docs/guide/auth").structured["results"]
    ] == paths


def test_empty_reason_when_nothing_is_indexed(tmp_path: Path) -> None:
    outcome = _ws(tmp_path).search_docs("anything")
    assert outcome.structured["results"] == []
    assert "no docs indexed — no README, Markdown, reStructuredText or AsciiDoc file found under" in outcome.text
    missing = _ws(tmp_path, AGENTTY_DOCS_DIR="nowhere").search_docs("anything")
    assert "AGENTTY_DOCS_DIR=nowhere is not a folder" in missing.text
    assert "no code indexed" in _ws(tmp_path).search_code("anything").text


def test_empty_reason_when_nothing_matches(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    outcome = _ws(tmp_path).search_docs("kubernetes helm chart")
    assert outcome.text.splitlines()[-1] == "no matches (bm25)"
    assert outcome.structured["empty_reason"] == "no matches (bm25)"


@pytest.mark.parametrize("dense", ["off", "default"])
def test_empty_reason_while_the_first_build_is_still_running(tmp_path: Path, dense: str) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n"})
    # default: the dense leg probes the default address; with nothing there, the header must not wait
    # for the build to learn whether the index holds vectors
    workspace = _ws(tmp_path) if dense == "off" else Workspace(tmp_path, load_settings({}))
    index = workspace.index("docs")
    holding, release, done = threading.Event(), threading.Event(), threading.Event()

    def build_in_another_thread() -> None:  # what a long first build looks like to a search
        with index.reading():
            index.build_state = (3, 10)
            holding.set()
            release.wait(10)
            done.set()

    builder = threading.Thread(target=build_in_another_thread)
    builder.start()
    holding.wait(10)
    outcome = workspace.search_docs("install", wait_s=0.05)
    answered_during_the_build = not done.is_set()  # the answer came while the build still held the index
    release.set()
    builder.join()
    assert answered_during_the_build
    assert "the docs index is still being built (3 of 10 files) — try again" in outcome.text
    assert "no matches" not in outcome.text


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda w: w.search_docs(""), "query is empty"),
        (lambda w: w.search_docs("   \n"), "query is empty"),
        (lambda w: w.search_docs("x", k=0), "k must be a whole number from 1 to 50"),
        (lambda w: w.search_docs("x", k=51), "k must be a whole number from 1 to 50"),
        (lambda w: w.search_docs("x", scope="../.."), "outside the workspace root"),
        (lambda w: w.search_docs("x", scope="/etc"), "outside the workspace root"),
        (lambda w: w.search_docs("x", scope="nope/"), "does not exist under the workspace root"),
        (lambda w: w.search_docs("x", sources=["wiki"]), "unknown source 'wiki'"),
        (lambda w: w.search_code("x", scope="../"), "outside the workspace root"),
        (lambda w: w.search_code("x", scope="/"), "outside the workspace root"),
        (lambda w: w.search_code("x", language="klingon"), "unknown language 'klingon'; known: bash, c,"),
    ],
)
def test_bad_input_gets_a_clear_message(tmp_path: Path, call, message: str) -> None:
    write(tmp_path, {"docs/a.md": "# A\n", "src/a.py": "x = 1\n"})
    with pytest.raises(BadRequest, match=re.escape(message)):
        call(_ws(tmp_path))


def test_a_symlink_scope_cannot_escape_the_root(tmp_path: Path) -> None:
    write(tmp_path / "ws", {"src/a.py": "def inside():\n    pass\n"})
    write(tmp_path / "outside", {"b.py": "def outside():\n    pass\n"})
    (tmp_path / "ws" / "link").symlink_to(tmp_path / "outside")
    with pytest.raises(BadRequest, match="outside the workspace root"):
        _ws(tmp_path / "ws").search_code("outside", scope="link")


def test_huge_queries_are_cut_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    outcome = _ws(tmp_path).search_docs("installer " * 2000)
    assert "note: query cut to its first 4000 characters" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/a.md"


def test_code_search_finds_the_definition_with_language_and_scope(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "server/tokens.py": "def refresh_expired_token(token):\n    '''Refresh an expired token.'''\n    return token\n",
            "web/tokens.ts": "export function refreshExpiredToken(token: string) {\n  return token;\n}\n",
        },
    )
    workspace = _ws(tmp_path)
    python_only = workspace.search_code("refresh expired token", language="py")
    assert [r["path"] for r in python_only.structured["results"]] == ["server/tokens.py"]
    first = python_only.structured["results"][0]
    assert first["provenance"] == "code:server/tokens.py:1-3" and first["symbol"] == "refresh_expired_token"
    assert "```python\ndef refresh_expired_token" in python_only.text
    scoped = workspace.search_code("refresh expired token", scope="web")
    assert [r["path"] for r in scoped.structured["results"]] == ["web/tokens.ts"]


def test_a_cplusplus_header_is_searched_and_reported_as_cpp(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "include/ring_buffer.h": "#include <stddef.h>\n/* A ring buffer. */\nstruct ring_buffer {\n  size_t head;\n};\n",
            "include/pool.h": "#include <vector>\nnamespace shipyard {\n// A ring buffer pool.\n"
            "template <typename T> class RingBufferPool {\n public:\n  void submit(T task);\n};\n}\n",
        },
    )
    workspace = _ws(tmp_path)
    cpp_only = workspace.search_code("ring buffer", language="c++")
    assert [(r["path"], r["language"]) for r in cpp_only.structured["results"]] == [("include/pool.h", "cpp")]
    c_only = workspace.search_code("ring buffer", language="c")
    assert [(r["path"], r["language"]) for r in c_only.structured["results"]] == [("include/ring_buffer.h", "c")]


def test_output_respects_the_aggregate_budget(tmp_path: Path) -> None:
    write(tmp_path, {f"docs/p{i}.md": f"# Page {i}\n\n" + "deploy rollback canary " * 200 for i in range(20)})
    outcome = _ws(tmp_path, AGENTTY_RAG_OUTPUT_BYTES="4096").search_docs("deploy rollback", k=20)
    assert outcome.structured["used_bytes"] <= 4096
    assert sum(len(r["text"].encode()) for r in outcome.structured["results"]) <= 4096
