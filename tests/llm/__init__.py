"""Tests of the LLM layer (runner/llm) and the shared lexical helpers (runner/text/words.py)."""
