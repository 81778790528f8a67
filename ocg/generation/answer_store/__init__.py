"""The answer store: append-only generation records, their on-disk format, the prompts file,
repair, and whether a model's records match its run card."""
