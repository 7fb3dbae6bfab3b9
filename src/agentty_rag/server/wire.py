"""The stdio wire in front of the MCP SDK: every malformed line a client sends gets a JSON-RPC error reply.

The SDK drops a line it cannot read (not JSON, not UTF-8, a lone surrogate, nested past its parser's depth, not
a JSON-RPC message) without a word, and the client waits for its own timeout; JSON-RPC asks for an error
reply (``-32700`` parse error, ``-32600`` invalid request, with the request's id when it can be told, else
null). ``guarded_stdio`` puts a thread on each side of the SDK: one reads the real stdin and passes each good
line on unchanged, answering a bad one itself; one writes the SDK's lines and those answers to the real
stdout, whole lines one at a time, so the two never interleave inside a line.

These are threads of their own, not jobs of a workspace's supervisor: the SDK's stdio transport reads and
writes the process's stdin and stdout itself and offers no hook for a line it cannot read, so the relay
must sit in front of it for the process's whole life (before any workspace exists, after the last one
closed), and restarting a relay after a failure would lose the protocol's position in the stream.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
from collections.abc import Iterator

import mcp_types as types
from pydantic import ValidationError

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# Deeper than any MCP message nests: the SDK's parser stops far below what a stack allows.
MAX_DEPTH = 100
# A line longer than this is not read whole (a client's message is kilobytes; a search's answer is smaller).
MAX_LINE_BYTES = 16 << 20
# Written after the SDK's last line to end the relay: the SDK keeps a duplicate of the output pipe open after it
# is done, so the pipe never reaches end-of-file. Not JSON, so no line of the SDK's can be it.
_END = b"\x00agentty: the SDK is done\n"


def error_reply(line: bytes) -> bytes | None:
    """The JSON-RPC error reply a line deserves, or None when the SDK can read it (and answer it itself)."""
    if not line.strip():
        return None
    if len(line) > MAX_LINE_BYTES:
        return _reply(None, INVALID_REQUEST, f"Invalid Request: a message longer than {MAX_LINE_BYTES} bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return _reply(None, PARSE_ERROR, "Parse error: the message is not UTF-8")
    if _depth(text) > MAX_DEPTH:
        return _reply(None, INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return _reply(None, PARSE_ERROR, "Parse error: the message is not JSON")
    request_id = _id_of(message)
    if _has_lone_surrogate(message):
        return _reply(request_id, INVALID_REQUEST, "Invalid Request: a string holds a lone surrogate, not text")
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return _reply(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request or notification")
    return None


def _reply(request_id: int | str | None, code: int, message: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(body, separators=(",", ":")).encode("utf-8") + b"\n"


def _id_of(message: object) -> int | str | None:
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return value if not isinstance(value, str) or not _has_lone_surrogate(value) else None
    return None


def _depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _has_lone_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


@contextlib.contextmanager
def guarded_stdio() -> Iterator[None]:
    """While inside, fd 0 and fd 1 are pipes to two threads that stand between the SDK and the real stdin
    and stdout (see the module doc); on leaving, every line the SDK wrote has reached the real stdout."""
    real_in, real_out = os.dup(0), os.dup(1)
    to_sdk_read, to_sdk_write = os.pipe()
    from_sdk_read, from_sdk_write = os.pipe()
    os.dup2(to_sdk_read, 0)
    os.dup2(from_sdk_write, 1)
    os.close(to_sdk_read)  # from_sdk_write stays open: the end marker follows the SDK's last line through it
    lines: queue.Queue[bytes | None] = queue.Queue()
    writer = threading.Thread(target=_write_lines, args=(lines, real_out), name="agentty-stdout", daemon=True)
    reader = threading.Thread(
        target=_read_stdin, args=(real_in, to_sdk_write, lines), name="agentty-stdin", daemon=True
    )
    relay = threading.Thread(target=_relay, args=(from_sdk_read, lines), name="agentty-sdk-out", daemon=True)
    for thread in (writer, reader, relay):
        thread.start()
    try:
        yield
    finally:
        # The SDK is done and has flushed every line it wrote; the end marker comes after them in the pipe,
        # and the relay hands the writer those last lines before it stops.
        os.dup2(real_out, 1)
        with contextlib.suppress(OSError):
            os.write(from_sdk_write, _END)
        relay.join(10)
        with contextlib.suppress(OSError):
            os.close(from_sdk_write)
        lines.put(None)
        writer.join(10)
        os.dup2(real_in, 0)
        for fd in (real_in, real_out):
            with contextlib.suppress(OSError):
                os.close(fd)


def _read_stdin(real_in: int, to_sdk: int, lines: queue.Queue[bytes | None]) -> None:
    """Real stdin, line by line: a good line goes on to the SDK unchanged, a bad one is answered here."""
    with os.fdopen(real_in, "rb", closefd=False) as stdin, os.fdopen(to_sdk, "wb", buffering=0) as sdk:
        while True:
            try:
                line = stdin.readline(MAX_LINE_BYTES + 1)
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while (more := stdin.readline(1 << 20)) and not more.endswith(b"\n"):
                        pass  # the rest of a line too long to read: skipped, and answered below
            except OSError:
                break
            if not line:
                break
            reply = error_reply(line)
            if reply is not None:
                log.warning("a malformed message got a JSON-RPC error reply: %s", reply.decode("utf-8").strip())
                lines.put(reply)
                continue
            try:
                sdk.write(line if line.endswith(b"\n") else line + b"\n")
            except OSError:  # the SDK stopped reading: it is shutting down
                break


def _relay(from_sdk: int, lines: queue.Queue[bytes | None]) -> None:
    """The SDK's output, whole lines at a time, to the writer."""
    with os.fdopen(from_sdk, "rb") as output:
        for line in output:
            if line == _END:
                return
            lines.put(line)


def _write_lines(lines: queue.Queue[bytes | None], real_out: int) -> None:
    """Write each whole line to the real stdout, in order, until told to stop."""
    while True:
        line = lines.get()
        if line is None:
            return
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(real_out, view) :]
        except OSError:  # the client went away
            return


__all__ = ["INVALID_REQUEST", "MAX_DEPTH", "PARSE_ERROR", "error_reply", "guarded_stdio"]
