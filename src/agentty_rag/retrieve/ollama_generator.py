"""Generations from an Ollama server (or anything speaking its ``/api/generate``), over the shared client
(``ollama_api/client.py``).

The probe (``/api/show``: 0.5 s to connect, 1 s to answer) learns whether the model exists and can generate.
Each generation has its own read timeout (``AGENTTY_RAG_GEN_TIMEOUT_MS``), a fixed seed and temperature 0 (the
same prompt gives the same text), and a cap on its length.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from agentty_rag.config import Settings
from agentty_rag.ollama_api.client import CONNECT_S, PROBE_READ_S, client, failure, normalise_host, request_errors

if TYPE_CHECKING:
    import ollama

SEED = 7  # any fixed seed: with temperature 0 the answer is the greedy one anyway


class OllamaGenerator:
    """The ``GenerationBackend`` of a model served over Ollama's HTTP API.

    Args:
        host: the server (``127.0.0.1:11434`` or a URL).
        model: the model to ask for.
        timeout_s: the longest wait for one answer.
    """

    def __init__(self, host: str, model: str, timeout_s: float) -> None:
        self.host = normalise_host(host)
        self.model = model
        self.where = f"at {self.host}"
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._client: ollama.Client | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> OllamaGenerator:
        return cls(settings.ollama_host, settings.gen_model, settings.gen_timeout_ms / 1000)

    def probe(self) -> str:
        probing = client(self.host, CONNECT_S, PROBE_READ_S)
        try:
            shown = probing.show(self.model)
        except request_errors() as error:
            return failure(
                error, self.host, f"no answer from {self.host} within {CONNECT_S + PROBE_READ_S:g} s", self.model
            )
        finally:
            probing.close()  # type: ignore[no-untyped-call]
        capabilities = list(getattr(shown, "capabilities", None) or [])
        if capabilities and "completion" not in capabilities:
            return f"model {self.model} does not generate text (it offers {', '.join(capabilities)})"
        return ""

    def ask(self, prompt: str, max_tokens: int) -> tuple[str, str]:
        options = {"temperature": 0, "seed": SEED, "num_predict": max_tokens}
        try:
            response = self._connection().generate(model=self.model, prompt=prompt, options=options, stream=False)
        except request_errors() as error:
            return "", failure(error, self.host, f"timeout after {self.timeout_s:g} s")
        return str(response.response or ""), ""

    def _connection(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = client(self.host, CONNECT_S, self.timeout_s)
            return self._client

    def close(self) -> None:
        with self._lock:
            kept, self._client = self._client, None
        if kept is not None:
            kept.close()  # type: ignore[no-untyped-call]


__all__ = ["SEED", "OllamaGenerator"]
