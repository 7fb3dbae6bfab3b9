"""The README's variable tables, written from the declarations (so the two cannot drift).

``python -m agentty_rag.config.table README.md`` rewrites the part of the README between the two marker
comments; ``tests/test_config.py`` fails when that part differs from ``tables()``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentty_rag.config.stages import GROUPS
from agentty_rag.config.variables import Variable, declared, describe_default, fmt

BEGIN = "<!-- generated from src/agentty_rag/config/stages.py by `python -m agentty_rag.config.table README.md` -->"
END = "<!-- end of the generated variables -->"
_TYPE_SHOWN = {"sources": "list"}  # the README's name for a kind, where it differs


def _range(var: Variable) -> str:
    if var.low is not None and var.high is not None:
        return f"{fmt(var.low)}–{fmt(var.high)}"
    return ", ".join(var.choices)


def _row(var: Variable) -> str:
    cells = (f"`{var.name}`", _TYPE_SHOWN.get(var.kind, var.kind), describe_default(var), _range(var), var.doc)
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def _heading(group: type) -> str:
    """``Sources: which folders …`` (the group's docstring) as ``**Sources**: which folders …``."""
    title, _, rest = (group.__doc__ or group.__name__).strip().splitlines()[0].partition(": ")
    return f"**{title}**: {rest}" if rest else f"**{title}**"


def tables() -> str:
    """One table per stage, in pipeline order, between the markers."""
    parts = [BEGIN]
    for group in GROUPS:
        parts += [
            "",
            _heading(group),
            "",
            "| variable | type | default | range | what it does |",
            "|---|---|---|---|---|",
        ]
        parts += [_row(var) for var in declared(group)]
    parts += ["", END]
    return "\n".join(parts)


def generated_part(readme: str) -> str:
    """The README's text from the first marker through the second ("" when either is missing)."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        return ""
    return readme[start : end + len(END)]


def rewrite(readme: str) -> str:
    """The README with its generated part replaced by ``tables()``."""
    current = generated_part(readme)
    if not current:
        raise ValueError(f"the README has no generated part: put the two marker lines where it goes\n{BEGIN}\n{END}")
    return readme.replace(current, tables(), 1)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m agentty_rag.config.table README.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    before = path.read_text(encoding="utf-8")
    after = rewrite(before)
    if after != before:
        path.write_text(after, encoding="utf-8")
    print(f"{path}: {'rewritten' if after != before else 'already current'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
