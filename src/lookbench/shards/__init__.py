"""Sharded, resumable work units: row ranges with markers, run in this process, in local worker processes or on Ray."""
