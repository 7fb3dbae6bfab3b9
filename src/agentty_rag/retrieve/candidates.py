"""What a search knows before ranking: the query's weighted terms and names, the evidence of each file, the
candidates beyond the legs' own top lists, and what the reranker sees of each candidate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.fields import name_term
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.index.lexical.tokenize import path_words
from agentty_rag.retrieve.features import Candidate, QueryProfile, own_name
from agentty_rag.retrieve.files import CHUNK_SUM_POOL, FILE_POOL, best_chunk_of, chunk_sums, sums_by_file
from agentty_rag.retrieve.parsed import ParsedQuery
from agentty_rag.retrieve.query import definition_match, named_file, named_with, split_qualified, term_weights
from agentty_rag.types import Chunk, Hit

# The opening words of a long query count this much more.
OPENING_BOOST = 1.0
# An identifier a question spells out in words (``event loop`` -> ``event_loop``), when the index holds it.
COMPOUND_WEIGHT = 1.0
# A question names its subject first ("Mutex and Semaphore for coroutine synchronization"): a name it mentions
# after the first counts this share.
LATER_NAME_SHARE = 0.5
# Definitions of the query's names that join the candidates (the best by their lexical score).
DEFINITION_POOL = 30
# A definition of a name a question mentions counts this share of one a bare-name query asks for; an
# ``impl``/extension block of the name this share of its declaration.
MENTIONED_NAME_SHARE = 0.5
EXTENSION_SHARE = 0.5


@dataclass(frozen=True)
class QueryAnalysis:
    """What a query says besides its words, for one index (the identifiers it spells out are the index's).

    Args:
        weights: each distinct term's weight (repeats and the opening of a long query count more; identifiers
            the query spells out in words are added).
        names: definition names it asks for or mentions.
        bare_name: the query is nothing but a name.
        long: more than ``LONG_QUERY_TERMS`` distinct terms (an issue, a pasted log).
        words: the words a file may be named with, for a short question in prose (``query.named_with``).
    """

    weights: dict[str, float]
    names: tuple[str, ...] = ()
    bare_name: bool = False
    long: bool = False
    words: tuple[str, ...] = ()


def lexical_alone(index: CorpusIndex, long: bool, lexical_weighted: bool, bare_name: bool = False) -> bool:
    """Whether a search is made by the lexical leg alone: a long query (an issue, a pasted log) or a bare name
    (``Session``, ``Rails::Engine``) of a code index, when that leg has a weight. The embedding model reads a
    long query's first few hundred tokens, while its rare terms, paths and names are the lexical leg's
    strongest evidence (measured on the issue texts of the benchmark pages); a name alone says nothing the
    model can read for meaning, and its definition is found by name (``features.defines_bare_name``)."""
    return lexical_weighted and (long or bare_name) and index.config.scoring.rank_files


def analyse_query(index: CorpusIndex, query: ParsedQuery, code: bool) -> QueryAnalysis:
    """The weighted terms of ``query``; for code also the names it asks for and the identifiers it spells out."""
    # A question about code that repeats a word is about it; in prose, repeats are style (measured on the
    # docs fixtures).
    weights = term_weights(query.terms, query.opening if query.long else (), OPENING_BOOST, by_count=code)
    if not code:
        return QueryAnalysis(weights, long=query.long)
    for term in sorted(index.known_terms(query.compounds)):
        weights[term] = weights.get(term, 0.0) + COMPOUND_WEIGHT
    words = () if query.bare_name or query.long else query.words
    return QueryAnalysis(weights, query.names, query.bare_name, query.long, words)


def profile_query(
    index: CorpusIndex, query: ParsedQuery, bare_name: bool = False
) -> tuple[QueryProfile, dict[str, int]]:
    """What the reranker knows of the query (``bare_name``: the query analysis found it is nothing but a name),
    and the index's ids of its terms."""
    ids, idf = index.term_statistics(query.distinct)
    profile = QueryProfile(
        query.text,
        query.distinct,
        idf,
        query.identifiers,
        query.phrases,
        query.wants_tests,
        query.wants_examples,
        bare_name=bare_name,
        wants_changes=query.wants_changes,
    )
    return profile, ids


@dataclass(frozen=True)
class FileEvidence:
    """Each file's evidence, relative to the best file's (0 to 1), and the names the query asks for.

    Args:
        bm25: the file's BM25 as one document.
        chunks: the sum of its best chunks' scores.
        file_of_slot: each chunk slot's file.
        words: the words a file may be named with (see ``QueryAnalysis``).
        name_shares: how much each of ``names`` counts by its place in the query (``mention_shares``).
    """

    bm25: npt.NDArray[np.float64]
    chunks: npt.NDArray[np.float64]
    file_of_slot: npt.NDArray[np.int32]
    names: tuple[str, ...]
    bare_name: bool
    words: tuple[str, ...]
    name_shares: tuple[float, ...]
    dense_best: npt.NDArray[np.float64] | None = None
    dense_sum: npt.NDArray[np.float64] | None = None


def file_evidence(
    lexical: LexicalScores, analysis: QueryAnalysis, dense: npt.NDArray[np.float64] | None = None
) -> FileEvidence:
    groups = lexical.groups
    best = lexical.best(CHUNK_SUM_POOL)
    sums = sums_by_file(best, lexical.at(best), groups.of_slot, len(groups.refs))
    names, bare = analysis.names, analysis.bare_name
    shares = mention_shares(names, bare)
    dense_best = dense_sum = None
    if dense is not None:
        n_files = len(groups.refs)
        of_slot = groups.of_slot[: len(dense)]
        keep = of_slot >= 0
        dense_best = np.zeros(n_files, np.float64)
        np.maximum.at(dense_best, of_slot[keep], dense[: len(of_slot)][keep])
        dense_sum = chunk_sums(dense, groups.of_slot, n_files, CHUNK_SUM_POOL)
    return FileEvidence(
        lexical.files_relative(), sums, groups.of_slot, names, bare, analysis.words, shares, dense_best, dense_sum
    )


