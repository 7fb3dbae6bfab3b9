"""The Ollama HTTP client the embedder (``index/vectors/ollama_embedder.py``) and the generator
(``retrieve/ollama_generator.py``) share: where the server is, a client with bounded timeouts, a plain TCP check
that finds a closed port without the HTTP stack, and why a request failed, in words. ``http_client`` is the
same bounded HTTP without Ollama's API, for the OpenAI-compatible embeddings (``openai_api.py``).

The HTTP stack (``httpx``, ``ollama``) is imported on first use: a lexical session never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentty_rag.errors import short_reason

if TYPE_CHECKING:
    import httpx
    import ollama

# A probe (of the embedder or the generator) waits this long to connect, then this long for its answer.
CONNECT_S = 0.5
PROBE_READ_S = 1.0


def normalise_host(host: str) -> str:
    """``127.0.0.1:11434`` -> ``http://127.0.0.1:11434`` (a scheme given by the user is kept)."""
    host = host.strip().rstrip("/")
    return host if "://" in host else f"http://{host}"


def connection_failure(host: str, setting: str = "AGENTTY_OLLAMA_HOST") -> str:
    """Why a connection failed, named by its cause: a host name that does not resolve (``setting`` names it),
    or a refusal."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(host)
    try:
        socket.getaddrinfo(parts.hostname or "", parts.port or 11434, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return f"host not found: {parts.hostname} (check {setting})"
    return f"connection refused at {host}"


def port_of(host: str) -> tuple[str, int]:
    """The (host name, port) an HTTP client connects to for a normalised host: the port given, else the
    scheme's (as the Ollama client does once a scheme is given)."""
    from urllib.parse import urlsplit

    parts = urlsplit(host)
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


def unreachable(host: str, connect_s: float, setting: str = "AGENTTY_OLLAMA_HOST") -> str:
    """Why nothing answers at ``host`` ("" when a TCP connection opens), within ``connect_s``: the same
    reasons a failed request gives, found without the HTTP stack."""
    import socket

    try:
        socket.create_connection(port_of(host), timeout=connect_s).close()
    except TimeoutError:
        return "timeout"
    except (OSError, UnicodeError, ValueError):  # refused, unreachable, a name that does not resolve
        return connection_failure(host, setting)
    return ""


def client(host: str, connect_s: float, read_s: float) -> ollama.Client:
    """A client of the (normalised) ``host`` that waits ``connect_s`` to connect and ``read_s`` for an answer:
    for the whole answer (``deadline.py``), not for each read, so a server that sends its answer a byte at a
    time gives up within ``connect_s + read_s`` too."""
    import httpx
    import ollama

    from agentty_rag.ollama_api.deadline import WholeAnswerTransport

    timeout = httpx.Timeout(read_s, connect=connect_s)
    return ollama.Client(host=host, timeout=timeout, transport=WholeAnswerTransport(connect_s + read_s))


def http_client(base_url: str, connect_s: float, read_s: float, headers: dict[str, str] | None = None) -> httpx.Client:
    """A plain HTTP client of ``base_url`` with the same bounds as ``client``: ``connect_s`` to connect, and
    ``connect_s + read_s`` for the whole answer."""
    import httpx

    from agentty_rag.ollama_api.deadline import WholeAnswerTransport

    timeout = httpx.Timeout(read_s, connect=connect_s)
    transport = WholeAnswerTransport(connect_s + read_s)
    return httpx.Client(base_url=base_url, timeout=timeout, transport=transport, headers=headers)


def request_errors() -> tuple[type[BaseException], ...]:
    """What a request may raise when the server fails it, times out or cannot be reached (``failure`` says why)."""
    import httpx
    import ollama

    return ollama.ResponseError, httpx.HTTPError, OSError, ValueError


def failure(
    error: BaseException, host: str, timeout: str, model: str = "", setting: str = "AGENTTY_OLLAMA_HOST"
) -> str:
    """Why a request of ``request_errors`` failed, in one short line: ``timeout`` when it timed out; with
    ``model``, a 404 names the model to pull; ``setting`` is the variable naming the server."""
    return short_reason(_why(error, host, timeout, model, setting))


def _why(error: BaseException, host: str, timeout: str, model: str, setting: str) -> str:
    import httpx
    import ollama
    import pydantic

    if isinstance(error, ollama.ResponseError):
        if model and error.status_code == 404:
            return f"model {model} is not available — run `ollama pull {model}`"
        return f"server error {error.status_code}: {error.error}"
    if isinstance(error, httpx.TimeoutException):
        return timeout
    if isinstance(error, (ConnectionError, httpx.ConnectError)):
        return connection_failure(host, setting)
    if isinstance(error, pydantic.ValidationError):  # its text lists every bad field: one line says it here
        return f"the server's answer is not in the expected form ({error.error_count()} bad values)"
    return f"{type(error).__name__}: {error}"


__all__ = [
    "CONNECT_S",
    "PROBE_READ_S",
    "client",
    "connection_failure",
    "failure",
    "http_client",
    "normalise_host",
    "port_of",
    "request_errors",
    "unreachable",
]
