"""The graph of one index (GraphRAG): links between its files, similarity between its passages, communities.

Built from what the index holds, never from all pairs:

* links (``graph_links``): Markdown/reStructuredText links, imports, and names a file uses that another
  defines; at most ``MAX_LINKS`` per file, strongest first, kept both ways;
* similarity: each passage's signature is its ``SIGNATURE_TERMS`` rarest index terms (terms in at least two
  and at most ``MAX_DF`` passages); a passage's neighbours are the passages of other files holding at least
  ``MIN_SHARED`` of its signature terms, found through those terms' postings — the work is bounded by
  ``passages x SIGNATURE_TERMS x MAX_DF`` — at most ``MAX_SIMILAR`` each, most shared first;
* communities: label propagation over the files, along links and along file pairs with ``MIN_SHARED`` or more
  similar passages: every file starts in its own community, then, in path order, takes the community its
  neighbours weigh most (ties: the lowest number), until nothing changes or ``MAX_ROUNDS`` pass.

Everything is deterministic: the same index gives the same graph.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.graph.links import (
    LINK_WEIGHT,
    Link,
    Refs,
    definers,
    doc_links,
    imports,
    name_links,
    names_used,
    strongest,
)
from agentty_rag.source_kinds import source_spec
from agentty_rag.types import Chunk

GRAPH_VERSION = 2
MAX_LINKS = 8
SIGNATURE_TERMS = 6
MAX_DF = 24
MIN_SHARED = 2
MAX_SIMILAR = 3
MAX_ROUNDS = 20
STRONG = 0.5  # a link this strong joins two files' communities
# A link read backwards (the files importing a module): a module used everywhere has many, each saying little.
REVERSE_WEIGHT = 0.5
REVERSED = {"link": "linked from", "import": "imported by", "names": "named by"}
_BATCH = 4096  # passages read from the index at a time

Neighbours = tuple[tuple[str, str, float], ...]  # (file, kind, weight), strongest first


@dataclass(frozen=True)
class Graph:
    """One index's graph.

    Args:
        fingerprint: the index state it was built from (``graph_store.fingerprint``).
        links: each file's linked files as (file, kind, weight), strongest first, at most ``MAX_LINKS``.
        similar: each passage's (slot) similar passages of other files as (slot, weight), most alike first.
        community: each linked file's community number (a file with no strong link is alone: absent).
        seconds: how long the build took.
    """

    fingerprint: str
    links: Mapping[str, Neighbours] = field(default_factory=dict)
    similar: Mapping[int, tuple[tuple[int, float], ...]] = field(default_factory=dict)
    community: Mapping[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def edges(self) -> tuple[int, int, int]:
        """(file links, passage similarities, communities of two files or more)."""
        links = sum(len(n) for n in self.links.values()) // 2
        return links, sum(len(n) for n in self.similar.values()), len(set(self.community.values()))

    def describe(self) -> str:
        links, similar, communities = self.edges
        return f"{_count(links, 'link')}, {_count(similar, 'similar passage')}, {_count(communities, 'community')}"


def _count(n: int, thing: str) -> str:
    plural = thing[:-1] + "ies" if thing.endswith("y") else thing + "s"
    return f"{n} {thing if n == 1 else plural}"


def build(index: CorpusIndex, fingerprint: str) -> Graph:
    """The graph of ``index`` as it is now (the caller holds the index still)."""
    started = time.perf_counter()
    groups = index.file_groups()
    refs = Refs(groups.refs)
    every = groups.slots.tolist()
    slots: list[int] = []  # the live passages (a slot the index no longer holds is left out)
    texts: dict[str, list[Chunk]] = {}
    term_ids: list[npt.NDArray[np.int64]] = []
    for i in range(0, len(every), _BATCH):
        batch = every[i : i + _BATCH]
        chunks, terms = index.chunks(batch), index.chunk_term_ids(batch)
        for slot in batch:
            if slot in chunks and slot in terms:
                slots.append(slot)
                texts.setdefault(chunks[slot].ref, []).append(chunks[slot])
                term_ids.append(np.fromiter(sorted(terms[slot]), np.int64, len(terms[slot])))
    links = file_links(texts, refs)
    owner = groups.of_slot[np.asarray(slots, np.int64)] if slots else np.zeros(0, np.int32)
    pairs = similar_pairs(term_ids, owner)
    similar = {slots[i]: tuple((slots[j], w) for j, w in found) for i, found in pairs.items()}
    community = communities(groups.refs, links, _file_similarity(pairs, owner, groups.refs))
    return Graph(fingerprint, links, similar, community, time.perf_counter() - started)


def file_links(texts: Mapping[str, Sequence[Chunk]], refs: Refs) -> dict[str, Neighbours]:
    """Each file's links, both ways, at most ``MAX_LINKS`` per file (strongest first, ties by path)."""
    defined = _definitions(texts)
    out: list[Link] = []
    for ref in sorted(texts):
        chunks = texts[ref]
        found: list[Link] = []
        for chunk in chunks:
            if source_spec(chunk.source).code:
                found += [Link(ref, t, "import", LINK_WEIGHT) for t in imports(ref, chunk.text, refs)]
            else:
                found += [Link(ref, t, "link", LINK_WEIGHT) for t in doc_links(ref, chunk.text, refs)]
        language = chunks[0].language
        if defined.get(language) and source_spec(chunks[0].source).code:
            found += name_links(ref, names_used(c.text for c in chunks), defined[language])
        out += strongest(found, MAX_LINKS)
    both: dict[str, list[Link]] = {}
    for link in out:
        both.setdefault(link.source, []).append(link)
        back = Link(link.target, link.source, REVERSED[link.kind], link.weight * REVERSE_WEIGHT)
        both.setdefault(link.target, []).append(back)
    return {
        ref: tuple((link.target, link.kind, link.weight) for link in strongest(found, MAX_LINKS))
        for ref, found in sorted(both.items())
    }


