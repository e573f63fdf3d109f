"""Reproducible fault scenarios on a CPU-only host, around a real PyTorch training loop.

`idletune testbed run SCENARIO` sets one up; `idletune testbed stop` undoes it, from
any process, through the state file that every setup step writes before it acts.
"""
