"""Garment detection on street-look photos: a GarmentDetector Protocol with `truth` and `vlm` backends."""
