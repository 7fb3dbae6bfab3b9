"""The Qdrant backends: the lexical index's BM25 evidence as sparse vectors in a Qdrant collection, and the
dense leg's vectors in a shard of their own.

``target.py`` says where the collection is (an in-process engine under ``.agentty/``, or a server),
``collection.py`` is the small client seam (``qdrant-edge-py``'s ``EdgeShard`` or ``qdrant-client``),
``encoding.py`` turns term counts into the vectors whose dot product is the index's BM25, ``lexical.py``
is the ``LexicalIndex`` over them, and ``vectors.py`` the ``VectorStore`` of the in-process engine.
"""
