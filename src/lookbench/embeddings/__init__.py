"""Embeddings of snapshot splits: the provider seam between models and search."""
