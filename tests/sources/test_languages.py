"""A file's language comes from the source's table; the chunker's rules are keyed by those names."""

from __future__ import annotations

import pytest

from agentty_rag.chunking.languages import GRAMMARS, language_for, spec_named
from agentty_rag.sources.languages import FAMILIES, LANGUAGES, file_language, is_language, resolve_language


def test_every_language_with_chunking_rules_is_a_language_the_source_names() -> None:
    assert [spec.name for spec in GRAMMARS if not is_language(spec.name)] == []


def test_every_family_and_its_dialects_are_languages() -> None:
    assert all(is_language(name) for family in FAMILIES.values() for name in family)
    assert all(is_language(name) for name in FAMILIES)


def test_no_extension_or_file_name_belongs_to_two_languages() -> None:
    extensions = [ext for language in LANGUAGES for ext in language.extensions]
    filenames = [name for language in LANGUAGES for name in language.filenames]
    assert len(extensions) == len(set(extensions))
    assert len(filenames) == len(set(filenames))


@pytest.mark.parametrize(
    ("filename", "language"),
    [
        ("src/app.py", "python"),
        ("Makefile", "make"),
        ("x/Dockerfile", "dockerfile"),
        ("A.TSX", "tsx"),
        ("notes.txt", None),
    ],
)
def test_a_file_language_comes_from_its_name(filename: str, language: str | None) -> None:
    assert file_language(filename) == language


def test_a_header_named_c_is_read_as_cpp_when_its_text_says_so() -> None:
    assert file_language("pool.h") == "c"
    assert file_language("pool.h", "namespace shipyard {\n}\n") == "cpp"


def test_a_language_without_a_grammar_is_cut_into_line_windows() -> None:
    spec = language_for("schema.sql")
    assert spec is not None
    assert (spec.name, spec.grammar) == ("sql", "")
    assert spec_named("yaml").grammar == ""


def test_an_unknown_language_has_no_rules() -> None:
    with pytest.raises(KeyError):
        spec_named("text")
    assert resolve_language("text") is None
