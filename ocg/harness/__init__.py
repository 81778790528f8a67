"""Ordered CommonGen inside the evaluation harnesses researchers already use (docs/harnesses.md):
an inspect_ai task (inspect_task.py), an lm-eval task folder (lm_eval_task/), and `ocg import` of
their logs into ocg's answer store (importing.py). Every prompt is ocg's own (asked.py) and every
verdict ocg's own checks (verdicts.py), so a harness's numbers are ocg's numbers."""
