"""The idletune command line: one command group per module."""
