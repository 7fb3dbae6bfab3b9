"""The ``agentty-rag`` command as a user runs it: its ``main``, real files (the process itself is the point of
the server's and the hook's tests)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CompatServer, fixture_env, free_port, run_main, unkeyed, write


def _run(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, args, env)


def test_search_docs_prints_ranked_cited_passages(tmp_path: Path, snapshot: Callable[[str, str], str]) -> None:
    result = _run(
        tmp_path,
        "search-docs",
        "which",
        "bucket",
        "permissions",
        "does",
        "the",
        "artifact",
        "store",
        "need",
        **fixture_env(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    printed = unkeyed(result.stdout)
    assert printed == snapshot("cli_search_docs_artifacts.txt", printed)
    assert result.stderr == ""


def test_malformed_setting_warns_once_on_stderr_and_still_answers(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    result = _run(tmp_path, "search-docs", "installer", AGENTTY_RAG_OUTPUT_BYTES="abc")
    assert result.returncode == 0
    assert result.stderr.count("AGENTTY_RAG_OUTPUT_BYTES='abc' is not an integer; using the default (12288)") == 1
    assert "[1] docs:docs/a.md:1-3" in result.stdout


def test_index_status_and_json_search(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/app.py": "def start_server(port):\n    return port\n",
            "docs/a.md": "# A\n\nText.\n",
            "src/big.py": "x = 1\n" * 300,
        },
    )
    built = _run(tmp_path, "index", "all", AGENTTY_RAG_CODE_MAX_BYTES="1024")
    assert built.returncode == 0, built.stderr
    assert "docs: rebuilt — 1 file, 1 chunk" in built.stdout
    assert "code: rebuilt — 1 file, 1 chunk" in built.stdout and "code: 1 skipped (1 too large)" in built.stdout
    status = _run(tmp_path, "status", AGENTTY_RAG_CODE_MAX_BYTES="1024")
    assert status.returncode == 0
    assert "\ncode: 1 file, 1 chunk — fresh (updated " in status.stdout
    assert "skipped: 1 (1 too large)" in status.stdout and "too large: src/big.py" in status.stdout
    assert "1 code file(s) skipped as too large: AGENTTY_RAG_CODE_MAX_BYTES includes them" in status.stdout
    found = _run(tmp_path, "search-code", "start", "server", "--json", AGENTTY_RAG_CODE_MAX_BYTES="1024")
    data = json.loads(found.stdout)
    assert data["results"][0]["provenance"] == "code:src/app.py:1-2"
    again = _run(tmp_path, "index", "code", AGENTTY_RAG_CODE_MAX_BYTES="1024")
    assert "code: already fresh" in again.stdout


def test_status_of_a_never_indexed_workspace_writes_nothing(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, {"docs/a.md": "# A\n\nText.\n", "docs/b.md": "# B\n\nMore.\n"})
    server = compat_server()
    dense = {"AGENTTY_RAG_DENSE": "1", "AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_EMBED_MODEL": "all-minilm"}
    status = _run(tmp_path, "status", **dense)
    assert status.returncode == 0, status.stderr
    assert "docs: not indexed yet — 2 files to index" in status.stdout
    assert "dense: ready: all-minilm" in status.stdout
    assert not (tmp_path / ".agentty").exists()
    assert _run(tmp_path, "index", "docs", **dense).returncode == 0
    after = _run(tmp_path, "status", **dense)
    assert (
        "docs: 2 files, 2 chunks — fresh" in after.stdout and "docs: every document under ./ — 2 files" in after.stdout
    )
    assert "vectors: 2 of 2 chunks embedded" in after.stdout


def test_index_waits_for_an_embedding_server_slow_to_answer_where_a_search_does_not(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    """Every embedding takes 1.5 s here (a model still loading): a search's probe gives up after 1 s and
    answers lexically; `agentty-rag index` is a batch, and waits."""
    write(tmp_path, {"docs/a.md": "# A\n\nText.\n", "docs/b.md": "# B\n\nMore.\n"})
    server = compat_server("--delay-ms", "1500", "--delay-scope", "embed")
    dense = {"AGENTTY_RAG_DENSE": "1", "AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_EMBED_MODEL": "all-minilm"}
    search = _run(tmp_path, "search-docs", "text", **dense)
    assert search.returncode == 0 and "note: dense unavailable: timeout" in search.stdout, search.stdout
    index = _run(tmp_path, "index", "docs", **dense)
    assert index.returncode == 0, index.stderr
    assert "docs: embedded 2 chunks" in index.stdout and "2 of 2 have vectors" in index.stdout, index.stdout


def test_bad_arguments_exit_2_with_a_message(tmp_path: Path) -> None:
    result = _run(tmp_path, "search-code", "x", "--language", "klingon")
    assert result.returncode == 2
    assert "unknown language 'klingon'" in result.stderr
    assert _run(tmp_path, "search-docs", "x", "-k", "0").returncode == 2
    missing = _run(tmp_path / "nope", "status")
    assert missing.returncode == 2 and "is not a folder" in missing.stderr


def _run_default_dense(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command with the dense leg left at its default: on, probing the default Ollama address."""
    return run_main("agentty_rag", root, args, env, lexical=False)


