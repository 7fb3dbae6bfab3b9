"""What talks to an Ollama server (or anything speaking its HTTP API): the client the embedder and the generator
share."""
