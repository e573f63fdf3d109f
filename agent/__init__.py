"""idletune agent: sources, report, diagnosis, proposers, chat, control loop, CLI."""

__version__ = "0.1.0"
