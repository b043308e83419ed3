"""Evaluation: snapshot -> embeddings -> search -> metrics -> results."""
