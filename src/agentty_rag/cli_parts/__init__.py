"""The command line's parts beside ``agentty_rag.cli``: its arguments."""
