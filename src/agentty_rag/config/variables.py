"""One environment variable: how it is declared on a settings field, and how its raw text is parsed.

A settings field is declared with one of the helpers below (``flag``, ``integer``, ``number``, ``text``,
``folder``, ``folders``, ``choice``, ``source_list``): the call names the variable and gives its default, its
clamp and a one-line description, and returns a dataclass field whose metadata holds the ``Variable``.
``declared(group)`` reads them back in field order.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from agentty_rag.errors import MalformedValue

Kind = Literal["bool", "int", "float", "str", "path", "paths", "choice", "sources", "names"]
T = TypeVar("T")
_KEY = "agentty_variable"
# Byte sizes in the declarations read as sizes.
KIB = 1024
MIB = 1024 * 1024
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Variable:
    """One environment variable: how to parse it and what it does."""

    name: str
    attr: str
    kind: Kind
    default: object
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    secret: bool = False  # never shown: reports say only whether it is set


def _declare(name: str, kind: Kind, default: T, doc: str, **extra: Any) -> T:
    # The attribute name is the field's own; ``declared`` fills it in once the class exists.
    variable = Variable(name, "", kind, default, doc, **extra)
    return field(default=default, metadata={_KEY: variable})


def flag(name: str, default: T, doc: str) -> T:
    """A boolean (``1/0``, ``true/false``, ``yes/no``, ``on/off``); a default of None means "not said"."""
    return _declare(name, "bool", default, doc)


def integer(name: str, default: int, doc: str, *, low: int, high: int) -> int:
    """A whole number, clamped to ``[low, high]``."""
    return _declare(name, "int", default, doc, low=low, high=high)


def number(name: str, default: float, doc: str, *, low: float, high: float) -> float:
    """A real number, clamped to ``[low, high]``."""
    return _declare(name, "float", default, doc, low=low, high=high)


def text(name: str, default: T, doc: str, *, secret: bool = False) -> T:
    """Free text (an empty value keeps the default)."""
    return _declare(name, "str", default, doc, secret=secret)


def folder(name: str, doc: str) -> Path | None:
    """A path, ``~`` expanded; unset means the caller's own default place."""
    return _declare(name, "path", None, doc)


def folders(name: str, doc: str) -> tuple[Path, ...] | None:
    """Paths separated by the OS path separator; unset means the caller's own default places."""
    return _declare(name, "paths", None, doc)


def choice(name: str, default: str, doc: str, *, choices: tuple[str, ...]) -> str:
    """One of a few names (case does not matter)."""
    return _declare(name, "choice", default, doc, choices=choices)


def source_list(name: str, default: tuple[str, ...], doc: str, *, choices: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of source names, each one of ``choices``, repeats dropped."""
    return _declare(name, "sources", default, doc, choices=choices)


def names(name: str, doc: str) -> tuple[str, ...] | None:
    """Comma-separated names (spaces around them dropped, repeats too); unset means none."""
    return _declare(name, "names", None, doc)


def declared(group: type) -> tuple[Variable, ...]:
    """The variables a settings class declares, in field order, each with its attribute name."""
    return tuple(replace(f.metadata[_KEY], attr=f.name) for f in fields(group) if _KEY in f.metadata)


# -- parsing -------------------------------------------------------------------------------------------------


def describe_default(var: Variable) -> str:
    """The default as a user would write it (``unset``, ``1``/``0``, a comma-separated list, the value)."""
    if var.default is None:
        return "unset"
    if isinstance(var.default, bool):
        return "1" if var.default else "0"
    if isinstance(var.default, tuple):
        return ",".join(str(v) for v in var.default)
    return str(var.default)


def fmt(number: float) -> str:
    """A bound as written in warnings and the README: ``4096``, ``0``, ``0.5``."""
    return str(int(number)) if float(number).is_integer() else str(number)


def _clamp(var: Variable, value: float, raw: str, warnings: list[str]) -> float:
    if var.low is not None and value < var.low:
        warnings.append(f"{var.name}={raw} is below the minimum {fmt(var.low)}; using {fmt(var.low)}")
        return var.low
    if var.high is not None and value > var.high:
        warnings.append(f"{var.name}={raw} is above the maximum {fmt(var.high)}; using {fmt(var.high)}")
        return var.high
    return value


def _parse_bool(var: Variable, text: str, warnings: list[str]) -> object:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise MalformedValue("a boolean (1/0, true/false, yes/no, on/off)")


def _parse_int(var: Variable, text: str, warnings: list[str]) -> object:
    try:
        number = int(text.replace("_", ""))
    except ValueError:
        raise MalformedValue("an integer") from None
    return int(_clamp(var, number, text, warnings))


def _parse_float(var: Variable, text: str, warnings: list[str]) -> object:
    try:
        real = float(text)
    except ValueError:
        raise MalformedValue("a number") from None
    if real != real:  # NaN compares unequal to itself
        raise MalformedValue("a number")
    return float(_clamp(var, real, text, warnings))


def _parse_choice(var: Variable, text: str, warnings: list[str]) -> object:
    if text.lower() in var.choices:
        return text.lower()
    raise MalformedValue("one of " + ", ".join(var.choices))


def _parse_sources(var: Variable, text: str, warnings: list[str]) -> object:
    names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
    if not names or any(n not in var.choices for n in names):
        raise MalformedValue("a comma-separated list of " + " and ".join(var.choices))
    return names


def _parse_path(var: Variable, text: str, warnings: list[str]) -> object:
    return Path(text).expanduser() if text else var.default


def _parse_paths(var: Variable, text: str, warnings: list[str]) -> object:
    parts = [p for p in text.split(os.pathsep) if p.strip()]
    return tuple(Path(p.strip()).expanduser() for p in parts) if parts else var.default


_NAME = re.compile(r"[\w.@-]+|\*")


def _parse_names(var: Variable, text: str, warnings: list[str]) -> object:
    found = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not all(_NAME.fullmatch(name) for name in found):
        raise MalformedValue("comma-separated names (letters, digits, '.', '_', '-', '@'), or *")
    return found or var.default


def _parse_str(var: Variable, text: str, warnings: list[str]) -> object:
    return text if text else var.default


_PARSERS = {
    "bool": _parse_bool,
    "int": _parse_int,
    "float": _parse_float,
    "choice": _parse_choice,
    "sources": _parse_sources,
    "path": _parse_path,
    "paths": _parse_paths,
    "str": _parse_str,
    "names": _parse_names,
}


def parse_variable(var: Variable, raw: str, warnings: list[str]) -> object:
    """Parse one raw value; on error append a warning and return the default."""
    try:
        return _PARSERS[var.kind](var, raw.strip(), warnings)
    except MalformedValue as expected:
        warnings.append(f"{var.name}={raw!r} is not {expected}; using the default ({describe_default(var)})")
        return var.default


__all__ = [
    "Kind",
    "Variable",
    "choice",
    "declared",
    "describe_default",
    "flag",
    "fmt",
    "folder",
    "folders",
    "integer",
    "names",
    "number",
    "parse_variable",
    "source_list",
    "text",
]
