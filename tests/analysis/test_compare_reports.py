"""Every table reader reads a saved table through core.files.read_table: an empty file (what
save_table writes for a frame of no rows, as a one-condition report's paired test) is a table of
no rows; a file that is not UTF-8 CSV text is one error naming it. compare-reports finds a
one-condition report identical to itself."""

import contextlib
import io
import tempfile
from pathlib import Path

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given, settings

from ocg.analysis.compare import compare_reports, row_keys
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
    new.loc[0, "value"] = 0.5  # beside the dropped row: still named, by the row's key
    save_table(new.head(1), "table1", tmp_path / "c")
    assert compare_reports(tmp_path / "a", tmp_path / "c") == [
        "table1.csv: columns only in A [], only in B ['n_pairs']",
        "table1.csv: 2 rows vs 1 rows",
        "table1.csv: 1 row(s) only in A, first model=n, metric=x",
        "table1.csv: column 'value' differs in 1 row(s), first row model=m, metric=x: "
        "np.float64(1.0) vs np.float64(0.5)",
    ]
    unnamed = pd.DataFrame({"k": [1, 2], "value": [1.0, 2.0]})  # no text column names the rows
    save_table(unnamed, "table1", tmp_path / "d")
    save_table(unnamed.head(1), "table1", tmp_path / "e")
    assert compare_reports(tmp_path / "d", tmp_path / "e") == [
        "table1.csv: 2 rows vs 1 rows (no text columns name each row once: cells not compared)"
    ]


_TEXT = st.text("abcxyz", min_size=1, max_size=4).map(lambda s: "w" + s)  # never read as NA


@st.composite
def _table_pairs(draw):
    """Table A and table B of one name: columns both hold (float or text, each cell kept or
    changed), columns only A or only B holds, rows added to or dropped from B's end; with what
    changed: {shared column: rows whose cell changed}, the columns only in A and only in B."""
    names = draw(st.lists(st.sampled_from("pqrstuvw"), min_size=1, max_size=7, unique=True))
    n_shared = draw(st.integers(1, len(names)))
    n_a_only = draw(st.integers(0, len(names) - n_shared))
    shared, a_only, b_only = (
        names[:n_shared],
        names[n_shared : n_shared + n_a_only],
        names[n_shared + n_a_only :],
    )
    n_a = draw(st.integers(0, 4))
    n_b = draw(st.sampled_from([n_a, n_a, max(n_a - 1, 0), n_a + 1]))

    def column(kind, n):
        if kind == "float":
            cells = st.none() | st.floats(-1e3, 1e3, allow_nan=False)
            return [
                float("nan") if x is None else x
                for x in draw(st.lists(cells, min_size=n, max_size=n))
            ]
        return draw(st.lists(_TEXT, min_size=n, max_size=n))

    a, b, changed = {}, {}, {}
    for name in shared:
        kind = draw(st.sampled_from(["float", "text"]))
        a[name] = column(kind, n_a)
        b[name] = a[name][:n_b] + column(kind, max(n_b - n_a, 0))
        rows = draw(st.sets(st.integers(0, max(min(n_a, n_b) - 1, 0)))) if min(n_a, n_b) else set()
        for i in rows:  # a changed cell: another value, a value for a missing one, or missing
            old = b[name][i]
            if kind == "text":
                b[name][i] = old + "z"
            elif old != old:
                b[name][i] = 1.5
            else:
                b[name][i] = draw(st.sampled_from([old + 1, old - 2.5, float("nan")]))
        changed[name] = sorted(rows)
    for name in a_only:
        a[name] = column("float", n_a)
    for name in b_only:
        b[name] = column("text", n_b)
    order_a = draw(st.permutations(shared + a_only))
    order_b = draw(st.permutations(shared + b_only))
    ta = pd.DataFrame({c: a[c] for c in order_a})
    tb = pd.DataFrame({c: b[c] for c in order_b})
    return ta, tb, changed, [c for c in order_a if c in a_only], [c for c in order_b if c in b_only]


def read_back(table: pd.DataFrame) -> pd.DataFrame:
    """The table as compare-reports reads it (a column of no rows reads as text)."""
    buffer = io.StringIO()
    table.to_csv(buffer, index=False)
    buffer.seek(0)
    return pd.read_csv(buffer)


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return (x != x and y != y) or x == y
    return str(x) == str(y)


def _by_key(ta: pd.DataFrame, tb: pd.DataFrame) -> list[str]:
    """What compare-reports must say of two tables of different rows, as line beginnings: the row
    counts; then, where the text columns name each row once (`row_keys`), the rows only one holds
    and each shared column differing in a row both hold, computed here row by row."""
    head = f"table1.csv: {len(ta)} rows vs {len(tb)} rows"
    keys = row_keys(ta, tb)
    if keys is None:
        return [head + " (no text columns name each row once: cells not compared)"]
    rows_a = {tuple(str(v) for v in r): i for i, r in enumerate(ta[keys].values.tolist())}
    rows_b = {tuple(str(v) for v in r): i for i, r in enumerate(tb[keys].values.tolist())}
    lines = [head]
    for side, mine, other in (("A", rows_a, rows_b), ("B", rows_b, rows_a)):
        only = [k for k in mine if k not in other]
        if only:
            lines.append(f"table1.csv: {len(only)} row(s) only in {side}, first ")
    for c in [c for c in ta.columns if c in tb.columns]:
        bad = [k for k in rows_a if k in rows_b and not _same(ta[c][rows_a[k]], tb[c][rows_b[k]])]
        if bad:
            first = ", ".join(f"{n}={v}" for n, v in zip(keys, bad[0]))
            lines.append(
                f"table1.csv: column {c!r} differs in {len(bad)} row(s), first row {first}: "
            )
    return lines


@settings(max_examples=60, deadline=None)
@given(_table_pairs())
def test_compare_reports_names_exactly_what_changed_between_two_tables(pair):
    """Over generated pairs of one table: every shared column whose cells changed is named with
    how many rows and the first (tables of different rows: by the text columns that name each
    row, with the rows only one holds), the columns only one holds are named, and the tables are
    called identical exactly when no shared cell changed and no column or row was added or
    dropped."""
    ta, tb, changed, only_a, only_b = pair
    with tempfile.TemporaryDirectory() as tmp:
        for side, t in (("a", ta), ("b", tb)):
            (Path(tmp) / side / "tables").mkdir(parents=True)
            t.to_csv(Path(tmp) / side / "tables" / "table1.csv", index=False)
        lines = compare_reports(Path(tmp) / "a", Path(tmp) / "b")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["compare-reports", str(Path(tmp) / "a"), str(Path(tmp) / "b")])
    want = []
    if only_a or only_b:
        want.append(f"table1.csv: columns only in A {only_a}, only in B {only_b}")
    if len(ta) != len(tb):
        want += _by_key(read_back(ta), read_back(tb))
    else:
        want += [
            f"table1.csv: column {c!r} differs in {len(rows)} row(s), first row {rows[0]}: "
            for c in ta.columns
            if (rows := changed.get(c))
        ]
    assert len(lines) == len(want) and all(
        line.startswith(w) for line, w in zip(lines, want, strict=True)
    ), (lines, want)
    nothing = not (only_a or only_b or any(changed.values())) and len(ta) == len(tb)
    assert (lines == []) == nothing
    said = out.getvalue()
    assert (code, "identical: tables of" in said) == ((0, True) if nothing else (1, False))
