"""A deadline for a whole answer: an HTTP transport whose every request, from connecting to the last byte of
the body, ends within a set time.

httpx bounds each read, not the answer: a server that sends one byte every half second never trips a 1 s read
timeout and holds a search for as long as its answer lasts. Here each request of a thread sets its deadline;
every connect, write and read of the connection it runs on waits at most until then, and one that finds the
deadline passed fails as a timeout (``httpx.TimeoutException``, as a slow server's does).

The HTTP stack (``httpx``, ``httpcore``) is imported with this module: the shared client imports it on first use.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx


class _Deadlines(threading.local):
    """The deadline (``time.monotonic``) of the request the current thread is making (None: none)."""

    at: float | None = None


_DEADLINES = _Deadlines()


def _bounded(timeout: float | None, failure: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the thread's deadline; ``failure`` when nothing is left."""
    at = _DEADLINES.at
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise failure("the whole answer took longer than its deadline")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose reads and writes end by the thread's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """Connections (``httpcore``'s own) that open, read and write within the thread's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, bounded, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class WholeAnswerTransport(httpx.HTTPTransport):
    """httpx's transport, with every request's whole answer (connecting included) bounded by ``total_s``.

    The body of an answer is read in the thread that sent the request, after ``handle_request`` returns: the
    thread's deadline still holds then, until its next request sets another.
    """

    def __init__(self, total_s: float) -> None:
        super().__init__()
        self.total_s = total_s
        # The pool httpx makes, over connections that keep the deadline (httpx takes no backend of its own).
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=10,
            max_keepalive_connections=4,
            keepalive_expiry=5.0,
            network_backend=_DeadlineBackend(),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _DEADLINES.at = time.monotonic() + self.total_s
        return super().handle_request(request)


__all__ = ["WholeAnswerTransport"]
