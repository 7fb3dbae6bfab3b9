"""The lexical side of an index: tokens and keywords, the fields and the BM25 formulas, the patchable inverted index
and the packed term lists."""
