import pytest


@pytest.fixture
def outputs(tmp_path, monkeypatch):
    """An empty outputs/ root for the test (OCG_OUTPUTS), so tests never touch the real one."""
    root = tmp_path / "outputs"
    monkeypatch.setenv("OCG_OUTPUTS", str(root))
    return root
