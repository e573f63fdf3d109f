"""Benchmarks that print figures (never pass/fail on time)."""
