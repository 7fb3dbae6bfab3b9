"""The corpus copy rag-bench measures: every file an index reads, where its kind's registry entry says."""

from __future__ import annotations

from pathlib import Path

from agentty_rag.bench.corpus import copy_corpus
from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

FILES = {
    "docs/a.md": "# A\n\nText.\n",
    "docs/guide/b.md": "# B\n\nMore.\n",
    ".agentty/skills/ops/ship/SKILL.md": "---\nname: ship\ndescription: Ship it.\n---\n# Ship\n\nSteps.\n",
    ".agentty/memory/notes/port.md": "Staging serves HTTPS on port 8443.\n",
    "src/app/server.py": "def start_server(port):\n    return port\n",
}


def _workspace(root: Path, **env: str) -> Workspace:
    return Workspace(root, load_settings({**LEXICAL, "HOME": str(root / "home"), **env}))


def _keys(workspace: Workspace, name: str) -> list[str]:
    stamps, _ = workspace.index(name).preview()
    return sorted(stamp.key.split(":", 1)[0] + ":" + Path(stamp.path).name for stamp in stamps)


def test_a_docs_copy_keeps_each_kind_in_its_folder_and_points_the_settings_there(tmp_path: Path) -> None:
    write(tmp_path / "ws", FILES)
    user = _workspace(tmp_path / "ws")
    copy = tmp_path / "copy"
    copied = copy_corpus(user, "docs", copy)
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        ".memory/notes/port.md",
        ".skills/ship/SKILL.md",  # a skill keeps its folder's name, its default name
        "docs/a.md",  # a document at its path from the workspace root, which its passages cite
        "docs/guide/b.md",
    ]
    assert copied.overrides == {
        "AGENTTY_DOCS_DIR": str(copy),
        "AGENTTY_SKILLS_DIRS": str(copy / ".skills"),
        "AGENTTY_MEMORY_DIR": str(copy / ".memory"),
    }
    assert (copied.files, copied.bytes) == (4, sum(len(FILES[k].encode()) for k in FILES if not k.startswith("src")))
    assert _keys(_workspace(copy, **copied.overrides), "docs") == _keys(user, "docs")


def test_a_code_copy_keeps_the_paths_under_its_root_and_needs_no_setting(tmp_path: Path) -> None:
    write(tmp_path / "ws", FILES)
    copied = copy_corpus(_workspace(tmp_path / "ws"), "code", tmp_path / "copy")
    assert copied.overrides == {}
    assert (tmp_path / "copy/src/app/server.py").read_text(encoding="utf-8") == FILES["src/app/server.py"]
    assert copied.files == 1
