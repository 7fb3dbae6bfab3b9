"""Looking again at single changed paths gives what a full walk would give for them, or asks for the walk."""

from __future__ import annotations

import os
from pathlib import Path

from agentty_rag.sources.languages import file_language
from agentty_rag.sources.listing import ListingCache
from agentty_rag.sources.rescan import rescan
from agentty_rag.sources.walker import WalkRules, scan_tree
from tests.conftest import write

_RULES = WalkRules(accept=lambda name: file_language(name) is not None, key_prefix="code:", max_bytes=200)


def _walked(root: Path) -> ListingCache:
    write(
        root,
        {
            ".gitignore": "*.gen.py\n",
            "src/a.py": "x = 1\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": "x = 1\n",
            "node_modules/p/i.js": "x\n",
            "ignored/x.py": "x = 1\n",
        },
    )
    (root / ".gitignore").write_text("*.gen.py\nignored/\n", encoding="utf-8")
    cache = ListingCache()
    scan_tree(root, root, _RULES, cache)
    return cache


def _again(root: Path, cache: ListingCache, *rels: str) -> dict[str, object] | None:
    found = rescan([str(root / rel) for rel in rels], root, root, _RULES, cache)
    return None if found is None else {key: (stamp.size if stamp else None) for key, stamp in found.items()}


def test_a_changed_added_or_removed_file_is_judged_by_the_walks_rules(tmp_path: Path) -> None:
    cache = _walked(tmp_path)
    write(tmp_path, {"src/a.py": "x = 22\n", "src/b.py": "y = 1\n", "src/c.gen.py": "z\n", "src/big.py": "x" * 300})
    (tmp_path / "src" / "gone.py").touch()
    (tmp_path / "src" / "gone.py").unlink()
    found = _again(tmp_path, cache, "src/a.py", "src/b.py", "src/c.gen.py", "src/big.py", "src/gone.py", "src/n.txt")
    assert found == {
        "code:src/a.py": 7,
        "code:src/b.py": 6,
        "code:src/c.gen.py": None,  # ignored
        "code:src/big.py": None,  # too large
        "code:src/gone.py": None,
        "code:src/n.txt": None,  # not code
    }


def test_paths_where_no_walk_goes_are_left_out_without_a_walk(tmp_path: Path) -> None:
    cache = _walked(tmp_path)
    write(tmp_path, {"node_modules/p/j.js": "x\n", "ignored/deep/y.py": "y\n", "env/lib/more.py": "m\n"})
    assert _again(tmp_path, cache, "node_modules/p/j.js", "ignored/deep/y.py", "env/lib/more.py") == {}


def test_what_a_single_path_cannot_settle_asks_for_a_walk(tmp_path: Path) -> None:
    cache = _walked(tmp_path)
    write(tmp_path, {"src/new/z.py": "z\n"})
    os.symlink(tmp_path / "src" / "a.py", tmp_path / "src" / "link.py")
    assert _again(tmp_path, cache, "src/new") is None  # a new folder
    assert _again(tmp_path, cache, "src/new/z.py") is None  # in a folder the walk never entered
    assert _again(tmp_path, cache, "src/link.py") is None  # a link
    assert _again(tmp_path, cache, ".gitignore") is None
    assert _again(tmp_path, cache, "src") is None  # a folder the walk entered
