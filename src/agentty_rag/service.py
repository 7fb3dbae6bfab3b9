"""A workspace's two searches, end to end: validate, refresh, retrieve, fit the budget, render.

The MCP server and the command line are thin edges over ``Workspace``; neither knows how retrieval works.
The steps around it live beside it: ``request`` checks a search's arguments, ``places`` says where the
workspace's folders are and defines its indexes from the source-kind registry, ``outcome`` fits and renders
the result. What is left here is the index registry and the order of the steps.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentty_rag import feedback
from agentty_rag.budget import BudgetConfig
from agentty_rag.config import Settings
from agentty_rag.dense_leg import DenseLeg
from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt, IndexFull, IndexNotBuilt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lock import held as lock_held
from agentty_rag.outcome import Outcome, answer
from agentty_rag.places import Places, index_config, nothing_indexed
from agentty_rag.request import SearchRequest, code_request, docs_indexes, docs_request
from agentty_rag.resources import WorkspaceResources
from agentty_rag.retrieve.generator import close_generators
from agentty_rag.retrieve.merge import merge_retrieved
from agentty_rag.retrieve.parsed import ParsedQuery, parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, Retrieved, search
from agentty_rag.types import Funnel, SearchResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Attempt:
    """A retrieval over one index: the ranking (None when there was nothing to rank) and how it went."""

    index: CorpusIndex
    retrieved: Retrieved | None
    mode: str
    empty_reason: str = ""
    notes: tuple[str, ...] = ()


class Workspace:
    """The indexes and searches of one workspace root."""

    def __init__(self, root: Path, settings: Settings, start: Path | None = None) -> None:
        # Other MCP servers' resources (AGENTTY_RAG_MCP=1): their servers start when a search first reads them.
        self.resources = WorkspaceResources(Path(os.path.realpath(root)), settings)
        provider = self.resources.snapshot if settings.mcp_enabled else None
        self.places = Places(Path(os.path.realpath(root)), settings, provider)
        self.root = self.places.root
        # The folder the process started in: results name the workspace when it is another one.
        self.start = Path(os.path.realpath(start)) if start is not None else self.root
        self.settings = settings
        # Where the indexes are kept: the workspace's .agentty, unless rag-bench moves them (before any exists)
        # to measure a workspace without writing to it.
        self.state_dir = self.places.state_dir
        self._indexes: dict[str, CorpusIndex] = {}
        self._guard = threading.Lock()
        self.dense = DenseLeg(settings)
        self.background_builds = False  # the server builds in a thread, never inside a request
        self._building: dict[str, threading.Thread] = {}
        self.closed = False  # set by close(): background work leaves it at its next step

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

    def docs_root(self) -> Path | None:
        """The docs folder's real path (None when none exists)."""
        return self.places.docs_root()

    def skills_dirs(self) -> tuple[Path, ...]:
        return self.places.skills_dirs()

    def memory_dir(self) -> Path:
        return self.places.memory_dir()

    def index(self, name: str) -> CorpusIndex:
        """The ``docs`` or ``code`` index (created on first use; nothing is read until it is refreshed)."""
        with self._guard:
            existing = self._indexes.get(name)
            if existing is None:
                existing = self._indexes[name] = CorpusIndex(index_config(name, self.places, self.state_dir))
            return existing

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
        parsed = parse_query(query, index.tokenizer)  # the one reading of the query: everything below gets this
        vector, degraded = self.dense.query_vector(query) if self.dense.wanted(index, parsed) else (None, "")
        try:
            attempt = self._attempt(index, name, parsed, k, filters, vector, degraded, deadline)
        except IndexNotBuilt:
            builder = self._build_thread(name)
            builder.join(max(0.0, deadline - time.monotonic()))
            attempt = None
            if not builder.is_alive():
                attempt = self._attempt(index, name, parsed, k, filters, vector, degraded, deadline)
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
        query: ParsedQuery,
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
                return Attempt(index, None, mode, nothing_indexed(name, self.places), notes)
            mode = self.dense.mode(retrieved.mode, index, degraded, query)
            notes += retrieved.notes
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
        except IndexFull as error:
            # The update was rolled back: the committed index answers, and the next search tries again.
            return (f"{error}; answering from the last committed index, which may miss the newest edits",)
        return ()

    def _search(
        self, index: CorpusIndex, query: ParsedQuery, k: int, filters: Filters, vector: Any
    ) -> Retrieved | None:
        """The ranking (None when the index holds nothing)."""
        if index.n_chunks == 0:
            return None
        self.dense.prepare(index)
        vector = self.dense.checked(index, vector)  # None when the leg check keeps this index lexical
        return search(index, query, k, filters, self.plan(index), vector, self.embed)

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
        import subprocess

        subprocess.Popen(
            [sys.executable, "-m", "agentty_rag", "--root", str(self.root), "index", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return f"the {name} index needed a build ({reason}); building it in the background"

    def _run(self, tool: str, names: tuple[str, ...], request: SearchRequest, wait_s: float | None) -> Outcome:
        """Retrieve from each index (one, or the docs and the MCP resources' merged as the hook merges docs and
        code), then fit and render; the header's mode and empty reason are the first index's."""
        if "mcp" in names:
            self.resources.start()  # the servers start while the docs index is refreshed
        attempts = [self.retrieve(name, request.query, request.k, request.filters, wait_s) for name in names]
        parts = [attempt.retrieved for attempt in attempts if attempt.retrieved is not None]
        retrieved = merge_retrieved(parts, request.k) if len(parts) > 1 else parts[0] if parts else None
        hits, funnel = (retrieved.hits, retrieved.funnel) if retrieved is not None else ((), Funnel())
        ranked = next((a for a in attempts if a.retrieved is not None), attempts[0])
        reason = "" if hits else ranked.empty_reason or f"no matches ({ranked.mode})"
        notes = (*request.notes, *(note for a in attempts for note in a.notes))
        if "mcp" in names:
            notes += self.resources.notes()
        result = SearchResult(tool, request.query, ranked.mode, hits, funnel, reason, notes, self.named_root)
        outcome = answer(attempts[0].index, result, retrieved, self.budget())
        if self.settings.learn:
            self._remember(names[0], request.query, outcome)
        return outcome

    def _remember(self, name: str, query: str, outcome: Outcome) -> None:
        """Remember the docs and code files a search showed, for ``agentty-rag feedback`` (implicit learning)."""
        folders = {"code": self.root, "docs": self.docs_root()}
        shown: dict[str, feedback.Shown] = {}
        for rank, passage in enumerate(outcome.packed.passages, start=1):
            chunk = passage.hit.chunk
            folder = folders.get(chunk.source) if chunk.source in feedback.LEARNABLE else None
            if folder is not None and chunk.ref not in shown:
                shown[chunk.ref] = feedback.Shown(chunk.ref, os.path.normpath(folder / chunk.ref), rank)
        feedback.remember(self.state_dir, feedback.RecentSearch(time.time(), name, query, tuple(shown.values())))

    # -- the dense leg --------------------------------------------------------------------------------------

    def embed_all(self, name: str, progress: Callable[[int, int, str], None] | None = None) -> int:
        """Embed every chunk of an index that lacks a vector (``agentty-rag index``, the server's warm-up)."""
        return self.dense.embed_all(self.index(name), progress)

    def dense_status(self, name: str) -> dict[str, object]:
        """The embedding backend's state and how much of an index has vectors (probes if not done yet)."""
        return self.dense.index_status(self.index(name))

    def embed(self, text: str) -> Any:
        """``text``'s unit vector from the dense leg (None when it is not up or the request failed): the hook a
        stage that searches again with a generated text uses (HyDE)."""
        return self.dense.query_vector(text)[0]

    def plan(self, index: CorpusIndex | None = None) -> Plan:
        """Which ranking stages run, from the settings, and (for ``index``) which leg leads its searches."""
        plan = Plan.from_settings(self.settings)
        return plan if index is None else replace(plan, lead=self.dense.lead(index))

    def ranked(self, name: str, query: str, k: int, filters: Filters | None = None) -> Retrieved:
        """The ranked hits alone (no refresh, no validation, no rendering): what rag-bench measures."""
        index = self.index(name)
        parsed = parse_query(query, index.tokenizer)
        vector = self.dense.query_vector(query)[0] if self.dense.wanted(index, parsed) else None
        self.dense.use_profile(index)
        with index.reading():
            vector = self.dense.checked(index, vector)
            return search(index, parsed, k, filters or Filters(), self.plan(index), vector, self.embed)

    def render(self, name: str, query: str, retrieved: Retrieved, budget: BudgetConfig | None = None) -> Outcome:
        """Fit ranked hits to the output budget and render them, exactly as a tool call would."""
        reason = "" if retrieved.hits else f"no matches ({retrieved.mode})"
        result = SearchResult(
            f"search_{name}", query, retrieved.mode, retrieved.hits, retrieved.funnel, reason, (), self.named_root
        )
        return answer(self.index(name), result, retrieved, budget or self.budget())

    def budget(self) -> BudgetConfig:
        """The token-economy levers, from the settings."""
        return BudgetConfig.from_settings(self.settings)

    def search_docs(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        sources: Sequence[str] | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the docs folder, skills and memory (and other MCP servers' resources, when they are on)."""
        request = docs_request(self.places, query, k, scope, sources)
        return self._run("search_docs", docs_indexes(request.filters, self.resources.enabled), request, wait_s)

    def search_code(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        language: str | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the workspace's source code."""
        return self._run("search_code", ("code",), code_request(self.places, query, k, scope, language), wait_s)

    def close(self) -> None:
        """Close the indexes no thread is using (a busy one is left to the process's exit) and connections."""
        self.closed = True
        with self._guard:
            indexes = list(self._indexes.values())
        for index in indexes:
            with index.reading(timeout=0) as held:
                if held:
                    index.close()
        self.dense.close()
        self.resources.close()
        close_generators()  # the expansion stages' connections (the next search probes again)


__all__ = ["Attempt", "Workspace"]
