"""The server's freshness: with its watcher running, a search re-reads only the files the watcher reported
and scans nothing otherwise; the reconciling pass finds what the watcher missed; when the watcher cannot
start or is turned off, every search scans, and ``status`` says which.

The watcher's source of events is ``watchfiles.watch``; here a stand-in with its signature delivers exactly
the events a test reports (the stdio tests run the real one)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.storage import freshness
from agentty_rag.server.upkeep import Upkeep
from agentty_rag.sources.watcher import OVERFLOW_PATHS
from agentty_rag.state.watch import running_server
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

_MODIFIED = 2  # watchfiles.Change.modified


class FakeWatch:
    """``watchfiles.watch`` as a test drives it: running at once, then yielding the changes ``report`` gives."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.folders: tuple[str, ...] = ()  # what the watcher was last asked to watch
        self._batches: queue.Queue[set[str]] = queue.Queue()
        self._taken = threading.Event()

    def __call__(self, *folders: str, stop_event: threading.Event, **_: Any) -> Iterator[set[tuple[int, str]]]:
        if self.fail is not None:
            raise self.fail
        self.folders = folders
        yield set()  # running: like a first timeout of the real watcher
        while not stop_event.is_set():
            try:
                batch = self._batches.get(timeout=0.02)
            except queue.Empty:
                continue
            try:
                yield {(_MODIFIED, path) for path in batch}
            finally:
                self._taken.set()  # the watcher asked for more (or stopped to restart): the batch was handed on

    def report(self, *paths: Path) -> None:
        """Deliver a change of each path, and return once the watcher has handed it on."""
        self._taken.clear()
        self._batches.put({str(path) for path in paths})
        assert self._taken.wait(10)


class SlowStart(FakeWatch):
    """A watcher that takes its time to start (a large tree, a busy machine): ``starting`` until ``run()``."""

    def __init__(self) -> None:
        super().__init__()
        self._go = threading.Event()

    def run(self) -> None:
        self._go.set()

    def __call__(self, *folders: str, stop_event: threading.Event, **kw: Any) -> Iterator[set[tuple[int, str]]]:
        while not self._go.wait(0.01):
            if stop_event.is_set():
                return
        yield from super().__call__(*folders, stop_event=stop_event, **kw)


FILES = {
    "src/billing/invoice.py": "def total_amount(lines):\n    return sum(line.price for line in lines)\n",
    "src/auth/tokens.py": "def refresh_token(token):\n    return token\n",
    "node_modules/pkg/index.js": "module.exports = function ignoredVendorThing() {}\n",
}


def _watched(root: Path, fake: FakeWatch, **env: str) -> tuple[Workspace, Upkeep]:
    write(root, FILES)
    workspace = Workspace(root, load_settings({**LEXICAL, **env}))
    upkeep = Upkeep(workspace, fake)
    upkeep.start()
    workspace.index("code").refresh()  # the first scan tells the watcher which folders to watch
    if upkeep.watcher is not None:
        upkeep.watcher.wait_ready(10)
    workspace.index("code").refresh()  # from the watcher's start on, its reports are trusted
    return workspace, upkeep


def _found(workspace: Workspace, query: str, path: str) -> bool:
    return f"code:{path}" in workspace.search_code(query).text


def test_with_a_running_watcher_searches_scan_nothing_and_see_each_reported_edit(tmp_path: Path) -> None:
    fake = FakeWatch()
    workspace, upkeep = _watched(tmp_path, fake)
    index = workspace.index("code")
    scans = index.freshness.full_scans
    try:
        assert _found(workspace, "total amount", "src/billing/invoice.py")
        invoice = tmp_path / "src/billing/invoice.py"
        invoice.write_text("def grand_total_with_vat(lines):\n    return 1\n", encoding="utf-8")
        fake.report(invoice)
        assert _found(workspace, "grand total with vat", "src/billing/invoice.py")
        added = tmp_path / "src/auth/sessions.py"
        added.write_text("def expire_idle_sessions():\n    pass\n", encoding="utf-8")
        fake.report(added)
        assert _found(workspace, "expire idle sessions", "src/auth/sessions.py")
        (tmp_path / "src/auth/tokens.py").unlink()
        fake.report(tmp_path / "src/auth/tokens.py")
        assert not _found(workspace, "refresh token", "src/auth/tokens.py")
        assert index.freshness.full_scans == scans  # each change was looked at alone
        assert "watches" in str(index.status()["freshness"])
    finally:
        upkeep.stop()
        workspace.close()


