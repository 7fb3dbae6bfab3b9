"""Qdrant: the shared index a team's machines start from, and the in-process engine backend.

The shared index (a server at ``AGENTTY_QDRANT_URL``): ``shared.py`` is the collection's format and the
collection, ``publish.py`` writes it, ``seed.py`` writes a local index from it, ``origin.py`` keeps what a
local index started from (the overlay is what differs), ``start.py`` is what a code index does with them.

The in-process engine (``AGENTTY_RAG_BACKEND=qdrant`` without a server): the lexical index's BM25 evidence as
sparse vectors in a Qdrant shard, and the dense leg's vectors in a shard of their own.

``target.py`` says where the collection is (an in-process engine under ``.agentty/``, or a server),
``collection.py`` is the small client seam (``qdrant-edge-py``'s ``EdgeShard`` or ``qdrant-client``),
``encoding.py`` turns term counts into the vectors whose dot product is the index's BM25, ``lexical.py``
is the ``LexicalIndex`` over them, and ``vectors.py`` the ``VectorStore`` of the in-process engine.
"""
