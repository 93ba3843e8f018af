"""The study's table on disk (study.table), without FMUs: the files a table uses, the CSV journal
(rows appended and flushed, numbers as their shortest exact repr, read back exactly), the final CSV
or Parquet file, the description, and the refusals. Hand-written rows."""

import json
import math
import warnings

import pytest

from contactfmu.study.runs import StudyError
from contactfmu.study.table import FORMATS, STRINGS, Table, _cell

COLUMNS = ["run_id", "status", "error", "worker", "a.x", "max:mass.s"]


def row(run_id, x, m=None, status="ok", error="", worker="w1"):
    return {
        "run_id": run_id,
        "status": status,
        "error": error,
        "worker": worker,
        "a.x": x,
        "max:mass.s": m,
    }


def test_the_text_columns_and_formats():
    assert STRINGS == ("run_id", "status", "error", "worker")
    assert FORMATS == (".csv", ".parquet")


@pytest.mark.parametrize(
    "value, text",
    [
        ("ok", "ok"),
        ("", ""),
        (None, "nan"),
        (1, "1.0"),
        (True, "1.0"),
        (0.1, "0.1"),
        (-2.5e-300, "-2.5e-300"),
    ],
)
def test_cell(value, text):
    assert _cell(value) == text
    assert _cell(math.nan) == "nan" and _cell(-math.inf) == "-inf"


def test_the_files_of_a_csv_table(tmp_path):
    t = Table(str(tmp_path / "out" / "study.csv"), iter(COLUMNS))
    assert t.path == tmp_path / "out" / "study.csv" and t.columns == COLUMNS
    assert t.journal == t.path
    assert t.meta == tmp_path / "out" / "study.json"
    assert t.runs_dir == tmp_path / "out" / "study.runs"
    assert t._fh is None


def test_the_files_of_a_parquet_table(tmp_path):
    t = Table(tmp_path / "study.parquet", COLUMNS)
    assert t.journal == tmp_path / "study.parquet.partial.csv"
    assert t.meta == tmp_path / "study.json" and t.runs_dir == tmp_path / "study.runs"


@pytest.mark.parametrize(
    "name, what",
    [("study.txt", "'.txt'"), ("study", "'a file without suffix'"), ("s.CSV", "'.CSV'")],
)
def test_other_formats_are_refused(tmp_path, name, what):
    with pytest.raises(StudyError) as err:
        Table(tmp_path / name, COLUMNS)
    assert str(err.value) == (
        f"output file {tmp_path / name}: the table is written as .csv or .parquet, not {what}"
    )


