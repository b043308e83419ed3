"""Composed retrieval (reference image + modification text): its task, encoders, methods and relevance."""
