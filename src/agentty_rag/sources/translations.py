"""Which documents are translations of others, from their paths alone, and which language a question is in.

A repository that translates its docs keeps one tree per language, and a search over all of them answers
with the same section five times. The layouts recognised:

* **language folders side by side**: ``docs/en/…``, ``docs/de/…`` (or ``en/docs/…``), where a folder named
  by a language tag holds the same relative paths as its sibling of the default language;
* **a translated folder beside the original tree**: ``docs/guide.md`` and ``docs/de/guide.md``;
* **i18n folders**: ``i18n/<lang>/…``, ``locales/<lang>/…``, ``translations/<lang>/…``;
* **tagged copies**: ``README.de.md``, ``README_zh-CN.md`` beside ``README.md``.

A folder named like a language tag that does not mirror its siblings (a topic folder called ``ml`` or
``id``) is not a translation. The default language is the untranslated tree's, or English among tagged
siblings, else the tag with most files.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# ISO 639-1 codes that docs sites translate into (and fastapi's joke "em", emoji).
LANGUAGE_CODES = frozenset(
    "af am ar az be bg bn bs ca cs cy da de el em en eo es et eu fa fi fil fr ga gl gu he hi hr hu hy id is it "
    "ja ka kk km kn ko ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl ps pt ro ru si sk sl sq sr sv sw ta te "
    "tg th tk tl tr uk ur uz vi yo zh zu".split()
)
# Variants whose texts differ enough to be their own language (others fold to their first part: pt-BR -> pt).
DISTINCT_VARIANTS = frozenset({"zh-hant", "zh-tw", "zh-hk", "pt-br"})
ALIASES = {"zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "zh-tw": "zh-hant", "zh-hk": "zh-hant", "nb": "no"}
# Folders whose children are languages, whatever they mirror.
I18N_FOLDERS = frozenset({"i18n", "l10n", "locale", "locales", "translations", "translated", "lang", "langs"})
DEFAULT_LANGUAGE = "en"

_TAG = re.compile(r"^([a-z]{2,3})(?:[-_]([a-z0-9]{2,4}))?$")
_TAGGED_COPY = re.compile(r"^(?P<stem>.+?)[._-](?P<tag>[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,4})?)(?P<ext>\.[^.]+)$")


def language_tag(segment: str) -> str | None:
    """A path segment as a language (``de``, ``pt-BR`` -> ``pt-br``, ``zh_CN`` -> ``zh``), None when it is not one."""
    match = _TAG.match(segment.lower())
    if match is None or match.group(1) not in LANGUAGE_CODES:
        return None
    tag = match.group(1) if match.group(2) is None else f"{match.group(1)}-{match.group(2)}"
    return base_language(tag)


def base_language(tag: str) -> str:
    """The language a tag stands for: an alias's target, a distinct variant as is, else its first part."""
    tag = tag.lower().replace("_", "-")
    tag = ALIASES.get(tag, tag)
    return tag if tag in DISTINCT_VARIANTS or "-" not in tag else tag.split("-", 1)[0]


@dataclass(frozen=True)
class Translations:
    """What ``classify`` found.

    Args:
        language_of: each translated file's language, by path (files of the default language are absent).
        default: the default language.
        counts: how many files each translated language holds.
        originals: each translated file's original (the same document in the default language), when known.
    """

    language_of: dict[str, str] = field(default_factory=dict)
    default: str = DEFAULT_LANGUAGE
    counts: dict[str, int] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)

    def matching(self, language: str) -> tuple[str, ...]:
        """The corpus's languages that ``language`` names, sorted."""
        return tuple(sorted(lang for lang in self.counts if lang == language or lang.split("-")[0] == language))

    def kept(self, path: str, languages: frozenset[str] | None) -> bool:
        """Whether a file is indexed: the default language always, others when asked for (None: all)."""
        language = self.language_of.get(path)
        return language is None or languages is None or language in languages

    def hidden(self, paths: Iterable[str], language: str) -> frozenset[str]:
        """Of the indexed ``paths``, the ones a question in ``language`` is not shown: files of other languages,
        and the originals of files it has in its own (two copies of one section are never both shown)."""
        hidden: set[str] = set()
        for path in paths:
            lang = self.language_of.get(path)
            if lang is None:
                continue
            if lang != language:
                hidden.add(path)
            elif path in self.originals:
                hidden.add(self.originals[path])
        return frozenset(hidden)


