"""Any file or folder name, any byte in it, with or without ignore files: the walker skips and counts what it
cannot index and never raises."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.sources.languages import file_language
from agentty_rag.sources.names import is_utf8_name
from agentty_rag.sources.walker import WalkRules, scan_tree

_RULES = WalkRules(accept=lambda name: file_language(name) is not None, key_prefix="code:")

# Every byte a POSIX name may hold ('/' and NUL are the two it may not).
_NAME_BYTES = st.binary(min_size=1, max_size=6).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))
# Lines that never match a generated name, and one that matches every name starting with "ignored".
_LINES = st.lists(
    st.sampled_from(["build/", "*.log", "/dist", "!keep.txt", "ignored*", "c\xff?.py", "\\", "!"]),
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 2), _NAME_BYTES), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=3, max_size=3),
    _LINES,
)
def test_any_name_in_any_folder_is_skipped_and_counted_never_raised(
    entries: list[tuple[bool, int, bytes]], ignore_files: list[bool], lines: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = os.fsencode(tmp)
        folders = [b"", b"d\xff\xfe", b"dsub"]  # the root, a folder not UTF-8, a plain one
        os.makedirs(os.path.join(root, b"dsub"))
        expected: set[str] = set()
        not_utf8 = 0
        for has_ignore, folder in zip(ignore_files, folders, strict=True):
            if has_ignore and folder != folders[1]:
                with open(os.path.join(root, folder, b".gitignore"), "wb") as handle:
                    handle.write("\n".join(lines).encode("utf-8", "surrogateescape"))
        for number, (ignored, where, raw) in enumerate(entries):
            name = (b"ignored" if ignored else b"f") + raw + b"_%d.py" % number
            folder = folders[where]
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            with open(os.path.join(root, folder, name), "wb") as handle:
                handle.write(b"x = 1\n")
            if where == 1:
                continue  # inside a folder whose own name is not UTF-8: never reached
            matched = ignored and "ignored*" in lines and (ignore_files[0] or (where == 2 and ignore_files[2]))
            if matched:
                continue
            if is_utf8_name(os.fsdecode(name)):
                expected.add(os.path.join(folder, name).decode("utf-8"))
            else:
                not_utf8 += 1
        not_utf8 += any(where == 1 for _, where, _ in entries)  # the folder itself, counted once

        result = scan_tree(Path(tmp), Path(tmp), _RULES)

        assert {f.key.removeprefix("code:") for f in result.files} == expected
        assert result.skipped.counts.get("name not UTF-8", 0) == not_utf8


def test_a_pattern_matches_a_byte_that_is_not_utf8_as_git_does(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path)
    for name in (b"c\xff.py", b"c\xfe\xfd.py", b"plain.py"):
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(b"x = 1\n")
    with open(os.path.join(root, b".gitignore"), "wb") as handle:
        handle.write(b"c?.py\n")
    result = scan_tree(tmp_path, tmp_path, _RULES)
    assert [f.key for f in result.files] == ["code:plain.py"]
    assert result.skipped.counts == {"name not UTF-8": 1}  # c\xfe\xfd.py: two bytes, "?" takes one
