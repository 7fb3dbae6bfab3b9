"""agentty-rag: retrieval for LLM coding agents over a project's docs, skills, memory and source code."""

__version__ = "0.1.0"

__all__ = ["__version__"]
