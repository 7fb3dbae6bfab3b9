"""A search request, checked: the query, ``k``, and the scope, sources and language that become ``Filters``.

One ``SearchRequest`` is what every edge hands to ``Workspace.search``: the tools (from the server's
validated arguments or the command line's), the proactive hook and the ``context_for`` prompt, and
rag-bench. Every problem is a ``BadRequest`` whose message says what to give instead; the MCP server and the
command line show it as is. Nothing here reads an index: a scope is checked against the workspace's folders
only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentty_rag.budget import BudgetConfig
from agentty_rag.chunking.languages import language_names, resolve_language
from agentty_rag.errors import BadRequest
from agentty_rag.retrieve.pipeline import Filters
from agentty_rag.source_kinds import choice_names, chosen_kind
from agentty_rag.sources.walker import is_inside
from agentty_rag.types import MAX_K
from agentty_rag.workspace.places import Places

MAX_QUERY_CHARS = 4000

# What a search answers with:
# - ``tool``: a tool's answer (text and structured content) from fresh indexes, remembered for ``feedback``;
# - ``context``: the proactive block, from the indexes that found something, merged (quiet rules: ``inject``);
# - ``ranking``: rag-bench's, from the indexes as they stand (no refresh, no notes), the ranking's own mode.
Form = Literal["tool", "context", "ranking"]


@dataclass(frozen=True)
class SearchRequest:
    """What one search asks for, checked: the one argument of ``Workspace.search``.

    Args:
        query: the query on one line, cut to ``MAX_QUERY_CHARS``.
        k: how many results, from 1 to ``MAX_K``.
        filters: the scope, sources and languages, as retrieval applies them.
        notes: what was changed on the way (a cut query), for the result.
        tool: the name the result carries (``search_docs``, ``search_code``, ``proactive``).
        indexes: the indexes read, in order (the first one's mode and empty reason head the result).
        form: what the search answers with (see ``Form``).
        wait_s: how long a request waits for an index being built (None: ``AGENTTY_RAG_BUILD_WAIT_MS``).
        budget: the output budget (None: the settings').
    """

    query: str
    k: int
    filters: Filters = field(default_factory=Filters)
    notes: tuple[str, ...] = ()
    tool: str = "search_code"
    indexes: tuple[str, ...] = ("code",)
    form: Form = "tool"
    wait_s: float | None = None
    budget: BudgetConfig | None = None


def query_text(query: str) -> tuple[str, tuple[str, ...]]:
    """The query on one line, cut to ``MAX_QUERY_CHARS`` (with a note saying so)."""
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("query is empty: describe what you are looking for in a few words")
    text = " ".join(query.split())
    if len(text) > MAX_QUERY_CHARS:
        return text[:MAX_QUERY_CHARS], (f"query cut to its first {MAX_QUERY_CHARS} characters",)
    return text, ()


def whole_k(k: int) -> int:
    """``k`` when it is a whole number from 1 to ``MAX_K`` (a bool is not one)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise BadRequest(f"k must be a whole number from 1 to {MAX_K} (got {k!r})")
    return k


# A scope that names the whole folder: no scope at all.
_WHOLE = ("", ".", "./")


def _inside_root(scope: str, base: Path, root: Path) -> Path:
    """The scope's real path, read from ``base``; it must lie in the workspace root or in ``base``."""
    if any(ord(ch) < 32 for ch in scope):
        raise BadRequest(f"scope {scope!r} contains a control character (a NUL byte?); give a plain path")
    raw = Path(scope.strip())
    target = Path(os.path.realpath(raw if raw.is_absolute() else base / raw))
    if not is_inside(str(target), str(root)) and not is_inside(str(target), str(base)):
        raise BadRequest(f"scope {scope!r} is outside the workspace root {root}; give a path inside it")
    return target


def docs_scope(scope: str | None, places: Places) -> str | None:
    """A scope as the path prefix docs passages are cited by: relative to the workspace root (a path given
    relative to a named docs folder is read from there too); None: no scope."""
    if scope is None or scope.strip() in _WHOLE:
        return None
    docs_root, folder = places.docs_root(), places.docs_folder()
    if folder is not None and not is_inside(str(docs_root), str(places.boundary(folder))):
        raise BadRequest(f"scope {scope!r} given, but the docs folder links outside the workspace ({docs_root})")
    absolute = Path(scope.strip()).is_absolute()
    # An absolute path may lie in a docs folder named outside the workspace (its passages are cited by it).
    candidates = [_inside_root(scope, docs_root if folder is not None and absolute else places.root, places.root)]
    if folder is not None and not absolute:
        candidates.append(_inside_root(scope, docs_root, places.root))
    outside_folder = False
    for target in candidates:
        if not target.exists():
            continue
        if folder is not None and not is_inside(str(target), str(docs_root)):
            outside_folder = True  # read from the root, it is not in the docs folder: read from the folder then
            continue
        if not is_inside(str(target), str(places.root)):
            return target.as_posix()  # a docs folder named outside the workspace: its paths are absolute
        rel = os.path.relpath(target, places.root).replace(os.sep, "/")
        return "" if rel == "." else rel
    if outside_folder:
        raise BadRequest(f"scope {scope!r} is not inside the docs folder {docs_root} (AGENTTY_DOCS_DIR)")
    raise BadRequest(f"scope {scope!r} does not exist under the workspace root {places.root}")


def code_scope(scope: str | None, root: Path) -> str | None:
    """A scope as a path prefix relative to the workspace root (None: no scope, or the root itself)."""
    if scope is None or scope.strip() in _WHOLE:
        return None
    target = _inside_root(scope, root, root)
    if not is_inside(str(target), str(root)):
        raise BadRequest(f"scope {scope!r} is outside the workspace root {root}")
    if not target.exists():
        raise BadRequest(f"scope {scope!r} does not exist under the workspace root {root}")
    rel = os.path.relpath(target, root).replace(os.sep, "/")
    return None if rel == "." else rel


def doc_sources(sources: Sequence[str] | None) -> tuple[str, ...] | None:
    """The source kinds a docs search names (any of each kind's choices), in the order first named."""
    if sources is None:
        return None
    if isinstance(sources, str):
        sources = [sources]
    kinds: list[str] = []
    offered = choice_names("docs")
    for name in sources:
        kind = chosen_kind("docs", str(name))
        if kind is None:
            raise BadRequest(f"unknown source {name!r}; use any of: {', '.join(offered)}")
        if kind.name not in kinds:
            kinds.append(kind.name)
    if not kinds:
        everything = ", ".join(offered[:-1]) + " and " + offered[-1]
        raise BadRequest(f"sources is empty; leave it out to search {everything}")
    return tuple(kinds)


def languages(language: str | None) -> tuple[str, ...] | None:
    """The languages a name or extension stands for (``c++``, ``py``); None when none is given."""
    if language is None or not language.strip():
        return None
    names = resolve_language(language)
    if names is None:
        raise BadRequest(f"unknown language {language!r}; known: {', '.join(language_names())}")
    return names


def docs_indexes(filters: Filters, mcp_enabled: bool) -> tuple[str, ...]:
    """The indexes a docs search reads: the docs index unless only MCP resources are asked for, and the MCP
    resources' when they are asked for, or on and not ruled out (a scope leaves them out, as skills and
    memory, which have no path either)."""
    wanted = filters.sources
    docs = wanted is None or any(kind != "mcp" for kind in wanted)
    mcp = "mcp" in wanted if wanted is not None else mcp_enabled
    if docs and filters.scope is not None:
        mcp = False
    return ("docs",) * docs + ("mcp",) * mcp


def docs_request(
    places: Places,
    query: str,
    k: int,
    scope: str | None = None,
    sources: Sequence[str] | None = None,
    wait_s: float | None = None,
) -> SearchRequest:
    """A ``search_docs`` request, checked in the order its arguments are read: query, scope, sources, k."""
    text, notes = query_text(query)
    filters = Filters(scope=docs_scope(scope, places), sources=doc_sources(sources))
    indexes = docs_indexes(filters, places.settings.mcp_enabled)
    return SearchRequest(text, whole_k(k), filters, notes, "search_docs", indexes, wait_s=wait_s)


def code_request(
    places: Places,
    query: str,
    k: int,
    scope: str | None = None,
    language: str | None = None,
    wait_s: float | None = None,
) -> SearchRequest:
    """A ``search_code`` request, checked in the order its arguments are read: query, scope, language, k."""
    text, notes = query_text(query)
    filters = Filters(scope=code_scope(scope, places.root), languages=languages(language))
    return SearchRequest(text, whole_k(k), filters, notes, "search_code", ("code",), wait_s=wait_s)


def proactive_request(
    prompt: str, sources: tuple[str, ...], k: int, budget: BudgetConfig, wait_s: float | None
) -> SearchRequest:
    """The proactive hook's request for a prompt it does not stay quiet for: the prompt on one line, cut to
    ``MAX_QUERY_CHARS`` without a note, ``k`` passages from each of ``sources`` (and at most ``k`` in all)."""
    query = " ".join(prompt.split())[:MAX_QUERY_CHARS]
    return SearchRequest(query, k, Filters(), (), "proactive", sources, "context", wait_s, budget)


def ranking_request(name: str, query: str, k: int, filters: Filters | None = None) -> SearchRequest:
    """rag-bench's request: the query as given, ranked over the index ``name`` as it stands."""
    return SearchRequest(query, k, filters or Filters(), tool=f"search_{name}", indexes=(name,), form="ranking")


__all__ = [
    "MAX_K",
    "MAX_QUERY_CHARS",
    "Form",
    "SearchRequest",
    "code_request",
    "code_scope",
    "doc_sources",
    "docs_indexes",
    "docs_request",
    "docs_scope",
    "languages",
    "proactive_request",
    "query_text",
    "ranking_request",
    "whole_k",
]
