"""The order a first build visits files in: the policy of the file cap, over every file."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.sources.selection import SOURCE, TESTS, build_order, kind_of
from agentty_rag.types import FileStamp

_FOLDERS = st.sampled_from(["src", "lib", "tests", "docs", "examples", "pkg/sub", "vendor", "spec"])
_NAMES = st.sampled_from(["a.py", "test_b.py", "c_test.go", "d.ts", "e.spec.ts", "conftest.py", "f.rs"])
_PATHS = st.lists(st.builds(lambda folder, name: f"{folder}/{name}", _FOLDERS, _NAMES), unique=True, max_size=40)


def _stamps(paths: list[str], times: list[int]) -> list[FileStamp]:
    return [FileStamp(f"code:{p}", f"/w/{p}", 10, times[i % len(times)]) for i, p in enumerate(paths)]


@given(_PATHS, st.lists(st.integers(0, 10**12), min_size=1, max_size=5))
def test_every_file_once_source_before_tests_before_examples_and_the_same_each_time(
    paths: list[str], times: list[int]
) -> None:
    stamps = _stamps(paths, times)
    order = build_order(stamps)
    assert sorted(order) == sorted(s.key for s in stamps)
    kinds = [kind_of(key.removeprefix("code:")) for key in order]
    assert kinds == sorted(kinds)
    assert build_order(list(reversed(stamps))) == order


def test_a_tree_is_visited_source_first() -> None:
    stamps = _stamps(["tests/test_app.py", "docs/conf.py", "src/app/core.py", "app.py"], [5])
    order = build_order(stamps)
    assert order == ["code:app.py", "code:src/app/core.py", "code:tests/test_app.py", "code:docs/conf.py"]
    assert [kind_of(k.removeprefix("code:")) for k in order[:2]] == [SOURCE, SOURCE]
    assert kind_of("tests/test_app.py") == TESTS
