"""One owner for a workspace's background work: named jobs, one thread each, restarted when they fail.

A server keeps its indexes fresh in the background (the warm-up, builds in parts, embedding, the probes of
the embedding server, the watcher, the reconciling pass, other MCP servers' resources). Each of those is a
job of the workspace's ``Supervisor``:

* a job has a key (``build:code``, ``embed:docs``, ``probe``); starting a key that is already running, or
  waiting to run again, returns that job: the same work never runs twice at once;
* a job that raises is logged, counted, shown in ``status`` and run again after a back-off (1 s, doubling to
  60 s), never left silently dead; a job that returns is done (the next caller that wants it starts it again);
* ``close`` asks every job to stop (``Stop``, which a job checks between steps and waits on instead of
  sleeping), then joins them;
* every change is an event (``wait_for``), so tests and callers wait on what happened, not on time.

Nothing here knows what a job does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from agentty_rag.errors import InjectedFault

log = logging.getLogger(__name__)

# The back-off before a failed job runs again: the first wait, doubled after each failure in a row, up to the cap.
FIRST_RETRY_S = 1.0
RETRY_CAP_S = 60.0
# How long ``close`` waits for each job to see its stop (a job in a network call may take longer: it is
# left to end by itself, its thread a daemon).
JOIN_S = 5.0
# The states a job's report can have.
RUNNING, WAITING, DONE, STOPPED = "running", "waiting", "done", "stopped"


def retry_delays(first: float = FIRST_RETRY_S, cap: float = RETRY_CAP_S) -> Iterator[float]:
    """The waits before each run again of a job failing in a row: ``first``, doubled each time, never above
    ``cap``."""
    delay = max(0.0, first)
    while True:
        yield min(delay, cap)
        delay = min(delay * 2, cap) if delay > 0 else 0.0


def parse_faults(text: str) -> dict[str, int]:
    """``AGENTTY_RAG_JOB_FAULTS`` (``build:code=1,watch=2``): how many times each job raises at its start. A
    malformed entry is left out with a warning (a fault nobody asked for is worse than none)."""
    faults: dict[str, int] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        key, _, count = entry.rpartition("=")
        if not key.strip() or not count.strip().isdigit():
            log.warning("AGENTTY_RAG_JOB_FAULTS: %r is not KEY=N; left out", entry)
            continue
        faults[key.strip()] = min(int(count), 1000)
    return faults


class Stop:
    """What a job checks to know it should end: set by ``Supervisor.close``."""

    def __init__(self) -> None:
        self._event = threading.Event()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` (instead of sleeping); whether a stop was asked meanwhile."""
        return self._event.wait(max(0.0, seconds))

    def is_set(self) -> bool:  # the ``threading.Event`` shape a library's stop argument takes
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()


@dataclass(frozen=True)
class JobReport:
    """One job as ``status`` shows it."""

    key: str
    state: str  # RUNNING, WAITING (to run again after a failure), DONE or STOPPED
    runs: int
    failures: int  # runs that raised, in all
    last_error: str = ""  # the last failure's type and message ("" when none)
    retry_in_s: float = 0.0  # while WAITING: how soon it runs again

    def describe(self) -> str:
        """``embed:code running (failed 1×: RuntimeError: …; run again)``."""
        if not self.failures:
            return f"{self.key} {self.state}"
        failed = f"failed {self.failures}×: {self.last_error}"
        if self.state == WAITING:
            return f"{self.key} {failed}; runs again in {self.retry_in_s:.0f} s"
        return f"{self.key} {self.state} ({failed}; restarted)"


