"""Training: snapshot data -> augmentations -> backbone + heads -> metric-learning losses -> exported model."""
