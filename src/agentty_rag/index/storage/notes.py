"""What an index has to tell: warnings (each logged once) and the notes the next search result carries."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class Notes:
    """Warnings of one index, and the notes (rebuilt after corruption, kept in memory) not yet shown."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def warn(self, message: str) -> None:
        """Log a warning, once."""
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def note(self, message: str) -> None:
        """Warn once, and keep the message for the next search's result."""
        self.warn(message)
        with self._lock:
            self._pending.append(message)

    def take(self) -> tuple[str, ...]:
        """The notes since the last call, each once. Never waits for the index: a request answering "still
        being built" reads them too."""
        with self._lock:
            notes, self._pending = tuple(dict.fromkeys(self._pending)), []
            return notes


__all__ = ["Notes"]
