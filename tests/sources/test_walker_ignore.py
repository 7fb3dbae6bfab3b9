"""The gitignore rules as the walker applies them, and the walker's memory of unchanged folders: a folder
listed before is reused only while nothing that decided its files changed."""

from __future__ import annotations

import os
from pathlib import Path

from agentty_rag.sources.languages import file_language
from agentty_rag.sources.listing import ListingCache
from agentty_rag.sources.walker import WalkRules, scan_tree
from tests.conftest import write

_RULES = WalkRules(accept=lambda name: file_language(name) is not None, key_prefix="code:")
_PAST = 1_600_000_000_000_000_000  # folders last changed long ago: their listings may be reused


def _keys(root: Path, cache: ListingCache | None = None) -> list[str]:
    return [f.key.removeprefix("code:") for f in scan_tree(root, root, _RULES, cache).files]


def _age(root: Path) -> None:
    """Date every folder and file in the past, as in a checkout that has not been touched for a while."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.utime(Path(folder) / name, ns=(_PAST, _PAST), follow_symlinks=False)
    os.utime(root, ns=(_PAST, _PAST))


def _tree(root: Path) -> None:
    write(
        root,
        {
            ".gitignore": "*.gen.py\n!keep.gen.py\n/top_only.py\nlogs/\nbuild_*/\n",
            "a.py": "x = 1\n",
            "x.gen.py": "ignored by a glob\n",
            "keep.gen.py": "kept by a negation\n",
            "top_only.py": "ignored: anchored to the root\n",
            "sub/top_only.py": "kept: the anchored pattern names only the root's\n",
            "sub/logs/a.py": "ignored: a directory pattern\n",
            "sub/logs.py": "kept: a file, not a directory\n",
            "build_x/b.py": "ignored: a directory glob\n",
            "sub/.gitignore": "!x.gen.py\nlocal.py\n",
            "sub/x.gen.py": "kept: the nested file re-includes it\n",
            "sub/local.py": "ignored by the nested file\n",
            "sub/deeper/local.py": "ignored: a nested pattern without a slash matches at any depth below\n",
            "other/local.py": "kept: the nested file applies to its own folder only\n",
        },
    )


def test_gitignore_negation_nesting_anchors_and_directory_patterns(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _keys(tmp_path) == [
        "a.py",
        "keep.gen.py",
        "other/local.py",
        "sub/logs.py",
        "sub/top_only.py",
        "sub/x.gen.py",
    ]


def test_a_reused_walk_finds_exactly_what_a_fresh_walk_finds(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    cache = ListingCache()
    first = _keys(tmp_path, cache)
    again = _keys(tmp_path, cache)
    assert cache.reused > 0
    assert again == first == _keys(tmp_path)


def test_an_edited_file_in_a_reused_folder_gets_its_new_stamp(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    cache = ListingCache()
    scan_tree(tmp_path, tmp_path, _RULES, cache)
    (tmp_path / "a.py").write_text("x = 2  # longer now\n", encoding="utf-8")  # the folder's mtime stays
    os.utime(tmp_path, ns=(_PAST, _PAST))
    stamps = {f.key: f for f in scan_tree(tmp_path, tmp_path, _RULES, cache).files}
    assert cache.reused > 0
    assert stamps["code:a.py"].size == len("x = 2  # longer now\n")


def test_a_file_added_or_removed_is_seen_although_the_folder_was_listed_before(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    cache = ListingCache()
    scan_tree(tmp_path, tmp_path, _RULES, cache)
    write(tmp_path, {"other/new.py": "x = 3\n"})
    (tmp_path / "sub" / "logs.py").unlink()
    keys = _keys(tmp_path, cache)
    assert "other/new.py" in keys and "sub/logs.py" not in keys
    assert keys == _keys(tmp_path)


def test_a_changed_gitignore_changes_the_decisions_of_reused_folders(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    cache = ListingCache()
    assert "other/local.py" in _keys(tmp_path, cache)
    # Same folder mtime (the file is rewritten in place): only the ignore file's own stat tells.
    (tmp_path / ".gitignore").write_text("other/\n", encoding="utf-8")
    os.utime(tmp_path, ns=(_PAST, _PAST))
    keys = _keys(tmp_path, cache)
    assert "other/local.py" not in keys and "x.gen.py" in keys
    assert keys == _keys(tmp_path)


def test_a_nested_gitignore_edit_is_seen_in_its_folder(tmp_path: Path) -> None:
    _tree(tmp_path)
    _age(tmp_path)
    cache = ListingCache()
    assert "sub/x.gen.py" in _keys(tmp_path, cache)
    (tmp_path / "sub" / ".gitignore").write_text("local.py\n", encoding="utf-8")
    os.utime(tmp_path / "sub", ns=(_PAST, _PAST))
    keys = _keys(tmp_path, cache)
    assert "sub/x.gen.py" not in keys
    assert keys == _keys(tmp_path)


def test_a_symlink_is_judged_again_when_its_target_changes(tmp_path: Path) -> None:
    write(tmp_path, {"real/a.py": "x = 1\n", "other/b.py": "x = 2\n", "ws/keep.py": "x = 0\n"})
    root = tmp_path / "ws"
    write(root, {"lib_a/a.py": "x = 1\n", "lib_b/b.py": "x = 2\n"})
    link = root / "zlink"
    os.symlink(root / "lib_a", link)
    _age(root)
    cache = ListingCache()
    assert "zlink/a.py" not in _keys(root, cache)  # the real folder names it
    os.remove(link)
    os.symlink(tmp_path / "other", link)  # now out of the workspace
    os.utime(root, ns=(_PAST, _PAST))
    result = scan_tree(root, root, _RULES, cache)
    assert result.skipped.examples["symlink outside root"] == ["zlink"]


def test_a_source_with_a_walked_tree_can_still_be_sent_to_a_build_worker(tmp_path: Path) -> None:
    import pickle

    from agentty_rag.sources.code import CodeSource

    _tree(tmp_path)
    _age(tmp_path)
    source = CodeSource(tmp_path, 100, 1 << 20)
    source.scan()
    copy = pickle.loads(pickle.dumps(source))
    assert [f.key for f in copy.scan().files] == [f.key for f in source.scan().files]