def test_an_unreported_change_waits_for_the_reconciling_pass(tmp_path: Path) -> None:
    fake = FakeWatch()
    workspace, upkeep = _watched(tmp_path, fake)
    try:
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})
        assert not _found(workspace, "rotate signing keys", "src/auth/keys.py")  # no scan: nothing reported
        upkeep._pass("code", scan=True)  # what the background thread does every AGENTTY_RAG_RECONCILE_S
        assert _found(workspace, "rotate signing keys", "src/auth/keys.py")
    finally:
        upkeep.stop()
        workspace.close()


def test_a_new_folder_or_an_ignore_file_asks_for_a_full_scan_and_ignored_paths_for_none(tmp_path: Path) -> None:
    fake = FakeWatch()
    workspace, upkeep = _watched(tmp_path, fake)
    index = workspace.index("code")
    try:
        scans = index.freshness.full_scans
        write(tmp_path, {"node_modules/pkg/more.js": "function vendorOnly() {}\n"})
        fake.report(tmp_path / "node_modules/pkg/more.js")
        workspace.search_code("vendor only")
        assert index.freshness.full_scans == scans
        write(tmp_path, {"src/payments/refunds.py": "def issue_partial_refund():\n    pass\n"})
        fake.report(tmp_path / "src/payments", tmp_path / "src/payments/refunds.py")
        assert _found(workspace, "issue partial refund", "src/payments/refunds.py")
        assert index.freshness.full_scans == scans + 1
        (tmp_path / ".gitignore").write_text("src/payments/\n", encoding="utf-8")
        fake.report(tmp_path / ".gitignore")
        assert not _found(workspace, "issue partial refund", "src/payments/refunds.py")
        assert index.freshness.full_scans == scans + 2
    finally:
        upkeep.stop()
        workspace.close()


def test_a_burst_of_changes_past_the_inbox_becomes_one_full_scan(tmp_path: Path) -> None:
    fake = FakeWatch()
    workspace, upkeep = _watched(tmp_path, fake)
    index = workspace.index("code")
    try:
        scans = index.freshness.full_scans
        write(tmp_path, {"src/gen/last.py": "def last_generated_helper():\n    pass\n"})
        fake.report(*(tmp_path / f"src/gen/f{i}.py" for i in range(OVERFLOW_PATHS + 1)))
        assert _found(workspace, "last generated helper", "src/gen/last.py")
        assert index.freshness.full_scans == scans + 1
    finally:
        upkeep.stop()
        workspace.close()


def test_when_the_watcher_cannot_start_every_search_scans_and_status_says_why(tmp_path: Path) -> None:
    fake = FakeWatch(fail=OSError("OS file watch limit reached"))
    workspace, upkeep = _watched(tmp_path, fake)
    try:
        assert upkeep.watcher is not None and upkeep.watcher.state == "failed"
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})
        assert _found(workspace, "rotate signing keys", "src/auth/keys.py")  # scanned, nothing reported
        freshness = str(workspace.index("code").status()["freshness"])
        assert "watcher failed (OSError: OS file watch limit reached)" in freshness
        shown = running_server(workspace.state_dir)
        assert "could not watch the workspace (OSError: OS file watch limit reached)" in shown
    finally:
        upkeep.stop()
        workspace.close()
    assert running_server(workspace.state_dir) == ""  # the record goes with the server


def test_with_the_watcher_off_every_search_scans(tmp_path: Path) -> None:
    workspace, upkeep = _watched(tmp_path, FakeWatch(), AGENTTY_RAG_WATCH="0")
    try:
        assert upkeep.watcher is None
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})
        assert _found(workspace, "rotate signing keys", "src/auth/keys.py")
        assert workspace.index("code").status()["freshness"] == "scans the files before every search"
        assert "AGENTTY_RAG_WATCH=0" in running_server(workspace.state_dir)
    finally:
        upkeep.stop()
        workspace.close()


def test_a_patch_leaves_the_manifest_mirror_until_it_is_asked_for(tmp_path: Path) -> None:
    fake = FakeWatch()
    workspace, upkeep = _watched(tmp_path, fake)
    manifest = tmp_path / ".agentty" / "rag_code.ragdb.meta.json"
    try:
        assert "code:src/auth/tokens.py" in json.loads(manifest.read_text(encoding="utf-8"))["files"]
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})
        fake.report(tmp_path / "src/auth/keys.py")
        assert _found(workspace, "rotate signing keys", "src/auth/keys.py")
        assert "code:src/auth/keys.py" not in json.loads(manifest.read_text(encoding="utf-8"))["files"]
        upkeep._pass("code", scan=False)  # the reconciling pass writes it
        assert "code:src/auth/keys.py" in json.loads(manifest.read_text(encoding="utf-8"))["files"]
        assert "\n" not in manifest.read_text(encoding="utf-8")  # compact
    finally:
        upkeep.stop()
        workspace.close()


