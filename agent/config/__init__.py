"""The operator's config file: its model, how it is read, and where each value came from."""
