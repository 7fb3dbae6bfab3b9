"""A workspace's two searches, end to end: validate, refresh, retrieve, fit the budget, render.

The MCP server and the command line are thin edges over ``Workspace``; neither knows how retrieval works.
"""

from __future__ import annotations

import logging
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag.budget import BudgetConfig, Packed, fit
from agentty_rag.chunking import ChunkingConfig
from agentty_rag.chunking.languages import language_names, resolve_language
from agentty_rag.config import Settings
from agentty_rag.dense_leg import DenseLeg
from agentty_rag.errors import AgenttyError, BadRequest, IndexBusy, IndexCorrupt, IndexNotBuilt
from agentty_rag.index.engine import CorpusIndex, IndexConfig
from agentty_rag.index.fields import CODE_FIELDS, CODE_SCORING, DOCS_FIELDS, DOCS_SCORING
from agentty_rag.index.lock import held as lock_held
from agentty_rag.render import render_structured, render_text
from agentty_rag.retrieve.features import QueryProfile
from agentty_rag.retrieve.pipeline import Filters, Plan, Retrieved, search
from agentty_rag.retrieve.rerank import Reranked
from agentty_rag.source_kinds import choice_names, chosen_kind
from agentty_rag.sources.base import Source
from agentty_rag.sources.code import CodeSource
from agentty_rag.sources.docs import DocsSource
from agentty_rag.sources.memory import MemorySource
from agentty_rag.sources.skills import SkillsSource
from agentty_rag.sources.walker import folder_boundary, is_inside
from agentty_rag.types import Funnel, SearchResult

log = logging.getLogger(__name__)

MAX_K = 50
MAX_QUERY_CHARS = 4000


@dataclass(frozen=True)
class Attempt:
    """A retrieval over one index: the ranking (None when there was nothing to rank) and how it went."""

    index: CorpusIndex
    retrieved: Retrieved | None
    mode: str
    empty_reason: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """One search's result, its fitted passages, and both renderings."""

    result: SearchResult
    packed: Packed
    text: str
    structured: dict[str, Any]
    explanations: tuple[Reranked, ...] = ()


def query_evidence(index: CorpusIndex, profile: QueryProfile) -> Callable[[str], float]:
    """Scores a piece of text by the rare-term weight of the query terms it holds."""
    weights = {t: profile.idf.get(t, 0.0) for t in profile.terms}

    def evidence(text: str) -> float:
        # fsum: exact, so the total cannot depend on the set's (hash-seeded) order and flip a tie
        return math.fsum(weights.get(term, 0.0) for term in set(index.tokenize(text)))

    return evidence


def _check_query(query: str) -> tuple[str, tuple[str, ...]]:
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("query is empty: describe what you are looking for in a few words")
    text = " ".join(query.split())
    if len(text) > MAX_QUERY_CHARS:
        return text[:MAX_QUERY_CHARS], (f"query cut to its first {MAX_QUERY_CHARS} characters",)
    return text, ()


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise BadRequest(f"k must be a whole number from 1 to {MAX_K} (got {k!r})")
    return k


