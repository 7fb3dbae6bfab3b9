"""The Qdrant backend of the lexical index: chunks' BM25 evidence as sparse vectors in a Qdrant collection.

``target.py`` says where the collection is (an in-process engine under ``.agentty/``, or a server),
``collection.py`` is the small client seam (``qdrant-edge-py``'s ``EdgeShard`` or ``qdrant-client``),
``encoding.py`` turns term counts into the vectors whose dot product is the index's BM25, and ``lexical.py``
is the ``LexicalIndex`` over them.
"""
