"""The only formatter: everything the package shows a model or a person is made into text here.

``results`` shows search results (the text the model reads, the same results as structured content, the
proactive block); ``explain`` shows ``--explain``; ``status`` shows ``agentty-rag status`` and
``index --dry-run`` from their typed reports (``status.types``). Nothing here ranks or counts tokens.
"""

from __future__ import annotations

from agentty_rag.render.explain import render_explanation
from agentty_rag.render.results import (
    FENCE,
    HEADINGS_JOINED_BY,
    KINDS_JOINED_BY,
    SYMBOLS_JOINED_BY,
    answer_key,
    block_tag,
    confidence_bar,
    fence_line,
    fenced,
    funnel_numbers,
    funnel_text,
    header,
    header_mode,
    heading_label,
    headings,
    kinds,
    passage_ends,
    printable,
    provenance,
    render_context_block,
    render_structured,
    render_text,
    sources_line,
    symbols,
)
from agentty_rag.render.status import counted, render_preview, render_status, status_json

__all__ = [
    "FENCE",
    "HEADINGS_JOINED_BY",
    "KINDS_JOINED_BY",
    "SYMBOLS_JOINED_BY",
    "answer_key",
    "block_tag",
    "confidence_bar",
    "counted",
    "fence_line",
    "fenced",
    "funnel_numbers",
    "funnel_text",
    "header",
    "header_mode",
    "heading_label",
    "headings",
    "kinds",
    "passage_ends",
    "printable",
    "provenance",
    "render_context_block",
    "render_explanation",
    "render_preview",
    "render_status",
    "render_structured",
    "render_text",
    "sources_line",
    "status_json",
    "symbols",
]
