"""Image fingerprints and look-ups: exact sha256, mirror-robust pHash checked by colour, optional embeddings."""
