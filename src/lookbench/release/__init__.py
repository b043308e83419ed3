"""The live benchmark builder (`lookbench build`): pipeline.py runs the stages of stages/ over a release config."""
