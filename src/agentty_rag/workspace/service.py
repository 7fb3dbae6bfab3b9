"""A workspace's searches, end to end: refresh, retrieve, fit the budget, render.

Every edge is thin over one method, ``Workspace.search``, given one ``SearchRequest``: the MCP tools, the
command line, the proactive hook and the ``context_for`` prompt, and rag-bench; none knows how retrieval
works. The steps around it live beside it: ``request`` checks a search's arguments, ``places`` says where the
workspace's folders are and defines its indexes from the source-kind registry, ``workspace.answer`` merges
the indexes' attempts and ``outcome`` fits and renders the result, ``workspace.builds`` builds outside a
request. What is left here is the index registry and the order of the steps.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentty_rag.budget import BudgetConfig
from agentty_rag.config import Settings
from agentty_rag.errors import IndexBusy, IndexCorrupt, IndexFull, IndexNotBuilt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.vectors.dense import EmbeddingProfile, Vector
from agentty_rag.jobs import Supervisor, parse_faults
from agentty_rag.retrieve.generator import close_generators
from agentty_rag.retrieve.parsed import ParsedQuery, parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, Retrieved, search
from agentty_rag.source_kinds import source_spec
from agentty_rag.state import feedback
from agentty_rag.workspace.answer import outcome_of
from agentty_rag.workspace.attempt import Attempt, Lookup, empty_reason
from agentty_rag.workspace.builds import Builds
from agentty_rag.workspace.dense_leg import DenseLeg
from agentty_rag.workspace.one_language import choose_language, docs_source_of, hidden_refs
from agentty_rag.workspace.outcome import Outcome
from agentty_rag.workspace.places import Places, index_config, nothing_held, nothing_indexed, paths_in
from agentty_rag.workspace.request import SearchRequest, code_request, docs_request, ranking_request
from agentty_rag.workspace.resources import WorkspaceResources

# How long closing a workspace waits in all for its background jobs to stop (a job inside a network call or a
# build's part ends by itself later: the process's exit does not wait for it).
CLOSE_WAIT_S = 2.0


class Workspace:
    """The indexes and searches of one workspace root."""

    def __init__(self, root: Path, settings: Settings, start: Path | None = None) -> None:
        # Every background job of this workspace (the server's builds, embedding, probes, watcher, reconciling).
        self.jobs = Supervisor(faults=parse_faults(settings.job_faults))
        # Other MCP servers' resources (AGENTTY_RAG_MCP=1): their servers start when a search first reads them.
        self.resources = WorkspaceResources(Path(os.path.realpath(root)), settings, self.jobs)
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
        self.dense = DenseLeg(settings, jobs=self.jobs)
        self.background_builds = False  # the server builds in a job, never inside a request
        self.closed = False  # set by close(): background work leaves it at its next step
        self.builds = Builds(self.root, self.index, settings.build_batch, self.jobs)

    # -- where things are -----------------------------------------------------------------------------------

    @property
    def background_embedding(self) -> bool:
        """Whether missing vectors are embedded by a thread (the server) or before a search (the command line)."""
        return self.dense.background

    @background_embedding.setter
    def background_embedding(self, value: bool) -> None:
        self.dense.background = value
        self.dense.report_dir = self.state_dir if value else None  # the server tells status what its leg does

    @property
    def named_root(self) -> str:
        """The workspace as results name it: its path when it is not the start folder, else ""."""
        return "" if self.root == self.start else str(self.root)

    def docs_root(self) -> Path:
        """Where the docs' paths start: the folder ``AGENTTY_DOCS_DIR`` names, else the workspace root."""
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

    def search(self, request: SearchRequest) -> Outcome:
        """Every search of every edge: retrieve from each of the request's indexes, then answer in its form.

        The answer is fitted to the budget and rendered when first read. A tool's answer is remembered for
        ``agentty-rag feedback`` when learning is on.
        """
        if "mcp" in request.indexes:
            self.resources.start()  # the servers start while the docs index is refreshed
        attempts = [self._retrieve(name, request) for name in request.indexes]
        notes = self.resources.notes() if "mcp" in request.indexes else ()
        outcome = outcome_of(request, attempts, request.budget or self.budget(), self.named_root, notes)
        if request.form == "tool" and self.settings.learn:
            self._remember(request.indexes[0], request.query, outcome)
        return outcome

    def _retrieve(self, name: str, request: SearchRequest) -> Attempt:
        """Refresh the index and rank it for the request (rag-bench's: rank it as it stands).

        The network comes first, without the index lock: the (bounded) probe and the query's embedding. A
        server never builds inside a request: an index that needs a full build is built by a background
        thread, which the request waits for up to its ``wait_s`` before answering that it is still being
        built. A corrupt index found while searching is rebuilt, and the result says so.
        """
        if request.form == "ranking":
            return self._rank(name, request)
        index = self.index(name)
        wait = self.settings.build_wait_ms / 1000 if request.wait_s is None else request.wait_s
        parsed, vector, degraded = self._read_query(index, request)
        lookup = Lookup(request, parsed, name, index, vector, degraded, time.monotonic() + wait)
        try:
            attempt = self._attempt(lookup)
        except IndexNotBuilt:
            attempt = self._after_build(name, lookup)
        if attempt is not None and index.partial is not None:
            self.builds.start(name)  # a build in parts an earlier process left unfinished goes on here
        if attempt is None:
            done, total = index.build_state
            progress = f" ({done} of {total} files)" if total else ""
            reason = f"the {name} index is still being built{progress} — try again in a few seconds"
            return Attempt(index, None, self.dense.unranked_mode(degraded), reason, index.take_notes())
        return attempt

    def _after_build(self, name: str, lookup: Lookup) -> Attempt | None:
        """The search once the background build of ``name`` has its first part in (None: not before the
        deadline). A build already past its first part when the index needed building again (a translation
        a question added) is waited for to its end, and a new one started if it is needed still."""
        for _ in range(3):
            builder = self.builds.start(name)
            if not self.builds.wait_searchable(name, lookup.deadline - time.monotonic()):
                return None
            try:
                return self._attempt(lookup)
            except IndexNotBuilt:  # that build did not cover this need, or failed (its warning says why)
                builder.join(max(0.0, lookup.deadline - time.monotonic()))
        return None

    def _attempt(self, lookup: Lookup) -> Attempt | None:
        """One refresh and search under the index lock (None when the lock stayed busy until the deadline).

        Raises:
            IndexNotBuilt: a server's request met an index that needs a full build first.
        """
        index = lookup.index
        with index.reading(timeout=lookup.deadline - time.monotonic()) as held:
            if not held:
                return None
            # The proactive hook answers fast: it never asks the shared index over the network.
            ask_shared = lookup.request.form != "context"
            notes = self._refresh(index, ask_shared)
            lookup, more = self._in_one_language(lookup, ask_shared)
            notes += more
            try:
                retrieved = self._search(lookup)
            except IndexCorrupt as error:  # found while reading: rebuild it, then answer
                index.recover(error)
                notes += self._refresh(index, ask_shared)
                retrieved = self._search(lookup)
            notes += index.take_notes()
            # A search over a capped tree says so: a name in a file left out is not found, whatever it asks.
            notes += tuple(f"{line}; a file left out is not searched" for line in index.coverage())
            if retrieved is None:
                mode = self.dense.mode("bm25", index, lookup.degraded)
                reason = self._none_held(lookup) or nothing_indexed(lookup.name, self.places)
                return Attempt(index, None, mode, reason, notes)
            mode = self.dense.mode(retrieved.mode, index, lookup.degraded, lookup.parsed)
            notes += retrieved.notes
            none_held = "" if retrieved.hits else self._none_held(lookup)
        return Attempt(index, retrieved, mode, empty_reason(retrieved, lookup.request, none_held), notes)

    def _none_held(self, lookup: Lookup) -> str:
        """What a search restricted to some kinds (``sources``) answers when the index holds none of them (an
        empty or missing memory folder, no skills installed); "" otherwise. Under the index lock."""
        asked = lookup.request.filters.sources
        name = lookup.index.config.name
        kinds = tuple(kind for kind in asked or () if source_spec(kind).index == name)
        if not kinds or not all(source_spec(kind).words.none_held for kind in kinds) or lookup.index.holds(kinds):
            return ""  # docs asked for too: ``nothing_indexed`` and the filter's own words say it
        return nothing_held(kinds, self.places)

    def _refresh(self, index: CorpusIndex, ask_shared: bool = True) -> tuple[str, ...]:
        """Bring the index up to date (never a full build in a server's request); notes for the result."""
        try:
            index.refresh(build=not self.background_builds, ask_shared=ask_shared)
        except IndexBusy as error:
            # Another process holds the update lock: answer from the last committed index, and say so.
            return (f"{error}; these results may miss the newest edits",)
        except IndexFull as error:
            # The update was rolled back: the committed index answers, and the next search tries again.
            return (f"{error}; answering from the last committed index, which may miss the newest edits",)
        # While the watcher starts, the refresh answers from the scan that started it and the result says
        # nothing of it (``index.storage.freshness``): a second or so, and the scan after the start follows.
        return ()

    def _in_one_language(self, lookup: Lookup, ask_shared: bool) -> tuple[Lookup, tuple[str, ...]]:
        """A docs search in one language (``one_language``): a question in a language the docs are translated
        into indexes those translations first; the other copies of each document are hidden."""
        source = docs_source_of(lookup.index)
        if source is None or not source.last.translations.counts:
            return lookup, ()
        request, indexed = lookup.request, self.places.docs_languages()
        notes: tuple[str, ...] = ()
        choice = choose_language(request.query, request.filters.scope, source.last.translations, indexed)
        if choice.ask:
            for language in choice.ask:
                self.places.ask_language(language)
            notes = self._refresh(lookup.index, ask_shared)
            indexed = self.places.docs_languages()
        hidden = hidden_refs(choice, source.last.translations, indexed)
        if not hidden:
            return lookup, notes
        filters = replace(request.filters, hidden=hidden)
        return replace(lookup, request=replace(request, filters=filters)), notes

    def _search(self, lookup: Lookup) -> Retrieved | None:
        """The ranking (None when the index holds nothing)."""
        index, request = lookup.index, lookup.request
        if index.n_chunks == 0:
            return None
        self.dense.prepare(index)
        vector = self.dense.checked(index, lookup.vector)  # None when the leg check keeps this index lexical
        return search(index, lookup.parsed, request.k, request.filters, self.plan(index), vector, self.embed)

    def _read_query(self, index: CorpusIndex, request: SearchRequest) -> tuple[ParsedQuery, Vector | None, str]:
        """The query read once for the index (everything below gets this), and its embedding when a search of
        the index would use it (None otherwise) with why the dense leg gave none ("" when it did or was not
        asked)."""
        parsed = parse_query(request.query, index.tokenizer)
        vector, degraded = self.dense.query_vector(request.query) if self.dense.wanted(index, parsed) else (None, "")
        return parsed, vector, degraded

    def _rank(self, name: str, request: SearchRequest) -> Attempt:
        """rag-bench's ranking: the index as it stands (no refresh, no notes), the ranking's own mode."""
        index = self.index(name)
        parsed, vector, _ = self._read_query(index, request)
        self.dense.use_profile(index)
        with index.reading():
            vector = self.dense.checked(index, vector)
            plan = self.plan(index)
            retrieved = search(index, parsed, request.k, request.filters, plan, vector, self.embed)
        return Attempt(index, retrieved, retrieved.mode, empty_reason(retrieved, request))

    def build_in_background(self, name: str) -> str:
        """When an index must be built first, start ``agentty-rag index NAME`` as a detached process (for the
        proactive hook, which stays quiet this turn instead). Returns what was done ("" when none was needed)."""
        return self.builds.detached(name)

    def _remember(self, name: str, query: str, outcome: Outcome) -> None:
        """Remember the learnable kinds' files a search showed, for ``agentty-rag feedback`` (implicit learning)."""
        folders = paths_in(self.places)  # the folder of each learnable kind (docs, code)
        shown: dict[str, feedback.Shown] = {}
        for rank, passage in enumerate(outcome.packed.passages, start=1):
            chunk = passage.hit.chunk
            folder = folders.get(chunk.source)
            if folder is not None and chunk.ref not in shown:
                shown[chunk.ref] = feedback.Shown(chunk.ref, os.path.normpath(folder / chunk.ref), rank)
        feedback.remember(self.state_dir, feedback.RecentSearch(time.time(), name, query, tuple(shown.values())))

    # -- the dense leg --------------------------------------------------------------------------------------

    def embed_all(self, name: str, progress: Callable[[int, int, str], None] | None = None) -> int:
        """Embed every chunk of an index that lacks a vector (``agentty-rag index``, the server's warm-up)."""
        return self.dense.embed_all(self.index(name), progress)

    def dense_status(self, name: str, known: EmbeddingProfile | None = None) -> dict[str, object]:
        """The embedding backend's state and how much of an index has vectors (probes if not done yet; counted
        by ``known``, a running server's profile, when this process's probe did not answer)."""
        return self.dense.index_status(self.index(name), known)

    def embed(self, text: str) -> Any:
        """``text``'s unit vector from the dense leg (None when it is not up or the request failed): the hook a
        stage that searches again with a generated text uses (HyDE)."""
        return self.dense.query_vector(text)[0]

    def plan(self, index: CorpusIndex | None = None) -> Plan:
        """Which ranking stages run, from the settings, and (for ``index``) which leg leads its searches."""
        plan = Plan.from_settings(self.settings)
        return plan if index is None else replace(plan, lead=self.dense.lead(index))

    def budget(self) -> BudgetConfig:
        """The token-economy levers, from the settings."""
        return BudgetConfig.from_settings(self.settings)

    # -- shorthands for scripts and tests: each builds its request and calls ``search`` ------------------------

    def search_docs(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        sources: Sequence[str] | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the docs folder, skills and memory (and other MCP servers' resources, when they are on)."""
        return self.search(docs_request(self.places, query, k, scope, sources, wait_s))

    def search_code(
        self,
        query: str,
        k: int = 8,
        scope: str | None = None,
        language: str | None = None,
        wait_s: float | None = None,
    ) -> Outcome:
        """Search the workspace's source code."""
        return self.search(code_request(self.places, query, k, scope, language, wait_s))

    def ranked(self, name: str, query: str, k: int, filters: Filters | None = None) -> Retrieved:
        """The ranked hits alone (no refresh, no validation, no rendering): what rag-bench measures."""
        retrieved = self.search(ranking_request(name, query, k, filters)).retrieved
        assert retrieved is not None  # a ranking attempt always ranks
        return retrieved

    def close(self) -> None:
        """Stop the background jobs (waiting a little for each to see it), then close the indexes no thread is
        using (a busy one is left to the process's exit) and the connections."""
        self.closed = True
        self.jobs.stop.set()  # every job sees it at its next step, while the resource servers stop
        self.resources.close()
        self.jobs.close(CLOSE_WAIT_S)
        with self._guard:
            indexes = list(self._indexes.values())
        for index in indexes:
            with index.reading(timeout=0) as held:
                if held:
                    index.close()
        self.dense.close()
        close_generators()  # the expansion stages' connections (the next search probes again)


__all__ = ["Attempt", "Workspace"]
