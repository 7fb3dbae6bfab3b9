"""The docs pages written from the code and from committed result files, so that they cannot drift.

Each generated page is hand-written prose with one generated part between two marker comments:

* ``docs/configuration.md``: the settings tables, from the declarations in ``config/stages.py``;
* ``docs/cli.md``: the command line reference, from the ``agentty-rag`` and ``rag-bench`` parsers;
* ``docs/benchmarks.md``: the benchmark tables, from the result files ``docs/benchmarks/*.json``.

``python -m agentty_rag.reference`` rewrites every generated part in place; ``--check`` only says which
pages differ (``tests/reference/test_reference.py`` fails on the same). This is maintainers' tooling: it reads the
repository's files, and nothing at run time imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentty_rag.config.table import tables
from agentty_rag.reference.benchmarks import page_part as benchmark_tables
from agentty_rag.reference.cli import reference as cli_reference

COMMAND = "python -m agentty_rag.reference"
END = "<!-- end of the generated part -->"


def _cli_part(root: Path) -> str:
    from agentty_rag.bench.cli import _parser as bench_parser
    from agentty_rag.cli.parser import parser as main_parser

    return cli_reference([main_parser(), bench_parser()])


@dataclass(frozen=True)
class Generated:
    """A page with a generated part: where it is, what it is made from, and how."""

    page: str  # relative to the repository root
    source: str
    make: Callable[[Path], str]  # the repository root -> the generated part (without the markers)

    @property
    def begin(self) -> str:
        return f"<!-- generated from {self.source} by `{COMMAND}`: edit that, not this part -->"

    def part(self, root: Path) -> str:
        """The generated part, between its markers."""
        return f"{self.begin}\n\n{self.make(root)}\n\n{END}"


PAGES = (
    Generated("docs/configuration.md", "src/agentty_rag/config/stages.py", lambda root: tables()),
    Generated("docs/cli.md", "the argument parsers of agentty-rag and rag-bench", _cli_part),
    Generated("docs/benchmarks.md", "the result files docs/benchmarks/*.json", benchmark_tables),
)


def current_part(text: str, page: Generated) -> str:
    """The page's generated part as it stands, markers included ("" when a marker is missing)."""
    start = text.find(page.begin)
    end = text.find(END, start)
    if start < 0 or end < 0:
        return ""
    return text[start : end + len(END)]


def rewrite(text: str, page: Generated, root: Path) -> str:
    """``text`` with its generated part made anew.

    Raises:
        ValueError: the page has no generated part (its markers are missing).
    """
    current = current_part(text, page)
    if not current:
        raise ValueError(f"{page.page} has no generated part: put these two lines where it goes\n{page.begin}\n{END}")
    return text.replace(current, page.part(root), 1)


def stale(root: Path) -> list[str]:
    """The generated pages under ``root`` whose generated part differs from what the sources give."""
    found = []
    for page in PAGES:
        path = root / page.page
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if current_part(text, page) != page.part(root):
            found.append(page.page)
    return found


def write(root: Path) -> list[str]:
    """Rewrite every generated part under ``root``; the pages that changed."""
    changed = []
    for page in PAGES:
        path = root / page.page
        before = path.read_text(encoding="utf-8")
        after = rewrite(before, page, root)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed.append(page.page)
    return changed


__all__ = ["COMMAND", "END", "PAGES", "Generated", "current_part", "rewrite", "stale", "write"]
