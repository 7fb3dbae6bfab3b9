"""Proactive context: before a turn, retrieve for the user's message and hand the agent a small block.

The same search as the tools (``Workspace.search``, asked for the proactive block), with a different query
source (the prompt an agent hook passes on stdin) and a tighter budget. No ranking of its own: the search
merges the rankings of the indexes it reads. It stays quiet — prints nothing — for small talk, slash
commands, prompts without content, retrievals under the confidence threshold, and when the mode says so
(``off``, or ``first-turn`` after a session's first turn).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentty_rag.config import Settings
from agentty_rag.errors import StdinError
from agentty_rag.state.proactive import first_time, read_mode

if TYPE_CHECKING:  # the retrieval stack loads only when a prompt is retrieved for: a hook that is off stays quick
    from agentty_rag.workspace.service import Workspace

# Replies that carry no question: nothing to retrieve for.
SMALL_TALK = frozenset(
    """ok okay k kk thanks thank thx ty cheers great good nice cool perfect awesome yes yeah yep yup no nope sure
    fine done lgtm sgtm agreed right correct got it go ahead continue proceed please hi hello hey morning bye
    that works sounds looks wow oh ah hmm alright np you too very much much so a the it is this that""".split()
)
_WORD = re.compile(r"[\w'’]+", re.UNICODE)
_SLASH_COMMAND = re.compile(r"^/[\w:.-]+(\s.*)?$", re.S)
PROMPT_MAX_BYTES = 64 * 1024
# Passages retrieved from each source, and the most a block holds.
K_PER_SOURCE = 6


@dataclass(frozen=True)
class HookEvent:
    """A user's prompt, and the session it belongs to when an agent hook sent it."""

    prompt: str
    session_id: str | None = None
    cwd: str | None = None


def read_event(data: bytes) -> HookEvent:
    """Parse stdin: a hook event JSON (``{"prompt": ..., "session_id": ..., "cwd": ...}``) or plain text."""
    if len(data) > PROMPT_MAX_BYTES:
        raise StdinError(f"the prompt is {len(data):,} bytes, over the {PROMPT_MAX_BYTES:,} bytes a hook retrieves for")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StdinError(f"stdin is not UTF-8 ({error.reason} at byte {error.start})") from error
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise StdinError("stdin is empty")
    if text.lstrip().startswith("{"):
        try:
            event = json.loads(text)
        except json.JSONDecodeError as error:
            raise StdinError(f"stdin starts like JSON but is not ({error.msg})") from error
        if not isinstance(event, dict) or not isinstance(event.get("prompt"), str):
            raise StdinError('the hook event has no "prompt" string')
        session = event.get("session_id")
        cwd = event.get("cwd")
        return HookEvent(
            event["prompt"], session if isinstance(session, str) else None, cwd if isinstance(cwd, str) else None
        )
    return HookEvent(text)


def why_quiet(prompt: str) -> str:
    """Why a prompt gets no retrieval ("" when it should get one): small talk, a slash command, no content."""
    stripped = prompt.strip()
    if _SLASH_COMMAND.match(stripped) and "\n" not in stripped:
        return "a slash command"
    words = [w.lower().strip("'’") for w in _WORD.findall(stripped)]
    content = [w for w in words if w and w not in SMALL_TALK]
    if not content:
        return "small talk" if words else "no words"
    return ""


@dataclass(frozen=True)
class Injection:
    """The block to inject (None to stay quiet) and the reason, for the stderr note and tests."""

    block: str | None
    reason: str
    confidence: float = 0.0


OFF = "proactive injection is off (agentty-rag proactive on|first-turn)"


def mode_of(settings: Settings, state_dir: Path) -> tuple[str, str]:
    """(mode, problem): ``AGENTTY_RAG_PROACTIVE`` wins over ``.agentty/settings.json``; off by default."""
    override = settings.proactive
    if override is not None:
        return ("on" if override else "off"), ""
    return read_mode(state_dir)


def effective_mode(workspace: Workspace) -> tuple[str, str]:
    """A workspace's mode (see ``mode_of``)."""
    return mode_of(workspace.settings, workspace.state_dir)


def proactive_context(workspace: Workspace, event: HookEvent, asked: bool = False) -> Injection:
    """Retrieve for one prompt and build the context block, or say why to stay quiet.

    Args:
        workspace: where to retrieve.
        event: the prompt (and its session).
        asked: the user asked for context explicitly (the MCP prompt): the mode does not apply.
    """
    from agentty_rag.workspace.request import proactive_request

    mode, _ = ("on", "") if asked else effective_mode(workspace)
    if mode == "off":
        return Injection(None, OFF)
    quiet = why_quiet(event.prompt)
    if quiet:
        return Injection(None, f"quiet: {quiet}")
    if mode == "first-turn" and event.session_id and not first_time(workspace.state_dir, event.session_id):
        return Injection(None, "quiet: not the first turn of this session (mode first-turn)")
    settings = workspace.settings
    if not asked:  # a hook must answer fast: it never builds an index itself
        building = [note for note in (workspace.build_in_background(n) for n in settings.proactive_sources) if note]
        if building:
            return Injection(None, "quiet: " + "; ".join(building))
    budget = replace(workspace.budget(), total_bytes=settings.proactive_bytes)
    wait_s = None if asked else 0.0
    outcome = workspace.search(
        proactive_request(event.prompt, settings.proactive_sources, K_PER_SOURCE, budget, wait_s)
    )
    if not outcome.result.hits:
        return Injection(None, "quiet: nothing relevant was found")
    confidence = outcome.confidence
    if confidence < settings.proactive_min_confidence:
        return Injection(
            None,
            f"quiet: confidence {confidence:.2f} is under "
            f"AGENTTY_RAG_PROACTIVE_MIN_CONFIDENCE={settings.proactive_min_confidence}",
            confidence,
        )
    return Injection(outcome.text, "injected", confidence)


def hook_json(block: str) -> str:
    """The JSON form Claude Code's UserPromptSubmit hook reads."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}})


__all__ = [
    "OFF",
    "HookEvent",
    "Injection",
    "StdinError",
    "effective_mode",
    "hook_json",
    "mode_of",
    "proactive_context",
    "read_event",
    "why_quiet",
]
