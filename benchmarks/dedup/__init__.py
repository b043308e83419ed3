"""Shared code of the dedup benchmark scripts (run each as `python benchmarks/dedup/NAME.py`)."""
