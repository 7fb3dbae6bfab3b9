"""A suite manifest: the workspaces ``rag-bench suite`` measures, each with its labeled queries (TOML)::

    [suite]                          # optional: what every workspace uses unless it says otherwise
    corpus = "code"                  # the index to measure: docs or code (default code)
    level = "file"                   # relevance level: file or passage (default file)

    [suite.env]                      # optional: AGENTTY_* settings for every workspace
    AGENTTY_RAG_CODE_MAX_FILES = 50000

    [[workspace]]
    path = "repos/api"               # the workspace root
    queries = "queries/api.jsonl"    # labeled queries, in rag-bench's queries format
    name = "api"                     # optional (default: the folder's name); names are unique
    corpus = "docs"                  # optional, as above
    level = "passage"                # optional, as above

    [workspace.env]                  # optional: settings for this workspace (they win over [suite.env])
    AGENTTY_DOCS_DIR = "handbook"    # relative to the workspace root, as in the environment

Relative ``path`` and ``queries`` start at the manifest's folder. A problem names the manifest's line: TOML
does not keep line numbers, so they are found again in the text (the ``[[workspace]]`` header, or the key's
own line below it).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag.config import parse_variable, variable
from agentty_rag.errors import ManifestError

CORPORA = ("docs", "code")
LEVELS = ("file", "passage")
_SUITE_KEYS = ("corpus", "level", "env")
_WORKSPACE_KEYS = ("name", "path", "queries", "corpus", "level", "env")
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


@dataclass(frozen=True)
class SuiteWorkspace:
    """One workspace of a suite, with everything its run needs."""

    name: str
    root: Path
    queries: Path
    corpus: str
    level: str
    env: dict[str, str]
    line: int  # of its [[workspace]] header (0 when the manifest has none, e.g. an inline array)


@dataclass(frozen=True)
class Manifest:
    path: Path
    workspaces: tuple[SuiteWorkspace, ...]


class _Lines:
    """Where the manifest's tables and keys are, to point at them."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # (line number, table name, whether it is an array-of-tables header)
        self.headers: list[tuple[int, str, bool]] = []
        for number, line in enumerate(self.lines, start=1):
            match = _HEADER.match(line)
            if match:
                name = ".".join(part.strip().strip("\"'") for part in match.group(2).split("."))
                self.headers.append((number, name, match.group(1) == "[["))

    def _end(self, start: int, table: str) -> int:
        later = [n for n, name, _ in self.headers if n > start and name != table and not name.startswith(table + ".")]
        return later[0] - 1 if later else len(self.lines)

    def table(self, table: str) -> tuple[int, int]:
        """First and last line of ``[table]`` with its sub-tables; (0, 0) when it has no header."""
        starts = [n for n, name, _ in self.headers if name == table or name.startswith(table + ".")]
        return (starts[0], self._end(starts[0], table)) if starts else (0, 0)

    def array_item(self, table: str, index: int) -> tuple[int, int]:
        """First and last line of the ``index``-th ``[[table]]`` with its sub-tables; (0, 0) when not found."""
        starts = [n for n, name, array in self.headers if name == table and array]
        if index >= len(starts):
            return 0, 0
        later = [n for n, name, _ in self.headers if n > starts[index] and not name.startswith(table + ".")]
        return starts[index], (later[0] - 1 if later else len(self.lines))

    def key(self, region: tuple[int, int], key: str) -> int:
        """The line that sets ``key`` (or heads a table of that name) in ``region``; else its first line."""
        start, end = region
        pattern = re.compile(rf"^\s*(\w+\.)?[\"']?{re.escape(key)}[\"']?\s*=")
        for number in range(max(start, 1), end + 1):
            if pattern.match(self.lines[number - 1]):
                return number
        for number, name, _ in self.headers:
            if start <= number <= end and key in name.split("."):
                return number
        return start


