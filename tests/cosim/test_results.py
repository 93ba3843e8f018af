"""Result and the cross-check CSV (cosim.results): the columns, the structured array, selection and
renaming, the CSV written (quoted header, shortest exact numbers) and read back, and every reason
read_csv gives for a file that is not a result. Hand-written values, no FMU."""

import numpy as np
import pytest

from contactfmu.cosim.results import CsvError, Result, _is_number, read_csv


def three():
    return Result(("time", "s", "v"), [[0, 1, 2], [0.5, 3, 4], [1, 5, 6]])


def test_result_columns_time_and_structured_array():
    r = three()
    assert r.names == ["time", "s", "v"] and isinstance(r.names, list)
    assert r.values.dtype == np.float64 and r.values.shape == (3, 3)
    assert r.steps is None and r.interpolated is None
    assert list(r.time) == [0.0, 0.5, 1.0]
    assert list(r["s"]) == [1.0, 3.0, 5.0] and list(r["v"]) == [2.0, 4.0, 6.0]
    assert r.data.dtype.names == ("time", "s", "v")
    assert all(r.data.dtype[n] == np.float64 for n in r.names)
    assert list(r.data["v"]) == [2.0, 4.0, 6.0] and list(r.data["time"]) == [0.0, 0.5, 1.0]
    assert r.data.v[1] == 4.0  # a record array: the columns are attributes too
    assert "s" in r and "time" in r and "x" not in r


def test_result_of_integers_holds_floats():
    r = Result(["time", "n"], [[0, 1], [1, 3]])
    assert r.values.dtype == np.float64 and r["n"].dtype == np.float64


def test_result_without_rows_has_an_empty_structured_array():
    r = Result(["time", "y"], np.zeros((0, 2)))
    assert r.data.shape == (0,) and r.data.dtype.names == ("time", "y")
    assert all(r.data.dtype[n] == np.float64 for n in ("time", "y"))
    assert len(r.time) == 0 and len(r["y"]) == 0


def test_result_unknown_column_names_the_columns():
    with pytest.raises(KeyError) as err:
        three()["x"]
    assert err.value.args[0] == "no column 'x'; columns: time, s, v"


@pytest.mark.parametrize(
    "names, values, message",
    [
        (["time", "y"], np.zeros((2, 3)), "2 names for data of shape (2, 3)"),
        (["time", "y", "z"], np.zeros((2, 2)), "3 names for data of shape (2, 2)"),
        (["time", "y"], np.zeros(2), "2 names for data of shape (2,)"),
        (["time"], np.zeros((1, 1, 1)), "1 names for data of shape (1, 1, 1)"),
        (["t", "y"], np.zeros((2, 2)), "the first column must be 'time'"),
    ],
)
def test_result_refuses_a_wrong_shape_or_first_column(names, values, message):
    with pytest.raises(ValueError) as err:
        Result(names, values)
    assert str(err.value) == message


def test_select_keeps_time_and_renames():
    r = three()
    sub = r.select(["v", "s"], rename={"v": "speed"})
    assert sub.names == ["time", "speed", "s"]
    assert sub.values.tolist() == [[0.0, 2.0, 1.0], [0.5, 4.0, 3.0], [1.0, 6.0, 5.0]]
    plain = r.select(["v"])
    assert plain.names == ["time", "v"] and plain.values.tolist() == [[0, 2], [0.5, 4], [1, 6]]


def test_to_csv_writes_the_cross_check_format_exactly(tmp_path):
    r = Result(["time", "a.s"], [[0.0, 0.1], [1e-3, -2.0], [1.0, np.nan], [2.0, 1 / 3]])
    path = tmp_path / "deep" / "er" / "out.csv"
    assert r.to_csv(path) == path
    assert path.read_bytes() == (
        b'"time","a.s"\n0.0,0.1\n0.001,-2.0\n1.0,nan\n2.0,0.3333333333333333\n'
    )
    back = read_csv(path)
    assert back.names == ["time", "a.s"]
    assert back["a.s"][3] == 1 / 3 and back.time[1] == 1e-3 and np.isnan(back["a.s"][2])


