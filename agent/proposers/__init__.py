"""Proposers: turn a HealthReport and a Diagnosis into a Proposal of catalogue actions."""
