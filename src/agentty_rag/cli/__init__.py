"""The ``agentty-rag`` command: its subcommands, the agent hook (``inject``), and ``init``'s client configuration
files."""
