"""Implicit learning's two files under ``.agentty/``: the results of the last searches, and the feedback rows.

With ``AGENTTY_RAG_LEARN=1`` every search remembers which files of the learnable kinds (docs and code, see
``source_kinds.SourceSpec.learnable``) it showed
(``rag_recent.json``: the last ``MAX_SEARCHES`` searches, each its first ``MAX_SHOWN`` files, forgotten after
``RECENT_TTL_S``). ``agentty-rag feedback`` reads an agent's post-tool event (Claude Code's ``PostToolUse`` for
its ``Read`` tool); when the file opened was among those results, it appends a row for the newest search
that showed it to ``rag_feedback.tsv``:

    opened_at  searched_at  index  ref  rank  query

A search and a file make one judgment: a later read of the same file for the same search adds nothing (it
answered already). Skills and memory are not learnable: never remembered, so never judged. The file keeps the newest
``MAX_ROWS`` rows; ``retrieve.stages.learn`` turns them into a small, decaying prior.

Both files are written whole to a temporary name and renamed, never through a link; a file that cannot be
read is treated as empty, and nothing here ever stops a search or a tool call.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentty_rag.fsguard import open_private, write_private
from agentty_rag.source_kinds import learnable
from agentty_rag.state.files import read_json, write_json
from agentty_rag.state.folder import make as make_state_dir

RECENT_FILE = "rag_recent.json"
FEEDBACK_FILE = "rag_feedback.tsv"
HEADER = "opened_at\tsearched_at\tindex\tref\trank\tquery"
# How many searches are remembered, how many files of each, and for how long a read still judges them.
MAX_SEARCHES = 20
MAX_SHOWN = 20
RECENT_TTL_S = 3600.0
# The most rows the feedback file keeps (the newest), and the longest query a row holds.
MAX_ROWS = 1000
MAX_QUERY_CHARS = 300
# The kinds whose files an agent opens (the registry's learnable kinds): only they are judged.
LEARNABLE = learnable()
# The most of a hook event read from stdin (a Read event carries the file's text: it is cut, not parsed).
EVENT_MAX_BYTES = 4 << 20
READ_TOOLS = ("Read",)


@dataclass(frozen=True)
class Shown:
    """One file a search showed: its ref in the index, its real path, and the rank of its first passage."""

    ref: str
    path: str
    rank: int


@dataclass(frozen=True)
class RecentSearch:
    """A search as implicit learning remembers it."""

    at: float
    index: str
    query: str
    shown: tuple[Shown, ...]


@dataclass(frozen=True)
class Row:
    """One feedback row: a file the agent opened after a search showed it."""

    opened_at: float
    searched_at: float
    index: str
    ref: str
    rank: int
    query: str

    def line(self) -> str:
        query = " ".join(self.query.split())[:MAX_QUERY_CHARS]
        return f"{self.opened_at:.0f}\t{self.searched_at:.3f}\t{self.index}\t{self.ref}\t{self.rank}\t{query}"


@dataclass(frozen=True)
class OpenedFile:
    """What a post-tool event says: the agent's tool opened ``path`` (absolute, as the agent named it)."""

    path: str
    session_id: str | None = None


# -- the hook event ------------------------------------------------------------------------------------------


