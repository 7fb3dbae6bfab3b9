"""The small machine state under ``.agentty/``: the folder itself, its JSON files read and written safely, the
proactive mode and sessions, implicit feedback, and what a running server tells ``status``."""
