"""Changelogs and release notes are documents, but they do not crowd out the guide: a changelog passage keeps
half its score unless the question is about a change or a version. The two classifiers are pure functions of
a path and a question; the demotion is one step of the reranker."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.features import Candidate, QueryProfile, changelog_passage, is_changelog_path
from agentty_rag.retrieve.query import asks_about_changes
from agentty_rag.retrieve.rerank import CHANGELOG_FACTOR, rerank
from agentty_rag.source_kinds import SourceKind
from agentty_rag.types import Chunk

CHANGELOG_NAMES = (
    "CHANGELOG",
    "changelog",
    "Change-Log",
    "CHANGES",
    "HISTORY",
    "NEWS",
    "RELEASE-NOTES",
    "release_notes",
    "ReleaseNotes",
    "whatsnew",
    "whats-new",
)
CHANGELOG_FOLDERS = ("releases", "release-notes", "changelog", "changelog.d", "changelogs", "whatsnew", "newsfragments")
EXTENSIONS = ("", ".md", ".rst", ".txt", ".adoc", "-3.2.txt", ".old.md")
GUIDE_WORDS = ("guide", "install", "configuration", "auth", "tokens", "deploy", "webhooks", "tutorial", "index")
HOW_TO_WORDS = (
    "how",
    "do",
    "i",
    "configure",
    "the",
    "webhook",
    "retries",
    "where",
    "is",
    "token",
    "refreshed",
    "set",
    "port",
    "change",
    "add",
    "a",
    "user",
    "what",
    "does",
    "mean",
)
CHANGE_PHRASES = (
    "changed",
    "what's new",
    "new in",
    "since",
    "deprecated",
    "removed",
    "added",
    "breaking",
    "release",
    "upgrade",
    "upgrading",
    "renamed",
    "used to",
    "no longer",
    "version",
    "2.0",
    "3.x",
    "v2",
    "1.4.2",
)

folders = st.lists(st.sampled_from(GUIDE_WORDS), max_size=3).map(lambda parts: "".join(f"{p}/" for p in parts))


@given(folders, st.sampled_from(CHANGELOG_NAMES), st.sampled_from(EXTENSIONS), st.booleans())
def test_a_file_named_as_a_changelog_is_one_wherever_it_is(prefix: str, name: str, ext: str, upper: bool) -> None:
    path = prefix + (name.upper() if upper else name) + ext
    assert is_changelog_path(path)


@given(folders, st.sampled_from(CHANGELOG_FOLDERS), st.sampled_from(GUIDE_WORDS), st.sampled_from(EXTENSIONS))
def test_a_file_in_a_folder_of_changelogs_is_one(prefix: str, folder: str, name: str, ext: str) -> None:
    assert is_changelog_path(f"{prefix}{folder}/{name}{ext or '.md'}")


@given(
    folders,
    st.sampled_from(("", *CHANGELOG_FOLDERS)),
    st.sampled_from(("upgrade-v2-to-v3", "UPGRADING", "migration-guide", "migrating", "porting-plugins")),
    st.sampled_from(EXTENSIONS),
)
def test_an_upgrade_or_migration_guide_is_never_a_changelog(prefix: str, folder: str, name: str, ext: str) -> None:
    assert not is_changelog_path(prefix + (f"{folder}/" if folder else "") + name + (ext or ".md"))


@given(folders, st.sampled_from(GUIDE_WORDS), st.sampled_from(EXTENSIONS))
def test_a_guide_is_not_a_changelog(prefix: str, name: str, ext: str) -> None:
    assert not is_changelog_path(f"{prefix}{name}{ext or '.md'}")


def test_names_that_only_start_like_a_changelog_are_not_one() -> None:
    assert not is_changelog_path("docs/newsletter.md")
    assert not is_changelog_path("docs/historyless.md")
    assert not is_changelog_path("docs/release/process.md")  # how to cut a release: a guide
    assert is_changelog_path("docs/en/docs/release-notes.md")  # fastapi's


how_to = st.lists(st.sampled_from(HOW_TO_WORDS), min_size=1, max_size=12).map(" ".join)


@given(how_to)
def test_a_how_to_question_does_not_ask_about_changes(question: str) -> None:
    assert not asks_about_changes(question)
    assert not asks_about_changes(question + "?")


@given(how_to, how_to, st.sampled_from(CHANGE_PHRASES), st.booleans())
def test_a_change_word_or_a_version_anywhere_makes_it_a_question_about_changes(
    before: str, after: str, phrase: str, upper: bool
) -> None:
    assert asks_about_changes(f"{before} {phrase.upper() if upper else phrase} {after}")
    assert asks_about_changes(f"{before} {phrase}?")


def test_an_address_or_a_dotted_name_is_not_a_version() -> None:
    assert not asks_about_changes("connect to 127.0.0.1 on port 8080")
    assert not asks_about_changes("where is auth.token_ttl read")
    assert asks_about_changes("what changed in 2.0 about webhook retries")


def _chunk(ref: str, source: SourceKind = "docs") -> Chunk:
    return Chunk(source, ref, 1, 3, "## Retries\n\nWebhook retries back off.", "markdown", "section", "Retries")


def _profile(question: str) -> QueryProfile:
    terms = ("webhook", "retries")
    return QueryProfile(question, terms, dict.fromkeys(terms, 2.0), wants_changes=asks_about_changes(question))


def _candidates(scores: list[float]) -> list[Candidate]:
    refs = ["CHANGELOG.md", "docs/guide/webhooks.md", "docs/releases/3.0.md", "docs/guide/retries.md"]
    terms = frozenset({"webhook", "retries"})
    return [
        Candidate(_chunk(refs[i % len(refs)]), score, terms, frozenset(), frozenset(), key=f"c{i:03}")
        for i, score in enumerate(scores)
    ]


scores = st.lists(st.floats(min_value=0.01, max_value=100.0), min_size=1, max_size=12)


@given(scores)
def test_a_changelog_passage_keeps_the_factor_of_its_score_for_a_how_to_question(values: list[float]) -> None:
    candidates = _candidates(values)
    plain = {r.candidate.key: r.score for r in rerank(candidates, _profile("webhook retries, what's new"))}
    demoted = {r.candidate.key: r for r in rerank(candidates, _profile("how do I configure webhook retries"))}
    for candidate in candidates:
        shown = demoted[candidate.key]
        if is_changelog_path(candidate.chunk.ref):
            assert abs(shown.score - CHANGELOG_FACTOR * plain[candidate.key]) < 1e-9
            assert dict(shown.contributions)["changelog"] < 0  # --explain says why
        else:
            assert shown.score == plain[candidate.key] and "changelog" not in dict(shown.contributions)


@given(scores)
def test_a_changelog_never_climbs_by_the_demotion(values: list[float]) -> None:
    candidates = _candidates(values)
    before = [r.candidate.key for r in rerank(candidates, _profile("webhook retries since 2.0"))]
    after = [r.candidate.key for r in rerank(candidates, _profile("how do I configure webhook retries"))]
    for candidate in candidates:
        if is_changelog_path(candidate.chunk.ref):
            assert after.index(candidate.key) >= before.index(candidate.key)


def test_only_a_located_prose_passage_of_a_changelog_is_demoted() -> None:
    how_to = _profile("how do I configure webhook retries")
    assert changelog_passage(_chunk("CHANGELOG.md"), how_to) == 1.0
    assert changelog_passage(_chunk("CHANGELOG.md"), _profile("what changed about webhook retries")) == 0.0
    assert changelog_passage(_chunk("changelog", source="skill"), how_to) == 0.0  # a skill's name, not a path
    code = Chunk("code", "scripts/changelog.py", 1, 3, "def f():\n    pass\n", "python", "function", "", "f")
    assert changelog_passage(code, how_to) == 0.0