def test_parquet_without_pyarrow_is_refused(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    with pytest.raises(StudyError) as err:
        Table(tmp_path / "s.parquet", COLUMNS)
    assert str(err.value) == (
        f"output file {tmp_path / 's.parquet'}: writing Parquet needs pyarrow (python -m pip "
        "install pyarrow); or write .csv"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__
    Table(tmp_path / "s.csv", COLUMNS)  # CSV needs no pyarrow


def test_csv_journal_is_appended_flushed_and_rewritten_in_run_order(tmp_path):
    t = Table(tmp_path / "deep" / "er" / "s.csv", COLUMNS)
    assert t.read() is None and t.read_meta() is None
    meta = {"model": "m", "runs": [1, 2]}
    t.start(meta, [row("r0", 0.1, 1 / 3)])
    assert t.meta.read_text() == json.dumps(meta, indent=1) + "\n"
    assert t.read_meta() == meta
    t.append({"run_id": "r2", "status": "error", "error": "x, y", "a.x": 2})  # missing: nan and ""
    # flushed: another reader sees the row before the table is closed
    assert t.path.read_text() == (
        "run_id,status,error,worker,a.x,max:mass.s\n"
        "r0,ok,,w1,0.1,0.3333333333333333\n"
        'r2,error,"x, y",nan,2.0,nan\n'
    )
    df = t.read()
    assert list(df.columns) == COLUMNS
    assert list(df["run_id"]) == ["r0", "r2"] and df["max:mass.s"][0] == 1 / 3
    # a missing text cell, written "nan", reads back empty
    assert df["worker"][1] == "" and df["error"][0] == "" and df["error"][1] == "x, y"
    assert math.isnan(df["max:mass.s"][1]) and df["a.x"][0] == 0.1
    t.finish([row("r2", 2.0), row("r0", 0.1, 1 / 3)], None)
    assert t._fh is None
    assert t.path.read_text() == (
        "run_id,status,error,worker,a.x,max:mass.s\n"
        "r2,ok,,w1,2.0,nan\n"
        "r0,ok,,w1,0.1,0.3333333333333333\n"
    )
    assert sorted(p.name for p in t.path.parent.iterdir()) == ["s.csv", "s.json"]  # no .tmp left
    t.close()  # twice is harmless
    assert t._fh is None


def test_read_keeps_the_last_row_of_a_run_and_text_cells_as_text(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.path.write_text(
        "run_id,status,error,worker,a.x,max:mass.s\n"
        "0001,ok,,,1e-3,0.1\n"
        "0002,error,nan,NA,2,nan\n"
        "0001,ok,,w2,1e-3,0.30000000000000004\n"
    )
    df = t.read()
    assert list(df["run_id"]) == ["0002", "0001"]  # a resumed run's last row counts
    assert list(df["status"]) == ["error", "ok"]
    # only "nan" is missing (pandas' other markers, like NA, are text); missing text is ""
    assert list(df["worker"]) == ["NA", "w2"] and list(df["error"]) == ["", ""]
    assert df["max:mass.s"].iloc[1] == 0.30000000000000004  # read back exactly
    assert math.isnan(df["max:mass.s"].iloc[0]) and df["a.x"].iloc[0] == 2.0


def test_read_refuses_a_table_with_other_columns(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.path.write_text("run_id,status,b\nr0,ok,1\n")
    with pytest.raises(StudyError) as err:
        t.read()
    assert str(err.value) == (
        f"{t.path} holds a table with other columns (run_id, status, b) than this study "
        f"({', '.join(COLUMNS)}): write to another file or start afresh (resume=False, --fresh)"
    )


def test_read_of_an_empty_file_or_a_header_only(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.path.write_text("")
    assert t.read() is None
    t.path.write_text(",".join(COLUMNS) + "\n")
    df = t.read()
    assert df is not None and len(df) == 0 and list(df.columns) == COLUMNS


def test_read_refuses_a_file_that_is_not_a_table(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.path.write_text('run_id,status\n"r0,ok\n')
    with pytest.raises(StudyError) as err:
        t.read()
    assert str(err.value).startswith(f"{t.path}: not a study table: ")
    assert err.value.__cause__ is None and err.value.__suppress_context__
    t.path.write_bytes(b"run_id,status\n\xff\xfe\x81,ok\n")
    with pytest.raises(StudyError, match="not a study table"):
        t.read()


def test_read_does_not_warn(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.path.write_text(",".join(COLUMNS) + "\nr0,ok,,w,0.1,0.2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas 3 deprecates float_precision
        assert list(t.read()["a.x"]) == [0.1]


def test_read_meta_refuses_an_unreadable_description(tmp_path):
    t = Table(tmp_path / "s.csv", COLUMNS)
    t.meta.write_text("{not json")
    with pytest.raises(StudyError) as err:
        t.read_meta()
    assert str(err.value).startswith(f"{t.meta}: unreadable study description: ")
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_parquet_table_journal_and_final_file(tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq

    t = Table(tmp_path / "s.parquet", COLUMNS)
    t.start({"m": 1}, [])
    t.append(row("r0", 0.1, 0.2))
    assert not t.path.exists()
    assert t.journal.read_text().splitlines()[1] == "r0,ok,,w1,0.1,0.2"
    assert list(t.read()["run_id"]) == ["r0"]
    frame = pd.DataFrame([row("r9", 0.0), row("r0", 0.1, 0.2)], columns=COLUMNS).iloc[1:]
    t.finish(None, frame)
    assert t._fh is None and not t.journal.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.parquet"]
    back = pd.read_parquet(t.path)
    assert list(back.columns) == COLUMNS and list(back["max:mass.s"]) == [0.2]
    assert list(back.index) == [0]  # pandas' index is not written: the file holds the columns only
    assert pq.read_schema(t.path).names == COLUMNS
    # resumed: the Parquet file and a new journal are read together, the last row of a run counts
    t2 = Table(tmp_path / "s.parquet", COLUMNS)
    t2.start({"m": 1}, [row("r0", 0.1, 0.2)])
    assert t2.path.exists()  # rows kept: the file stays until the end
    t2.append(row("r1", 0.3, 0.4))
    t2.append(row("r0", 0.1, 0.5))
    df = t2.read()
    assert list(df["run_id"]) == ["r1", "r0"] and list(df["max:mass.s"]) == [0.4, 0.5]
    t2.close()
    # a fresh start without kept rows removes the old Parquet file
    t3 = Table(tmp_path / "s.parquet", COLUMNS)
    t3.start({"m": 2}, [])
    assert not t3.path.exists() and t3.read() is not None and len(t3.read()) == 0
    t3.close()


def test_parquet_with_other_columns_is_refused_naming_the_file(tmp_path):
    import pandas as pd

    t = Table(tmp_path / "s.parquet", COLUMNS)
    pd.DataFrame({"run_id": ["r0"], "b": [1.0]}).to_parquet(t.path)
    with pytest.raises(
        StudyError, match=rf"^{t.path} holds a table with other columns \(run_id, b\)"
    ):
        t.read()


def test_parquet_finish_without_a_journal(tmp_path):
    import pandas as pd

    t = Table(tmp_path / "s.parquet", COLUMNS)
    t.finish(None, pd.DataFrame([row("r0", 1.0, 2.0)], columns=COLUMNS))
    assert list(pd.read_parquet(t.path)["run_id"]) == ["r0"] and not t.journal.exists()


def test_read_of_parquet_and_journal_labels_each_row_once(tmp_path):
    import pandas as pd

    t = Table(tmp_path / "s.parquet", COLUMNS)
    pd.DataFrame([row("r0", 0.0, 1.0), row("r1", 1.0, 2.0)], columns=COLUMNS).to_parquet(
        t.path, index=False
    )
    t.journal.write_text(",".join(COLUMNS) + "\nr2,ok,,w1,2.0,3.0\n")
    df = t.read()
    assert list(df["run_id"]) == ["r0", "r1", "r2"] and list(df["max:mass.s"]) == [1.0, 2.0, 3.0]
    assert df.index.is_unique and list(df.index) == [0, 1, 2]  # df.loc[k] is one row
