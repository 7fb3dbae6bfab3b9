"""Progress of a long build: the phases come in order and each reports how far it is."""

from __future__ import annotations

from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def test_a_build_reports_scanning_then_each_file_parsed_then_writing(tmp_path: Path) -> None:
    write(tmp_path, {f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(5)})
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    index = workspace.index("code")
    calls: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, phase: str) -> None:
        calls.append((done, total, phase))

    index.refresh(progress=progress)
    phases = [phase for _, _, phase in calls]
    assert phases == ["scanning", *["parsing"] * 5, "writing"]
    assert [(done, total) for done, total, phase in calls if phase == "parsing"] == [(n, 5) for n in range(1, 6)]
    calls.clear()
    index.refresh(progress=progress)  # nothing changed: a scan, no build
    assert [phase for _, _, phase in calls] == ["scanning"]
    workspace.close()
