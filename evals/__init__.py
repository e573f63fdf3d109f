"""Evaluation harness, scoring, bundled incidents and testbed scenarios."""
