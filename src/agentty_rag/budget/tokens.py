"""Counting output: bytes of UTF-8, and the token estimate shown to users.

Tokens are estimated at four characters each, the usual estimate for English text and code (rag-bench's
token efficiency counts the same way). A header that states the token cost of the text it heads is part of
that text: ``self_counted`` finds the figure that counts itself.
"""

from __future__ import annotations

from collections.abc import Callable

# About four bytes of English text or code per token for GPT-style tokenizers: an estimate, said as such.
BYTES_PER_TOKEN = 4
# The same estimate per character, for text as a client receives it (what a model is billed for).
CHARS_PER_TOKEN = 4
# More rounds than any fixed point needs: a figure's width grows by a character per thousandfold.
_ROUNDS = 32


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def estimate_tokens(n_bytes: int) -> int:
    return -(-n_bytes // BYTES_PER_TOKEN)


def text_tokens(text: str) -> int:
    """The estimated tokens of ``text`` as a client receives it: its characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def self_counted(render: Callable[[int], str]) -> tuple[str, int]:
    """The text ``render(n)`` makes with ``n`` its own token estimate (``text_tokens(text) == n``), and ``n``.

    The figure is part of the text, so its width changes the count: starting from 0, ``n`` becomes the count
    of the text rendered with ``n`` until the two agree. The count only grows with ``n`` (a wider figure is a
    longer text) and grows by at most one when the figure gains a character, so the smallest fixed point is
    reached; should ``render`` not depend on ``n`` in that way, the last text and its own count are returned.

    Args:
        render: the text with a given token figure in it.
    """
    figure = 0
    text = render(figure)
    for _ in range(_ROUNDS):
        count = text_tokens(text)
        if count == figure:
            return text, figure
        figure = count
        text = render(figure)
    return text, text_tokens(text)


def cut_utf8(text: str, limit: int) -> str:
    """The longest prefix of ``text`` within ``limit`` bytes, never splitting a character."""
    return text.encode("utf-8")[: max(limit, 0)].decode("utf-8", "ignore")


__all__ = [
    "BYTES_PER_TOKEN",
    "CHARS_PER_TOKEN",
    "cut_utf8",
    "estimate_tokens",
    "self_counted",
    "text_tokens",
    "utf8_len",
]
