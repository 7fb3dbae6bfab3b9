"""OpenAI's embeddings API (``POST {base}/embeddings``), spoken by LM Studio, vLLM, llama.cpp's server,
text-embeddings-inference, Ollama's ``/v1`` and hosted services, over the shared client's bounded HTTP
(``client.http_client``).

What is sent: the model's name and the texts (``{"model", "input": [...], "encoding_format": "float"}``), and
the API key as ``Authorization: Bearer …`` when there is one. What comes back is read as the API describes it
(``{"data": [{"index", "embedding": [...]}]}``, put in ``index`` order); a failure is an ``EmbeddingError``
saying why in one line, and no reason ever holds the key.

The HTTP stack (``httpx``) is imported on first use: a lexical session never loads it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentty_rag.errors import EmbeddingError
from agentty_rag.ollama_api.client import failure, request_errors

if TYPE_CHECKING:
    import httpx

SETTING = "AGENTTY_OPENAI_BASE_URL"  # the variable naming the server, for reasons that say what to check


def embeddings(connection: httpx.Client, base: str, model: str, texts: list[str], key_variable: str) -> list[Any]:
    """The rows the server at ``base`` answers for ``texts``, in their order (each still to be checked:
    ``dense.checked_vectors``); ``key_variable`` names the variable of the API key, for a refusal's reason."""
    payload = {"model": model, "input": texts, "encoding_format": "float"}
    try:
        response = connection.post("/embeddings", json=payload)
        body = response.content
    except request_errors() as error:
        raise EmbeddingError(failure(error, base, "timeout", setting=SETTING)) from error
    if response.status_code != 200:
        raise EmbeddingError(
            refused(response.status_code, body, model, key_variable, "Authorization" in connection.headers)
        )
    try:
        answer = json.loads(body)
    except ValueError:
        raise EmbeddingError("the server's answer is not JSON") from None
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise EmbeddingError("the server's answer has no list of embeddings (`data`)")
    if all(isinstance(item.get("index"), int) for item in data):
        data = sorted(data, key=lambda item: item["index"])
    return [item.get("embedding") for item in data]


def refused(status: int, body: bytes, model: str, key_variable: str, keyed: bool) -> str:
    """Why the server answered ``status``: its own message (OpenAI's ``{"error": {"message"}}`` or a bare
    ``{"error"}``), with what to check for a refused key or an unknown model."""
    message = _message(body)
    if status in (401, 403):
        check = f"check {key_variable}" if keyed else f"set {key_variable} to the server's API key"
        return f"the server refused the request ({status}: {message}) — {check}"
    if status == 404:
        return f"model {model} is not available at the server ({status}: {message})"
    return f"server error {status}: {message}"


def _message(body: bytes) -> str:
    try:
        answer = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip() or "no message"
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(error) if error else "no message"


__all__ = ["SETTING", "embeddings", "refused"]
