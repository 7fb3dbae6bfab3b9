"""The small YAML-ish front matter used by SKILL.md and memory facts: ``key: value`` lines between ``---``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """Parsed fields, the body after the closing fence, and the body's first line number (1-based)."""

    fields: dict[str, str | list[str]]
    body: str
    body_line: int


def _value(raw: str) -> str | list[str]:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [_unquote(item) for item in raw[1:-1].split(",") if item.strip()]
    return _unquote(raw)


def _unquote(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``---``-fenced front matter from the body. Text without front matter is all body.

    Supports ``key: value``, ``key: [a, b]``, quoted values, ``key: >``/``|`` blocks and ``- item`` lists;
    anything else in the block is ignored rather than refused.
    """
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return FrontMatter({}, text, 1)
    closing = next((i for i in range(1, min(len(lines), 200)) if lines[i].strip() in ("---", "...")), None)
    if closing is None:
        return FrontMatter({}, text, 1)
    fields: dict[str, str | list[str]] = {}
    key: str | None = None
    for line in lines[1:closing]:
        if key is not None and (line.startswith((" ", "\t")) or not line.strip()):
            item = line.strip()
            current = fields.get(key, "")
            if item.startswith("- "):
                items = current if isinstance(current, list) else []
                fields[key] = [*items, _unquote(item[2:])]
            elif item:
                fields[key] = f"{current} {item}".strip() if isinstance(current, str) else current
            continue
        name, sep, rest = line.partition(":")
        if not sep or not name.strip() or name.startswith((" ", "#")):
            key = None
            continue
        key = name.strip().lower()
        fields[key] = "" if rest.strip() in ("", ">", "|", ">-", "|-") else _value(rest)
    body = "\n".join(lines[closing + 1 :])
    return FrontMatter(fields, body, closing + 2)


def field_text(fields: dict[str, str | list[str]], key: str) -> str:
    value = fields.get(key, "")
    return " ".join(value) if isinstance(value, list) else value


__all__ = ["FrontMatter", "field_text", "parse_front_matter"]
