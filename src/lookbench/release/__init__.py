"""The live benchmark builder (`lookbench release`): pipeline.py runs the stages of stages/ over a release config."""
