"""Families of primitives that share how they reach the host; each primitive module picks one."""
