"""Where an index is kept and how it changes: SQLite and its rows, the manifest and the lock, the in-memory mirror,
the build, the patch and the refresh, and the views searches read."""
