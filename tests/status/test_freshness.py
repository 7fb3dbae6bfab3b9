"""``agentty-rag status`` says which files a file cap left out and by which rule, and what a running server
does to stay fresh."""

from __future__ import annotations

from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.render import render_status
from agentty_rag.state import watch as watch_state
from agentty_rag.status.report import gather
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def _status(root: Path, **env: str) -> str:
    workspace = Workspace(root, load_settings({**LEXICAL, **env}))
    try:
        workspace.index("code").refresh()
        return render_status(gather(workspace, Located(root, root, "--root")))
    finally:
        workspace.close()


def test_status_names_the_rules_that_left_files_out_over_the_cap(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/core.py": "def core():\n    pass\n",
            "app/deep/er/inner.py": "def inner():\n    pass\n",
            "tests/test_core.py": "def test_core():\n    pass\n",
            "examples/demo.py": "def demo():\n    pass\n",
        },
    )
    text = _status(tmp_path, AGENTTY_RAG_CODE_MAX_FILES="2")
    assert (
        "  code covers 2 of 4 files: the file cap AGENTTY_RAG_CODE_MAX_FILES=2 left out 1 examples, benchmarks, "
        "fixtures and docs, 1 tests" in text
    )


def test_status_tells_what_a_running_server_does_and_forgets_a_stopped_one(tmp_path: Path) -> None:
    write(tmp_path, {"app/core.py": "def core():\n    pass\n"})
    watch_state.record(tmp_path / ".agentty", "failed", "OSError: OS file watch limit reached")
    text = _status(tmp_path)
    assert "changes: the server (pid" in text and "could not watch the workspace (OSError" in text
    watch_state.clear(tmp_path / ".agentty")
    assert "changes:" not in _status(tmp_path)
