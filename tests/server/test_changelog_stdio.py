"""A repository with a guide and a changelog that both speak of one feature, searched through the real
command over stdio: a how-to question is answered by the guide first, a question about what changed by the
changelog first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import write
from tests.server.test_server_stdio import _server, _text

pytestmark = pytest.mark.anyio

GUIDE = """\
# Webhooks

## When a delivery fails

Shipyard tries a failed webhook delivery again. Set `webhooks.retry_limit` (how many retries, 5 by default)
and `webhooks.retry_backoff` in `shipyard.toml` to configure it, then reload the server.
"""

# A changelog names the feature and its settings release after release: by words alone it outranks the guide.
CHANGELOG = """\
# Changelog

## 2.0.0

### Webhook delivery retries

- Configure webhook delivery retries with `webhooks.retry_limit` (5 retries by default, was 3) and
  `webhooks.retry_backoff`; webhook delivery retries now back off exponentially.

## 1.4.0

- Webhook delivery retries, configured with `webhooks.retry_limit`.
"""


def _first(text: str) -> str:
    """The first passage's provenance."""
    found = re.search(r"^\[1\] (\S+)", text, re.M)
    assert found, text
    return found.group(1)


async def test_a_how_to_leads_with_the_guide_and_a_question_about_a_change_with_the_changelog(tmp_path: Path) -> None:
    write(tmp_path, {"docs/guide/webhooks.md": GUIDE, "CHANGELOG.md": CHANGELOG})
    (tmp_path / ".git").mkdir()
    async with Client(_server(tmp_path)) as client:
        how_to = await client.call_tool("search_docs", {"query": "how do I configure webhook delivery retries"})
        changed = await client.call_tool("search_docs", {"query": "what changed in 2.0 about webhook delivery retries"})
    assert _first(_text(how_to)).startswith("docs:docs/guide/webhooks.md:"), _text(how_to)
    assert _first(_text(changed)).startswith("docs:CHANGELOG.md:"), _text(changed)