def classify(paths: Iterable[str]) -> Translations:
    """Which of ``paths`` (``/``-separated, relative) are translations, and of what."""
    files = sorted(set(paths))
    language_of: dict[str, str] = {}
    originals: dict[str, str] = {}
    _language_folders(files, language_of, originals)
    _tagged_copies(files, language_of, originals)
    counts = Counter(language_of.values())
    return Translations(language_of, DEFAULT_LANGUAGE, dict(sorted(counts.items())), originals)


def _language_folders(files: list[str], language_of: dict[str, str], originals: dict[str, str]) -> None:
    """Folders named by a language tag: side by side, beside an untranslated tree, or under an i18n folder."""
    # parent folder -> language -> (tag as written, the relative paths under it); parent -> untranslated paths
    tagged: dict[str, dict[str, tuple[str, set[str]]]] = defaultdict(dict)
    untagged: dict[str, set[str]] = defaultdict(set)
    for path in files:
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            rest = "/".join(parts[depth + 1 :])
            language = language_tag(parts[depth])
            if language is None:
                untagged[parent].add("/".join(parts[depth:]))
            else:
                tagged[parent].setdefault(language, (parts[depth], set()))[1].add(rest)
        untagged["/".join(parts[:-1])].add(parts[-1])
    judged: set[str] = set()  # the translated folders found so far (nothing inside one is judged again)
    for parent in sorted(tagged, key=lambda p: (p.count("/"), p)):
        languages = tagged[parent]
        i18n = parent.rsplit("/", 1)[-1].lower() in I18N_FOLDERS
        default = _default_of(languages)
        base = f"{parent}/" if parent else ""
        for language, (written, rests) in sorted(languages.items()):
            prefix = f"{base}{written}/"
            if language == default or _inside(prefix, judged):
                continue
            original_of = _mirrored(base, languages.get(default) if default else None, untagged[parent], rests)
            if original_of is None and not i18n:
                continue
            judged.add(prefix)
            for rest in sorted(rests):
                language_of.setdefault(prefix + rest, language)
                original = original_of(rest) if original_of is not None else None
                if original is not None:
                    originals.setdefault(prefix + rest, original)


def _inside(prefix: str, folders: set[str]) -> bool:
    parts = prefix.rstrip("/").split("/")
    return any("/".join(parts[:depth]) + "/" in folders for depth in range(1, len(parts)))


def _default_of(languages: dict[str, tuple[str, set[str]]]) -> str | None:
    """The default among tagged siblings: English, else (two or more) the one with most files; None for one
    tag folder beside an untranslated tree (whose language is the default)."""
    if DEFAULT_LANGUAGE in languages:
        return DEFAULT_LANGUAGE
    if len(languages) < 2:
        return None
    return min(languages, key=lambda lang: (-len(languages[lang][1]), lang))


