"""The settings tables of the configuration page, written from the declarations (so the two cannot drift).

``python -m agentty_rag.reference`` writes them into ``docs/configuration.md``; a test fails when the page
differs from ``tables()``.
"""

from __future__ import annotations

from agentty_rag.config.stages import GROUPS
from agentty_rag.config.variables import Variable, declared, describe_default, fmt

_TYPE_SHOWN = {"sources": "list", "names": "list"}  # the page's name for a kind, where it differs


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
    """One table per stage, in pipeline order."""
    parts: list[str] = []
    for group in GROUPS:
        parts += [
            _heading(group),
            "",
            "| variable | type | default | range | what it does |",
            "|---|---|---|---|---|",
        ]
        parts += [_row(var) for var in declared(group)]
        parts.append("")
    return "\n".join(parts).rstrip("\n")


__all__ = ["tables"]
