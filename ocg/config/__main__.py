"""`python -m ocg.config`: write params/schema/<kind>.schema.json (after a model changes)."""

from .export import write_schemas

for path in write_schemas():
    print(path)
