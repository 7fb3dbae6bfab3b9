"""The watcher over the real ``watchfiles``: it reports ``watching`` even while the index's own files change
beside the sources, and hands on none of those changes."""

from __future__ import annotations

import threading
from pathlib import Path

from agentty_rag.sources.watcher import TreeWatcher
from tests.conftest import write


def test_the_index_writing_its_own_files_does_not_keep_the_watcher_from_starting(tmp_path: Path) -> None:
    write(tmp_path, {"src/app.py": "def main():\n    pass\n", ".agentty/rag_code.ragdb": ""})
    database = tmp_path / ".agentty" / "rag_code.ragdb-wal"
    done = threading.Event()

    def commit_again_and_again() -> None:  # a build or a patch: a write every few milliseconds, for long
        while not done.wait(0.02):
            with database.open("ab") as handle:
                handle.write(b"page")

    writer = threading.Thread(target=commit_again_and_again, daemon=True)
    writer.start()
    watcher = TreeWatcher(tmp_path)
    inbox = watcher.inbox()
    inbox.want(frozenset({str(tmp_path / "src")}))
    watcher.start()
    try:
        assert watcher.wait_ready(30)  # a batch the filter empties still counts as the watcher running
        assert not inbox.pending()  # the database's changes are not the sources'
    finally:
        done.set()
        writer.join()
        watcher.stop()
