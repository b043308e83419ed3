"""One module per stage: collect, dedup, crop, annotate, audit, distractors, split, publish (see pipeline.py)."""
