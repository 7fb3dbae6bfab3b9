"""Installed skills: folders holding a ``SKILL.md`` with ``name``/``description`` front matter."""

from __future__ import annotations

import os
from pathlib import Path

from agentty_rag.fsguard import is_inside
from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.frontmatter import field_text, parse_front_matter
from agentty_rag.sources.names import is_pruned_dir, is_utf8_name, printable_path
from agentty_rag.sources.text import decode
from agentty_rag.sources.walker import ScanResult, SkipReport, folder_boundary, stamp_files
from agentty_rag.types import Document, FileStamp

SKILL_FILE = "SKILL.md"
# Skills may be grouped in category folders: look this many levels below each skills folder.
_MAX_DEPTH = 3


def _find_skill_files(folder: Path, boundary: str, skipped: SkipReport) -> list[Path]:
    """Every ``SKILL.md`` below ``folder``; folders whose real path leaves ``boundary`` are not entered."""
    found: list[Path] = []
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not is_utf8_name(entry.name):
                skipped.add("name not UTF-8", printable_path(entry.path))
            elif entry.is_dir() and depth < _MAX_DEPTH and not is_pruned_dir(entry.name):
                if entry.is_symlink() and not is_inside(os.path.realpath(entry.path), boundary):
                    skipped.add("symlink outside root", entry.path)
                    continue
                stack.append((Path(entry.path), depth + 1))
            elif entry.name == SKILL_FILE and depth > 0:
                found.append(Path(entry.path))
    return sorted(found)


class SkillsSource:
    """Skills from each folder in order; a skill name found again in a later folder is shadowed."""

    name = "skill"

    def __init__(self, folders: tuple[Path, ...], workspace: Path, max_bytes: int) -> None:
        self.folders = folders
        self.workspace = workspace
        self.max_bytes = max_bytes

    def _key(self, path: Path) -> str:
        try:
            return "skill:" + path.relative_to(self.workspace).as_posix()
        except ValueError:
            return "skill:" + path.as_posix()

    def scan(self) -> ScanResult:
        pairs: list[tuple[str, Path, str]] = []
        skipped = SkipReport()
        seen: set[str] = set()
        for folder in self.folders:
            if not folder.is_dir():
                continue
            boundary = folder_boundary(folder, self.workspace)
            if not is_inside(os.path.realpath(folder), boundary):
                skipped.add("symlink outside root", str(folder))
                continue
            for path in _find_skill_files(folder, boundary, skipped):
                name = path.parent.name
                if name in seen:
                    skipped.add("shadowed skill", str(path))
                    continue
                seen.add(name)
                pairs.append((self._key(path), path, boundary))
        result = stamp_files(pairs)
        oversized = [f for f in result.files if f.size > self.max_bytes]
        for stamp in oversized:
            skipped.add("too large", stamp.path)
        result.skipped.merge(skipped)
        result.files = [f for f in result.files if f.size <= self.max_bytes]
        return result

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        loaded = decode(data)
        if loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason)
        matter = parse_front_matter(loaded.text)
        name = field_text(matter.fields, "name") or Path(stamp.path).parent.name
        description = field_text(matter.fields, "description")
        title = f"{name} {description}".strip()
        document = Document("skill", name, matter.body, language="markdown", title=title, first_line=matter.body_line)
        return LoadResult((document,))

    def describe(self) -> str:
        return "skills in " + ", ".join(str(f) for f in self.folders)


__all__ = ["SKILL_FILE", "SkillsSource"]
