"""Composed (intent-conditioned) retrieval: "like this, but with short sleeves"."""
