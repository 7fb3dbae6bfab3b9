"""Whether a Qdrant server answers, and one bounded request to it.

Every request is bounded by the target's timeout, and a failure (refused, timed out, an error status) raises
``BackendUnreachable`` with a short reason. The server then rests (``Reach``): for ``retry_s`` every request
fails at once without touching the network, and the first request after that is the new probe, as the dense
leg probes its embedder once, rests, and retries.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from agentty_rag.errors import BackendUnreachable
from agentty_rag.index.qdrant.target import QdrantTarget

log = logging.getLogger(__name__)

T = TypeVar("T")


class Reach:
    """Whether a server answers: ``not asked``, ``answered`` or ``unreachable`` (and why), and when to ask it
    again. Thread-safe.

    Args:
        retry_s: how long the server rests after a failure before the next request goes out.
        clock: seconds, monotonic (tests give their own).
    """

    def __init__(self, retry_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.retry_s = retry_s
        self.state = "not asked"
        self.reason = ""
        self._clock = clock
        self._retry_at: float | None = None
        self._lock = threading.Lock()

    def resting(self) -> bool:
        """Whether a request must fail at once: the server failed less than ``retry_s`` ago."""
        with self._lock:
            return self._retry_at is not None and self._clock() < self._retry_at

    def answered(self) -> None:
        with self._lock:
            self.state, self.reason, self._retry_at = "answered", "", None

    def failed(self, reason: str) -> None:
        with self._lock:
            self.state, self.reason, self._retry_at = "unreachable", reason, self._clock() + self.retry_s


def bounded(
    reach: Reach,
    url: str,
    timeout_s: float,
    request: Callable[[], T],
    failures: tuple[type[Exception], ...],
    warn: bool = True,
) -> T:
    """One request to a Qdrant server (its client bounds it by ``timeout_s``): it fails at once while the server
    rests; a failure of one of ``failures`` sends the server to rest (and is logged when ``warn``: a caller that
    notes it in the next result says it there instead).

    Raises:
        BackendUnreachable: the server is resting after a failure, or this request failed (the short reason).
    """
    if reach.resting():
        raise BackendUnreachable(reach.reason)
    try:
        answer = request()
    except failures as error:
        reason = failure_reason(error, url, timeout_s)
        reach.failed(reason)
        if warn:
            log.warning("the Qdrant server did not answer: %s", reason)
        raise BackendUnreachable(reason) from error
    reach.answered()
    return answer


def failure_reason(error: Exception, url: str, timeout_s: float) -> str:
    """A short reason for a failed request: ``connection refused at 127.0.0.1:6333``, ``no answer within 5 s
    at ...``, ``HTTP 503 at ...``."""
    where = urlsplit(url).netloc or url
    cause = getattr(error, "source", None) or error.__cause__ or error
    status = getattr(error, "status_code", None)
    name = type(cause).__name__
    if status is not None:
        what = f"HTTP {status}"
    elif "Timeout" in name or isinstance(cause, TimeoutError):
        what = f"no answer within {timeout_s:g} s"
    elif "refused" in str(cause).lower():
        what = "connection refused"
    else:
        what = str(cause).strip() or name
    return f"{what} at {where}"


# Whether each server answers, by ``QdrantTarget.key``: kept while the process runs, so a reloaded index does
# not ask a server that is resting.
_REACH: dict[str, Reach] = {}
_REACHING = threading.Lock()


def reach_of(target: QdrantTarget) -> Reach:
    """Whether the server of ``target`` answers, as this process last found."""
    with _REACHING:
        return _REACH.setdefault(target.key, Reach(target.retry_s))


__all__ = ["Reach", "bounded", "failure_reason", "reach_of"]
