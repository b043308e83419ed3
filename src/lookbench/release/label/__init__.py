"""Attribute annotation of crops: an Annotator Protocol with `openai` and `probe` backends."""
