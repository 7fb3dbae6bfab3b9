"""rag-bench: ranking quality, latency and token cost of the server's own pipeline, on the user's corpus."""
