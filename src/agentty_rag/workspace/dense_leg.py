"""The session's dense leg: the embedding backend (``dense_backend.py``) and the vectors of the indexes it serves.

An index's missing vectors are filled in by a background job (the server, ``embed:NAME``, one per index at a time)
or a few at a time before a search (the command line): the code index's definitions first, then the
documentation, then the rest of the code (``paced.TIERS``), each distinct text once. The leg check says which
leg to trust for each index; ``mode`` says truthfully how a result was ranked; the server tells ``status``
how many vectors each index has, at what rate they come and how long the rest should take.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

from agentty_rag.config import Settings
from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.vectors.dense import Embedder, EmbeddingError, EmbeddingProfile, Vector
from agentty_rag.jobs import Job, Stop, Supervisor
from agentty_rag.retrieve.candidates import lexical_alone
from agentty_rag.retrieve.fusion import DENSE_LED, HYBRID
from agentty_rag.retrieve.legs import Verdict
from agentty_rag.retrieve.parsed import ParsedQuery
from agentty_rag.source_kinds import kinds_of
from agentty_rag.workspace.dense_backend import FAILURES_BEFORE_OFF, REPROBE_AFTER_S, DenseBackend, DenseStatus
from agentty_rag.workspace.leg_check import LegChecks

log = logging.getLogger(__name__)

# The header's reason when a query of a code index was searched without its embedding.
LONG_QUERY_MODE = "a long query is searched by the lexical leg alone"
NAME_QUERY_MODE = "a name is searched by the lexical leg alone"

# The command line embeds at most this many missing chunks before a search (an edited file or two).
SYNC_EMBED_LIMIT = 64
# The rate ``status`` shows: chunks embedded over this many seconds; the server tells it at most this often.
RATE_WINDOW_S = 60.0
REPORT_EVERY_S = 2.0


class DenseLeg(DenseBackend):
    """The embedding backend of one session, and the vectors of its indexes."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None, jobs: Supervisor | None = None) -> None:
        super().__init__(settings, embedder, jobs)
        self._guard = threading.Lock()  # the facts below; never held over a network call
        self._claimed: set[str] = set()  # the indexes being embedded now (one thread at a time each)
        # After a failed batch, an index's background embedding waits (as the probe does: 2, 4 … 32 s, at most
        # AGENTTY_RAG_DENSE_RETRY_S): a server that fails every batch is not sent one per search.
        self._embed_waits: dict[str, Iterator[int]] = {}
        self._embed_after: dict[str, float] = {}
        self.checks = LegChecks(settings)  # which leg to trust, per index
        # Each index's (when, vectors, chunks) as embedding went on: its rate and time left, for status.
        self._coverage: dict[str, deque[tuple[float, int, int]]] = {}
        self._reported = 0.0

    # -- the vectors of an index --------------------------------------------------------------------------

    def use_profile(self, index: CorpusIndex) -> bool:
        """Point the index at the session's embedding profile; False when the leg is not ready."""
        status = self.status
        if status.state != "ready" or status.profile is None:
            return False
        index.use_embeddings(status.profile)
        return True

    def prepare(self, index: CorpusIndex) -> None:
        """Before a search: use the session's profile and fill in missing vectors.

        The server embeds in a background thread (BM25 answers meanwhile); the command line embeds a few
        missing chunks at once (an edited file) and leaves a large backlog to ``agentty-rag index``.
        """
        if not self.use_profile(index):
            return
        have, live = index.vector_coverage()
        if have >= live:
            if self.background and self.status.profile is not None and self.checks.due(index, self.status.profile.key):
                self._schedule(index)  # the leg check: in the embedding thread, never in the request
            return
        if self.background:
            self._schedule(index)
            return
        if self.ensure().state == "ready" and live - have <= SYNC_EMBED_LIMIT:
            try:
                index.embed_missing(self.embedder, self.settings.embed_batch, SYNC_EMBED_LIMIT)
            except EmbeddingError as error:
                self._failed(error.reason)

    def embed_all(
        self,
        index: CorpusIndex,
        progress: Callable[[int, int, str], None] | None = None,
        check: bool = True,
        stop: Stop | None = None,
    ) -> int:
        """Embed every chunk of an index that lacks a vector (``agentty-rag index``, the server's warm-up), then
        (unless ``check`` is False: rag-bench times it apart) find the neighbourhoods of the code index's vectors
        and make the leg check's verdict when it is due."""
        status = self.ensure()
        if status.state != "ready" or status.profile is None:
            return 0
        name = index.config.name
        with self._guard:
            if name in self._claimed:
                return 0  # another thread embeds it (the warm-up, or a search's): two would send every batch twice
            self._claimed.add(name)
        try:
            return self._embed_all(index, status.profile, progress, check, stop)
        finally:
            with self._guard:
                self._claimed.discard(name)

    def _embed_all(
        self,
        index: CorpusIndex,
        profile: EmbeddingProfile,
        progress: Callable[[int, int, str], None] | None,
        check: bool,
        stop: Stop | None,
    ) -> int:
        try:
            index.use_embeddings(profile)
            done = self._embed_tiers(index, progress, stop)
            if stop is not None and stop.requested:
                return done
            with self._guard:
                self._embed_waits.pop(index.config.name, None)
                self._embed_after.pop(index.config.name, None)
            if check:  # the upkeep after embedding (rag-bench times it apart from the embedding)
                if self.settings.hubness > 0 and index.config.scoring.rank_files:
                    index.find_densities()  # here, not in the first search (and kept for the next process)
                self._check(index, profile)
            return done
        except EmbeddingError as error:
            self._failed(error.reason)
            name = index.config.name
            self._back_off(name)
            with self._guard:
                self._coverage.pop(name, None)  # not being embedded now: no rate, no time left
            self.report()
            log.warning("embedding the %s index stopped: %s; the rest is embedded later", name, error.reason)
            return 0
        except IndexCorrupt as error:  # the next search rebuilds it, and embedding resumes after that
            index.recover(error)
            return 0

    def _embed_tiers(
        self, index: CorpusIndex, progress: Callable[[int, int, str], None] | None, stop: Stop | None
    ) -> int:
        """Embed what the index lacks, tier by tier (``paced.TIERS``): a code index's definitions, then its other
        chunks; any other index's chunks as documentation. The server's requests go through ``paced`` (queries
        first, then the earlier tiers of every index)."""
        name = index.config.name
        code = all(spec.code for spec in kinds_of(name))
        tiers: list[tuple[str, bool | None]] = [("definitions", True), ("rest", False)] if code else [("docs", None)]

        def tell(have: int, live: int, phase: str) -> None:
            self._progressed(name, have, live)
            if progress is not None:
                progress(have, live, phase)

        def stopped() -> bool:
            return stop is not None and stop.requested

        self._progressed(name, *index.vector_coverage())
        done = 0
        for tier, definitions in tiers:
            if not self.background:
                done += index.embed_missing(self.embedder, self.settings.embed_batch, None, tell, definitions, stopped)
                continue
            with self.paced.tiered(tier) as paced:  # the server's: queries go first, then the earlier tiers
                done += index.embed_missing(paced, self.settings.embed_batch, None, tell, definitions, stopped)
        return done

    def _progressed(self, name: str, have: int, live: int) -> None:
        """An index's vectors now (after a batch was answered): kept for its rate, told to ``status``."""
        now = time.monotonic()
        with self._guard:
            seen = self._coverage.setdefault(name, deque())
            seen.append((now, have, live))
            while len(seen) > 2 and now - seen[1][0] > RATE_WINDOW_S:
                seen.popleft()
            due = now - self._reported >= REPORT_EVERY_S or have >= live
            if due:
                self._reported = now
        if len(seen) > 1:
            self.answered()
        if due:
            self.report()

    def embedding_rate(self, name: str) -> tuple[float, float | None]:
        """(chunks a second the index's vectors came at over the last ``RATE_WINDOW_S``, seconds left at that
        rate: None when unknown); (0, None) when it is not being embedded."""
        with self._guard:
            seen = list(self._coverage.get(name, ()))
        if len(seen) < 2:
            return 0.0, None
        (first, had, _), (last, have, live) = seen[0], seen[-1]
        if have >= live:
            return 0.0, 0.0
        if time.monotonic() - last > RATE_WINDOW_S:  # it stopped (a failure's back-off, or the leg is off)
            return 0.0, None
        rate = (have - had) / max(last - first, 1e-6)
        return rate, ((live - have) / rate if rate > 0 else None)

    def facts(self) -> dict[str, object]:
        """What the server tells ``status`` (``DenseBackend.facts``), and each index being embedded: its
        vectors, chunks, rate and time left."""
        with self._guard:
            names = {name: seen[-1] for name, seen in self._coverage.items() if seen}
        indexes: dict[str, object] = {}
        for name, (_, have, live) in sorted(names.items()):
            rate, left = self.embedding_rate(name)
            indexes[name] = {"embedded": have, "chunks": live, "rate": round(rate, 2), "eta_s": left}
        return {**super().facts(), "indexes": indexes}

    def _check(self, index: CorpusIndex, profile: EmbeddingProfile) -> None:
        """The leg check, once every chunk has a vector (``leg_check``); a failure leaves it for later."""
        have, live = index.vector_coverage()
        if have < live:
            return
        try:
            self.checks.run(index, self.embedder, lambda text: self.query_vector(text)[0], profile.key)
        except (EmbeddingError, IndexCorrupt):
            raise  # embed_all's own handling: probed again later, or rebuilt
        except Exception:  # the check is an optimisation: it must never take embedding or searching down
            self.checks.failed(index)
            log.exception("the leg check of the %s index failed; searches stay hybrid", index.config.name)

    def wanted(self, index: CorpusIndex, query: ParsedQuery | None = None) -> bool:
        """Whether a search of the index would use the query's vector: False for a long query of a code index
        (``candidates.lexical_alone``) and when the leg check keeps the index lexical, so the query is not embedded at
        all. The verdict is read only when the index is free now (a build may hold it): otherwise the query is
        embedded and ``checked`` drops the vector."""
        self.ensure()  # the (bounded, once) probe names the session's model: the verdict and the header need it
        if self._lexical_alone(index, query):
            return False
        with index.reading(timeout=0) as held:
            return not held or self._lexical_verdict(index) is None

    def checked(self, index: CorpusIndex, vector: Vector | None) -> Vector | None:
        """The query's vector, or None when the leg check keeps this index's searches lexical."""
        return None if vector is None or self._lexical_verdict(index) is not None else vector

    def lead(self, index: CorpusIndex) -> str:
        """Which leg leads the index's hybrid searches (``fusion.HYBRID`` or ``fusion.DENSE_LED``): the leg
        check's verdict, once it is made."""
        profile = self.status.profile
        if self.status.state != "ready" or profile is None:
            return HYBRID
        return self.checks.lead(index, profile.key)

    def _lexical_alone(self, index: CorpusIndex, query: ParsedQuery | None) -> bool:
        return bool(self._lexical_alone_reason(index, query))

    def _lexical_alone_reason(self, index: CorpusIndex, query: ParsedQuery | None) -> str:
        """Why a search of the index is made by the lexical leg alone ("" when it is not, or without a query)."""
        weighted = self.settings.bm25_weight > 0
        if query is None:
            return ""
        if lexical_alone(index, query.long, weighted):
            return LONG_QUERY_MODE
        if lexical_alone(index, False, weighted, query.bare_name):
            return NAME_QUERY_MODE
        return ""

    def _lexical_verdict(self, index: CorpusIndex) -> Verdict | None:
        profile = self.status.profile
        if self.status.state != "ready" or profile is None:
            return None
        return self.checks.lexical(index, profile.key)

    def _back_off(self, name: str) -> None:
        """The index's background embedding waits before it sends another batch."""
        retry = self.settings.dense_retry_s
        with self._guard:
            waits = self._embed_waits.setdefault(name, iter(REPROBE_AFTER_S))
            self._embed_after[name] = time.monotonic() + min(next(waits, retry), retry)

    def embed_in_background(self, index: CorpusIndex) -> Job:
        """``embed_all`` as the job ``embed:NAME`` (the one running, if any). A failure the embedding server
        answers with is its back-off (``_back_off``); anything else raises to the supervisor, which logs it,
        shows it in ``status`` and runs the job again after its own back-off."""
        return self.jobs.start(f"embed:{index.config.name}", lambda stop: self.embed_all(index, stop=stop))

    def _schedule(self, index: CorpusIndex) -> None:
        with self._guard:
            if time.monotonic() < self._embed_after.get(index.config.name, 0.0):
                return  # a batch failed: the back-off
        self.embed_in_background(index)

    def index_status(self, index: CorpusIndex, known: EmbeddingProfile | None = None) -> dict[str, object]:
        """The backend's state and how much of an index has vectors (probes if not done yet). ``known``: the
        profile a running server's probe found, to count the vectors by when this process's probe did not
        answer (the embedding server may be busy with that server's batches)."""
        self.ensure()
        try:
            if not self.use_profile(index) and known is not None:
                index.use_embeddings(known)
        except IndexCorrupt as error:  # reported, and rebuilt by the next search
            index.recover(error)
        have, live = index.vector_coverage()
        profile = self.status.profile
        check = self.checks.describe(index, profile.key) if self.status.state == "ready" and profile else ""
        return {
            "state": self.status.state,
            "description": self.describe(),
            "embedded": have,
            "chunks": live,
            "leg_check": check,
        }

    # -- how a result was ranked --------------------------------------------------------------------------

    def unranked_mode(self, degraded: str) -> str:
        """The mode of an answer that ranked nothing (it never looks at an index: a build may hold it)."""
        if degraded:
            return f"bm25 (degraded: dense — {degraded})"
        if self.status.state == "unavailable":
            return f"bm25 (dense unavailable: {self.status.reason})" if self.expected else "bm25"
        return "bm25"

    def mode(self, mode: str, index: CorpusIndex, degraded: str, query: ParsedQuery | None = None) -> str:
        """How a result was produced, truthfully: ``bm25`` or ``hybrid``, and why not hybrid."""
        status = self.status
        if degraded or status.state == "unavailable":
            return self.unranked_mode(degraded)
        if mode == "hybrid":
            have, live = index.vector_coverage()
            if have < live:
                return f"hybrid (partial: {100 * have // max(live, 1)}% embedded)"
            return "hybrid (dense-led)" if self.lead(index) == DENSE_LED else "hybrid"
        if status.state == "ready" and self.settings.dense_weight == 0:
            return "bm25 (dense weight 0)"
        verdict = self._lexical_verdict(index)
        if verdict is not None:
            return f"bm25 ({verdict.describe()})"
        if status.state == "ready":
            # A search the lexical leg makes alone by design was not touched by missing vectors: say so first.
            alone = self._lexical_alone_reason(index, query) if mode == "bm25" else ""
            if alone:
                return f"bm25 ({alone})"
            have, live = index.vector_coverage()
            if have < live:
                later = (
                    "embedding the rest in the background" if self.background else "`agentty-rag index` embeds the rest"
                )
                return f"bm25 (dense: {100 * have // max(live, 1)}% embedded, {later})"
        return mode

    @property
    def expected(self) -> bool:
        """Whether a missing backend is news: this session's settings name an embedding server or model
        (``Settings.dense_configured``), or one answered earlier in this session. Vectors an earlier session
        left in an index are not: a later session with no settings sees plain ``bm25``."""
        return self.settings.dense_configured or self.ever_ready


__all__ = ["FAILURES_BEFORE_OFF", "LONG_QUERY_MODE", "NAME_QUERY_MODE", "SYNC_EMBED_LIMIT", "DenseLeg", "DenseStatus"]
