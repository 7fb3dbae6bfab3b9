"""``python -m agentty_rag``: the same as the ``agentty-rag`` command."""

import sys

from agentty_rag.cli.command import main

# Guarded: worker processes of a large index build import this module again under another name.
if __name__ == "__main__":
    sys.exit(main())
