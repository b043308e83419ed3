"""LookBench: a live, holistic benchmark for fashion image retrieval."""

__version__ = "0.1.0"