def _definitions(texts: Mapping[str, Sequence[Chunk]]) -> dict[str, dict[str, frozenset[str]]]:
    """Per language, the names worth linking by and the files defining them (``graph_links.definers``)."""
    pairs: dict[str, list[tuple[str, str]]] = {}
    for ref, chunks in texts.items():
        for chunk in chunks:
            if chunk.symbol and chunk.own_name:
                pairs.setdefault(chunk.language, []).append((ref, chunk.own_name))
    return {language: definers(found) for language, found in sorted(pairs.items())}


def _signatures(term_ids: Sequence[npt.NDArray[np.int64]]) -> tuple[npt.NDArray[np.int64], ...]:
    """(term, passage, in its signature) of every term worth a similarity: held by 2 to ``MAX_DF`` passages."""
    sizes = np.fromiter((len(t) for t in term_ids), np.int64, len(term_ids))
    terms = np.concatenate(term_ids) if term_ids else np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(term_ids), dtype=np.int64), sizes)
    df = np.bincount(terms) if len(terms) else np.zeros(0, np.int64)
    keep = (df[terms] >= 2) & (df[terms] <= MAX_DF)
    terms, owner = terms[keep], owner[keep]
    # Rarest first within each passage (ties by term id); its first SIGNATURE_TERMS are its signature.
    order = np.lexsort((terms, df[terms], owner))
    terms, owner = terms[order], owner[order]
    first = np.r_[0, np.flatnonzero(np.diff(owner)) + 1] if len(owner) else np.zeros(0, np.int64)
    starts = np.repeat(first, np.diff(np.r_[first, len(owner)]))
    signature = (np.arange(len(owner)) - starts) < SIGNATURE_TERMS
    return terms, owner, signature.astype(np.int64)


