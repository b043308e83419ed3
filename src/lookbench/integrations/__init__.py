"""Bridges to other benchmark ecosystems (each imports its library only when used)."""