def _mirrors(translated: set[str], original: set[str]) -> bool:
    """Whether a tree holds the same paths as another: at least half of its files, and two (one for a single file)."""
    shared = len(translated & original)
    return shared >= max(1 if len(translated) == 1 else 2, (len(translated) + 1) // 2)


def _mirrored(
    base: str, default: tuple[str, set[str]] | None, untranslated: set[str], rests: set[str]
) -> Callable[[str], str | None] | None:
    """How a language folder's files map to their originals (None: it mirrors neither the default language's
    folder nor the untranslated tree beside it)."""
    if default is not None and _mirrors(rests, default[1]):
        written, original_rests = default
        return lambda rest: f"{base}{written}/{rest}" if rest in original_rests else None
    if _mirrors(rests, untranslated):
        return lambda rest: f"{base}{rest}" if rest in untranslated else None
    return None


def _tagged_copies(files: list[str], language_of: dict[str, str], originals: dict[str, str]) -> None:
    """``README.de.md`` beside ``README.md``: a copy tagged with a language, where the untagged file exists."""
    present = set(files)
    for path in files:
        if path in language_of:
            continue
        folder, _, name = path.rpartition("/")
        match = _TAGGED_COPY.match(name)
        if match is None:
            continue
        language = language_tag(match.group("tag"))
        if language is None or language == DEFAULT_LANGUAGE:
            continue
        original = (
            f"{folder}/{match.group('stem')}{match.group('ext')}"
            if folder
            else match.group("stem") + match.group("ext")
        )
        if original in present:
            language_of[path] = language
            originals[path] = original


# -- the question's language ---------------------------------------------------------------------------------

_SCRIPTS = (  # (unicode name prefix, language)
    ("CJK UNIFIED", "zh"),
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("HANGUL", "ko"),
    ("CYRILLIC", "ru"),
    ("GREEK", "el"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
    ("DEVANAGARI", "hi"),
    ("THAI", "th"),
    ("BENGALI", "bn"),
)
_FUNCTION_WORDS = {
    "en": "the a an is are how do does i to of in for with what where why which can my it this that".split(),
    "de": "der die das und ist nicht wie ich ein eine mit für auf kann werden wird den dem des zu im sich oder wo "
    "was warum welche muss man".split(),
    "fr": "le la les est une des et pour dans comment avec que qui sur pas je peut faire du au quelle quel "
    "est-ce où".split(),
    "es": "el los las es una para con cómo que por del se puedo hacer qué dónde cuál está".split(),
    "pt": "o os as é um uma para com como que não do da em posso fazer onde qual está".split(),
    "it": "il lo gli è un una per con come che non del della posso fare dove quale".split(),
    "nl": "het een en is niet hoe ik voor met van kan wat waar".split(),
    "tr": "bir ve bu nasıl için ile ne mi mı nedir nerede".split(),
    "pl": "jak nie się jest czy na do gdzie".split(),
}
_LETTER_HINTS = {"ß": "de", "ä": "de", "ö": "de", "ü": "de", "ç": "pt", "ã": "pt", "õ": "pt", "ñ": "es", "¿": "es"}
_LETTER_HINTS.update({"ı": "tr", "ş": "tr", "ğ": "tr", "ł": "pl", "ą": "pl", "ę": "pl", "ż": "pl", "ś": "pl"})
_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?", re.UNICODE)


def detect_language(question: str) -> str:
    """The language a question is written in, as a base tag; "" for English or when it cannot be told."""
    scripts: Counter[str] = Counter()
    for char in question:
        if char.isalpha() and ord(char) > 0x2FF:
            name = unicodedata.name(char, "")
            for prefix, language in _SCRIPTS:
                if name.startswith(prefix):
                    scripts[language] += 1
                    break
    if scripts:
        if scripts["ja"]:
            return "ja"
        language = scripts.most_common(1)[0][0]
        if language == "ru" and any(c in question.lower() for c in "іїєґ"):
            return "uk"
        if language == "ar" and any(c in question for c in "پچژگ"):
            return "fa"
        return language
    words = [w.lower() for w in _WORDS.findall(question)]
    scores = Counter({lang: sum(w in set(vocab) for w in words) for lang, vocab in _FUNCTION_WORDS.items()})
    for char in question.lower():
        if char in _LETTER_HINTS:
            scores[_LETTER_HINTS[char]] += 2
    best, score = min(scores.items(), key=lambda item: (-item[1], item[0] != "en", item[0]))
    if best == "en" or score < 2 or score <= scores["en"]:
        return ""
    return best


__all__ = [
    "ALIASES",
    "DEFAULT_LANGUAGE",
    "LANGUAGE_CODES",
    "Translations",
    "base_language",
    "classify",
    "detect_language",
    "language_tag",
]
