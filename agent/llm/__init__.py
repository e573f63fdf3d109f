"""The local language model: backends behind one protocol, prompts, and what reaches them."""