@dataclass
class Job:
    """A job's thread and counts (read through ``Supervisor.reports``)."""

    key: str
    work: Callable[[Stop], object]
    restart: bool
    state: str = RUNNING
    runs: int = 0
    failures: int = 0
    last_error: str = ""
    retry_at: float = 0.0
    thread: threading.Thread | None = field(default=None, repr=False)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the job to end (``timeout`` seconds at most); whether it did."""
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    @property
    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()


class Supervisor:
    """The background jobs of one workspace (or one process).

    Args:
        name: the prefix of the jobs' thread names (``agentty-build:code``).
        faults: for tests of the restart path: how many times a job of a key raises ``InjectedFault`` when it
            starts (``AGENTTY_RAG_JOB_FAULTS``).
        on_change: called (outside the lock) after a job starts, fails or ends: ``status``'s record.
    """

    def __init__(
        self,
        name: str = "agentty",
        faults: Mapping[str, int] | None = None,
        on_change: Callable[[Supervisor], None] | None = None,
        first_retry_s: float = FIRST_RETRY_S,
    ) -> None:
        self.name = name
        self.stop = Stop()
        self._faults = dict(faults or {})
        self.on_change = on_change
        self._first_retry_s = first_retry_s
        self._jobs: dict[str, Job] = {}
        self._changed = threading.Condition()
        # (key, what happened): started, failed, done, stopped; the last few thousand
        self.events: deque[tuple[str, str]] = deque(maxlen=4096)

    # -- starting and stopping --------------------------------------------------------------------------------

    def start(self, key: str, work: Callable[[Stop], object], restart: bool = True) -> Job:
        """Run ``work(stop)`` in a thread of its own, unless a job of ``key`` runs or waits to run again (then
        that job). ``restart``: run it again after a back-off when it raises (False: a failure ends it)."""
        with self._changed:
            job = self._jobs.get(key)
            if job is not None and job.alive:
                return job
            job = self._jobs[key] = Job(key, work, restart)
            if self.stop.requested:
                job.state = STOPPED
                return job
            job.thread = threading.Thread(target=self._run, args=(job,), name=f"{self.name}-{key}", daemon=True)
            job.thread.start()
            return job

    def job(self, key: str) -> Job | None:
        with self._changed:
            return self._jobs.get(key)

    def running(self, key: str) -> bool:
        """Whether a job of ``key`` runs, or waits to run again."""
        job = self.job(key)
        return job is not None and job.alive

    def close(self, timeout: float = JOIN_S) -> None:
        """Ask every job to stop, and wait up to ``timeout`` seconds in all for them to end."""
        self.stop.set()
        with self._changed:
            jobs = list(self._jobs.values())
            self._changed.notify_all()
        deadline = time.monotonic() + timeout
        for job in jobs:
            if not job.join(max(0.0, deadline - time.monotonic())):
                log.info("the background job %s is still running; leaving it to the process's exit", job.key)

    # -- what the jobs do -------------------------------------------------------------------------------------

    def reports(self) -> tuple[JobReport, ...]:
        """Every job started so far, by key."""
        now = time.monotonic()
        with self._changed:
            jobs = sorted(self._jobs.values(), key=lambda job: job.key)
            return tuple(
                JobReport(
                    job.key,
                    job.state,
                    job.runs,
                    job.failures,
                    job.last_error,
                    max(0.0, job.retry_at - now) if job.state == WAITING else 0.0,
                )
                for job in jobs
            )

    def wait_for(self, condition: Callable[[Supervisor], bool], timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until ``condition(self)`` holds (checked after every event)."""
        with self._changed:
            return self._changed.wait_for(lambda: condition(self), timeout=max(0.0, timeout))

    def happened(self, key: str, what: str) -> bool:
        """Whether a job of ``key`` has had the event ``what`` (``started``, ``failed``, ``done``, ``stopped``)."""
        return (key, what) in self.events

    # -- a job's thread ---------------------------------------------------------------------------------------

    def _run(self, job: Job) -> None:
        delays = retry_delays(self._first_retry_s)
        while True:
            self._event(job, RUNNING, "started", runs=1)
            try:
                self._inject(job.key)
                job.work(self.stop)
            except Exception as error:  # a job's top level: log, count, and run it again
                log.exception("the background job %s failed", job.key)
                wait = next(delays)
                self._event(job, WAITING, "failed", error=f"{type(error).__name__}: {error}", wait=wait)
                if not job.restart or self.stop.wait(wait):
                    self._event(job, STOPPED, "stopped")
                    return
                continue
            self._event(job, STOPPED if self.stop.requested else DONE, "stopped" if self.stop.requested else "done")
            return

    def _inject(self, key: str) -> None:
        with self._changed:
            left = self._faults.get(key, 0)
            if left <= 0:
                return
            self._faults[key] = left - 1
        raise InjectedFault(f"a fault AGENTTY_RAG_JOB_FAULTS asked for in {key}")

    def _event(self, job: Job, state: str, what: str, runs: int = 0, error: str = "", wait: float = 0.0) -> None:
        with self._changed:
            job.state = state
            job.runs += runs
            if error:
                job.failures += 1
                job.last_error = error[:200]
                job.retry_at = time.monotonic() + wait
            self.events.append((job.key, what))
            self._changed.notify_all()
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # the record is for status: it never takes a job down
                log.exception("recording the background jobs failed")


__all__ = ["Job", "JobReport", "Stop", "Supervisor", "parse_faults", "retry_delays"]
