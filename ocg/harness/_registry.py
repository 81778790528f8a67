"""inspect_ai's entry point for ocg (pyproject: `[project.entry-points.inspect_ai]`): importing
it registers the task, so `inspect eval ocg/ordered_commongen` finds it."""

from .inspect_task import ordered_commongen

__all__ = ["ordered_commongen"]
