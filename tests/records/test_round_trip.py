"""Every record read and written again gives the same bytes (what generation and scoring write:
tests/records/test_records.py), and what ocg at c20dad0 wrote (tests/fixtures/c20dad0) is
written back as it was, `format_version` first on the versioned ones: the records' schema may
change its implementation, never the files."""

import json

import pytest

from ocg.core.files import write_json
from tests.records.old_records import C20DAD0, RECORDS, VERSIONED


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_c20dad0_records_write_back_as_read(name, tmp_path):
    original = C20DAD0 / name
    data = json.loads(original.read_text())
    expected = {"format_version": 1, **data} if name in VERSIONED else data
    out = RECORDS[name].read(original).write(tmp_path / name)
    assert out.read_text() == json.dumps(expected, indent=2) + "\n"
    again = RECORDS[name].read(out).write(tmp_path / "again.json")
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_unknown_keys_are_kept_last_in_order(name, tmp_path):
    data = json.loads((C20DAD0 / name).read_text())
    extra = {"zeta": [1, {"b": 2, "a": 1}], "alpha": None, "mid": "x"}
    path = write_json(tmp_path / name, {**data, **extra})
    written = json.loads(RECORDS[name].read(path).write(tmp_path / "out.json").read_text())
    assert list(written)[-3:] == list(extra) and {k: written[k] for k in extra} == extra
