"""Typed parameter files: a pydantic model per kind of file (models, run, sweep, scoring,
templates), each field described, their JSON Schemas in params/schema/ (written by
`python -m ocg.jobs.schema_export`)."""
