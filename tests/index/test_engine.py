"""Persisted indexes: freshness, incremental updates, crash safety and two processes on one workspace."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.store import SCHEMA_VERSION
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

FILES = {
    "src/auth/tokens.py": "def refresh_token(token):\n    '''Refresh an expired auth token.'''\n    return token\n",
    "src/deploy/rollback.py": "def rollback(release):\n    '''Go back to the previous release.'''\n    return release\n",
    "src/web/client.ts": "export function retryRequest(fn: () => void) {\n  return fn();\n}\n",
    "docs/guide.md": "# Guide\n\nTokens expire after a day.\n",
}


def _workspace(root: Path, **env: str) -> Workspace:
    return Workspace(root, load_settings({**LEXICAL, **env}))


def _code(root: Path, **env: str) -> CorpusIndex:
    index = _workspace(root, **env).index("code")
    index.refresh()
    return index


def _top(index: CorpusIndex, query: str, k: int = 5) -> list[tuple[str, float]]:
    leg = index.lexical_scores(dict.fromkeys(index.tokenize(query), 1.0)).leg(k)
    chunks = index.chunks([s for s, _ in leg])
    return sorted(((chunks[s].ref, round(score, 9)) for s, score in leg), key=lambda p: (-p[1], p[0]))


def test_a_second_process_answers_from_disk_without_rechunking(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    first = _code(tmp_path)
    assert first.last_refresh.rebuilt and first.last_refresh.rechunked_files == 3
    second = _workspace(tmp_path).index("code")
    report = second.refresh()
    assert not report.changed_anything and report.rechunked_files == 0
    assert _top(second, "refresh expired token") == _top(first, "refresh expired token")
    manifest = json.loads((tmp_path / ".agentty" / "rag_code.ragdb.meta.json").read_text())
    assert manifest["format"] == "agentty-rag-manifest" and manifest["tokenizer_version"]
    assert manifest["files"]["code:src/auth/tokens.py"]["mtime_ns"] == os.stat(tmp_path / FILES_PATH).st_mtime_ns
    assert manifest["roots"]["workspace"] == str(tmp_path.resolve())


FILES_PATH = "src/auth/tokens.py"


def test_edit_add_delete_and_rename_are_each_seen_by_the_next_search(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    index = _code(tmp_path, AGENTTY_RAG_REBUILD_FRACTION="1")
    (tmp_path / "src/auth/tokens.py").write_text("def refresh_token(token):\n    return rotate_keyring(token)\n")
    report = index.refresh()
    assert (report.changed, report.rechunked_files, report.rebuilt) == (1, 1, False)
    assert _top(index, "rotate keyring")[0][0] == "src/auth/tokens.py"

    write(tmp_path, {"src/billing/invoice.py": "def prorate_invoice(plan):\n    return plan\n"})
    report = index.refresh()
    assert (report.added, report.rechunked_files) == (1, 1)
    assert _top(index, "prorate invoice")[0][0] == "src/billing/invoice.py"

    (tmp_path / "src/deploy/rollback.py").unlink()
    report = index.refresh()
    assert (report.removed, report.rechunked_files) == (1, 0)
    assert _top(index, "previous release rollback") == []

    (tmp_path / "src/billing/invoice.py").rename(tmp_path / "src/billing/charges.py")
    report = index.refresh()
    assert (report.added, report.removed, report.rechunked_files) == (1, 1, 1)
    assert [ref for ref, _ in _top(index, "prorate invoice")] == ["src/billing/charges.py"]


def test_a_touch_without_content_change_costs_no_reindexing(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    index = _code(tmp_path)
    before = _top(index, "refresh expired token")
    later = time.time_ns() + 5_000_000_000
    os.utime(tmp_path / "src/auth/tokens.py", ns=(later, later))
    report = index.refresh()
    assert (report.touched, report.changed, report.rechunked_files) == (1, 0, 0)
    assert _top(index, "refresh expired token") == before
    assert index.refresh().changed_anything is False  # the new stamp was recorded


def test_many_changes_rebuild_instead_of_patching(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    index = _code(tmp_path, AGENTTY_RAG_REBUILD_FRACTION="0.2")
    write(tmp_path, {f"src/new_{i}.py": f"def fresh_{i}():\n    return {i}\n" for i in range(4)})
    report = index.refresh()
    assert report.rebuilt and "files changed" in report.reason


def test_a_chunking_change_forces_a_rebuild(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    _code(tmp_path)
    index = _workspace(tmp_path, AGENTTY_RAG_CODE_CHUNK_CHARS="800").index("code")
    report = index.refresh()
    assert report.rebuilt and "configuration changed" in report.reason


def test_docs_and_code_indexes_are_independent(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    workspace = _workspace(tmp_path)
    docs, code = workspace.index("docs"), workspace.index("code")
    docs.refresh()
    code.refresh()
    (tmp_path / "src/auth/tokens.py").write_text("def renamed():\n    pass\n")
    assert not docs.refresh().changed_anything
    assert code.refresh().changed == 1
    (tmp_path / "docs/guide.md").write_text("# Guide\n\nChanged.\n")
    assert not code.refresh().changed_anything
    assert docs.refresh().changed == 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_corrupt_database_is_reported_once_and_rebuilt(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, FILES)
    _code(tmp_path).close()
    db = tmp_path / ".agentty" / "rag_code.ragdb"
    data = db.read_bytes()
    db.write_bytes(
        {"garbage": b"not a database at all" * 100, "truncated": data[: len(data) // 3], "empty": b""}[damage]
    )
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    workspace = _workspace(tmp_path)
    outcome = workspace.search_code("refresh expired token")
    assert "src/auth/tokens.py" in outcome.text
    if damage != "empty":  # an empty file is a valid empty database: it is simply rebuilt
        assert sum("rebuilding the code index" in r.message for r in caplog.records) == 1


@pytest.mark.parametrize(
    "content", ["{not json", json.dumps({"format": "agentty-rag-manifest", "schema_version": 999}), "[]"]
)
def test_a_bad_or_future_manifest_is_reported_and_rebuilt(
    tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, FILES)
    _code(tmp_path).close()
    (tmp_path / ".agentty" / "rag_code.ragdb.meta.json").write_text(content)
    index = _workspace(tmp_path).index("code")
    report = index.refresh()
    assert report.rebuilt
    assert sum("rag_code.ragdb.meta.json" in r.message for r in caplog.records) == 1
    assert (
        json.loads((tmp_path / ".agentty" / "rag_code.ragdb.meta.json").read_text())["schema_version"] == SCHEMA_VERSION
    )


CHILD = textwrap.dedent("""
    import os
    import sys
    from pathlib import Path
    from agentty_rag.config import load_settings
    from agentty_rag.workspace.service import Workspace
    env = {"AGENTTY_RAG_DENSE": "0", "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    index = Workspace(Path(sys.argv[1]), load_settings(env)).index("code")
    print("ready", flush=True)
    report = index.refresh(force_rebuild=sys.argv[2] == "rebuild")
    print("done", report.rebuilt, index.n_chunks, flush=True)
""")


def _many_files(root: Path, n: int, tag: str, functions: int = 30) -> None:
    body = "\n\n".join(f"def {tag}_function_{j}(value):\n    return value + {j}\n" for j in range(functions))
    write(root, {f"pkg/mod_{i:04}.py": body for i in range(n)})


@pytest.mark.parametrize("delay", [0.2, 0.5, 0.9, 1.4])
def test_a_writer_killed_mid_update_leaves_a_valid_index(tmp_path: Path, delay: float) -> None:
    _many_files(tmp_path, 300, "old", functions=30)
    baseline = _code(tmp_path)
    old_chunks = baseline.n_chunks
    baseline.close()
    _many_files(tmp_path, 300, "new", functions=40)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), "rebuild"], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().startswith("ready")
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    finished = "done" in child.communicate()[0]
    reader = _workspace(tmp_path).index("code")
    reader.status()  # what a new process finds on disk, before its own refresh (status never writes)
    # Old or new, never a mix: the kill may land after the commit but before the child reports it.
    assert reader.n_chunks in (old_chunks, 300 * 40)
    if finished:
        assert reader.n_chunks == 300 * 40
    if delay == 0.2:
        assert not finished and reader.n_chunks == old_chunks, "the kill should have landed mid-update"
    outcome = _workspace(tmp_path).search_code("new function value")
    assert "pkg/mod_" in outcome.text and "new_function" in outcome.text


def test_two_processes_updating_at_once_serialize(tmp_path: Path) -> None:
    _many_files(tmp_path, 120, "both")
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), "update"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert all(child.returncode == 0 for child in children)
    done = [line.split() for out in outputs for line in out.splitlines() if line.startswith("done")]
    assert len(done) == 2 and {d[2] for d in done} == {str(120 * 30)}
    assert sorted(d[1] for d in done) == ["False", "True"]  # one built, the other found it fresh


def test_a_lock_left_by_a_dead_process_is_not_in_force(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    lock = tmp_path / ".agentty" / "rag_code.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("999999\n")
    started = time.monotonic()
    index = _code(tmp_path, AGENTTY_RAG_LOCK_TIMEOUT_MS="2000")
    assert index.n_chunks > 0 and time.monotonic() - started < 2


def test_a_live_lock_holder_makes_the_search_answer_from_the_committed_index(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    _code(tmp_path).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import os, sys, time
        from filelock import lock_descriptor
        fd = os.open({str(tmp_path / ".agentty" / "rag_code.lock")!r}, os.O_RDWR | os.O_CREAT)
        lock_descriptor(fd)
        print("locked", flush=True)
        time.sleep(30)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().startswith("locked")
        (tmp_path / "src/auth/tokens.py").write_text("def refresh_token(token):\n    return 'edited'\n")
        outcome = _workspace(tmp_path, AGENTTY_RAG_LOCK_TIMEOUT_MS="300").search_code("refresh token")
        assert "another process is updating" in outcome.text
        assert "src/auth/tokens.py" in outcome.text
    finally:
        holder.kill()
        holder.communicate()


edits = st.lists(
    st.tuples(
        st.integers(0, 5),
        st.sampled_from(["edit", "delete", "add"]),
        st.sampled_from(["alpha beta", "beta gamma delta", "token refresh", "gamma gamma"]),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits)
def test_incremental_updates_equal_a_full_rebuild_after_random_edits(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, str, str]]
) -> None:
    root = tmp_path_factory.mktemp("ws")
    write(root, {f"m{i}.py": f"def f{i}():\n    '''alpha {i} beta'''\n" for i in range(6)})
    index = _code(root, AGENTTY_RAG_REBUILD_FRACTION="1")
    for number, action, words in steps:
        path = root / f"m{number}.py"
        if action == "delete":
            path.unlink(missing_ok=True)
        else:
            path.write_text(f"def f{number}():\n    '''{words} {action}'''\n    return {len(words)}\n")
        index.refresh()
    fresh_root = tmp_path_factory.mktemp("fresh")
    write(fresh_root, {p.name: p.read_text() for p in root.glob("*.py")})
    fresh = _code(fresh_root)
    for query in ("alpha beta", "gamma", "token refresh delta", "edit add"):
        assert _top(index, query, 10) == _top(fresh, query, 10)


def test_an_index_that_must_not_persist_writes_nothing_to_disk(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    persisted = _workspace(tmp_path).index("code")
    config = replace(persisted.config, persist=False)
    index = CorpusIndex(config)
    report = index.refresh()
    assert report.rebuilt and index.n_chunks == 3
    assert _top(index, "refresh expired token")[0][0] == "src/auth/tokens.py"
    (tmp_path / "src/auth/tokens.py").write_text("def renamed_thing():\n    pass\n")
    assert index.refresh().changed == 1
    assert not (tmp_path / ".agentty").exists()


def test_a_large_build_on_several_processes_equals_one_on_one_core(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentty_rag.index.storage import ingest

    files = {
        f"pkg/m{i:04}.py": f"def handler_{i}(request):\n    '''Serve request {i % 7} quickly.'''\n"
        f"    return request.value + {i}\n"
        for i in range(ingest.PARALLEL_MIN_FILES + 20)
    }
    parallel_root, serial_root = tmp_path_factory.mktemp("parallel"), tmp_path_factory.mktemp("serial")
    write(parallel_root, files)
    write(serial_root, files)
    parallel = _code(parallel_root)
    monkeypatch.setattr(ingest, "PARALLEL_MIN_FILES", 10**9)
    serial = _code(serial_root)
    assert parallel.n_chunks == serial.n_chunks == len(files)
    for query in ("serve request 3", "handler value", "request quickly"):
        assert _top(parallel, query, 10) == _top(serial, query, 10)


def test_a_rebuild_drops_vectors_no_chunk_uses_once_they_outnumber_the_chunks(tmp_path: Path) -> None:
    import sqlite3

    from agentty_rag.index.storage.store import Store
    from agentty_rag.index.vectors.base import embed_hash
    from agentty_rag.index.vectors.sqlite import write_vectors

    write(tmp_path, FILES)
    index = _code(tmp_path)
    live = [embed_hash(c) for c in index.all_chunks()]
    stale = [f"stale-{i}" for i in range(2001)]  # more than twice the live chunks, and than 1000
    store = Store(index.config.db_path, index.config.seal_key)
    write_vectors(store, "model|4||", [(h, b"\0" * 8) for h in (*live, *stale)])
    store.close()
    index.refresh(force_rebuild=True)
    db = sqlite3.connect(index.config.db_path)
    kept = {row[0] for row in db.execute("SELECT hash FROM vectors")}
    db.close()
    assert kept == set(live)
