"""Data sources: each produces Sample metrics in the spec vocabulary."""
