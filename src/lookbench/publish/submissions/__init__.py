"""Verifiable submissions: bundles in a results-repository layout, their verification, and Hub model cards."""
