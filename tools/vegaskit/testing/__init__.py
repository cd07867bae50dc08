"""Helpers for vegaskit's own test suite (loaded as a pytest plugin)."""
