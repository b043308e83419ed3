"""The `lookbench` command line."""
