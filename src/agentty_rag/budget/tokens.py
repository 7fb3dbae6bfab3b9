"""Counting output: bytes of UTF-8, and the token estimate shown to users."""

from __future__ import annotations

# About four bytes of English text or code per token for GPT-style tokenizers: an estimate, said as such.
BYTES_PER_TOKEN = 4


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def estimate_tokens(n_bytes: int) -> int:
    return -(-n_bytes // BYTES_PER_TOKEN)


def cut_utf8(text: str, limit: int) -> str:
    """The longest prefix of ``text`` within ``limit`` bytes, never splitting a character."""
    return text.encode("utf-8")[: max(limit, 0)].decode("utf-8", "ignore")


__all__ = ["BYTES_PER_TOKEN", "cut_utf8", "estimate_tokens", "utf8_len"]
