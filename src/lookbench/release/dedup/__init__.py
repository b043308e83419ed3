"""Duplicate detection: exact sha256, flip-robust perceptual hashes and an optional embedding tier."""
