"""The catalogue of safe primitives: one module per primitive."""
