"""The parts of a workspace's search beside ``Workspace`` itself: one index's attempt, the answer made from
the attempts, and the builds that run outside a request."""
