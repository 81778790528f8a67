"""Scored results read back: every model's answers, groups and summary, and each model's design."""
