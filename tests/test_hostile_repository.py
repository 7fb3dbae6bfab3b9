"""An untrusted repository, second sweep: each hostile input or injected fault is built here with real files,
links, FIFOs, mounts and processes, and the real command line, index and server meet it.

Nothing here is mocked: a fault is made the way the world makes it (a FIFO where a file was, a hard link
into the workspace, a small file system filled to the last byte)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.service import Workspace
from tests.conftest import LEXICAL, run_module, write


def _ws(root: Path, **env: str) -> Workspace:
    return Workspace(root, load_settings({**LEXICAL, "HOME": str(root.parent / "home"), **env}))


def _cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_module("agentty_rag", root, args, env)


# -- a file name that is not UTF-8, beside a .gitignore ------------------------------------------------------


def test_a_name_that_is_not_utf8_beside_a_gitignore_leaves_every_command_working(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/ok.py": "def capybara():\n    pass\n",
            "docs/ok.md": "# Capybara\n\nThe capybara grazes.\n",
            ".gitignore": "build/\n",
        },
    )
    for name in (b"src/c\xff.py", b"docs/d\xfe.md"):
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as handle:
            handle.write(b"x = 1\n")
    code, docs, status = (
        _cli(tmp_path, "search-code", "capybara"),
        _cli(tmp_path, "search-docs", "capybara"),
        _cli(tmp_path, "status"),
    )
    for done in (code, docs, status):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    assert "code:src/ok.py" in code.stdout and "docs:ok.md" in docs.stdout
    assert "name not UTF-8" in status.stdout


# -- a .gitignore of one huge line, or of thousands of lines ---------------------------------------------------


def test_a_gitignore_line_of_a_million_characters_costs_the_search_nothing(tmp_path: Path) -> None:
    # '*a*a…x' of 1 MB: translating it to a regular expression took minutes per search (quadratic); no path
    # can match it, so it is left out unread. The command would exceed the subprocess timeout before.
    write(tmp_path, {".gitignore": "*a" * 500_000 + "x\n*.log\n", "src/a.py": "def rotate_keys():\n    pass\n"})
    write(tmp_path, {"src/a.log.py": "def logged():\n    pass\n", "src/b.log": "not code\n"})
    done = run_module("agentty_rag", tmp_path, ("search-code", "rotate", "keys"), {}, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "code:src/a.py" in done.stdout


def test_a_gitignore_of_thousands_of_lines_applies_every_line(tmp_path: Path) -> None:
    # RE2 refuses one set of a few thousand patterns: every search raised before; now they are several sets.
    lines = [f"generated_{i}/" for i in range(6000)] + ["secret_notes.py", "!keep_*.py", "keep_out.py"]
    write(
        tmp_path,
        {
            ".gitignore": "\n".join(lines) + "\n",
            "src/app.py": "def rotate_keys():\n    pass\n",
            "src/secret_notes.py": "def rotate_secret_keys():\n    pass\n",
            "src/keep_out.py": "def rotate_kept_keys():\n    pass\n",
            "generated_5999/gen.py": "def rotate_generated_keys():\n    pass\n",
            "generated_6000/gen.py": "def rotate_listed_keys():\n    pass\n",
        },
    )
    workspace = _ws(tmp_path)
    workspace.search_code("rotate keys")
    paths = [os.path.relpath(path, tmp_path) for path in workspace.index("code").file_paths()]
    assert sorted(paths) == ["generated_6000/gen.py", "src/app.py"]