class _Reader:
    """Checks one manifest's values, raising ``ManifestError`` at the line of the first problem."""

    def __init__(self, path: Path, lines: _Lines) -> None:
        self.path = path
        self.lines = lines

    def fail(self, line: int, message: str) -> ManifestError:
        return ManifestError(f"{self.path}:{line}: {message}" if line else f"{self.path}: {message}")

    def keys(self, table: Mapping[str, Any], known: tuple[str, ...], region: tuple[int, int], where: str) -> None:
        for key in table:
            if key not in known:
                raise self.fail(
                    self.lines.key(region, key), f"unknown key {key!r} in {where} (known: {', '.join(known)})"
                )

    def choice(self, table: Mapping[str, Any], key: str, choices: tuple[str, ...], region: tuple[int, int]) -> str:
        value = table[key]
        if value not in choices:
            raise self.fail(self.lines.key(region, key), f'"{key}" must be {" or ".join(choices)} (got {value!r})')
        return str(value)

    def env(self, table: Mapping[str, Any], region: tuple[int, int], where: str) -> dict[str, str]:
        """``AGENTTY_*`` settings as the environment would hold them; an unknown name or a bad value fails."""
        raw = table.get("env", {})
        if not isinstance(raw, dict):
            raise self.fail(self.lines.key(region, "env"), f'"env" in {where} must be a table of AGENTTY_* settings')
        env: dict[str, str] = {}
        for name, value in raw.items():
            line = self.lines.key(region, name)
            try:
                declared = variable(name)
            except KeyError:
                raise self.fail(line, f"{name} is not an agentty-rag variable (see the README's table)") from None
            if isinstance(value, bool):
                text = "1" if value else "0"
            elif isinstance(value, str | int | float):
                text = str(value)
            else:
                raise self.fail(line, f"{name} must be a string, a number or a boolean")
            problems: list[str] = []
            parse_variable(declared, text, problems)
            if problems:
                raise self.fail(line, problems[0])
            env[name] = text
        return env

    def file(self, table: Mapping[str, Any], key: str, region: tuple[int, int], folder: bool) -> Path:
        value = table.get(key)
        if not isinstance(value, str) or not value.strip():
            what = "the workspace root" if folder else "a JSONL file of labeled queries"
            raise self.fail(self.lines.key(region, key), f'[[workspace]] needs "{key}": {what}')
        resolved = (self.path.parent / Path(value).expanduser()).resolve()
        if folder and not resolved.is_dir():
            raise self.fail(self.lines.key(region, key), f'"{key}" is not a folder: {resolved}')
        if not folder and not resolved.is_file():
            raise self.fail(self.lines.key(region, key), f'"{key}" is not a file: {resolved}')
        return resolved


def _parse(path: Path) -> tuple[dict[str, Any], _Lines]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: cannot read ({error})") from error
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        at = _TOML_LINE.search(str(error))
        message = _TOML_LINE.sub("", str(error)).strip()
        where = f"{path}:{at.group(1)}" if at else str(path)
        raise ManifestError(f"{where}: not TOML ({message})") from error
    return data, _Lines(text)


def load_manifest(path: Path) -> Manifest:
    """Read and check a suite manifest; raises ``ManifestError`` naming the first bad line."""
    path = path.expanduser().resolve()
    data, lines = _parse(path)
    reader = _Reader(path, lines)
    everything = (1, len(lines.lines))
    reader.keys(data, ("suite", "workspace"), everything, "the manifest")
    suite = data.get("suite", {})
    suite_region = lines.table("suite")
    if not isinstance(suite, dict):
        raise reader.fail(lines.key(everything, "suite"), "[suite] must be a table")
    reader.keys(suite, _SUITE_KEYS, suite_region, "[suite]")
    defaults = {
        "corpus": reader.choice(suite, "corpus", CORPORA, suite_region) if "corpus" in suite else "code",
        "level": reader.choice(suite, "level", LEVELS, suite_region) if "level" in suite else "file",
    }
    suite_env = reader.env(suite, suite_region, "[suite]")
    tables = data.get("workspace", [])
    if not isinstance(tables, list) or not tables:
        raise reader.fail(
            lines.key(everything, "workspace") if tables else 0,
            "no [[workspace]] tables: each names a workspace's path and its queries file",
        )
    workspaces: list[SuiteWorkspace] = []
    seen: dict[str, int] = {}
    for index, table in enumerate(tables):
        region = lines.array_item("workspace", index)
        if not isinstance(table, dict):
            raise reader.fail(region[0], f"workspace {index + 1} must be a table")
        reader.keys(table, _WORKSPACE_KEYS, region, "[[workspace]]")
        root = reader.file(table, "path", region, folder=True)
        queries = reader.file(table, "queries", region, folder=False)
        name = table.get("name", root.name)
        if not isinstance(name, str) or not name.strip():
            raise reader.fail(lines.key(region, "name"), '"name" must be a non-empty string')
        if name in seen:
            first = f" (first at line {seen[name]})" if seen[name] else ""
            raise reader.fail(region[0], f'two workspaces are named "{name}"{first}; give one a "name"')
        seen[name] = region[0]
        workspaces.append(
            SuiteWorkspace(
                name,
                root,
                queries,
                reader.choice(table, "corpus", CORPORA, region) if "corpus" in table else defaults["corpus"],
                reader.choice(table, "level", LEVELS, region) if "level" in table else defaults["level"],
                {**suite_env, **reader.env(table, region, "[[workspace]]")},
                region[0],
            )
        )
    return Manifest(path, tuple(workspaces))


__all__ = ["CORPORA", "LEVELS", "Manifest", "ManifestError", "SuiteWorkspace", "load_manifest"]