def opened_file(data: bytes) -> OpenedFile | str:
    """The file a post-tool hook event opened, or why the event is no file opening.

    Reads Claude Code's ``PostToolUse`` event: ``{"hook_event_name": "PostToolUse", "tool_name": "Read",
    "tool_input": {"file_path": "/abs/path", ...}, "tool_response": {...}, "cwd": ..., "session_id": ...}``.
    A relative ``file_path`` is taken from the event's ``cwd``.
    """
    try:
        event = json.loads(data.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        return f"stdin is not a JSON hook event ({error})"
    if not isinstance(event, dict):
        return "stdin is not a JSON hook event"
    name = event.get("hook_event_name")
    if name is not None and name != "PostToolUse":
        return f"a {name} event, not PostToolUse"
    tool = event.get("tool_name")
    if tool not in READ_TOOLS:
        return f"tool {tool!r} opens no file"
    tool_input = event.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        return "the Read event names no file_path"
    cwd = event.get("cwd")
    if not os.path.isabs(path) and isinstance(cwd, str):
        path = os.path.join(cwd, path)
    session = event.get("session_id")
    return OpenedFile(os.path.normpath(path), session if isinstance(session, str) else None)


# -- recent results ------------------------------------------------------------------------------------------


def _search_of(item: object) -> RecentSearch | None:
    if not isinstance(item, dict):
        return None
    try:
        shown = tuple(Shown(str(s["ref"]), str(s["path"]), int(s["rank"])) for s in item["shown"])
        return RecentSearch(float(item["at"]), str(item["index"]), str(item["query"]), shown)
    except (KeyError, TypeError, ValueError):
        return None


def recent(state_dir: Path, now: float) -> list[RecentSearch]:
    """The remembered searches still young enough to be judged, oldest first."""
    data, _ = read_json(state_dir / RECENT_FILE)
    items = data.get("searches") if isinstance(data, dict) else None
    searches = [s for s in map(_search_of, items if isinstance(items, list) else []) if s is not None]
    return [s for s in searches if 0 <= now - s.at < RECENT_TTL_S]


def remember(state_dir: Path, search: RecentSearch) -> None:
    """Add a search to the recent results (its docs and code files only; bounded; best effort)."""
    shown = search.shown[:MAX_SHOWN]
    if not shown:
        return
    kept = [*recent(state_dir, search.at), RecentSearch(search.at, search.index, search.query[:MAX_QUERY_CHARS], shown)]
    data = {
        "searches": [
            {"at": s.at, "index": s.index, "query": s.query, "shown": [vars(x) for x in s.shown]}
            for s in kept[-MAX_SEARCHES:]
        ]
    }
    try:
        write_json(state_dir / RECENT_FILE, data)
    except OSError:
        pass  # learning is best effort: a search never fails for it


def judgments(searches: Sequence[RecentSearch], opened: str, now: float, known: Sequence[Row]) -> list[Row]:
    """The row a file opening adds: for the newest recent search that showed the file, unless that search
    and file were recorded already (a second read of it is no new judgment)."""
    for search in reversed(searches):
        item = next((item for item in search.shown if item.path == opened), None)
        if item is None:
            continue
        at = round(search.at, 3)
        if any((row.searched_at, row.index, row.ref) == (at, search.index, item.ref) for row in known):
            return []
        return [Row(now, at, search.index, item.ref, item.rank, search.query)]
    return []


def showed(searches: Sequence[RecentSearch], opened: str) -> bool:
    """Whether any of the searches showed the file."""
    return any(item.path == opened for search in searches for item in search.shown)


# -- feedback rows -------------------------------------------------------------------------------------------

_cache: dict[str, tuple[tuple[int, int], tuple[Row, ...]]] = {}
_cache_guard = threading.Lock()


def _row(line: str) -> Row | None:
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 6:
        return None
    try:
        row = Row(float(fields[0]), float(fields[1]), fields[2], fields[3], int(fields[4]), fields[5])
    except ValueError:
        return None
    # A forged or damaged time (nan, inf) is left out: the prior is computed from the day a file was opened.
    if not (math.isfinite(row.opened_at) and math.isfinite(row.searched_at)):
        return None
    return row


def read_rows(state_dir: Path) -> tuple[Row, ...]:
    """The feedback rows, oldest first (the newest ``MAX_ROWS``); none when the file is missing or unreadable.

    Parsed once per version of the file (its size and modification time).
    """
    path = state_dir / FEEDBACK_FILE
    try:
        fd = open_private(path, os.O_RDONLY)
    except OSError:
        return ()
    with os.fdopen(fd, "rb") as handle:
        stat = os.fstat(handle.fileno())
        version = (stat.st_size, stat.st_mtime_ns)
        with _cache_guard:
            cached = _cache.get(str(path))
        if cached is not None and cached[0] == version:
            return cached[1]
        text = handle.read(8 << 20).decode("utf-8", "replace")
    rows = tuple(row for row in map(_row, text.splitlines()[1:]) if row is not None)[-MAX_ROWS:]
    with _cache_guard:
        _cache[str(path)] = (version, rows)
    return rows


def append_rows(state_dir: Path, rows: Sequence[Row]) -> None:
    """Add rows to the feedback file, keeping the newest ``MAX_ROWS`` (the file is rewritten whole).

    Raises:
        OSError: the file cannot be written (a link, a read-only folder).
    """
    if not rows:
        return
    kept = [*read_rows(state_dir), *rows][-MAX_ROWS:]
    make_state_dir(state_dir)
    text = "\n".join([HEADER, *(row.line() for row in kept)]) + "\n"
    write_private(state_dir / FEEDBACK_FILE, text.encode("utf-8"))


__all__ = [
    "FEEDBACK_FILE",
    "HEADER",
    "LEARNABLE",
    "MAX_ROWS",
    "MAX_SEARCHES",
    "MAX_SHOWN",
    "RECENT_FILE",
    "RECENT_TTL_S",
    "OpenedFile",
    "RecentSearch",
    "Row",
    "Shown",
    "append_rows",
    "judgments",
    "opened_file",
    "read_rows",
    "recent",
    "remember",
    "showed",
]
