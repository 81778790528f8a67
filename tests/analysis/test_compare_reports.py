"""Every table reader reads a saved table through core.files.read_table: an empty file (what
save_table writes for a frame of no rows, as a one-condition report's paired test) is a table of
no rows; a file that is not UTF-8 CSV text is one error naming it. compare-reports finds a
one-condition report identical to itself."""

import pandas as pd
import pytest

from ocg.analysis.compare import compare_reports
from ocg.analysis.report import save_table
from ocg.cli import main
from ocg.core.errors import OcgInputError
from ocg.core.files import read_table
from ocg.core.layout import ReportFolder
from ocg.site.results_file import _table


def one_condition_report(folder):
    """The tables notebook 03 saves when no model ran both conditions: Table 1, and a paired test
    of no rows (the notebook's `pd.concat([...] + [pd.DataFrame()])` over no model)."""
    table1 = pd.DataFrame({"model": ["m"], "metric": ["coverage_order"], "value": [41.7]})
    paired = pd.concat([pd.DataFrame()], ignore_index=True)
    save_table(table1, "table1", folder)
    save_table(paired, "table1_paired_test", folder)
    return folder


def test_a_one_condition_report_is_identical_to_itself(tmp_path, capsys):
    folder = one_condition_report(tmp_path / "r")
    empty = ReportFolder(folder).table("table1_paired_test")
    assert empty.read_text().strip() == ""  # what pandas cannot read back by itself
    with pytest.raises(pd.errors.EmptyDataError):
        pd.read_csv(empty)
    assert read_table(empty).empty
    assert compare_reports(folder, folder) == []
    assert main(["compare-reports", str(folder), str(folder)]) == 0
    out = capsys.readouterr()
    assert "identical" in out.out and "Error" not in out.err
    assert _table(ReportFolder(folder), "table1_paired_test") is None  # the site: no rows


def test_a_garbage_table_is_one_error_line_naming_the_file(tmp_path, capsys):
    a, b = one_condition_report(tmp_path / "a"), one_condition_report(tmp_path / "b")
    garbage = ReportFolder(b).table("table1")
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x00binary")
    with pytest.raises(OcgInputError, match="not a CSV table: not UTF-8 text"):
        read_table(garbage)
    code = main(["compare-reports", str(a), str(b)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "UnicodeDecodeError" not in err
    assert err.count("\n") == 1 and err.startswith(f"ocg: error: {garbage}: not a CSV table"), err


def test_read_table_keeps_pandas_reading_of_a_real_table(tmp_path):
    path = tmp_path / "t.csv"
    table = pd.DataFrame({"model": ["m", "n"], "value": [1.25, float("nan")]})
    table.to_csv(path, index=False)
    pd.testing.assert_frame_equal(read_table(path), pd.read_csv(path))
    (tmp_path / "c.csv").write_text("# a comment\nk,pass_at_k\n1,0.5\n")
    assert read_table(tmp_path / "c.csv", comment="#").to_dict("list") == {
        "k": [1],
        "pass_at_k": [0.5],
    }


def test_a_column_added_hides_no_value_change_in_the_columns_both_hold(tmp_path):
    """A report that adds a column is still compared on the columns both tables hold: a value that
    moved beside it is named, as is the column."""
    old = pd.DataFrame({"model": ["m", "n"], "metric": ["x", "x"], "value": [1.0, 2.0]})
    new = old.assign(n_pairs=[4, 4])
    new.loc[1, "value"] = 2.5
    save_table(old, "table1", tmp_path / "a")
    save_table(new, "table1", tmp_path / "b")
    assert compare_reports(tmp_path / "a", tmp_path / "b") == [
        "table1.csv: columns only in A [], only in B ['n_pairs']",
        "table1.csv: column 'value' differs in 1 row(s), first row 1: np.float64(2.0) vs np.float64(2.5)",
    ]
    save_table(new.head(1), "table1", tmp_path / "c")
    assert compare_reports(tmp_path / "b", tmp_path / "c") == ["table1.csv: 2 rows vs 1 rows"]
