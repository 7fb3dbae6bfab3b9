"""One workspace's searches end to end: its folders and indexes, a search's request checked, the dense leg and
its check, the answer fitted to the budget and rendered. The server, the command line and the hook are thin edges
over it."""
