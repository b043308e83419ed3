"""The live benchmark builder: sources -> collect -> dedup -> split -> publish."""
