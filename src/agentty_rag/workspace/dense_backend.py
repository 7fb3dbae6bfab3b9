"""The session's embedding backend: one bounded probe, probes again while it does not answer, cached query
embeddings and the cool-down after repeated failures (``dense_leg.DenseLeg`` adds the vectors of the indexes).

* At start (or first use) one probe of the embedding backend (for Ollama: 0.5 s to connect, 1 s to answer;
  a batch command waits as long as for a batch of documents) learns whether it embeds with the configured
  model and the vectors' dimension. If it fails, searches are lexical and every header says why; no search
  pays a network timeout. The server probes again in a thread (after 2, 4 … 32 s, then every
  ``AGENTTY_RAG_DENSE_RETRY_S``) until it answers; a command-line process stays lexical.
* A failure while embedding one query degrades that query to BM25 (its header says so). After three
  failures in a row the leg is switched off with one warning, and probed again soon (after 2, 4 … 32 s, at
  most ``AGENTTY_RAG_DENSE_RETRY_S``): a probe answered within a query's time-out brings it back, a slower one
  keeps it off (its queries would time out again). The server's background embedding goes through ``paced``:
  a query goes first, and one that timed out while a background request was in flight is not counted as the
  server's failure.
* The server tells ``agentty-rag status`` (another process) what its leg is doing (``state/dense.py``): its
  state, when it probes again, when the embedding server last answered, and (``DenseLeg``) how fast the
  indexes are being embedded.
* A model in the process (``dense.loads_in_process``) has no network to probe: its first probe loads it. The
  server runs that as the job ``load-embedder``: the session's first search waits for it as long as a
  server's probe may (``LOAD_WAIT_S``), later ones not at all (they answer with BM25, and the status says
  ``loading``, until it is ready); a job that asks, the warm-up, waits for it. The command line loads it at
  once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from agentty_rag.config import Settings
from agentty_rag.index.vectors.dense import (
    Embedder,
    EmbeddingError,
    EmbeddingProfile,
    ProbeResult,
    Vector,
    loads_in_process,
    of_shape,
    probe,
)
from agentty_rag.index.vectors.embedders import make_embedder
from agentty_rag.jobs import Job, Stop, Supervisor
from agentty_rag.ollama_api.client import CONNECT_S, PROBE_READ_S
from agentty_rag.state import dense as dense_record
from agentty_rag.workspace.paced import PacedEmbedder, QueryTurns, request_s

log = logging.getLogger(__name__)

# How long the session's first search waits for a model in the process to load: what a server's probe may take.
LOAD_WAIT_S = CONNECT_S + PROBE_READ_S

FAILURES_BEFORE_OFF = 3
_CACHE_SIZE = 256
# After a failed first probe, the server's next ones (seconds): soon, for an embedding server started with the
# agent or still loading its model, then every AGENTTY_RAG_DENSE_RETRY_S.
REPROBE_AFTER_S = (2, 4, 8, 16, 32)
# Until the embedding server first answers, the server probes at least this often: one started after the agent
# (a probe with nothing listening is a refused connection, nearly free) makes the session hybrid within seconds.
FIRST_ANSWER_EVERY_S = 15


@dataclass(frozen=True)
class DenseStatus:
    """``off`` (by setting), ``unprobed``, ``ready`` or ``unavailable``, and why."""

    state: str
    reason: str = ""
    profile: EmbeddingProfile | None = None


class DenseBackend:
    """Thread-safe access to the embedding backend for one session."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None, jobs: Supervisor | None = None) -> None:
        self.settings = settings
        self.jobs = jobs if jobs is not None else Supervisor()  # the server's probes and embedding run as its jobs
        self.embedder = embedder if embedder is not None else make_embedder(settings)
        self.status = DenseStatus("unprobed") if settings.dense else DenseStatus("off", "AGENTTY_RAG_DENSE=0")
        self._lock = threading.Lock()
        self.ever_ready = False  # it answered once this session: losing it later is news
        self._failures = 0
        self._retry_at: float | None = None
        self._waits = iter(REPROBE_AFTER_S)  # the server's waits before probing again a server not answering
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self.turns = QueryTurns()  # a query's embedding goes before the next request of the background
        # What the background embeds with: requests a query can wait behind without timing out.
        self.paced = PacedEmbedder(self.embedder, self.turns, request_s(self.query_bound_s))
        self.background = False  # the server embeds and probes in threads; the command line does not
        self.report_dir: Path | None = None  # where the server tells status what its leg does (None: nowhere)
        self.known: EmbeddingProfile | None = None  # the profile of the last probe that answered
        self.answered_at = 0.0  # when (time.time()) the embedding server last answered a request (0: never)
        self._cooling = False  # switched off by failures mid-session: a probe must answer within a query's bound
        self._waited_for_load = False  # a search has waited for the model to load (one does, once)
        # A batch command (agentty-rag index, rag-bench): its probe waits as long as a batch of documents may,
        # for a server still loading its model, where a search's must be short.
        self.patient = False

    def ensure(self) -> DenseStatus:
        """Probe once (bounded); later calls return the known status (or re-probe after a cool-down)."""
        loading: Job | None = None
        with self._lock:
            due = self._retry_at is not None and time.monotonic() >= self._retry_at
            if due and self.background:  # the server: probed again in a job, never inside a search
                self._retry_at = None
                self.jobs.start("probe", lambda stop: self.probe_again())
            elif self.status.state == "unprobed" and self.background and loads_in_process(self.embedder):
                loading = self.jobs.start("load-embedder", lambda stop: self._load())
            elif self.status.state == "unprobed" or due:
                self._probe()
            status = self.status
        if loading is not None and status.state == "unprobed":
            if self.jobs.in_job():
                loading.join()  # background work (the warm-up) waits for the model
            elif not self._waited_for_load:  # the first search waits as long as a server's probe may, no longer
                self._waited_for_load = True
                loading.join(LOAD_WAIT_S)
            return self.status
        return status

    def _load(self) -> None:
        """The first probe of a model in the process, which loads it: the job ``load-embedder``."""
        result = probe(self.embedder, "long-probe")
        with self._lock:
            if self.status.state == "unprobed":
                self._took(result)

    def wait_available(self, stop: Stop) -> DenseStatus:
        """Wait, in a background job, until the probes find the embedding server (or it is off, or ``stop``):
        each probe comes when it is due (``REPROBE_AFTER_S``, then every ``AGENTTY_RAG_DENSE_RETRY_S``), so an
        embedding server started after the agent makes the session hybrid without a restart."""
        status = self.ensure()
        while status.state == "unavailable" and not stop.requested:
            probing = self.jobs.job("probe")
            if probing is not None and probing.alive:
                probing.join()  # a probe is bounded by its own time-out
            else:
                with self._lock:
                    due = self._retry_at
                if due is None:
                    return status  # no probe comes (the command line)
                stop.wait(due - time.monotonic())
            status = self.ensure()
        return status

    def probe_again(self) -> DenseStatus:
        """The server's probe of a leg found unavailable, in a job: the request holds no lock (searches
        meanwhile answer lexically, as before) and waits as long as a batch of documents may, so that a server
        still loading its model answers. Once it is ready, the next search embeds what has no vector; while it
        does not answer, another probe is due after the next wait."""
        if self.status.state != "unavailable":
            return self.status
        result = probe(self.embedder, "long-probe")
        with self._lock:
            if self.status.state == "unavailable":
                self._took(result)
            return self.status

    def _probe(self) -> None:
        self._took(probe(self.embedder, "long-probe" if self.patient else "probe"))

    def _took(self, result: ProbeResult) -> None:
        """Take a probe's result as the leg's state (the connections stay: another thread may be using one). In
        the server a failed probe makes another due: soon after start-up (an embedding server started after
        the agent, or still loading its model), every ``AGENTTY_RAG_DENSE_RETRY_S`` once it has answered. After
        failures mid-session (the cool-down) a probe brings the leg back only when it answered within a query's
        time-out: a slower server would fail the next queries again."""
        self._retry_at = None
        slow = self._cooling and result.ok and result.seconds > self.query_bound_s
        if result.ok and result.profile is not None and not slow:
            self.status = DenseStatus("ready", "", result.profile)
            self.known = result.profile
            self.ever_ready = True
            self._failures = 0
            self._cooling = False
            self._waits = iter(())
            self.answered_at = time.time()
            profile = result.profile
            log.info("dense leg ready: %s (%d-d) %s", profile.model, profile.dimension, self.embedder.where)
        else:
            if slow:
                self.answered_at = time.time()
                reason = (
                    f"the server answers, but a probe took {result.seconds:.1f} s, longer than a query may wait "
                    f"({self.query_bound_s:.1f} s)"
                )
            else:
                reason = result.reason
            again = self.status == DenseStatus("unavailable", reason)  # the server's probes, each minute
            self.status = DenseStatus("unavailable", reason)
            if self.background:
                retry = self.settings.dense_retry_s
                wait = min(next(self._waits, retry), retry) if self._cooling else next(self._waits, retry)
                if not self.ever_ready:
                    wait = min(wait, FIRST_ANSWER_EVERY_S)
                self._retry_at = time.monotonic() + wait
            (log.debug if again else log.info)("dense leg unavailable: %s", reason)
        self.report()

    @property
    def query_bound_s(self) -> float:
        """How long a query's embedding may take: its time-out (``AGENTTY_RAG_EMBED_TIMEOUT_MS``)."""
        return self.settings.embed_timeout_ms / 1000

    def query_vector(self, query: str) -> tuple[Vector | None, str]:
        """The query's unit vector, or (None, why it is missing) when the leg is off or the request failed."""
        status = self.ensure()
        if status.state != "ready" or status.profile is None:
            return None, ""
        key = f"{status.profile.key}\0{query}"
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached, ""
        with self.turns.query() as turn:
            try:
                vector: Vector = of_shape(self.embedder.embed([query], "query"), 1, status.profile.dimension)[0]
            except EmbeddingError as error:
                if turn.overlapped:  # a request of the background was in flight: the server is busy, not down
                    return None, f"{error.reason} (the server is embedding the index)"
                self._failed(error.reason)
                return None, error.reason
        self.answered_at = time.time()
        with self._lock:
            self._failures = 0
            self._cache[key] = vector
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector, ""

    def _failed(self, reason: str) -> None:
        """One failed request; the third in a row switches the leg off, and it is probed again soon (2, 4 …
        32 s, at most ``AGENTTY_RAG_DENSE_RETRY_S``)."""
        with self._lock:
            self._failures += 1
            if self._failures >= FAILURES_BEFORE_OFF and self.status.state == "ready":
                self.status = DenseStatus("unavailable", f"{reason} ({self._failures} failures in a row)")
                self._cooling = True
                self._waits = iter(REPROBE_AFTER_S)
                cool_down = min(next(self._waits), self.settings.dense_retry_s)
                self._retry_at = time.monotonic() + cool_down
                log.warning(
                    "the embedding server failed %d times (%s); searching with BM25 only, probing it again in %d s",
                    self._failures,
                    reason,
                    cool_down,
                )
                self.report()

    def answered(self) -> None:
        """A request of the background was answered (the embedding server is up)."""
        self.answered_at = time.time()

    def probe_in_s(self) -> float | None:
        """Seconds until the next probe of a leg not ready (0: one runs or is due now; None: none is planned)."""
        if self.status.state == "ready":
            return None
        retry_at = self._retry_at
        if retry_at is None:
            return 0.0 if self.background and self.status.state == "unavailable" else None
        return max(0.0, retry_at - time.monotonic())

    def facts(self) -> dict[str, object]:
        """What the server tells ``status`` of its leg (``state/dense.py``)."""
        status, known = self.status, self.known
        return {
            "state": status.state,
            "description": self.describe(),
            "profile": None if known is None else {"model": known.model, "dimension": known.dimension},
            "probe_in_s": self.probe_in_s(),
            "cooling": self._cooling,
            "answered_at": self.answered_at,
        }

    def report(self) -> None:
        """Tell ``status`` what the leg does now (the server only; a file that cannot be written is left)."""
        if self.report_dir is not None and self.background:
            dense_record.record(self.report_dir, self.facts())

    def close(self) -> None:
        """Close the backend's connections (a later use opens new ones), and take back what it told ``status``."""
        self.embedder.close()
        if self.report_dir is not None and self.background:
            dense_record.clear(self.report_dir)

    def describe(self) -> str:
        status = self.status
        if status.state == "ready" and status.profile is not None:
            return f"ready: {status.profile.model} ({status.profile.dimension}-d) {self.embedder.where}"
        if status.state == "off":
            return "off (AGENTTY_RAG_DENSE=0)"
        if status.state == "unprobed" and self.jobs.running("load-embedder"):
            return f"loading {self.embedder.model} {self.embedder.where}"
        if status.state == "unprobed":
            return f"not probed yet ({self.embedder.model} {self.embedder.where})"
        return f"unavailable: {status.reason}"


__all__ = ["FAILURES_BEFORE_OFF", "REPROBE_AFTER_S", "DenseBackend", "DenseStatus"]
