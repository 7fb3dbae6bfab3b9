from __future__ import annotations

import os
from pathlib import Path

from agentty_rag.sources.languages import file_language
from agentty_rag.sources.walker import WalkRules, scan_tree
from tests.conftest import write


def _rules(**overrides: object) -> WalkRules:
    base: dict[str, object] = {"accept": lambda name: file_language(name) is not None, "key_prefix": "code:"}
    base.update(overrides)
    return WalkRules(**base)  # type: ignore[arg-type]


def _tree(root: Path, outside: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.log\nsecret_dir/\n/generated.py\n!keep.log\n",
            "src/app.py": "def main():\n    pass\n",
            "src/util.js": "export const x = 1\n",
            "src/notes.txt": "not code\n",
            "src/build.log": "ignored by pattern\n",
            "src/.gitignore": "local_*.py\n!local_keep.py\n",
            "src/local_scratch.py": "x = 1\n",
            "src/local_keep.py": "x = 2\n",
            "src/nested/generated.py": "only the root one is ignored\n",
            "generated.py": "ignored: anchored pattern\n",
            "secret_dir/inside.py": "x = 3\n",
            "node_modules/pkg/index.js": "module.exports = 1\n",
            "venv_named_oddly/pyvenv.cfg": "home = /usr\n",
            "venv_named_oddly/lib/site.py": "x = 4\n",
            ".venv/lib/mod.py": "x = 5\n",
            "build/out.py": "x = 6\n",
            "__pycache__/m.py": "x = 7\n",
            ".env": "TOKEN=abc\n",
            ".env.local": "TOKEN=abc\n",
            "deploy/server.pem": "-----BEGIN-----\n",
            "deploy/id_rsa": "key\n",
            "big.py": "x = 1\n" * 400,
            "assets/app.min.js": "var a=1;\n",
            "data/blob.py": b"\x00\x01binary but named .py\n",
            ".agentty/ignore": "ignored_by_agentty/\n",
            "ignored_by_agentty/x.py": "x = 8\n",
            "Makefile": "all:\n\techo hi\n",
        },
    )
    write(outside, {"elsewhere.py": "x = 9\n"})
    os.symlink(root / "src", root / "src" / "loop")  # a directory symlink back to an ancestor
    os.symlink(outside, root / "outside_dir")
    os.symlink(outside / "elsewhere.py", root / "outside_file.py")
    os.symlink(root / "src" / "app.py", root / "app_link.py")  # inside the root, and indexed as src/app.py


