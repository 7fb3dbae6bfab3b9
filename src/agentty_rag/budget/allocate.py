"""How many bytes each passage may use: relevance floor, confidence-scaled total, water-filling.

Pure functions over numbers; nothing here reorders passages or looks at their text.
"""

from __future__ import annotations

from collections.abc import Sequence


def scaled_total(budget: int, confidence: float, floor_fraction: float) -> int:
    """The total for one result: from ``floor_fraction`` of the budget at confidence 0 to all of it at 1."""
    confidence = min(max(confidence, 0.0), 1.0)
    floor_fraction = min(max(floor_fraction, 0.0), 1.0)
    return int(budget * (floor_fraction + (1.0 - floor_fraction) * confidence))


def water_fill(needs: Sequence[int], weights: Sequence[float], total: int, minimum: int) -> list[int]:
    """Allowances that never exceed ``total`` or any passage's need.

    Each passage first gets ``minimum`` (or its need, if smaller) when ``count x minimum`` fits in ``total``;
    the rest is shared in proportion to ``weights`` — and what a passage does not need flows to the others.
    """
    count = len(needs)
    allowances = [0] * count
    if count == 0 or total <= 0:
        return allowances
    base = minimum if minimum * count <= total else total // count
    for i in range(count):
        allowances[i] = min(needs[i], base)
    remaining = total - sum(allowances)
    open_items = [i for i in range(count) if needs[i] > allowances[i]]
    while open_items and remaining > 0:
        weight_sum = sum(max(weights[i], 0.0) for i in open_items)
        if weight_sum <= 0:
            shares = {i: remaining / len(open_items) for i in open_items}
        else:
            shares = {i: remaining * max(weights[i], 0.0) / weight_sum for i in open_items}
        satisfied = [i for i in open_items if needs[i] - allowances[i] <= shares[i]]
        if not satisfied:
            for i in open_items:
                allowances[i] += int(shares[i])
            break
        for i in satisfied:
            remaining -= needs[i] - allowances[i]
            allowances[i] = needs[i]
        open_items = [i for i in open_items if i not in satisfied]
    return allowances


__all__ = ["scaled_total", "water_fill"]
