"""The docs languages questions asked for: ``.agentty/languages.json``.

A question in a language the docs are translated into (German, with a ``docs/de/`` tree) adds that language
to the docs index, which then keeps it: the file remembers it across processes. Only language tags are kept,
at most ``MAX_LANGUAGES``; a file that cannot be read (corrupt, foreign, a link) counts as empty.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from agentty_rag.state.files import read_json, write_json

LANGUAGES_FILE = "languages.json"
MAX_LANGUAGES = 16
_TAG = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,4})?$")


def asked_languages(state_dir: Path) -> frozenset[str]:
    """The languages earlier questions asked for (none when the file is missing or unusable)."""
    data, _problem = read_json(state_dir / LANGUAGES_FILE, max_bytes=4096)
    asked = data.get("asked") if isinstance(data, dict) else None
    if not isinstance(asked, list):
        return frozenset()
    return frozenset(tag for tag in asked[:MAX_LANGUAGES] if isinstance(tag, str) and _TAG.match(tag))


def add_asked_language(state_dir: Path, language: str) -> frozenset[str]:
    """Remember that a question asked for ``language``; returns the languages now asked for. A file that
    cannot be written (a read-only checkout) leaves it asked for in this process only."""
    asked = asked_languages(state_dir)
    if not _TAG.match(language) or language in asked or len(asked) >= MAX_LANGUAGES:
        return asked
    asked = asked | {language}
    with contextlib.suppress(OSError, ValueError):
        write_json(state_dir / LANGUAGES_FILE, {"asked": sorted(asked)})
    return asked


__all__ = ["LANGUAGES_FILE", "MAX_LANGUAGES", "add_asked_language", "asked_languages"]
