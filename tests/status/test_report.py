"""``agentty-rag status`` from its typed report: gathered from a real workspace, shown as text and as data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render import counted, render_preview, render_status, status_json
from agentty_rag.status.report import gather, previewed
from agentty_rag.status.types import (
    Dense,
    Folder,
    Folders,
    FoundFolder,
    IndexPreview,
    IndexState,
    Manifest,
    OneFolder,
    Redacted,
    RootFolder,
    Skipped,
    Sources,
    StateFolder,
    StatusReport,
    Vectors,
    Where,
)
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def _index(name: str, **changes: object) -> IndexState:
    state = IndexState(
        index=name,
        path=f"/w/.agentty/rag_{name}.ragdb",
        files=3,
        chunks=7,
        updated_at="2026-01-02T03:04:05+0000",
        generation=2,
        fresh=True,
        stale_reason="",
        storage="disk",
        redacted=Redacted(0, 0, ()),
        manifest=Manifest(4, "4", {"version": "5"}, ("body",), "2", {"workspace": "/w", "docs": "/w/docs"}),
        skipped=Skipped({}, {}),
        by_source={"docs": 2, "memory": 1} if name == "docs" else {"code": 3},
        dense=Vectors("off", "off (AGENTTY_RAG_DENSE=0)", 0, 7),
    )
    return dataclasses.replace(state, **changes)  # type: ignore[arg-type]


def _report(**changes: object) -> StatusReport:
    report = StatusReport(
        workspace=Where("/w", "/w", "--root"),
        sources={
            "docs": FoundFolder(True, Folder("/w/docs", "./docs", True), ("./docs", "./.agentty/knowledge")),
            "skills": Folders(True, (Folder("/w/.agentty/skills", "./.agentty/skills", False),)),
            "memory": OneFolder(True, Folder("/w/.agentty/memory", "./.agentty/memory", True)),
            "code": RootFolder(True, Folder("/w", "./.", True)),
        },
        indexes={"docs": _index("docs"), "code": _index("code")},
        dense=Dense("off", "off (AGENTTY_RAG_DENSE=0)", False),
        next=(),
        state=StateFolder(True, "ours", ("memory/",)),
    )
    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]


def test_a_fresh_workspace_reads_as_one_line_per_fact() -> None:
    assert render_status(_report()) == "\n".join(
        [
            "workspace: /w",
            "docs: 3 files, 7 chunks — fresh (updated 2026-01-02T03:04:05+0000)",
            "  docs: ./docs — 2 files",
            "  skills: 0 files (./.agentty/skills does not exist)",
            "  memory: ./.agentty/memory — 1 file",
            "  skipped: nothing",
            "code: 3 files, 7 chunks — fresh (updated 2026-01-02T03:04:05+0000)",
            "  skipped: nothing",
            ".agentty/: indexes, locks and settings are machine state, kept out of git by .agentty/.gitignore; "
            "yours to commit: ignore, knowledge/, skills/, memory/ (here: memory/)",
            "backend: local",
            "dense: off (AGENTTY_RAG_DENSE=0)",
        ]
    )


def test_status_says_which_half_of_the_state_folder_git_sees() -> None:
    def line(state: StateFolder) -> str:
        return next(x for x in render_status(_report(state=state)).splitlines() if x.startswith(".agentty/"))

    assert "not created yet" in line(StateFolder())
    assert "no .gitignore yet (the next search writes one" in line(StateFolder(True, "missing", ()))
    assert "(here: none yet)" in line(StateFolder(True, "missing", ()))
    assert "is not the one agentty-rag writes" in line(StateFolder(True, "edited", ("skills/", "ignore")))


def test_verbose_adds_the_index_internals_and_its_roots_in_name_order() -> None:
    lines = render_status(_report(), verbose=True).splitlines()
    at = lines.index("  skipped: nothing")
    assert lines[at + 1 : at + 4] == [
        "  index /w/.agentty/rag_docs.ragdb, generation 2, schema 4, tokenizer v4, chunking {'version': '5'}",
        "  root docs: /w/docs",
        "  root workspace: /w",
    ]


def test_storage_redactions_vectors_skips_and_the_backend_each_get_their_line() -> None:
    code = _index(
        "code",
        fresh=False,
        stale_reason="1 added, 0 modified, 0 removed",
        storage="memory (read-only folder)",
        redacted=Redacted(1234, 2, ("src/a.py", "src/b.py")),
        skipped=Skipped(
            {"binary": 1, "too large": 7},
            {"binary": ("a.bin",), "too large": ("1.py", "2.py", "3.py", "4.py", "5.py")},
        ),
        dense=Vectors("ready", "ready: m", 5, 7),
        backend="qdrant server http://q:6333, collection agentty_code_1 — answered",
    )
    text = render_status(_report(indexes={"code": code}))
    assert [line for line in text.splitlines()[1:] if not line.startswith(".agentty/")] == [
        "code: 3 files, 7 chunks — stale: 1 added, 0 modified, 0 removed (the next search updates it) "
        "(updated 2026-01-02T03:04:05+0000)",
        "  kept in memory (read-only folder)",
        "  secrets redacted: 1,234 in 2 files (src/a.py, src/b.py)",
        "  vectors: 5 of 7 chunks embedded",
        "  skipped: 8 (1 binary, 7 too large)",
        "    binary: a.bin",
        "    too large: 1.py, 2.py, 3.py, 4.py, 5.py (+2 more)",
        "backend: qdrant server http://q:6333, collection agentty_code_1 — answered",
        "dense: off (AGENTTY_RAG_DENSE=0)",
    ]


def test_an_index_not_built_yet_counts_the_files_a_build_would_read() -> None:
    report = _report(indexes={"docs": _index("docs", updated_at="never"), "code": _index("code")})
    assert render_status(report).splitlines()[1] == "docs: not indexed yet — 3 files to index"


def test_switched_off_sources_say_which_variable_switched_them_off() -> None:
    off: Sources = {
        "docs": FoundFolder(False, None, ("./docs",)),
        "skills": Folders(False, ()),
        "memory": OneFolder(False, Folder("/m", "/m", False)),
        "code": RootFolder(False, Folder("/w", "./.", True)),
    }
    lines = render_status(_report(sources=off)).splitlines()
    assert "  docs: off (AGENTTY_RAG_DOCS=0)" in lines and "  skills: off (AGENTTY_RAG_SKILLS=0)" in lines
    assert "  memory: off (AGENTTY_RAG_MEMORY=0)" in lines and "  off (AGENTTY_RAG_CODE=0)" in lines


def test_a_workspace_found_above_the_start_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    where = Where(str(tmp_path), str(tmp_path / "sub"), "found .git")
    assert render_status(_report(workspace=where)).splitlines()[0] == (
        f"workspace: {tmp_path} (found .git above {tmp_path / 'sub'})"
    )
    same = Where(str(tmp_path), str(tmp_path), "found .git")
    assert render_status(_report(workspace=same)).splitlines()[0] == f"workspace: {tmp_path}"


def test_next_steps_come_last_as_a_list() -> None:
    text = render_status(_report(next=("first", "second")))
    assert text.endswith("dense: off (AGENTTY_RAG_DENSE=0)\nnext:\n  - first\n  - second")


def test_the_json_is_the_report_field_for_field() -> None:
    data = status_json(_report())
    assert list(data) == ["workspace", "sources", "indexes", "dense", "next", "mcp", "generation", "state", "jobs"]
    assert list(data["indexes"]["docs"]) == [f.name for f in dataclasses.fields(IndexState)]
    assert data["sources"]["docs"]["folder"] == {"path": "/w/docs", "shown": "./docs", "exists": True}
    assert json.loads(json.dumps(data))["indexes"]["code"]["manifest"]["fields"] == ["body"]


def test_the_report_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _report().next = ("x",)  # type: ignore[misc]


def test_gathered_report_agrees_with_the_workspace_in_text_and_json(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "docs/a.md": "# A\n\nText.\n",
            "docs/big.md": "# Big\n\n" + "word " * 2000,
            ".agentty/memory/port.md": "Staging serves HTTPS on port 8443.\n",
            "src/a.py": "def alpha():\n    return 1\n",
        },
    )
    settings = load_settings({**LEXICAL, "HOME": str(tmp_path / "home"), "AGENTTY_RAG_DOCS_MAX_BYTES": "4096"})
    workspace = Workspace(tmp_path, settings)
    workspace.search_docs("text")
    workspace.search_code("alpha")
    report = gather(workspace, Located(tmp_path, tmp_path / "docs", "found .git"))
    docs = report.indexes["docs"]
    assert (docs.files, dict(docs.by_source), dict(docs.skipped.counts)) == (
        2,
        {"docs": 1, "memory": 1},
        {"too large": 1},
    )
    assert report.next == ("1 docs file(s) skipped as too large: AGENTTY_RAG_DOCS_MAX_BYTES includes them",)
    assert report.state == StateFolder(True, "ours", ("memory/",))
    text = render_status(report)
    assert f"(found .git above {tmp_path / 'docs'})" in text.splitlines()[0]
    assert "  docs: every document under ./ — 1 file" in text and "    too large: docs/big.md" in text
    data = json.loads(json.dumps(status_json(report)))
    assert data["indexes"]["docs"]["skipped"] == {
        "counts": {"too large": 1},
        "examples": {"too large": ["docs/big.md"]},
    }
    assert data["workspace"] == {"root": str(tmp_path), "start": str(tmp_path / "docs"), "how": "found .git"}
    assert data["next"] == list(report.next)


def test_a_preview_ranks_folders_and_sources_by_file_count(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "docs/a.md": "# A\n\nText.\n",
            "docs/guide/b.md": "# B\n\nMore text here.\n",
            ".agentty/memory/port.md": "Staging serves HTTPS on port 8443.\n",
        },
    )
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "HOME": str(tmp_path / "home")}))
    preview = previewed(workspace, "docs")
    assert (preview.files, preview.kind_label, preview.by_kind) == (3, "source", (("docs", 2), ("memory", 1)))
    assert render_preview((preview,)).splitlines()[2] == "  by source: docs 2, memory 1"


def test_a_preview_names_eight_counts_then_how_many_more() -> None:
    ranked = tuple((f"f{n}/", 10 - n) for n in range(10))
    preview = IndexPreview("code", 45, 2048, "1 skipped (1 binary)", ranked, "language", (("python", 45),), ())
    lines = render_preview((preview,)).splitlines()
    assert lines[0] == "code: 45 files, 2.0 KB would be indexed (1 skipped (1 binary))"
    assert lines[1] == "  by folder: " + ", ".join(f"f{n}/ {10 - n}" for n in range(8)) + ", … (2 more)"
    empty = IndexPreview("docs", 0, 0, "", (), "source", (), ())
    assert render_preview((empty,)) == "docs: 0 files, 0 bytes would be indexed"


def test_counts_read_as_words() -> None:
    assert (counted(1, "file"), counted(2480, "file"), counted(0, "chunk")) == ("1 file", "2,480 files", "0 chunks")


def test_a_leg_embedding_in_a_running_server_shows_its_rate_time_left_and_the_servers_words() -> None:
    """Status's own probe was not answered (the embedding server is busy with the server's batches): the vectors
    are counted by the server's model, and the server's leg says it is ready and when it was last answered."""
    code = _index(
        "code",
        chunks=40_000,
        dense=Vectors("unavailable", "unavailable: timeout", 2_464, 40_000, "", True, 16.8, 2_234.0),
    )
    server = "the server (pid 42): ready: m (384-d) at http://h; the embedding server last answered it 2 s ago"
    dense = Dense("unavailable", "unavailable: timeout", True, False, server, "ready", None, 2.0)
    lines = render_status(_report(indexes={"code": code}, dense=dense)).splitlines()
    assert "  vectors: 2,464 of 40,000 chunks embedded (16.8 a second, about 37 min left)" in lines
    assert lines[lines.index("dense: unavailable: timeout") + 1] == f"  {server}"
