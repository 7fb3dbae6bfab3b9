"""Implicit learning's feedback loop as an agent runs it: a search remembers what it showed, the PostToolUse
hook (a real process fed Claude Code's event JSON) records the file the agent then opened, bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.state import feedback
from agentty_rag.state.feedback import RecentSearch, Row, Shown
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

# Every passage shown (no relevance floor), so that what a search remembers is plain to see.
LEARN = {**LEXICAL, "AGENTTY_RAG_LEARN": "1", "AGENTTY_RAG_RELEVANCE_FLOOR": "0"}
FILES = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "src/tokens.py": 'def refresh_token(store, user):\n    """Renew the access token of a user."""\n'
    "    return store.renew(user)\n",
    "src/session.py": 'def open_session(user):\n    """Open a session for a user."""\n    return {"user": user}\n',
    "docs/auth.md": "# Auth\n\nAccess tokens are renewed by the token store every hour.\n",
    ".agentty/skills/tokens/SKILL.md": "---\nname: tokens\ndescription: renew access tokens\n---\nRenew tokens.\n",
}


def read_event(root: Path, file_path: str, **extra: object) -> dict[str, object]:
    """A PostToolUse event for the Read tool, shaped as Claude Code sends it on the hook's stdin."""
    return {
        "session_id": "9f1c2b7e-3d4a-4e5b-8c6d-7e8f9a0b1c2d",
        "transcript_path": str(Path.home() / ".claude/projects/demo/9f1c2b7e.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": file_path},
        "tool_response": {
            "type": "text",
            "file": {"filePath": file_path, "content": "...", "numLines": 3, "startLine": 1, "totalLines": 3},
        },
        "tool_use_id": "toolu_01ABCdefGHIjklMNOpqrSTU",
        **extra,
    }


def _hook(root: Path, event: object) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | LEXICAL
    data = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        [sys.executable, "-m", "agentty_rag", "feedback", "--root", str(root)],
        input=data,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def _rows(root: Path) -> list[list[str]]:
    lines = (root / ".agentty" / feedback.FEEDBACK_FILE).read_text(encoding="utf-8").splitlines()
    assert lines[0] == feedback.HEADER
    return [line.split("\t") for line in lines[1:]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, FILES)
    return Path(os.path.realpath(tmp_path))


def test_a_file_opened_after_a_search_that_showed_it_becomes_one_row(project: Path) -> None:
    workspace = Workspace(project, load_settings(LEARN))
    shown = workspace.search_code("renew the access token of a user", k=5)
    workspace.close()
    assert "code:src/tokens.py" in shown.text
    ran = _hook(project, read_event(project, str(project / "src" / "tokens.py")))
    assert ran.returncode == 0 and ran.stdout == ""
    [row] = _rows(project)
    assert row[2:] == ["code", "src/tokens.py", "1", "renew the access token of a user"]
    again = _hook(project, read_event(project, str(project / "src" / "tokens.py")))
    assert again.returncode == 0 and "recorded already" in again.stderr
    assert len(_rows(project)) == 1  # a second read of it is no new judgment


def test_a_relative_path_is_read_from_the_events_folder(project: Path) -> None:
    workspace = Workspace(project, load_settings(LEARN))
    workspace.search_docs("how often are access tokens renewed", k=3)
    workspace.close()
    event = read_event(project, "docs/auth.md")
    _hook(project, event)
    assert [row[2:4] for row in _rows(project)] == [["docs", "docs/auth.md"]]


def test_skills_and_memory_are_never_remembered(project: Path) -> None:
    workspace = Workspace(project, load_settings(LEARN))
    outcome = workspace.search_docs("renew access tokens", k=5)
    workspace.close()
    assert "skill:tokens" in outcome.text
    [search] = feedback.recent(project / ".agentty", search_time(project))
    assert [item.ref for item in search.shown] == ["docs/auth.md"]


def search_time(root: Path) -> float:
    data = json.loads((root / ".agentty" / feedback.RECENT_FILE).read_text(encoding="utf-8"))
    return float(data["searches"][-1]["at"])


@pytest.mark.parametrize(
    ("event", "why"),
    [
        ("{not json", "not a JSON hook event"),
        ({"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "/x"}}, "PreToolUse"),
        ({"hook_event_name": "PostToolUse", "tool_name": "Grep", "tool_input": {"pattern": "x"}}, "opens no file"),
        ({"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}}, "no file_path"),
    ],
)
def test_other_events_record_nothing_and_exit_zero(project: Path, event: object, why: str) -> None:
    ran = _hook(project, event)
    assert ran.returncode == 0 and ran.stdout == "" and why in ran.stderr
    assert not (project / ".agentty" / feedback.FEEDBACK_FILE).exists()


def test_a_file_no_search_showed_is_not_a_judgment(project: Path) -> None:
    workspace = Workspace(project, load_settings(LEARN))
    workspace.search_code("renew the access token of a user", k=1)
    workspace.close()
    ran = _hook(project, read_event(project, str(project / "src" / "session.py")))
    assert ran.returncode == 0 and "was not among the last results" in ran.stderr
    assert not (project / ".agentty" / feedback.FEEDBACK_FILE).exists()


def test_with_learning_off_searches_remember_nothing(project: Path) -> None:
    workspace = Workspace(project, load_settings(LEXICAL))
    workspace.search_code("renew the access token of a user")
    workspace.close()
    assert not (project / ".agentty" / feedback.RECENT_FILE).exists()
    _hook(project, read_event(project, str(project / "src" / "tokens.py")))
    assert not (project / ".agentty" / feedback.FEEDBACK_FILE).exists()


def test_recent_results_are_bounded_and_expire(tmp_path: Path) -> None:
    shown = (Shown("a.py", str(tmp_path / "a.py"), 1),)
    for i in range(feedback.MAX_SEARCHES + 5):
        feedback.remember(tmp_path, RecentSearch(1000.0 + i, "code", f"query {i}", shown))
    kept = feedback.recent(tmp_path, 1000.0 + feedback.MAX_SEARCHES + 5)
    assert len(kept) == feedback.MAX_SEARCHES and kept[-1].query == f"query {feedback.MAX_SEARCHES + 4}"
    assert feedback.recent(tmp_path, 2000.0 + feedback.RECENT_TTL_S) == []  # an hour later: no judgment
    later = feedback.judgments(kept, str(tmp_path / "a.py"), 1100.0, [])
    assert [(row.query, row.rank) for row in later] == [(f"query {feedback.MAX_SEARCHES + 4}", 1)]


def test_the_feedback_file_keeps_the_newest_rows_up_to_its_cap(tmp_path: Path) -> None:
    rows = [Row(float(i), float(i), "code", f"f{i}.py", 1, f"query\t{i}\n") for i in range(feedback.MAX_ROWS + 7)]
    feedback.append_rows(tmp_path, rows[:10])
    feedback.append_rows(tmp_path, rows[10:])
    kept = feedback.read_rows(tmp_path)
    assert len(kept) == feedback.MAX_ROWS
    assert kept[0].ref == "f7.py" and kept[-1].ref == f"f{feedback.MAX_ROWS + 6}.py"
    assert kept[-1].query == f"query {feedback.MAX_ROWS + 6}"  # tabs and newlines never break a row


def test_an_unreadable_feedback_file_is_empty(tmp_path: Path) -> None:
    (tmp_path / feedback.FEEDBACK_FILE).mkdir()
    assert feedback.read_rows(tmp_path) == ()
    (tmp_path / feedback.RECENT_FILE).write_text("{broken", encoding="utf-8")
    assert feedback.recent(tmp_path, 0.0) == []
