"""The datasets wing: named snapshots (the embedded default), Synth, legacy importers, composed derivation."""