def test_walker_indexes_exactly_the_right_files_and_reports_the_rest(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    _tree(root, outside)
    result = scan_tree(root, root, _rules(max_bytes=1000))
    keys = [f.key for f in result.files]
    assert keys == [
        "code:Makefile",
        "code:data/blob.py",  # binary content is judged when loaded, not by the walk
        "code:src/app.py",
        "code:src/local_keep.py",
        "code:src/nested/generated.py",
        "code:src/util.js",
    ]
    assert result.skipped.counts == {
        "generated": 1,
        "secret-looking name": 4,
        "symlink loop or duplicate": 2,
        "symlink outside root": 2,
        "too large": 1,
    }
    assert result.skipped.examples["too large"] == ["big.py"]
    assert sorted(result.skipped.examples["secret-looking name"]) == [
        ".env",
        ".env.local",
        "deploy/id_rsa",
        "deploy/server.pem",
    ]
    assert sorted(result.skipped.examples["symlink outside root"]) == ["outside_dir", "outside_file.py"]
    assert result.skipped.examples["symlink loop or duplicate"] == ["src/loop", "app_link.py"]
    assert result.skipped.examples["generated"] == ["assets/app.min.js"]


def test_a_folder_reached_through_a_link_first_is_indexed_under_its_real_path(tmp_path: Path) -> None:
    # "lib/src/core" sorts before "lib_core/src" and links to it: the real folder still names the files.
    write(tmp_path, {"lib_core/src/de.rs": "pub fn de() {}\n", "lib/src/lib.rs": "pub mod core;\n"})
    os.symlink(tmp_path / "lib_core" / "src", tmp_path / "lib" / "src" / "core")
    result = scan_tree(tmp_path, tmp_path, _rules())
    assert [f.key for f in result.files] == ["code:lib/src/lib.rs", "code:lib_core/src/de.rs"]
    assert result.skipped.examples["symlink loop or duplicate"] == ["lib/src/core"]


def test_a_link_is_followed_when_it_is_the_only_way_to_a_folder(tmp_path: Path) -> None:
    # The start folder is docs/; the shared pages live beside it, inside the workspace.
    write(tmp_path, {"docs/a.md": "# A\n", "shared/b.md": "# B\n"})
    os.symlink(tmp_path / "shared", tmp_path / "docs" / "shared")
    rules = WalkRules(accept=lambda name: name.endswith(".md"), key_prefix="docs:")
    result = scan_tree(tmp_path / "docs", tmp_path, rules)
    assert [f.key for f in result.files] == ["docs:a.md", "docs:shared/b.md"]
    assert result.skipped.total == 0


def test_file_cap_keeps_the_newest_files_of_a_folder_and_reports_the_rest(tmp_path: Path) -> None:
    write(tmp_path, {f"m{i:02}.py": "x = 1\n" for i in range(10)})
    for i in range(10):  # m09 changed last
        os.utime(tmp_path / f"m{i:02}.py", ns=(1_700_000_000_000_000_000 + i, 1_700_000_000_000_000_000 + i))
    result = scan_tree(tmp_path, tmp_path, _rules(max_files=4))
    assert [f.key for f in result.files] == ["code:m06.py", "code:m07.py", "code:m08.py", "code:m09.py"]
    assert result.skipped.counts == {"over file cap": 6}
    assert result.skipped.examples["over file cap"][:2] == ["m05.py", "m04.py"]
    assert result.selection.to_json() == {"found": 10, "cap": 4, "left_out": {"changed less recently": 6}}


def test_over_the_cap_source_comes_before_tests_and_examples_and_shallow_before_deep(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/core.py": "x = 1\n",
            "pkg/deep/er/inner.py": "x = 1\n",
            "pkg/test_core.py": "x = 1\n",
            "tests/test_api.py": "x = 1\n",
            "examples/demo.py": "x = 1\n",
            "main.go": "package main\n",
            "main_test.go": "package main\n",
        },
    )
    result = scan_tree(tmp_path, tmp_path, _rules(max_files=3))
    assert [f.key for f in result.files] == ["code:main.go", "code:pkg/core.py", "code:pkg/deep/er/inner.py"]
    assert result.selection.left_out == {"tests": 3, "examples, benchmarks, fixtures and docs": 1}
    assert "covers 3 of 7 files: the file cap left out" in result.selection.summary()
    shallow = scan_tree(tmp_path, tmp_path, _rules(max_files=2))
    assert [f.key for f in shallow.files] == ["code:main.go", "code:pkg/core.py"]
    assert shallow.selection.left_out["in deeper folders"] == 1


def test_under_the_cap_nothing_is_chosen(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n", "tests/test_a.py": "x = 1\n"})
    result = scan_tree(tmp_path, tmp_path, _rules(max_files=2))
    assert len(result.files) == 2
    assert not result.selection.active and result.selection.summary() == ""


def test_secrets_are_indexed_only_on_request(tmp_path: Path) -> None:
    write(tmp_path, {"config.env": "A=1\n", "settings.py": "A = 1\n"})
    accept_all = _rules(accept=lambda name: True)
    assert [f.key for f in scan_tree(tmp_path, tmp_path, accept_all).files] == ["code:settings.py"]
    with_secrets = _rules(accept=lambda name: True, secrets=True)
    assert [f.key for f in scan_tree(tmp_path, tmp_path, with_secrets).files] == ["code:config.env", "code:settings.py"]


def test_a_subfolder_walk_applies_the_workspace_gitignore(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitignore": "docs/drafts/\n*.tmp.md\n",
            "docs/a.md": "# A\n",
            "docs/drafts/b.md": "# B\n",
            "docs/c.tmp.md": "# C\n",
        },
    )
    rules = WalkRules(accept=lambda name: name.endswith(".md"), key_prefix="docs:")
    assert [f.key for f in scan_tree(tmp_path / "docs", tmp_path, rules).files] == ["docs:a.md"]


def test_stamps_carry_size_and_nanosecond_mtime(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    os.utime(tmp_path / "a.py", ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    (stamp,) = scan_tree(tmp_path, tmp_path, _rules()).files
    assert (stamp.size, stamp.mtime_ns) == (6, 1_700_000_000_123_456_789)
