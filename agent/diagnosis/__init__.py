"""Root-cause engine: ranked causes from the closed taxonomy, with evidence."""
