"""Contamination-aware reading of results: model-card facts, date windows and flags."""
