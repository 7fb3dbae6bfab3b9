"""A started server's stderr, and failures put in words.

A stdio server's stderr goes to a pipe, not to this process's stderr: its last lines say why it failed (a
server that exits at start-up usually writes the reason there), and every line is logged at debug level.

The pump is a thread of its own, not a supervised job: the SDK's stdio client takes a file to write the
server's stderr to, not a callback, and a pipe nobody drains blocks the server once it is full; the thread
ends when the server closes its end of the pipe.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from typing import TextIO

from agentty_rag.errors import ResourceServerError

log = logging.getLogger("agentty_rag.mcp_resources")
KEPT_LINES = 20
LINE_SHOWN = 240


class StderrTail:
    """A pipe to give a server as its stderr; keeps the last lines it wrote."""

    def __init__(self, name: str) -> None:
        read_fd, write_fd = os.pipe()
        self.name = name
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._lines: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)
        reader = os.fdopen(read_fd, encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._pump, args=(reader,), name=f"agentty-mcp-{name}", daemon=True)
        self._thread.start()

    def _pump(self, stream: TextIO) -> None:
        with stream:
            for line in stream:
                text = line.rstrip()
                if text:
                    self._lines.append(text)
                    log.debug("%s: %s", self.name, text)

    def close(self, wait_s: float = 0.5) -> str:
        """Close this process's end of the pipe; the last line the server wrote ("" for none).

        Call it once the server has exited: the pipe then ends, and every line it wrote has been read.
        """
        self.writer.close()
        self._thread.join(wait_s)
        return self._lines[-1][:LINE_SHOWN] if self._lines else ""


def first_error(error: BaseException) -> BaseException:
    """The first error inside nested exception groups (the one that stopped the session)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        ours = [e for e in error.exceptions if isinstance(e, ResourceServerError)]
        error = ours[0] if ours else error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """A failure in words: a reader's own message as is, else the error's message or its type."""
    leaf = first_error(error)
    if isinstance(leaf, ResourceServerError):
        return str(leaf)
    if isinstance(leaf, FileNotFoundError) and leaf.filename:
        return f"cannot start {leaf.filename}: no such program"
    if isinstance(leaf, OSError) and leaf.strerror:
        return f"cannot start it: {leaf.strerror}"
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


__all__ = ["StderrTail", "describe", "first_error"]
