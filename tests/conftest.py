import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))  # tests import their helpers by name

from ocg.paths import PROJECT_ROOT  # noqa: E402

# The converted embedded model is a cache shared by all tests (converting takes ~25 s).
os.environ.setdefault("OCG_MODEL_CACHE", str(PROJECT_ROOT / "outputs" / "models"))


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """An empty outputs/ root for the test (OCG_OUTPUTS), so tests never touch the real one."""
    root = tmp_path / "outputs"
    monkeypatch.setenv("OCG_OUTPUTS", str(root))
    return root
