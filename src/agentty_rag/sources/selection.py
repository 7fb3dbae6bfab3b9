"""Which files to index when a tree holds more than the file cap: chosen on purpose, not by walk order.

Source comes before tests, tests before examples, benchmarks, fixtures and docs; within a kind, shallow
before deep; within a depth, the most recently changed first; the path breaks the last ties. The same tree
(names, depths, mtimes) always gives the same choice. What is left out is counted by the rule that left it
out, so ``status`` can say why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentty_rag.types import FileStamp

# Kinds of file, in the order they are kept.
SOURCE, TESTS, EXAMPLES = 0, 1, 2
KIND_NAMES = {SOURCE: "source", TESTS: "tests", EXAMPLES: "examples, benchmarks, fixtures and docs"}

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "integration_tests"})
_EXAMPLE_DIRS = frozenset(
    {
        "example",
        "examples",
        "sample",
        "samples",
        "demo",
        "demos",
        "benchmark",
        "benchmarks",
        "bench",
        "fixtures",
        "fixture",
        "testdata",
        "test_data",
        "doc",
        "docs",
        "documentation",
        "tutorial",
        "tutorials",
        "playground",
    }
)
# test_x.py, x_test.go, x.test.ts, x.spec.js, XTest.java, conftest.py
_TEST_NAME = re.compile(r"(^test_|_test\.|\.test\.|\.spec\.|_spec\.|Tests?\.[a-z]+$|^conftest\.py$)")


def kind_of(rel: str) -> int:
    """SOURCE, TESTS or EXAMPLES, from the folders on a path and the file's name."""
    *folders, name = rel.split("/")
    lowered = [folder.lower() for folder in folders]
    if any(folder in _EXAMPLE_DIRS for folder in lowered):
        return EXAMPLES
    if any(folder in _TEST_DIRS for folder in lowered) or _TEST_NAME.search(name):
        return TESTS
    return SOURCE


@dataclass
class Selection:
    """The outcome of the cap: how many files were found, and how many each rule left out."""

    found: int = 0
    cap: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    setting: str = ""  # the variable that sets the cap, named where the cap is told

    @property
    def active(self) -> bool:
        return bool(self.left_out)

    def summary(self) -> str:
        """``covers 4,000 of 9,210 files: the file cap AGENTTY_RAG_CODE_MAX_FILES=4000 left out 3,100 tests,
        2,110 in deeper folders``."""
        if not self.left_out:
            return ""
        parts = ", ".join(f"{n:,} {rule}" for rule, n in sorted(self.left_out.items(), key=lambda kv: (-kv[1], kv[0])))
        cap = f"the file cap {self.setting}={self.cap}" if self.setting else "the file cap"
        return f"covers {self.cap:,} of {self.found:,} files: {cap} left out {parts}"

    def to_json(self) -> dict[str, object]:
        return {"found": self.found, "cap": self.cap, "left_out": dict(sorted(self.left_out.items()))}


def _priority(stamp: FileStamp, rel: str) -> tuple[int, int, int, str]:
    return (kind_of(rel), rel.count("/"), -stamp.mtime_ns, stamp.key)


def select(
    files: Sequence[FileStamp], cap: int, prefix: str, setting: str = ""
) -> tuple[list[FileStamp], list[str], Selection]:
    """Keep at most ``cap`` files by the policy above.

    Args:
        files: every accepted file of a walk.
        cap: how many to keep.
        prefix: the key prefix to strip for a path relative to the walk (``code:``).
        setting: the variable that sets ``cap``, for the summary ("": none names it).

    Returns:
        The kept files (in the order given), the left-out paths in policy order, and the counts per rule.
    """
    selection = Selection(found=len(files), cap=min(cap, len(files)), setting=setting)
    if len(files) <= cap:
        return list(files), [], selection
    ranked = sorted(((_priority(f, f.key.removeprefix(prefix)), f) for f in files), key=lambda pair: pair[0])
    kept_keys = {f.key for _, f in ranked[:cap]}
    last = ranked[cap - 1][0] if cap > 0 else (-1, -1, 0, "")
    left_out: list[str] = []
    for priority, stamp in ranked[cap:]:
        if priority[0] > last[0]:
            rule = KIND_NAMES[priority[0]]
        elif priority[1] > last[1]:
            rule = "in deeper folders"
        else:
            rule = "changed less recently"
        selection.left_out[rule] = selection.left_out.get(rule, 0) + 1
        left_out.append(stamp.key.removeprefix(prefix))
    return [f for f in files if f.key in kept_keys], left_out, selection


def build_order(stamps: Sequence[FileStamp]) -> list[str]:
    """The keys of ``stamps`` in the order a first build visits them, by the policy above (a key's path is
    what follows its ``kind:`` prefix): what answers most questions is searchable first."""
    return [f.key for f in sorted(stamps, key=lambda f: _priority(f, f.key.partition(":")[2] or f.key))]


__all__ = ["KIND_NAMES", "Selection", "build_order", "kind_of", "select"]
