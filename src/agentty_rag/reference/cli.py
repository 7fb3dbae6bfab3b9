"""The command line reference page, written from the ``agentty-rag`` and ``rag-bench`` argument parsers.

Each command gets its synopsis and one table row per argument (its values, its default, its help), in the
parsers' own order. The text is built from the parsers' actions rather than from ``--help``, whose layout
changes with the terminal's width and the Python version.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

_HIDDEN = (argparse._HelpAction, argparse._VersionAction)


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """Each subcommand's name, parser and one-line help, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, sub, helps.get(name, "")


def _values(action: argparse.Action) -> str:
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "|".join(str(choice) for choice in action.choices)
    if isinstance(action.metavar, str):
        return action.metavar
    return action.dest.upper()


def _usage_word(action: argparse.Action) -> str:
    """An argument as the synopsis shows it: ``--json``, ``[-k K]``, ``QUERY...``, ``[docs|code|all]``."""
    if action.option_strings:
        flag = action.option_strings[-1] if action.option_strings[-1].startswith("--") else action.option_strings[0]
        word = flag if action.nargs == 0 else f"{flag} {_values(action)}"
        return word if action.required else f"[{word}]"
    word = _values(action)
    if action.nargs in ("+", "*"):
        word += "..."
    return f"[{word}]" if action.nargs in ("?", "*") else word


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS) or action.required:
        return ""
    return f"`{action.default}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, (*_HIDDEN, argparse._SubParsersAction)) and a.help != argparse.SUPPRESS
    ]


def _command(title: str, prefix: str, parser: argparse.ArgumentParser, summary: str, shared: set[str]) -> list[str]:
    """One command's section: heading, summary, synopsis, arguments (less the program's own options, which
    ``shared`` names: they are shown once, with the program)."""
    arguments = [a for a in _arguments(parser) if not shared & set(a.option_strings)]
    lines = [f"### `{title}`", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ".", ""]
    synopsis = " ".join([prefix, *(_usage_word(a) for a in arguments)])
    lines += ["```text", synopsis, "```", ""]
    if arguments:
        lines += ["| argument | default | what it does |", "|---|---|---|"]
        for action in arguments:
            names = ", ".join(f"`{name}`" for name in action.option_strings) or f"`{_values(action)}`"
            if action.option_strings and action.nargs != 0:
                names += f" `{_values(action)}`"
            lines.append(f"| {_cell(names)} | {_default(action)} | {_cell(action.help or '')} |")
        lines.append("")
    return lines


def program(parser: argparse.ArgumentParser) -> list[str]:
    """A program's section: its own options, then each subcommand."""
    name = parser.prog
    lines = [f"## `{name}`", "", _cell(parser.description or ""), ""]
    own = _arguments(parser)
    if own:
        lines += ["| option | default | what it does |", "|---|---|---|"]
        for action in own:
            names = ", ".join(f"`{flag}`" for flag in action.option_strings)
            if action.nargs != 0:
                names += f" `{_values(action)}`"
            lines.append(f"| {_cell(names)} | {_default(action)} | {_cell(action.help or '')} |")
        lines.append("")
    shared = {flag for action in own for flag in action.option_strings}
    prefix = " ".join([name, *(_usage_word(a) for a in own)])
    for sub_name, sub, summary in _subcommands(parser):
        lines += _command(f"{name} {sub_name}", f"{prefix} {sub_name}", sub, summary, shared)
    return lines


def reference(programs: list[argparse.ArgumentParser]) -> str:
    """The whole page's generated part: every program, every command."""
    lines: list[str] = []
    for parser in programs:
        lines += program(parser)
    return "\n".join(lines).rstrip("\n")


__all__ = ["program", "reference"]
