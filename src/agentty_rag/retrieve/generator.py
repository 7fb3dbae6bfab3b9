"""The small local generator the expansion stages ask (multi-query, HyDE): bounded, probed once, truthful.

It speaks Ollama's ``/api/generate`` on ``AGENTTY_OLLAMA_HOST`` with ``AGENTTY_RAG_GEN_MODEL``:

* One probe per process and model (``/api/show``: 0.5 s to connect, 1 s to answer) learns whether the model
  exists and can generate. If it fails, every search that asks is told why at once and pays no timeout.
* Each generation has its own read timeout (``AGENTTY_RAG_GEN_TIMEOUT_MS``), a fixed seed and temperature 0
  (the same prompt gives the same text), and a cap on its length. A failed or timed-out call makes the
  generator rest for ``RETRY_S`` seconds: the other stage of the same search, and the searches right after,
  skip at once instead of waiting again. After the rest the next call tries again.
* Answers are remembered (a small LRU per process), so a repeated query costs nothing and ranks the same.

``Generator.generate`` never raises: it returns the text, or "" and why (``Generation.reason``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentty_rag.config import Settings
from agentty_rag.index.ollama_embedder import connection_failure, normalise_host

if TYPE_CHECKING:
    import ollama

CONNECT_S = 0.5
PROBE_READ_S = 1.0
RETRY_S = 30.0
SEED = 7  # any fixed seed: with temperature 0 the answer is the greedy one anyway
_CACHE_SIZE = 256


@dataclass(frozen=True)
class Generation:
    """A generator's answer: ``text`` ("" when there is none), ``reason`` why not, and how long it took."""

    text: str
    reason: str = ""
    seconds: float = 0.0
    cached: bool = False


class Generator:
    """Thread-safe access to one generation model on one Ollama-compatible server.

    Args:
        host: the server (``127.0.0.1:11434`` or a URL).
        model: the model to ask for.
        timeout_s: the longest wait for one answer.
        retry_s: how long a failure keeps the generator resting before the next call tries again.
    """

    def __init__(self, host: str, model: str, timeout_s: float, retry_s: float = RETRY_S) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self._lock = threading.Lock()  # the state below; never held over a network call
        self._probe_lock = threading.Lock()  # one probe at a time
        self._probed: str | None = None  # None: not probed; "": ready; else why it is unavailable
        self._resting_until = 0.0
        self._last_failure = ""
        self._cache: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._client: ollama.Client | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Generator:
        return cls(settings.ollama_host, settings.gen_model, settings.gen_timeout_ms / 1000)

    # -- availability ---------------------------------------------------------------------------------------

    def unavailable(self) -> str:
        """Why the generator cannot be asked now ("" when it can); probes once, bounded."""
        with self._probe_lock:
            if self._probed is None:
                self._probed = self._probe()
        if self._probed:
            return self._probed
        with self._lock:
            if time.monotonic() < self._resting_until:
                return f"{self._last_failure}; resting {self.retry_s:g} s"
        return ""

    def _probe(self) -> str:
        import httpx
        import ollama

        client = _client(self.host, CONNECT_S, PROBE_READ_S)
        try:
            shown = client.show(self.model)
        except ollama.ResponseError as error:
            if error.status_code == 404:
                return f"model {self.model} is not available — run `ollama pull {self.model}`"
            return f"server error {error.status_code}: {error.error}"
        except httpx.TimeoutException:
            return f"no answer from {self.host} within {CONNECT_S + PROBE_READ_S:g} s"
        except ConnectionError:
            return connection_failure(self.host)
        except (httpx.HTTPError, OSError, ValueError) as error:
            return f"{type(error).__name__}: {error}"
        finally:
            client.close()  # type: ignore[no-untyped-call]
        capabilities = list(getattr(shown, "capabilities", None) or [])
        if capabilities and "completion" not in capabilities:
            return f"model {self.model} does not generate text (it offers {', '.join(capabilities)})"
        return ""

    def describe(self) -> str:
        """``ready: MODEL at HOST`` or ``unavailable: why`` (probes if not done yet)."""
        why = self.unavailable()
        return f"unavailable: {why}" if why else f"ready: {self.model} at {self.host}"

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
        text, failure = self._ask(prompt, max_tokens)
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

    def _ask(self, prompt: str, max_tokens: int) -> tuple[str, str]:
        import httpx
        import ollama

        options = {"temperature": 0, "seed": SEED, "num_predict": max_tokens}
        try:
            response = self._connection().generate(model=self.model, prompt=prompt, options=options, stream=False)
        except ollama.ResponseError as error:
            return "", f"server error {error.status_code}: {error.error}"
        except httpx.TimeoutException:
            return "", f"timeout after {self.timeout_s:g} s"
        except ConnectionError:
            return "", connection_failure(self.host)
        except (httpx.HTTPError, OSError, ValueError) as error:
            return "", f"{type(error).__name__}: {error}"
        return str(response.response or ""), ""

    def _connection(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = _client(self.host, CONNECT_S, self.timeout_s)
            return self._client

    def close(self) -> None:
        """Close the connection (a later call opens a new one)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()  # type: ignore[no-untyped-call]


def _client(host: str, connect_s: float, read_s: float) -> ollama.Client:
    # Imported on first use: a session without the expansion stages never loads the HTTP stack.
    import httpx
    import ollama

    return ollama.Client(host=host, timeout=httpx.Timeout(read_s, connect=connect_s))


# One generator per (host, model, timeout) in a process: the server's session probes once, whatever the number
# of searches, and the stages (built from the settings for each search) share it.
_GENERATORS: dict[tuple[str, str, int], Generator] = {}
_GENERATORS_GUARD = threading.Lock()


def generator_for(settings: Settings) -> Generator:
    """The process's generator for the settings' host, model and timeout."""
    key = (normalise_host(settings.ollama_host), settings.gen_model, settings.gen_timeout_ms)
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


__all__ = ["Generation", "Generator", "close_generators", "generator_for"]
