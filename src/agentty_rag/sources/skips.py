"""What a scan or a load left out, by reason: every count, and the first few paths of each."""

from __future__ import annotations

from dataclasses import dataclass, field

# How many skipped paths a report keeps per reason (counts are always complete).
REPORT_PATHS_PER_REASON = 20


@dataclass
class SkipReport:
    """Files a scan or load left out, by reason: every count, and the first few paths of each."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, path: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < REPORT_PATHS_PER_REASON:
            examples.append(path)

    def merge(self, other: SkipReport) -> None:
        for reason, count in other.counts.items():
            self.counts[reason] = self.counts.get(reason, 0) + count
            room = REPORT_PATHS_PER_REASON - len(self.examples.setdefault(reason, []))
            self.examples[reason].extend(other.examples.get(reason, [])[: max(room, 0)])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """``3 skipped (2 too large, 1 binary)``, or empty when nothing was skipped."""
        if not self.counts:
            return ""
        parts = ", ".join(f"{n} {reason}" for reason, n in sorted(self.counts.items()))
        return f"{self.total} skipped ({parts})"

    def to_json(self) -> dict[str, object]:
        return {"counts": dict(sorted(self.counts.items())), "examples": dict(sorted(self.examples.items()))}


__all__ = ["REPORT_PATHS_PER_REASON", "SkipReport"]
