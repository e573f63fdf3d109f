"""Prompt templates for the LLM, as files (a package so they install with the agent)."""