def similar_pairs(
    term_ids: Sequence[npt.NDArray[np.int64]], owner_file: npt.NDArray[np.int32]
) -> dict[int, list[tuple[int, float]]]:
    """Each passage's (position) most alike passages of other files, as (position, shared share), at most
    ``MAX_SIMILAR``, most shared first (ties by position)."""
    terms, owner, signature = _signatures(term_ids)
    if not len(terms):
        return {}
    by_term = np.lexsort((owner, terms))
    terms, owner, signature = terms[by_term], owner[by_term], signature[by_term]
    group_start = np.r_[0, np.flatnonzero(np.diff(terms)) + 1]
    group_size = np.diff(np.r_[group_start, len(terms)])
    start_of = np.repeat(group_start, group_size)
    size_of = np.repeat(group_size, group_size)
    sources = np.flatnonzero(signature)  # each signature term pairs its passage with every holder of the term
    repeats = size_of[sources]
    src = np.repeat(owner[sources], repeats)
    offsets = np.arange(int(repeats.sum())) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    dst = owner[np.repeat(start_of[sources], repeats) + offsets]
    other = owner_file[src] != owner_file[dst]
    key = src[other] * len(term_ids) + dst[other]
    if not len(key):
        return {}
    pairs, shared = np.unique(key, return_counts=True)
    strong = shared >= MIN_SHARED
    pairs, shared = pairs[strong], shared[strong]
    a, b = pairs // len(term_ids), pairs % len(term_ids)
    order = np.lexsort((b, -shared, a))
    out: dict[int, list[tuple[int, float]]] = {}
    for i in order.tolist():
        found = out.setdefault(int(a[i]), [])
        if len(found) < MAX_SIMILAR:
            found.append((int(b[i]), round(float(shared[i]) / SIGNATURE_TERMS, 4)))
    return out


def _file_similarity(
    pairs: Mapping[int, Sequence[tuple[int, float]]], owner: npt.NDArray[np.int32], refs: Sequence[str]
) -> dict[tuple[str, str], int]:
    """How many similar passage pairs join each pair of files (in path order)."""
    count: dict[tuple[str, str], int] = {}
    for i, found in pairs.items():
        for j, _ in found:
            a, b = sorted((refs[int(owner[i])], refs[int(owner[j])]))
            count[(a, b)] = count.get((a, b), 0) + 1
    return count


def communities(
    refs: Sequence[str], links: Mapping[str, Neighbours], similar: Mapping[tuple[str, str], int]
) -> dict[str, int]:
    """Label propagation over strong links and files with ``MIN_SHARED`` or more similar passages; each file
    of a community of two or more, numbered by its first file in path order."""
    weights: dict[str, dict[str, float]] = {}

    def join(a: str, b: str, weight: float) -> None:
        for one, two in ((a, b), (b, a)):
            near = weights.setdefault(one, {})
            near[two] = near.get(two, 0.0) + weight

    strong: dict[tuple[str, str], float] = {}
    for ref, found in links.items():
        for target, _, weight in found:
            if weight >= STRONG:  # each link once, although most are kept both ways
                pair = (min(ref, target), max(ref, target))
                strong[pair] = max(weight, strong.get(pair, 0.0))
    for (a, b), weight in sorted(strong.items()):
        join(a, b, weight)
    for (a, b), n in similar.items():
        if n >= MIN_SHARED:
            join(a, b, STRONG)
    nodes = sorted(weights)
    label = {ref: i for i, ref in enumerate(nodes)}
    for _ in range(MAX_ROUNDS):
        changed = False
        for ref in nodes:
            votes: dict[int, float] = {}
            for other, weight in weights[ref].items():
                votes[label[other]] = votes.get(label[other], 0.0) + weight
            best = min(votes, key=lambda lab: (-votes[lab], lab))
            if best != label[ref]:
                label[ref], changed = best, True
        if not changed:
            break
    numbered: dict[int, int] = {}
    for ref in nodes:
        numbered.setdefault(label[ref], len(numbered))
    return {ref: numbered[label[ref]] for ref in nodes}


__all__ = ["GRAPH_VERSION", "MAX_LINKS", "MAX_SIMILAR", "Graph", "build", "communities", "file_links", "similar_pairs"]