def more_candidates(
    index: CorpusIndex,
    lexical: LexicalScores,
    analysis: QueryAnalysis,
    have: set[int],
    allowed: npt.NDArray[np.bool_] | None = None,
) -> list[int]:
    """Slots beyond the legs' top lists: the best chunk of each strong file, and definitions of the query's
    names (a bare name's definition may hold the name once, and lose to files that use it often). Only
    slots the filters admit (``allowed``)."""
    best = best_chunk_of(lexical.best_files(FILE_POOL), lexical)
    extra = [slot for slot in best.values() if slot not in have]
    for slot in _definitions(index, analysis.names, lexical):
        admitted = allowed is None or (slot < len(allowed) and bool(allowed[slot]))
        if admitted and slot not in have and slot not in extra:
            extra.append(slot)
    return extra


def _definitions(index: CorpusIndex, names: tuple[str, ...], lexical: LexicalScores) -> list[int]:
    """Slots of the definitions named by ``names`` (case aside), the best ``DEFINITION_POOL`` by lexical score."""
    terms = list(dict.fromkeys(name_term(split_qualified(n)[-1]) for n in names if split_qualified(n)))
    if not terms:
        return []
    slots = index.defined_as(terms)
    score = {s: lexical.of(s) for s in slots}
    return sorted(slots, key=lambda s: (-score[s], s))[:DEFINITION_POOL]


def _context_text(chunk: Chunk) -> str:
    return f"{chunk.symbol.replace('.', ' ')} {chunk.context} {path_words(chunk.ref)}"


def mention_shares(names: Sequence[str], bare_name: bool) -> tuple[float, ...]:
    """How much each name counts: 1 for the name a query is (both its forms) or the first it mentions (in
    either form), ``LATER_NAME_SHARE`` for the rest."""
    if bare_name or not names:
        return (1.0,) * len(names)
    first = split_qualified(names[0])[-1:]
    return tuple(1.0 if split_qualified(name)[-1:] == first else LATER_NAME_SHARE for name in names)


def _by_mention(match: Callable[[Sequence[str]], float], files: FileEvidence) -> float:
    """The best ``match`` of one of the query's names, each weighed by its place in the query."""
    pairs = zip(files.names, files.name_shares, strict=True)
    return max((match((name,)) * share for name, share in pairs), default=0.0)


def _definition_of_asked(chunk: Chunk, files: FileEvidence) -> float:
    match = _by_mention(partial(definition_match, chunk.symbol), files)
    if not match:
        return 0.0
    share = 1.0 if files.bare_name else MENTIONED_NAME_SHARE
    return match * share * (EXTENSION_SHARE if chunk.kind == "impl" else 1.0)


def candidates_for(
    index: CorpusIndex,
    profile: QueryProfile,
    term_ids: dict[str, int],
    hits: list[Hit],
    slots: list[int],
    files: FileEvidence | None = None,
    dense: npt.NDArray[np.float64] | None = None,
) -> list[Candidate]:
    """What the reranker needs of each hit: which query terms it holds, in its text, name and context, and
    (with ``files``) its file's evidence."""
    held = index.chunk_term_ids(slots)
    wanted = {t: term_ids[t] for t in profile.terms if t in term_ids}
    out = []
    for hit, slot in zip(hits, slots, strict=True):
        chunk_ids = held.get(slot, frozenset())
        terms = frozenset(t for t, i in wanted.items() if i in chunk_ids)
        name = index.term_set(own_name(hit.chunk))
        context = index.term_set(_context_text(hit.chunk))
        key = hit.chunk.chunk_id
        own_dense = float(dense[slot]) if dense is not None and slot < len(dense) else 0.0
        candidate = Candidate(hit.chunk, hit.score, terms, name, context, chunk_ids, key=key, dense=own_dense)
        if files is not None:
            group = int(files.file_of_slot[slot]) if slot < len(files.file_of_slot) else -1
            candidate = Candidate(
                hit.chunk,
                hit.score,
                terms,
                name,
                context,
                chunk_ids,
                key=key,
                file_score=float(files.bm25[group]) if group >= 0 else 0.0,
                file_sum=float(files.chunks[group]) if group >= 0 else 0.0,
                defines_asked=_definition_of_asked(hit.chunk, files),
                named_file=_by_mention(partial(named_file, hit.chunk.ref), files),
                named_with=named_with(hit.chunk.ref, files.words),
                dense=own_dense,
                file_dense=float(files.dense_best[group]) if files.dense_best is not None and group >= 0 else 0.0,
                file_dense_sum=float(files.dense_sum[group]) if files.dense_sum is not None and group >= 0 else 0.0,
            )
        out.append(candidate)
    return out


__all__ = [
    "COMPOUND_WEIGHT",
    "DEFINITION_POOL",
    "EXTENSION_SHARE",
    "LATER_NAME_SHARE",
    "MENTIONED_NAME_SHARE",
    "OPENING_BOOST",
    "FileEvidence",
    "QueryAnalysis",
    "analyse_query",
    "candidates_for",
    "file_evidence",
    "mention_shares",
    "more_candidates",
    "profile_query",
]
