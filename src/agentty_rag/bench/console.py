"""What rag-bench says besides its report: a progress line, and the error that ends a run with exit status 2."""

from __future__ import annotations

import sys

from agentty_rag.errors import UsageError


class Progress:
    """A progress line on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()

    def __call__(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def warn(message: str) -> None:
    print(f"rag-bench: {message}", file=sys.stderr)


__all__ = ["Progress", "UsageError", "warn"]
