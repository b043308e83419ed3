"""A tiny GR-Lite-shaped model: transformers remote code (copied next to config.json) and an importable pickle class."""
