"""The small local generator the expansion stages ask (multi-query, HyDE): bounded, probed once, truthful.

A ``GenerationBackend`` is a name (its model) and one method that answers a prompt; ``AGENTTY_RAG_GEN_BACKEND``
picks one of ``BACKENDS``: ``OllamaGenerator`` (``ollama_generator.py``: Ollama's ``/api/generate`` on
``AGENTTY_OLLAMA_HOST`` with ``AGENTTY_RAG_GEN_MODEL``) or the deterministic ``FakeGenerator``
(``fake_generator.py``) for tests. A ``Generator`` asks its backend under these rules:

* One probe per process and model (for Ollama, ``/api/show``: 0.5 s to connect, 1 s to answer) learns whether
  the model exists and can generate. If it fails, every search that asks is told why at once and pays no timeout.
* Each generation is bounded by the backend (for Ollama, ``AGENTTY_RAG_GEN_TIMEOUT_MS``, a fixed seed,
  temperature 0 and a cap on its length). A failed or timed-out call makes the generator rest for ``RETRY_S``
  seconds: the other stage of the same search, and the searches right after, skip at once instead of waiting
  again. After the rest the next call tries again.
* Answers are remembered (a small LRU per process), so a repeated query costs nothing and ranks the same.

``Generator.generate`` never raises: it returns the text, or "" and why (``Generation.reason``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentty_rag.config import Settings
from agentty_rag.ollama_api.client import normalise_host
from agentty_rag.retrieve.fake_generator import FakeGenerator
from agentty_rag.retrieve.ollama_generator import OllamaGenerator

RETRY_S = 30.0
_CACHE_SIZE = 256


@dataclass(frozen=True)
class Generation:
    """A generator's answer: ``text`` ("" when there is none), ``reason`` why not, and how long it took."""

    text: str
    reason: str = ""
    seconds: float = 0.0
    cached: bool = False


class GenerationBackend(Protocol):
    """Answers a prompt with a model. A new backend is one module implementing this, plus its line in
    ``BACKENDS`` and its name in the ``AGENTTY_RAG_GEN_BACKEND`` choices."""

    @property
    def model(self) -> str:
        """Its name: the model it asks."""
        ...

    @property
    def where(self) -> str:
        """Where it runs, for status lines: ``at http://127.0.0.1:11434``, ``in-process``."""
        ...

    def probe(self) -> str:
        """One bounded attempt: why the model cannot generate ("" when it can)."""
        ...

    def ask(self, prompt: str, max_tokens: int) -> tuple[str, str]:
        """(the answer to ``prompt``, at most ``max_tokens`` tokens, "") or ("", why it failed)."""
        ...

    def close(self) -> None:
        """Release connections; a later call opens new ones."""
        ...


BACKENDS: dict[str, Callable[[Settings], GenerationBackend]] = {
    "ollama": OllamaGenerator.from_settings,
    "fake": FakeGenerator.from_settings,
}


class Generator:
    """Thread-safe access to one generation backend.

    Args:
        backend: the model it asks, and where.
        retry_s: how long a failure keeps the generator resting before the next call tries again.
    """

    def __init__(self, backend: GenerationBackend, retry_s: float = RETRY_S) -> None:
        self.backend = backend
        self.retry_s = retry_s
        self._lock = threading.Lock()  # the state below; never held over a network call
        self._probe_lock = threading.Lock()  # one probe at a time
        self._probed: str | None = None  # None: not probed; "": ready; else why it is unavailable
        self._resting_until = 0.0
        self._last_failure = ""
        self._cache: OrderedDict[tuple[str, int], str] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings) -> Generator:
        return cls(BACKENDS[settings.gen_backend](settings))

    # -- availability ---------------------------------------------------------------------------------------

    def unavailable(self) -> str:
        """Why the generator cannot be asked now ("" when it can); probes once, bounded."""
        with self._probe_lock:
            if self._probed is None:
                self._probed = self.backend.probe()
        if self._probed:
            return self._probed
        with self._lock:
            if time.monotonic() < self._resting_until:
                return f"{self._last_failure}; resting {self.retry_s:g} s"
        return ""

    def describe(self) -> str:
        """``ready: MODEL at HOST`` or ``unavailable: why`` (probes if not done yet)."""
        why = self.unavailable()
        return f"unavailable: {why}" if why else f"ready: {self.backend.model} {self.backend.where}"

    # -- generation -----------------------------------------------------------------------------------------

    def generate(self, prompt: str, max_tokens: int) -> Generation:
        """The model's answer to ``prompt`` (at most ``max_tokens`` tokens), or "" and why."""
        key = (prompt, max_tokens)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return Generation(cached, cached=True)
        why = self.unavailable()
        if why:
            return Generation("", f"generator unavailable: {why}")
        started = time.perf_counter()
        text, failure = self.backend.ask(prompt, max_tokens)
        seconds = time.perf_counter() - started
        with self._lock:
            if failure:
                self._last_failure = failure
                self._resting_until = time.monotonic() + self.retry_s
                return Generation("", f"generator failed: {failure}", seconds)
            self._cache[key] = text
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return Generation(text, "", seconds)

    def close(self) -> None:
        """Close the backend's connection (a later call opens a new one)."""
        self.backend.close()


# One generator per (backend, host, model, timeout) in a process: the server's session probes once, whatever the
# number of searches, and the stages (built from the settings for each search) share it.
_GENERATORS: dict[tuple[str, str, str, int], Generator] = {}
_GENERATORS_GUARD = threading.Lock()


def generator_for(settings: Settings) -> Generator:
    """The process's generator for the settings' backend, host, model and timeout."""
    key = (settings.gen_backend, normalise_host(settings.ollama_host), settings.gen_model, settings.gen_timeout_ms)
    with _GENERATORS_GUARD:
        found = _GENERATORS.get(key)
        if found is None:
            found = _GENERATORS[key] = Generator.from_settings(settings)
        return found


def close_generators() -> None:
    """Close and forget every generator of the process (the next search probes again)."""
    with _GENERATORS_GUARD:
        generators = list(_GENERATORS.values())
        _GENERATORS.clear()
    for generator in generators:
        generator.close()


__all__ = ["BACKENDS", "Generation", "GenerationBackend", "Generator", "close_generators", "generator_for"]
