"""BM25 of groups of slots — the files chunks come from — each group scored as one document, over the postings
of the SQLite backend (``inverted.Postings``).

A group's term frequency in a field is the sum over its live slots (1 for a whole field such as the path,
whose text is the group's own), and the statistics (number of documents, document frequency, average
length) count groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.bm25 import K1, B, idf, tf_saturation
from agentty_rag.index.lexical.inverted import Postings, weight_of

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GroupStatistics:
    """Slots grouped (into files) and the query-independent statistics of the groups (see
    ``group_statistics``)."""

    group_of_slot: IntArray
    n_groups: int
    n_docs: int
    lengths: Mapping[str, FloatArray]
    populated: npt.NDArray[np.bool_]
    whole_fields: frozenset[str]


def group_statistics(
    postings: Postings, group_of_slot: IntArray, n_groups: int, whole_fields: frozenset[str] = frozenset()
) -> GroupStatistics:
    """What scoring groups of slots needs beyond the postings: each group's length in each field (the sum
    over its live slots; the longest for a field in ``whole_fields``, whose text is the group's own) and
    the number of groups with a live slot. Independent of the query: worked out once per index state."""
    live = np.flatnonzero(postings.alive[: len(group_of_slot)] & (group_of_slot[: len(postings.alive)] >= 0))
    live_groups = group_of_slot[live]
    populated = np.bincount(live_groups, minlength=n_groups) > 0 if n_groups else np.zeros(0, bool)
    lengths: dict[str, FloatArray] = {}
    for name in postings.field_names:
        index = postings.fields[name]
        if name in whole_fields:
            values = np.zeros(n_groups, np.float64)
            np.maximum.at(values, live_groups, index.lengths[live])
        else:
            values = np.bincount(live_groups, weights=index.lengths[live], minlength=n_groups).astype(np.float64)
        lengths[name] = values
    return GroupStatistics(group_of_slot, n_groups, int(populated.sum()), lengths, populated, whole_fields)


def score_groups(
    postings: Postings,
    query: Mapping[str, Sequence[int]],
    weights: Mapping[str, float],
    groups: GroupStatistics,
    term_weights: Mapping[int, float] | None = None,
    k1: float = K1,
    b: float = B,
) -> FloatArray:
    """BM25 of groups of slots — the files chunks come from — each group scored as one document.

    A group's term frequency in a field is the sum over its live slots (1 for a whole field), and the
    statistics (number of documents, document frequency, average length) count groups.

    Args:
        query, weights, term_weights: as for ``Postings.score``.
        groups: the grouping and its statistics (``group_statistics``, for the index as it is now).

    Returns:
        A float array over groups (a group with no live slot scores 0).
    """
    scores = np.zeros(groups.n_groups, np.float64)
    if groups.n_docs == 0:
        return scores
    group_of_slot = groups.group_of_slot
    for name, weight, index, terms in postings.fields_to_score(query, weights):
        whole = name in groups.whole_fields
        lengths = groups.lengths[name]
        avg_len = float(lengths[groups.populated].sum()) / groups.n_docs
        for term in terms:
            slots, tfs = postings.live_postings(index, term)
            in_group = group_of_slot[slots]
            groups_tf = np.bincount(in_group[in_group >= 0], weights=tfs[in_group >= 0], minlength=groups.n_groups)
            holders = np.flatnonzero(groups_tf)
            if len(holders) == 0:
                continue
            tf: FloatArray = np.ones(len(holders)) if whole else groups_tf[holders].astype(np.float64)
            term_idf = idf(len(holders), groups.n_docs) * weight_of(term, term_weights)
            scores[holders] += weight * term_idf * tf_saturation(tf, lengths[holders], avg_len, k1, b)
    return scores


def score_group_outside(
    postings: Postings,
    group: int,
    replaced: Mapping[int, tuple[Mapping[str, Mapping[int, int]], Mapping[str, float]]],
    query: Sequence[int],
    weights: Mapping[str, float],
    groups: GroupStatistics,
    term_weights: Mapping[int, float] | None = None,
    k1: float = K1,
    b: float = B,
) -> float:
    """What ``score_groups`` would give ``group`` if some of its slots held other text: ``replaced`` maps
    each such slot to its (field -> term id -> count, field -> length). The groups' statistics stay the
    index's, as in ``score_outside``."""
    if groups.n_docs == 0 or not 0 <= group < groups.n_groups:
        return 0.0
    group_of_slot = groups.group_of_slot
    total = 0.0
    for name, weight, index, terms in postings.fields_to_score(dict.fromkeys(postings.field_names, query), weights):
        whole = name in groups.whole_fields
        lengths = groups.lengths[name]
        avg_len = float(lengths[groups.populated].sum()) / groups.n_docs
        length = float(lengths[group])
        if not whole:
            for slot, (_, new_lengths) in replaced.items():
                old = float(index.lengths[slot]) if slot < len(index.lengths) else 0.0
                length += new_lengths.get(name, 0.0) - old
        for term in terms:
            slots, tfs = postings.live_postings(index, term)
            in_group = group_of_slot[slots]
            kept = (in_group == group) & ~np.isin(slots, list(replaced))
            tf = float(tfs[kept].sum()) + sum(counts.get(name, {}).get(term, 0) for counts, _ in replaced.values())
            holders = len(np.unique(in_group[in_group >= 0]))
            if tf <= 0 or holders == 0:
                continue
            part = tf_saturation(np.array([1.0 if whole else tf]), np.array([max(length, 0.0)]), avg_len, k1, b)
            total += weight * idf(holders, groups.n_docs) * weight_of(term, term_weights) * float(part[0])
    return total


__all__ = ["GroupStatistics", "group_statistics", "score_group_outside", "score_groups"]
