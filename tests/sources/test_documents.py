"""Which files of a workspace are its documents, which are translations, and which language a question is in."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.sources.docs import DocsRoots, DocsSource, document_verdict
from agentty_rag.sources.translations import base_language, classify, detect_language, language_tag
from tests.conftest import write

GUIDE = ["index.md", "tutorial/first-steps.md", "tutorial/dependencies.md", "advanced/openapi.md"]


def _scan(root: Path, languages: frozenset[str] | None = frozenset(), folder: Path | None = None) -> list[str]:
    source = DocsSource(DocsRoots(root, folder, root if folder is not None else None), 1 << 20, lambda: languages)
    return [stamp.key for stamp in source.scan().files]


def test_every_document_of_the_workspace_is_found_by_its_path_from_the_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "README.md": "# Web\n",
            "CHANGELOG.md": "# 1.0\n",
            "CONTRIBUTING.rst": "Contributing\n============\n",
            "LICENSE.md": "MIT\n",
            "crates/web/README.md": "# crate\n",
            "crates/web/src/docs/middleware.md": "# Middleware\n",
            "crates/web/src/lib.rs": "fn main() {}\n",
            "docs/notes.txt": "plain notes\n",
            "docs/example.yaml": "key: value\n",
            "requirements.txt": "click\n",
            "src/data/words.txt": "a\nb\n",
            "manual/intro.adoc": "= Intro\n",
            "tests/README.md": "# how the tests run\n",
            "tests/data/expected.md": "# an expected output\n",
            "third_party/lib/README.md": "# vendored\n",
            "node_modules/pkg/README.md": "# dependency\n",
            ".github/CONTRIBUTING.md": "# contributing\n",
            ".github/ISSUE_TEMPLATE/bug.md": "# bug\n",
            ".hidden/notes.md": "# hidden\n",
        },
    )
    assert _scan(tmp_path) == [
        "docs:CHANGELOG.md",
        "docs:CONTRIBUTING.rst",
        "docs:README.md",
        "docs:crates/web/README.md",
        "docs:crates/web/src/docs/middleware.md",
        "docs:docs/example.yaml",
        "docs:docs/notes.txt",
        "docs:manual/intro.adoc",
        "docs:tests/README.md",
    ]


def test_a_named_folder_narrows_the_documents_and_keeps_paths_from_the_root(tmp_path: Path) -> None:
    write(tmp_path, {"README.md": "# r\n", "site-docs/guide.md": "# g\n", "site-docs/conf.json": "{}\n"})
    assert _scan(tmp_path, folder=tmp_path / "site-docs") == ["docs:site-docs/conf.json", "docs:site-docs/guide.md"]


def test_a_folder_outside_the_workspace_keeps_absolute_paths(tmp_path: Path) -> None:
    outside, root = tmp_path / "notes", tmp_path / "repo"
    write(outside, {"a.md": "# a\n"})
    root.mkdir()
    source = DocsSource(DocsRoots(root, outside, outside), 1 << 20)
    assert [stamp.key for stamp in source.scan().files] == [f"docs:{outside.as_posix()}/a.md"]


def test_translations_are_left_out_unless_their_language_is_asked_for(tmp_path: Path) -> None:
    files = {f"docs/{lang}/docs/{page}": f"# {lang} {page}\n" for lang in ("en", "de", "ja") for page in GUIDE}
    write(tmp_path, {**files, "README.md": "# r\n", "README.de.md": "# r de\n"})
    source = DocsSource(DocsRoots(tmp_path), 1 << 20)
    scan = source.scan()
    keys = [stamp.key for stamp in scan.files]
    assert keys == ["docs:README.md", *sorted(f"docs:docs/en/docs/{page}" for page in GUIDE)]
    assert scan.skipped.counts["translation"] == 9
    assert source.last.translations.counts == {"de": 5, "ja": 4}
    german = _scan(tmp_path, frozenset({"de"}))
    assert "docs:docs/de/docs/index.md" in german and "docs:README.de.md" in german
    assert not any("/ja/" in key for key in german)
    assert len(_scan(tmp_path, None)) == len(files) + 2


def test_the_layouts_of_translated_docs_are_recognised() -> None:
    side_by_side = classify([f"docs/{lang}/{page}" for lang in ("en", "fr") for page in GUIDE])
    assert set(side_by_side.language_of.values()) == {"fr"}
    assert side_by_side.originals["docs/fr/index.md"] == "docs/en/index.md"
    beside = classify([*(f"docs/{p}" for p in GUIDE), *(f"docs/pt-BR/{p}" for p in GUIDE[:3])])
    assert beside.counts == {"pt-br": 3} and beside.originals["docs/pt-BR/index.md"] == "docs/index.md"
    lang_first = classify([f"{lang}/docs/{page}" for lang in ("en", "zh_CN") for page in GUIDE])
    assert lang_first.counts == {"zh": 4}
    i18n = classify(["docs/intro.md", "i18n/ko/docusaurus-plugin-content-docs/current/intro.md"])
    assert i18n.counts == {"ko": 1}
    tagged = classify(["README.md", "README_ja.md", "README.zh-CN.md", "notes-it.md"])
    assert tagged.language_of == {"README_ja.md": "ja", "README.zh-CN.md": "zh"}


def test_a_folder_named_like_a_language_that_mirrors_nothing_is_no_translation() -> None:
    topics = classify(["ml/models.md", "ml/training.md", "id/tokens.md", "docs/guide.md", "docs/api.md"])
    assert topics.language_of == {}
    one_page = classify(["docs/en/guide.md", "docs/en/api.md", "docs/it/unrelated.md", "docs/it/other.md"])
    assert one_page.language_of == {}


def test_a_search_in_one_language_hides_the_other_copies() -> None:
    translations = classify([f"docs/{lang}/{page}" for lang in ("en", "de", "ja") for page in GUIDE[:2]])
    held = ["docs/de/index.md", "docs/de/tutorial/first-steps.md", "docs/ja/index.md"]
    assert translations.hidden(held, "en") == frozenset(held)
    assert translations.hidden(held, "de") == frozenset(
        {"docs/en/index.md", "docs/en/tutorial/first-steps.md", "docs/ja/index.md"}
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(GUIDE), min_size=1, max_size=4, unique=True),
    st.lists(st.sampled_from(["de", "fr", "ja", "pt-BR", "zh-hant"]), min_size=1, max_size=3, unique=True),
    st.randoms(use_true_random=False),
)
def test_the_classification_holds_whatever_the_order_and_never_touches_the_default_tree(
    pages: list[str], languages: list[str], shuffle: random.Random
) -> None:
    paths = [f"docs/en/{p}" for p in GUIDE] + [f"docs/{lang}/{p}" for lang in languages for p in pages]
    shuffled = paths[:]
    shuffle.shuffle(shuffled)
    first, second = classify(paths), classify(shuffled)
    assert first == second
    assert not any(path.startswith("docs/en/") for path in first.language_of)
    assert set(first.language_of) == {p for p in paths if not p.startswith("docs/en/")}
    assert all(first.originals[p] == "docs/en/" + p.split("/", 2)[2] for p in first.language_of)


def test_language_tags_and_their_base_languages() -> None:
    assert [language_tag(s) for s in ("de", "pt-BR", "zh_CN", "zh-Hant", "docs", "api", "xx")] == [
        "de",
        "pt-br",
        "zh",
        "zh-hant",
        None,
        None,
        None,
    ]
    assert base_language("en-GB") == "en" and base_language("zh-TW") == "zh-hant"


def test_the_language_of_a_question() -> None:
    assert detect_language("how do I add middleware to a router") == ""
    assert detect_language("where is the config") == ""
    assert detect_language("Wie kann ich eine Abhängigkeit deklarieren?") == "de"
    assert detect_language("Comment déclarer une dépendance dans le routeur ?") == "fr"
    assert detect_language("¿Cómo puedo declarar una dependencia?") == "es"
    assert detect_language("依存関係はどこで解決されますか") == "ja"
    assert detect_language("如何添加中间件") == "zh"
    assert detect_language("Как добавить middleware") == "ru"
    assert detect_language("Як додати залежність і де її їсти") == "uk"
    assert detect_language("middleware") == ""


def test_document_verdicts_by_location() -> None:
    assert document_verdict("guide.md", "src/pkg/guide.md") is None
    assert document_verdict("notes.txt", "src/notes.txt") == ""
    assert document_verdict("notes.txt", "docs/notes.txt") is None
    assert document_verdict("README.txt", "src/README.txt") is None
    assert document_verdict("case.md", "tests/cases/case.md") == "test data"
    assert document_verdict("README.md", "tests/README.md") is None
    assert document_verdict("LICENSE.md", "LICENSE.md") == ""
    assert document_verdict("requirements.txt", "docs/requirements.txt") == ""
