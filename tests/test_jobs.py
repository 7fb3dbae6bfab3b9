"""The supervisor of background jobs: one job per key, a failed job run again after a back-off and reported,
every job stopped and joined on close; tests wait on its events."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.errors import InjectedFault
from agentty_rag.jobs import (
    DONE,
    RUNNING,
    STOPPED,
    WAITING,
    Stop,
    Supervisor,
    parse_faults,
    retry_delays,
)


@given(st.floats(0.0, 100.0), st.floats(0.0, 1000.0))
def test_retry_delays_start_at_the_first_double_and_never_pass_the_cap(first: float, cap: float) -> None:
    delays = retry_delays(first, cap)
    waits = [next(delays) for _ in range(30)]
    assert waits[0] == min(first, cap)
    assert all(wait <= cap for wait in waits)
    assert all(later >= earlier for earlier, later in zip(waits, waits[1:], strict=False))
    assert all(later in (cap, 2 * earlier) for earlier, later in zip(waits, waits[1:], strict=False) if earlier)


def test_the_default_back_off_is_one_second_doubling_to_a_minute() -> None:
    delays = retry_delays()
    assert [next(delays) for _ in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]


def test_a_key_runs_once_at_a_time_and_again_after_it_ended() -> None:
    jobs = Supervisor(first_retry_s=0.01)
    release = threading.Event()
    runs: list[int] = []

    def work(stop: Stop) -> None:
        runs.append(1)
        release.wait(30)

    first = jobs.start("build:code", work)
    assert jobs.start("build:code", work) is first  # running: the same job
    release.set()
    assert first.join(30)
    again = jobs.start("build:code", work)
    assert again is not first and again.join(30)
    assert len(runs) == 2
    assert [r.state for r in jobs.reports()] == [DONE]
    jobs.close()


def test_a_job_that_raises_is_reported_and_run_again_after_its_back_off() -> None:
    jobs = Supervisor(first_retry_s=0.01)
    calls: list[int] = []

    def flaky(stop: Stop) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise ValueError(f"bad vector shape {len(calls)}")

    job = jobs.start("embed:code", flaky)
    assert jobs.wait_for(lambda s: s.happened("embed:code", "done"), 30)
    assert job.join(30)
    (report,) = jobs.reports()
    assert (report.state, report.runs, report.failures) == (DONE, 3, 2)
    assert report.last_error == "ValueError: bad vector shape 2"
    assert report.describe() == "embed:code done (failed 2×: ValueError: bad vector shape 2; restarted)"
    assert [what for key, what in jobs.events] == ["started", "failed", "started", "failed", "started", "done"]
    jobs.close()


def test_a_job_waiting_to_run_again_says_when_and_close_ends_the_wait() -> None:
    jobs = Supervisor(first_retry_s=600)

    def broken(stop: Stop) -> None:
        raise OSError("disk full")

    job = jobs.start("build:docs", broken)
    assert jobs.wait_for(lambda s: s.happened("build:docs", "failed"), 30)
    (report,) = jobs.reports()
    assert report.state == WAITING and 0 < report.retry_in_s <= 600
    assert report.describe().startswith("build:docs failed 1×: OSError: disk full; runs again in ")
    assert jobs.start("build:docs", broken) is job  # waiting to run again: still the job of that key
    jobs.close(timeout=30)
    assert not job.alive and jobs.reports()[0].state == STOPPED


def test_restart_false_ends_a_job_at_its_first_failure() -> None:
    jobs = Supervisor(first_retry_s=0.01)
    job = jobs.start("once", lambda stop: 1 / 0, restart=False)
    assert job.join(30)
    assert jobs.reports()[0].state == STOPPED and jobs.reports()[0].failures == 1


def test_close_asks_a_running_job_to_stop_and_joins_it() -> None:
    jobs = Supervisor()
    started = threading.Event()

    def patient(stop: Stop) -> None:
        started.set()
        while not stop.wait(60):
            pass

    job = jobs.start("watch", patient)
    assert started.wait(30) and jobs.reports()[0].state == RUNNING
    jobs.close(timeout=30)
    assert not job.alive and jobs.reports()[0].state == STOPPED
    assert jobs.start("watch", patient).thread is None  # closed: nothing starts


def test_faults_make_a_job_raise_at_its_start_as_many_times_as_asked() -> None:
    jobs = Supervisor(faults=parse_faults("warm-up=2, malformed, =3, x=y"), first_retry_s=0.01)
    done = threading.Event()
    job = jobs.start("warm-up", lambda stop: done.set())
    assert job.join(30) and done.is_set()
    report = jobs.reports()[0]
    assert (report.runs, report.failures) == (3, 2)
    assert report.last_error.startswith(InjectedFault.__name__)
    jobs.close()


def test_parse_faults_keeps_well_formed_entries_only(caplog: pytest.LogCaptureFixture) -> None:
    assert parse_faults("") == {}
    assert parse_faults("build:code=1,embed:docs=3") == {"build:code": 1, "embed:docs": 3}
    assert parse_faults("watch=2,nonsense,=1,k=-1") == {"watch": 2}
    assert "nonsense" in caplog.text


def test_a_change_is_told_outside_the_lock_and_a_failing_listener_takes_nothing_down() -> None:
    seen: list[tuple[str, ...]] = []

    def listener(jobs: Supervisor) -> None:
        seen.append(tuple(r.state for r in jobs.reports()))  # reads the supervisor: no dead-lock
        raise RuntimeError("cannot write the record")

    jobs = Supervisor(on_change=listener)
    assert jobs.start("probe", lambda stop: None).join(30)
    assert seen == [(RUNNING,), (DONE,)]
    jobs.close()
