"""Garment detection on street-look photos: a GarmentDetector Protocol with `truth`, `vlm` and `owl` backends."""
