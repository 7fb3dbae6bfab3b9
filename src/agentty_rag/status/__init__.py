"""What ``agentty-rag status`` and ``index --dry-run`` report: the values (``types``, read by every layer) and the
report gathered from a workspace (``report``)."""
