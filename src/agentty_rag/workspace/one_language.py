"""Docs in one language: which translations a docs search shows, and which languages it asks to index.

The docs index holds the default language's documents, and translations only into the languages asked for
(``Places.docs_languages``). A search shows one language: the question's own when the docs are translated
into it (asked for the first time, its translations are indexed then and from then on), the language of the
folder a scope names, else the default. Of two copies of one document only the one in that language is
shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.sources.docs import DocsSource
from agentty_rag.sources.translations import Translations, detect_language


@dataclass(frozen=True)
class LanguageChoice:
    """The language a search shows (the default's tag when it shows the default), and the languages it asks
    the index to hold first (none: it holds them already)."""

    language: str
    ask: tuple[str, ...] = ()


def docs_source_of(index: CorpusIndex) -> DocsSource | None:
    """The index's documents source (None: it has none, as the code index)."""
    return next((s for s in index.config.sources if isinstance(s, DocsSource)), None)


def choose_language(
    query: str, scope: str | None, translations: Translations, indexed: frozenset[str] | None
) -> LanguageChoice:
    """The language a docs search shows: a scope's folder's language, else the question's, else the default.

    Args:
        query: the question.
        scope: the search's scope, a path prefix (None: none).
        translations: what the last scan found.
        indexed: the translated languages the index holds (None: every one).
    """
    language = _scope_language(scope, translations) if scope else ""
    if not language:
        asked = detect_language(query)
        matching = translations.matching(asked) if asked else ()
        language = asked if asked in matching else (matching[0] if matching else "")
    if not language:
        return LanguageChoice(translations.default)
    missing = tuple(
        lang for lang in translations.matching(language.split("-")[0]) if indexed is not None and lang not in indexed
    )
    return LanguageChoice(language, missing)


def _scope_language(scope: str, translations: Translations) -> str:
    """The one language of the translated files a scope covers ("" when none or several)."""
    prefix = scope.rstrip("/") + "/"
    found = {lang for path, lang in translations.language_of.items() if path == scope or path.startswith(prefix)}
    return found.pop() if len(found) == 1 else ""


def hidden_refs(choice: LanguageChoice, translations: Translations, indexed: frozenset[str] | None) -> frozenset[str]:
    """The documents the index holds that a search in ``choice.language`` never shows."""
    held = [path for path in translations.language_of if translations.kept(path, indexed)]
    return translations.hidden(held, choice.language) if held else frozenset()


__all__ = ["LanguageChoice", "choose_language", "docs_source_of", "hidden_refs"]