def test_to_csv_into_an_existing_folder_with_a_string_path(tmp_path):
    path = str(tmp_path / "r.csv")
    assert three().to_csv(path) == path
    assert read_csv(path).values.tolist() == three().values.tolist()


def test_read_csv_header_stripped_time_renamed_blank_lines_skipped(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("TIME, y ,z\n0,1,2\n\n1, 3,4e-1\n")
    r = read_csv(path)
    assert r.names == ["time", "y", "z"]
    assert r.values.tolist() == [[0.0, 1.0, 2.0], [1.0, 3.0, 0.4]]


def test_read_csv_keeps_infinite_values_unless_finite(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('"time","y"\n0,-inf\n1,2\n')
    assert read_csv(path)["y"].tolist() == [-np.inf, 2.0]
    with pytest.raises(CsvError) as err:
        read_csv(path, finite=True)
    assert err.value.reason == "line 2, column 'y': '-inf' is not finite"
    assert read_csv(tmp_path / "r.csv", finite=False)["y"][0] == -np.inf


@pytest.mark.parametrize(
    "text, finite, reason",
    [
        ("", False, "empty file"),
        ("\n0,1\n", False, 'line 1 is empty (expected a header line starting with "time")'),
        ('"time","y"\n', False, "no data rows (only a header line)"),
        ('"time","y"\n\n\n', False, "no data rows (only a header line)"),
        ('"x","time"\n0,1\n', False, "first column is 'x', expected 'time'"),
        ('"time","y"\n0,1,2\n', False, "line 2: 3 values, the header has 2 columns"),
        ('"time","y","z"\n0,1,2\n\n1,2\n', False, "line 4: 2 values, the header has 3 columns"),
        ('"time","y","z"\n0,1,2\n1,x,y\n', False, "line 3, column 'y': 'x' is not a number"),
        ('"time","y","z"\n0,1, z \n', False, "line 2, column 'z': 'z' is not a number"),
        ('"time","y","z"\n0,1,2\n1,inf,x\n', True, "line 3, column 'y': 'inf' is not finite"),
        ('"time","y","z"\n0,1,2\n1,2,nan\n', True, "line 3, column 'z': 'nan' is not finite"),
    ],
)
def test_read_csv_says_why_a_file_is_not_a_result(tmp_path, text, finite, reason):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(CsvError) as err:
        read_csv(path, finite=finite)
    assert err.value.reason == reason and err.value.path == path
    assert str(err.value) == f"{path}: {reason}" and isinstance(err.value, ValueError)


def test_read_csv_refuses_a_binary_file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b'"time","y"\n0,1\n\xff\xfe\x00\x81\n')
    with pytest.raises(CsvError) as err:
        read_csv(path)
    assert err.value.reason == "not a text file" and err.value.__suppress_context__
    assert err.value.path == path and str(err.value) == f"{path}: not a text file"


def test_read_csv_reports_the_csv_parsers_error_with_its_line(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text('"time","y"\n0,1\n1,' + "9" * 140000 + "\n")  # beyond csv.field_size_limit()
    with pytest.raises(CsvError) as err:
        read_csv(path)
    assert err.value.reason == "line 3: field larger than field limit (131072)"
    assert err.value.path == path
    assert err.value.__cause__ is None and err.value.__suppress_context__


@pytest.mark.parametrize(
    "text, finite, expected",
    [
        ("1.5", True, True),
        ("1.5", False, True),
        (" -2e3 ", True, True),
        ("nan", True, False),
        ("nan", False, True),
        ("-inf", True, False),
        ("inf", False, True),
        ("x", False, False),
        ("x", True, False),
        ("", False, False),
    ],
)
def test_is_number(text, finite, expected):
    assert _is_number(text, finite) is expected
