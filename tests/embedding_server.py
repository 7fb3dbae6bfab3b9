"""A small embedding server on loopback speaking Ollama's ``/api/embed`` and OpenAI's ``/v1/embeddings``, whose
answers a test chooses: good vectors, or the bad ones a broken or hostile server sends (zeros, NaN, ragged rows,
strings, empty rows, another dimension than its probe's, an answer dripped a byte at a time). With ``key`` set,
``/v1/embeddings`` asks for that API key, as a hosted service does.

It is a real HTTP server in a thread of the test process; the code under test talks to it over TCP as to any
embedding server. Good vectors are the in-repo fake embedder's signed word counts (deterministic, so rankings
can be compared exactly).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentty_rag.index.vectors.fake_embedder import word_vector

DIMENSION = 64
PROBE_TEXT = "probe"  # what the probe embeds (a model with no prefixes)
DRIP_S = 0.25  # a dripping answer's pause between two bytes

Rows = Callable[[list[str]], Any]


def _good(texts: list[str], dimension: int = DIMENSION) -> list[list[float]]:
    return [[float(x) for x in word_vector(text, dimension)] for text in texts]


def _with_one(value: float) -> Rows:
    """Good rows, but the last row's first number is ``value`` (NaN, inf): one bad vector in a batch."""

    def rows(texts: list[str]) -> list[list[float]]:
        good = _good(texts)
        good[-1][0] = value
        return good

    return rows


ANSWERS: dict[str, Rows] = {
    "good": _good,
    "zeros": lambda texts: [[0.0] * DIMENSION for _ in texts],
    "nan": lambda texts: [[float("nan")] * DIMENSION for _ in texts],
    "one nan": _with_one(float("nan")),
    "one inf": _with_one(float("inf")),
    "ragged": lambda texts: [row[: DIMENSION - i % 2] for i, row in enumerate(_good(texts))],
    "strings": lambda texts: [["not a number"] * DIMENSION for _ in texts],
    "empty": lambda texts: [[] for _ in texts],
    "other dimension": lambda texts: _good(texts, 2 * DIMENSION),
    "drip": _good,  # good vectors, sent a byte at a time
    "huge error": _good,  # never sent: a 500 whose message is 90 KB over many lines
}
HUGE_ERROR = "model runner failed:\n" + "  at frame 0x7f00 in libggml.so\n" * 3000


class EmbeddingServer:
    """``/api/embed`` on 127.0.0.1: ``probe`` answers the probe (the one text ``probe``), ``answer`` every
    other request (queries and batches) but, when set, ``batch`` answers those of more than one text; each
    names one of ``ANSWERS``. ``batches`` counts the requests of more than one text."""

    def __init__(self, answer: str = "good", probe: str = "good", api: str = "ollama") -> None:
        self.answer, self.probe, self.batch = answer, probe, ""
        self.api = api  # which API ``env`` points a session at: ``ollama`` or ``openai``
        self.key = ""  # the API key /v1/embeddings asks for ("" : none)
        self.authorizations: list[str] = []  # the Authorization header of each /v1/embeddings request ("" : none)
        self.batches = 0
        # > 0: a model on a busy machine, one request at a time, this many seconds a text (queries included)
        self.seconds_per_text = 0.0
        self._one_at_a_time = threading.Lock()
        self.stopped = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="embedding-server", daemon=True)
        self._thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    def env(self, **more: str) -> dict[str, str]:
        """Settings that point a session at this server, over its ``api``."""
        if self.api == "openai":
            at = {"AGENTTY_EMBED_BACKEND": "openai", "AGENTTY_OPENAI_BASE_URL": f"http://{self.host}/v1"}
        else:
            at = {"AGENTTY_OLLAMA_HOST": self.host}
        return {"AGENTTY_RAG_DENSE": "1", **at, "AGENTTY_EMBED_MODEL": "test-embed", **more}

    def close(self) -> None:
        self.stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, texts: list[str], path: str) -> tuple[str, bytes]:
        self.batches += len(texts) > 1
        mode = self.probe if texts == [PROBE_TEXT] else self.batch if len(texts) > 1 and self.batch else self.answer
        rows = ANSWERS[mode](texts)
        if path == "/v1/embeddings":
            data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
            return mode, json.dumps({"object": "list", "data": data[::-1], "model": "test-embed"}).encode()
        return mode, json.dumps({"model": "test-embed", "embeddings": rows}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                """Quiet: a test's output is the tool's."""

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path not in ("/api/embed", "/v1/embeddings"):
                    self._send(404, json.dumps({"error": f"no {self.path}"}).encode())
                    return
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if self.path == "/v1/embeddings":
                    given = self.headers.get("Authorization", "")
                    server.authorizations.append(given)
                    if server.key and given != f"Bearer {server.key}":
                        error = {"message": "Incorrect API key provided.", "type": "invalid_request_error"}
                        self._send(401, json.dumps({"error": error}).encode())
                        return
                texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
                if server.seconds_per_text > 0:
                    with server._one_at_a_time:
                        server.stopped.wait(server.seconds_per_text * len(texts))  # the model's work
                mode, body = server._answer(texts, self.path)
                if mode == "drip":
                    self._drip(body)
                elif mode == "huge error":
                    self._send(500, json.dumps({"error": HUGE_ERROR}).encode())
                else:
                    self._send(200, body)

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _drip(self, body: bytes) -> None:
                """The whole answer, status line first, one byte every ``DRIP_S``: no single read waits long."""
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                for byte in head.encode() + body:
                    if server.stopped.wait(DRIP_S):
                        return
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return
                self.close_connection = True

        return Handler


__all__ = ["ANSWERS", "DIMENSION", "EmbeddingServer"]
