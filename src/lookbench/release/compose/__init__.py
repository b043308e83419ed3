"""Composed queries for a release: pairs of annotated items, texts (templates, an LLM's paraphrase), a judge's audit."""
