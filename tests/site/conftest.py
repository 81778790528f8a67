"""The site's tests run on the analyses' small scored run (`scored`, tests/analysis/conftest.py)."""

from tests.analysis.conftest import scored  # noqa: F401 (a fixture, found by its name)
