"""GraphRAG's graph of an index: the links between files, the graph itself, and where it is stored."""