def test_headers_stay_quiet_when_no_embedding_server_was_configured(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    found = _run_default_dense(tmp_path, "search-docs", "installer")
    empty = _run_default_dense(tmp_path, "search-docs", "zebra")
    assert found.stdout.startswith("search_docs · bm25 · funnel "), found.stdout
    assert empty.stdout.splitlines()[-1] == "no matches (bm25)"
    assert "dense" not in found.stdout + empty.stdout
    status = _run_default_dense(tmp_path, "status")
    assert "dense: unavailable:" in status.stdout  # the reason lives in status


def test_headers_give_the_reason_when_a_configured_server_fails(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    host = f"127.0.0.1:{free_port()}"
    found = _run_default_dense(tmp_path, "search-docs", "installer", AGENTTY_OLLAMA_HOST=host)
    header, note = found.stdout.splitlines()[:2]
    assert "· bm25 (dense unavailable) ·" in header
    assert note == f"note: dense unavailable: connection refused at http://{host}"


def test_status_of_an_empty_workspace_tells_a_newcomer_what_to_do(tmp_path: Path) -> None:
    status = _run(tmp_path, "status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == f"workspace: {tmp_path}"
    assert "docs: not indexed yet — 0 files to index" in lines
    assert "  docs: every document under ./ — 0 files" in lines
    assert "  skills: 0 files (./.agentty/skills does not exist; ~/.agentty/skills does not exist)" in lines
    assert "  memory: ./.agentty/memory does not exist (facts an agent learns go there)" in lines
    assert lines[lines.index("next:") + 1] == (
        f"  - no documents found under {tmp_path} (README files, Markdown, reStructuredText, AsciiDoc): add one, "
        "or set AGENTTY_DOCS_DIR to your docs folder"
    )
    assert "tokenizer" not in status.stdout and "generation" not in status.stdout  # internals: --verbose
    assert not (tmp_path / ".agentty").exists()
    built = _run(tmp_path, "index", "docs")
    assert f"docs: no docs indexed — no README, Markdown, reStructuredText or AsciiDoc file found under {tmp_path}" in (
        built.stdout
    )
    assert "0 files" not in built.stdout


ALL_DOCS_SOURCES = {
    "docs/a.md": "# A\n\nText.\n",
    "docs/guide/b.md": "# B\n\nMore.\n",
    ".agentty/skills/ship/SKILL.md": "---\nname: ship\ndescription: Ship it.\n---\n# Ship\n\nSteps.\n",
    ".agentty/memory/port.md": "Staging serves HTTPS on port 8443.\n",
}


def test_status_counts_agree_and_verbose_shows_the_internals(tmp_path: Path) -> None:
    write(tmp_path, ALL_DOCS_SOURCES)
    assert _run(tmp_path, "index", "docs").returncode == 0
    status = _run(tmp_path, "status", "--verbose").stdout
    assert "docs: 4 files, 4 chunks — fresh" in status
    assert "  docs: every document under ./ — 2 files" in status and "  memory: ./.agentty/memory — 1 file" in status
    assert "  skills: 1 file (./.agentty/skills; ~/.agentty/skills does not exist)" in status
    assert "tokenizer v" in status and "generation 1" in status
    report = json.loads(_run(tmp_path, "status", "--json").stdout)
    docs = report["indexes"]["docs"]
    assert docs["files"] == sum(docs["by_source"].values()) == 4


def test_index_dry_run_lists_what_would_be_indexed_and_writes_nothing(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "server/api.py": "def handler():\n    return 1\n" * 40,
            "server/db.py": "x = 1\n",
            "web/app.ts": "export const a = 1;\n",
            "native/shape.h": "namespace geo {\nclass Shape {\n public:\n  virtual ~Shape();\n};\n}\n",
            "README.md": "# Project\n",
        },
    )
    preview = _run(tmp_path, "index", "all", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert "code: 4 files" in preview.stdout and "would be indexed" in preview.stdout
    assert "  by folder: server/ 2, native/ 1, web/ 1" in preview.stdout
    # a .h file counts as the language its text is written in, as the build reads it
    assert "  by language: python 2, cpp 1, typescript 1" in preview.stdout
    assert "  largest: server/api.py (" in preview.stdout
    assert preview.stdout.rstrip().endswith("(dry run: nothing indexed)")
    assert not (tmp_path / ".agentty").exists()


def test_an_unresolvable_embedding_host_is_named_as_such(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Install\n\nRun the installer.\n"})
    found = _run_default_dense(tmp_path, "search-docs", "installer", AGENTTY_OLLAMA_HOST="no-such-host.invalid:11434")
    assert found.stdout.splitlines()[1] == (
        "note: dense unavailable: host not found: no-such-host.invalid (check AGENTTY_OLLAMA_HOST)"
    )


def test_a_busy_http_port_says_which_port_and_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run(tmp_path, "serve", "--transport", "http", "--port", str(port))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"agentty-rag: port {port} on 127.0.0.1 is already in use: stop the other server or pass --port N"
    )


def test_index_with_no_argument_indexes_docs_and_code(tmp_path: Path) -> None:
    write(tmp_path, {"src/app.py": "def start_server(port):\n    return port\n", "docs/a.md": "# A\n\nText.\n"})
    built = _run(tmp_path, "index")
    assert built.returncode == 0, built.stderr
    assert "docs: rebuilt — 1 file, 1 chunk" in built.stdout and "code: rebuilt — 1 file" in built.stdout
    status = json.loads(_run(tmp_path, "status", "--json").stdout)
    assert {name: index["files"] for name, index in status["indexes"].items()} == {"docs": 1, "code": 1}


def _deep_folders(start: Path, names: list[str]) -> None:
    """Make ``start/names[0]/names[1]/…`` one folder at a time from the last one made, so that the folders
    may go deeper than the longest path the system opens."""
    start.mkdir(parents=True, exist_ok=True)
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def test_a_very_deep_folder_is_shown_with_its_middle_left_out(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    deep = [f"level{i:02d}-" + "x" * 190 for i in range(15)]  # about 3,000 characters: still readable
    write(
        root,
        {"README.md": "# Project\n\nHello.\n", "src/" + "/".join(deep) + "/deep.py": "def deep():\n    return 1\n"},
    )
    _deep_folders(root / "src" / Path(*deep), [f"more{i:02d}-" + "y" * 190 for i in range(8)])  # past PATH_MAX
    preview = _run(root, "index", "all", "--dry-run")
    status = _run(root, "status")
    for result in (preview, status):
        assert result.returncode == 0, result.stderr
        assert max(len(line) for line in result.stdout.splitlines()) <= 160, result.stdout
    largest = next(line for line in preview.stdout.splitlines() if line.startswith("  largest:") and "deep" in line)
    assert largest.startswith("  largest: src/level00-x") and "…" in largest and "/deep.py (" in largest
    unreadable = [line for line in status.stdout.splitlines() if "unreadable directory: src/level00-x" in line]
    assert len(unreadable) == 2 and all(line.split("…")[1].endswith("yyyy") for line in unreadable)  # docs, code
    whole = json.loads(_run(root, "status", "--json").stdout)
    examples = whole["indexes"]["code"]["skipped"]["examples"]["unreadable directory"]
    assert len(examples[0]) > 4096  # the data keeps every character