def test_only_the_folders_the_walk_entered_are_watched_never_a_link_out_or_a_pruned_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"lib.py": "def elsewhere():\n    pass\n"})
    root = tmp_path / "ws"
    root.mkdir()
    (root / "linked_out").symlink_to(outside)
    fake = FakeWatch()
    workspace, upkeep = _watched(root, fake)
    try:
        watched = {str(Path(folder).relative_to(root)) for folder in fake.folders}
        assert watched == {".", "src", "src/auth", "src/billing", ".agentty"}
    finally:
        upkeep.stop()
        workspace.close()


@pytest.fixture
def large_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scans cost what they cost on a large tree: worth sparing while the watcher starts."""
    monkeypatch.setattr(freshness, "CHEAP_SCAN_S", 0.0)


def _restarted_with(root: Path, watch: FakeWatch) -> tuple[Workspace, Upkeep]:
    """A server started on a workspace indexed by an earlier run, whose invoice.py was edited since."""
    write(root, FILES)
    earlier = Workspace(root, load_settings(LEXICAL))
    earlier.index("code").refresh()
    earlier.close()
    write(root, {"src/billing/invoice.py": "def grand_total_with_vat(lines):\n    return 1\n"})
    workspace = Workspace(root, load_settings(LEXICAL))
    upkeep = Upkeep(workspace, watch)
    upkeep.start()
    return workspace, upkeep


STARTING = "watcher"


@pytest.mark.usefixtures("large_tree")
def test_searches_while_the_watcher_starts_share_one_scan_which_sees_an_edit_made_before_the_start(
    tmp_path: Path,
) -> None:
    """They answer from the scan that started the watcher and say nothing about it: not a line of any answer
    is spent on the watcher (``status`` says it is starting)."""
    slow = SlowStart()
    workspace, upkeep = _restarted_with(tmp_path, slow)
    index = workspace.index("code")
    try:
        answers = [workspace.search_code("grand total with vat").text for _ in range(4)]
        assert all("code:src/billing/invoice.py" in answer for answer in answers)  # the first search scanned
        assert index.freshness.full_scans == 1  # one scan, not one per search
        assert not any(STARTING in answer or "note:" in answer for answer in answers), answers[1]
        assert "the watcher is starting" in str(index.status()["freshness"])
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})  # while it starts
        slow.run()
        assert upkeep.watcher is not None and upkeep.watcher.wait_ready(10)
        answer = workspace.search_code("rotate signing keys").text
        assert "code:src/auth/keys.py" in answer and STARTING not in answer  # the scan after the start found it
        assert index.freshness.full_scans == 2
        workspace.search_code("total amount")
        assert index.freshness.full_scans == 2  # from then on the watcher's reports
    finally:
        upkeep.stop()
        workspace.close()


@pytest.mark.usefixtures("large_tree")
def test_the_reconciling_thread_scans_once_the_watcher_runs_so_that_no_search_waits_for_it(tmp_path: Path) -> None:
    slow = SlowStart()
    workspace, upkeep = _restarted_with(tmp_path, slow)
    index = workspace.index("code")
    try:
        workspace.search_code("grand total with vat")
        slow.run()
        assert upkeep.watcher is not None and upkeep.watcher.wait_ready(10)
        pause = threading.Event()
        for _ in range(1_000):  # no search runs: only the reconciling thread can catch the index up
            if not index.freshness.behind:
                break
            pause.wait(0.01)
        assert not index.freshness.behind and index.freshness.full_scans == 2
    finally:
        upkeep.stop()
        workspace.close()


@pytest.mark.parametrize(
    ("window_s", "cheap_s"),
    [
        pytest.param(0.0, 0.0, id="the scan is older than the window"),
        pytest.param(freshness.START_WINDOW_S, 3600.0, id="the tree scans cheaply"),
    ],
)
def test_while_the_watcher_starts_a_search_scans_again_when_the_last_scan_is_old_or_cheap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window_s: float, cheap_s: float
) -> None:
    monkeypatch.setattr(freshness, "START_WINDOW_S", window_s)
    monkeypatch.setattr(freshness, "CHEAP_SCAN_S", cheap_s)
    slow = SlowStart()
    workspace, upkeep = _restarted_with(tmp_path, slow)
    index = workspace.index("code")
    try:
        answers = [workspace.search_code("grand total with vat").text for _ in range(3)]
        assert index.freshness.full_scans == 3 and not any(STARTING in answer for answer in answers)
    finally:
        upkeep.stop()
        workspace.close()
