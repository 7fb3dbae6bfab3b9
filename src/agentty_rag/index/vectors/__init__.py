"""The dense side of an index: the embedder seam and its backends, the vector store seam and its SQLite store."""