class Workspace:
    """The indexes and searches of one workspace root."""

    def __init__(self, root: Path, settings: Settings, start: Path | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        # The folder the process started in: results name the workspace when it is another one.
        self.start = Path(os.path.realpath(start)) if start is not None else self.root
        self.settings = settings
        self.state_dir = self.root / ".agentty"
        self._indexes: dict[str, CorpusIndex] = {}
        self._guard = threading.Lock()
        self.dense = DenseLeg(settings)
        self.background_builds = False  # the server builds in a thread, never inside a request
        self._building: dict[str, threading.Thread] = {}

    # -- where things are -----------------------------------------------------------------------------------

    @property
    def background_embedding(self) -> bool:
        """Whether missing vectors are embedded by a thread (the server) or before a search (the command line)."""
        return self.dense.background

    @background_embedding.setter
    def background_embedding(self, value: bool) -> None:
        self.dense.background = value

    @property
    def named_root(self) -> str:
        """The workspace as results name it: its path when it is not the start folder, else ""."""
        return "" if self.root == self.start else str(self.root)

    def _resolve(self, path: Path) -> Path:
        return Path(os.path.realpath(path if path.is_absolute() else self.root / path))

    def _docs_folder(self) -> Path | None:
        """The docs folder as named: ``AGENTTY_DOCS_DIR``, else ``./docs``, else ``./.agentty/knowledge``."""
        if self.settings.docs_dir is not None:
            return self.settings.docs_dir
        for candidate in (self.root / "docs", self.state_dir / "knowledge"):
            if candidate.is_dir():
                return candidate
        return None

    def docs_root(self) -> Path | None:
        """The docs folder's real path (None when none exists)."""
        folder = self._docs_folder()
        return None if folder is None else self._resolve(folder)

    def _boundary(self, folder: Path) -> Path:
        """Where a source folder's files must really lie (see ``folder_boundary``)."""
        return Path(folder_boundary(folder, self.root))

    def skills_dirs(self) -> tuple[Path, ...]:
        if self.settings.skills_dirs is not None:
            return tuple(self._resolve(p) for p in self.settings.skills_dirs)
        dirs = [self.state_dir / "skills"]
        if self.settings.home is not None:
            dirs.append(self.settings.home / ".agentty" / "skills")
        return tuple(dirs)

    def memory_dir(self) -> Path:
        if self.settings.memory_dir is not None:
            return self._resolve(self.settings.memory_dir)
        return self.state_dir / "memory"

    def index(self, name: str) -> CorpusIndex:
        """The ``docs`` or ``code`` index (created on first use; nothing is read until it is refreshed)."""
        with self._guard:
            existing = self._indexes.get(name)
            if existing is not None:
                return existing
            s = self.settings
            sources: list[Source] = []
            roots = {"workspace": str(self.root)}
            if name == "docs":
                docs_folder = self._docs_folder()
                if s.docs_enabled and docs_folder is not None:
                    docs_root = self._resolve(docs_folder)
                    sources.append(DocsSource(docs_root, self._boundary(docs_folder), s.docs_max_bytes))
                    roots["docs"] = str(docs_root)
                if s.skills_enabled:
                    sources.append(SkillsSource(self.skills_dirs(), self.root, s.docs_max_bytes))
                    roots["skills"] = os.pathsep.join(str(p) for p in self.skills_dirs())
                if s.memory_enabled:
                    memory_folder = self.settings.memory_dir or self.state_dir / "memory"
                    sources.append(MemorySource(self.memory_dir(), self._boundary(memory_folder), s.docs_max_bytes))
                    roots["memory"] = str(self.memory_dir())
                fields, scoring = DOCS_FIELDS, DOCS_SCORING
            elif name == "code":
                if s.code_enabled:
                    sources.append(CodeSource(self.root, s.code_max_files, s.code_max_bytes, s.code_secrets))
                fields, scoring = CODE_FIELDS, CODE_SCORING
            else:
                raise ValueError(f"unknown index {name!r}; use docs or code")
            config = IndexConfig(
                name,
                self.state_dir,
                tuple(sources),
                fields,
                ChunkingConfig.from_settings(s),
                roots,
                s.rebuild_fraction,
                s.lock_timeout_ms / 1000,
                scoring=scoring,
            )
            index = CorpusIndex(config)
            self._indexes[name] = index
            return index

    # -- validation -----------------------------------------------------------------------------------------

    def _inside_root(self, scope: str, base: Path) -> Path:
        if any(ord(ch) < 32 for ch in scope):
            raise BadRequest(f"scope {scope!r} contains a control character (a NUL byte?); give a plain path")
        raw = Path(scope.strip())
        target = Path(os.path.realpath(raw if raw.is_absolute() else base / raw))
        if not is_inside(str(target), str(self.root)) and not is_inside(str(target), str(base)):
            raise BadRequest(f"scope {scope!r} is outside the workspace root {self.root}; give a path inside it")
        return target

    def docs_scope(self, scope: str | None) -> str | None:
        """A scope as a path prefix relative to the docs folder (None: no scope)."""
        if scope is None or scope.strip() in ("", ".", "./"):
            return None
        docs_folder = self._docs_folder()
        if docs_folder is None:
            raise BadRequest(f"scope {scope!r} given, but there is no docs folder to scope")
        docs_root = self._resolve(docs_folder)
        if not is_inside(str(docs_root), str(self._boundary(docs_folder))):
            raise BadRequest(f"scope {scope!r} given, but the docs folder links outside the workspace ({docs_root})")
        candidates = [self._inside_root(scope, docs_root)]
        if not Path(scope).is_absolute():
            candidates.append(self._inside_root(scope, self.root))
        for target in candidates:
            if target.exists():
                if not is_inside(str(target), str(docs_root)):
                    raise BadRequest(f"scope {scope!r} is not inside the docs folder {docs_root}")
                rel = os.path.relpath(target, docs_root).replace(os.sep, "/")
                return "" if rel == "." else rel
        raise BadRequest(f"scope {scope!r} does not exist in the docs folder {docs_root}")

    def code_scope(self, scope: str | None) -> str | None:
        if scope is None or scope.strip() in ("", ".", "./"):
            return None
        target = self._inside_root(scope, self.root)
        if not is_inside(str(target), str(self.root)):
            raise BadRequest(f"scope {scope!r} is outside the workspace root {self.root}")
        if not target.exists():
            raise BadRequest(f"scope {scope!r} does not exist under the workspace root {self.root}")
        rel = os.path.relpath(target, self.root).replace(os.sep, "/")
        return None if rel == "." else rel

    @staticmethod
    def doc_sources(sources: Sequence[str] | None) -> tuple[str, ...] | None:
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

    @staticmethod
    def languages(language: str | None) -> tuple[str, ...] | None:
        if language is None or not language.strip():
            return None
        names = resolve_language(language)
        if names is None:
            raise BadRequest(f"unknown language {language!r}; known: {', '.join(language_names())}")
        return names

    # -- searching ------------------------------------------------------------------------------------------

    def retrieve(
        self, name: str, query: str, k: int, filters: Filters | None = None, wait_s: float | None = None
    ) -> Attempt:
        """Refresh the index and rank it for ``query`` (no validation, no rendering).

        The network comes first, without the index lock: the (bounded) probe and the query's embedding. A
        server never builds inside a request: an index that needs a full build is built by a background
        thread, which the request waits for up to ``wait_s`` before answering that it is still being built.
        A corrupt index found while searching is rebuilt, and the result says so.
        """
        filters = filters or Filters()
        index = self.index(name)
        wait = self.settings.build_wait_ms / 1000 if wait_s is None else wait_s
        deadline = time.monotonic() + wait
        vector, degraded = self.dense.query_vector(query)
        try:
            attempt = self._attempt(index, name, query, k, filters, vector, degraded, deadline)
        except IndexNotBuilt:
            builder = self._build_thread(name)
            builder.join(max(0.0, deadline - time.monotonic()))
            attempt = None
            if not builder.is_alive():
                attempt = self._attempt(index, name, query, k, filters, vector, degraded, deadline)
        if attempt is None:
            done, total = index.build_state
            progress = f" ({done} of {total} files)" if total else ""
            reason = f"the {name} index is still being built{progress} — try again in a few seconds"
            return Attempt(index, None, self.dense.unranked_mode(index, degraded), reason, index.take_notes())
        return attempt

    def _attempt(
        self,
        index: CorpusIndex,
        name: str,
        query: str,
        k: int,
        filters: Filters,
        vector: Any,
        degraded: str,
        deadline: float,
    ) -> Attempt | None:
        """One refresh and search under the index lock (None when the lock stayed busy until ``deadline``).

        Raises:
            IndexNotBuilt: a server's request met an index that needs a full build first.
        """
        with index.reading(timeout=deadline - time.monotonic()) as held:
            if not held:
                return None
            notes = self._refresh(index)
            try:
                retrieved = self._search(index, query, k, filters, vector)
            except IndexCorrupt as error:  # found while reading: rebuild it, then answer
                index.recover(error)
                notes += self._refresh(index)
                retrieved = self._search(index, query, k, filters, vector)
            notes += index.take_notes()
            if retrieved is None:
                mode = self.dense.mode("bm25", index, degraded)
                return Attempt(index, None, mode, self._nothing_indexed(name), notes)
            mode = self.dense.mode(retrieved.mode, index, degraded)
        reason = (
            ""
            if retrieved.hits
            else f"no matches ({retrieved.mode})" + (" within the given filters" if filters.active else "")
        )
        return Attempt(index, retrieved, mode, reason, notes)

    def _refresh(self, index: CorpusIndex) -> tuple[str, ...]:
        """Bring the index up to date (never a full build in a server's request); notes for the result."""
        try:
            index.refresh(build=not self.background_builds)
        except IndexBusy as error:
            # Another process holds the update lock: answer from the last committed index, and say so.
            return (f"{error}; these results may miss the newest edits",)
        return ()

    def _search(self, index: CorpusIndex, query: str, k: int, filters: Filters, vector: Any) -> Retrieved | None:
        """The ranking (None when the index holds nothing)."""
        if index.n_chunks == 0:
            return None
        self.dense.prepare(index)
        return search(index, query, k, filters, self.plan(), vector)

    def _build_thread(self, name: str) -> threading.Thread:
        """The thread that builds an index in the background (started when none is running)."""
        with self._guard:
            running = self._building.get(name)
            if running is not None and running.is_alive():
                return running
            thread = threading.Thread(target=self._build, args=(name,), name=f"agentty-build-{name}", daemon=True)
            self._building[name] = thread
            thread.start()
            return thread

    def _build(self, name: str) -> None:
        index = self.index(name)
        try:
            index.refresh()
        except AgenttyError as error:
            log.warning("building the %s index: %s", name, error)

    def build_in_background(self, name: str) -> str:
        """When an index must be built first, start ``agentty-rag index NAME`` as a detached process.

        For callers that must answer fast (the proactive hook): they stay quiet this turn instead of
        building inside their time limit. Returns what was done ("" when the index can be used now).
        """
        index = self.index(name)
        if not index.config.sources:
            return ""
        if lock_held(index.config.lock_path):
            return f"the {name} index is being built by another process"
        with index.reading():
            try:
                reason = index.needs_rebuild()
            except IndexCorrupt as error:
                reason = str(error)
        if not reason:
            return ""
        subprocess.Popen(
            [sys.executable, "-m", "agentty_rag", "--root", str(self.root), "index", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return f"the {name} index needed a build ({reason}); building it in the background"

    def _run(
        self, tool: str, name: str, query: str, k: int, filters: Filters, notes: tuple[str, ...], wait_s: float | None
    ) -> Outcome:
        attempt = self.retrieve(name, query, k, filters, wait_s)
        retrieved = attempt.retrieved
        hits, funnel = (retrieved.hits, retrieved.funnel) if retrieved is not None else ((), Funnel())
        result = SearchResult(
            tool, query, attempt.mode, hits, funnel, attempt.empty_reason, (*notes, *attempt.notes), self.named_root
        )
        return self._outcome(attempt.index, result, retrieved)

    # -- the dense leg --------------------------------------------------------------------------------------

    def embed_all(self, name: str, progress: Callable[[int, int, str], None] | None = None) -> int:
        """Embed every chunk of an index that lacks a vector (``agentty-rag index``, the server's warm-up)."""
        return self.dense.embed_all(self.index(name), progress)

    def dense_status(self, name: str) -> dict[str, object]:
        """The embedding backend's state and how much of an index has vectors (probes if not done yet)."""
        return self.dense.index_status(self.index(name))

    def plan(self) -> Plan:
        """Which ranking stages run, from the settings."""
        return Plan.from_settings(self.settings)

    def ranked(self, name: str, query: str, k: int, filters: Filters | None = None) -> Retrieved:
        """The ranked hits alone (no refresh, no validation, no rendering): what rag-bench measures."""
        index = self.index(name)
        vector, _ = self.dense.query_vector(query)
        self.dense.use_profile(index)
        with index.reading():
            return search(index, query, k, filters or Filters(), self.plan(), vector)

    def render(self, name: str, query: str, retrieved: Retrieved, budget: BudgetConfig | None = None) -> Outcome:
        """Fit ranked hits to the output budget and render them, exactly as a tool call would."""
        reason = "" if retrieved.hits else f"no matches ({retrieved.mode})"
        result = SearchResult(
            f"search_{name}", query, retrieved.mode, retrieved.hits, retrieved.funnel, reason, (), self.named_root
        )
        return self._outcome(self.index(name), result, retrieved, budget)

    def budget(self) -> BudgetConfig:
        """The token-economy levers, from the settings."""
        return BudgetConfig.from_settings(self.settings)

    def _outcome(
        self,
        index: CorpusIndex,
        result: SearchResult,
        retrieved: Retrieved | None = None,
        budget: BudgetConfig | None = None,
    ) -> Outcome:
        evidence = None
        confidence = 0.0
        weakest = None
        if retrieved is not None:
            confidence, weakest = retrieved.confidence, retrieved.weakest
            if retrieved.profile is not None:
                evidence = query_evidence(index, retrieved.profile)
        packed = fit(result.hits, budget or self.budget(), confidence, evidence, weakest)
        explanations = retrieved.explanations if retrieved is not None else ()
        return Outcome(result, packed, render_text(result, packed), render_structured(result, packed), explanations)

    def _nothing_indexed(self, name: str) -> str:
        if name == "code":
            if not self.settings.code_enabled:
                return "no code indexed — AGENTTY_RAG_CODE=0 turns search_code off"
            return f"no code indexed — no source files in a known language under {self.root}"
        if self.settings.docs_dir is not None and not self._resolve(self.settings.docs_dir).is_dir():
            return (
                f"no docs indexed — AGENTTY_DOCS_DIR={self.settings.docs_dir} is not a folder; "
                "point it at your docs or create it"
            )
        return (
            "no docs indexed — set AGENTTY_DOCS_DIR or create ./docs "
            "(skills go in .agentty/skills/NAME/SKILL.md, memory in .agentty/memory/)"
        )

    def search_docs(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        sources: Sequence[str] | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the docs folder, skills and memory."""
        text, notes = _check_query(query)
        filters = Filters(scope=self.docs_scope(scope), sources=self.doc_sources(sources))
        return self._run("search_docs", "docs", text, _check_k(k), filters, notes, wait_s)

    def search_code(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        language: str | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the workspace's source code."""
        text, notes = _check_query(query)
        filters = Filters(scope=self.code_scope(scope), languages=self.languages(language))
        return self._run("search_code", "code", text, _check_k(k), filters, notes, wait_s)

    def close(self) -> None:
        """Close the indexes no thread is using (a busy one is left to the process's exit) and connections."""
        with self._guard:
            indexes = list(self._indexes.values())
        for index in indexes:
            with index.reading(timeout=0) as held:
                if held:
                    index.close()
        self.dense.close()


__all__ = ["MAX_K", "MAX_QUERY_CHARS", "Outcome", "Workspace"]
