"""Shared helpers, one place for each concern: atomic writes, hashing, HTTP, dates, images, config files."""
