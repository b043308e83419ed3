"""Encoders addressed by spec strings, and their model cards."""
