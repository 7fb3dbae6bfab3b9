"""A deterministic ``GenerationBackend`` made in this process, for tests (``AGENTTY_RAG_GEN_BACKEND=fake``).

No model and no network: it answers as the compat server's ``--generator echo`` does (``../shared/tools``), so
what the expansion and HyDE stages do with an answer can be checked exactly without a server. The subject is
the prompt after its last colon; the answer is three numbered lines: the subject, its words without stop words,
and those words in reverse order (``…: how are sessions signed`` gives ``1. how are sessions signed``,
``2. sessions signed``, ``3. signed sessions``), cut after ``max_tokens`` words. It says nothing about a real
model's answers; the compat-server tests keep those.
"""

from __future__ import annotations

import re

from agentty_rag.config import Settings

# The compat server's echo stop words.
STOP_WORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it of on or that the this to was what "
    "when where which who why will with".split()
)
_WORD = re.compile(r"[\w'-]+")
_PIECE = re.compile(r"\S+\s*")


def echo(prompt: str) -> str:
    """The echo answer to ``prompt``, whole."""
    subject = " ".join(prompt.rsplit(":", 1)[-1].split()) or " ".join(prompt.split())
    words = _WORD.findall(subject.lower())
    content = [w for w in words if w not in STOP_WORDS] or words
    lines = [subject, " ".join(content), " ".join(reversed(content))]
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))


class FakeGenerator:
    """Echo answers; ``failing`` (a reason) makes the probe fail, like a dead server, and ``fail_next`` fails that
    many calls after it (``ask`` then says ``failing`` or ``server error 500: fake``)."""

    where = "in-process"

    def __init__(self, model: str = "fake") -> None:
        self.model = model
        self.failing = ""
        self.fail_next = 0
        self.asked = 0  # how many prompts it was asked (tests count what the cache and the rest save)

    @classmethod
    def from_settings(cls, settings: Settings) -> FakeGenerator:
        # Its own model name: status never takes it for a real model.
        return cls(f"fake-{settings.gen_model}")

    def probe(self) -> str:
        return self.failing

    def ask(self, prompt: str, max_tokens: int) -> tuple[str, str]:
        self.asked += 1
        if self.fail_next > 0:
            self.fail_next -= 1
            return "", self.failing or "server error 500: fake"
        pieces = _PIECE.findall(echo(prompt))
        if max_tokens > 0:  # the compat server's num_predict: at most that many words
            pieces = pieces[:max_tokens]
        return "".join(pieces).rstrip(), ""

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["STOP_WORDS", "FakeGenerator", "echo"]
