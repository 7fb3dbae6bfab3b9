"""``python -m agentty_rag``: the same as the ``agentty-rag`` command."""

import sys

from agentty_rag.cli import main

sys.exit(main())
