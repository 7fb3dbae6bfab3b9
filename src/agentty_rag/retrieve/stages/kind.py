"""How a ranking stage is registered: built from the settings, and measured on rag-bench's ladder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentty_rag.config import Settings
from agentty_rag.retrieve.ranking import Stage


@dataclass(frozen=True)
class Rung:
    """A rung of rag-bench's ladder: the configuration below it with the boolean variable ``switch`` on."""

    name: str
    switch: str


@dataclass(frozen=True)
class StageKind:
    """One kind of stage.

    Args:
        build: the stage as the settings configure it (None: the settings switch it off).
        rungs: the ladder rungs that measure what it adds, in order.
    """

    build: Callable[[Settings], Stage | None]
    rungs: tuple[Rung, ...] = ()


__all__ = ["Rung", "StageKind"]
