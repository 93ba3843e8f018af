"""The csv-compare style tube, the test criterion of src/contactfmu/refdata/README.md."""

import numpy as np
import pytest

from contactfmu.cosim import Result, compare
from contactfmu.cosim.compare import tube_bounds


def ref_result():
    t = np.linspace(0.0, 5.0, 1001)
    return Result(["time", "y"], np.column_stack([t, np.sin(2 * t)]))


def test_tube_sizes_follow_csv_compare_legacy_bases():
    ref = ref_result()
    lo, hi, dt, dy = tube_bounds(ref.time, ref["y"], ref.time)
    assert dt == pytest.approx(0.002 * 5.0)
    assert dy == pytest.approx(0.002 * 2.0, rel=1e-4)  # range of sin is 2
    assert np.all(lo <= ref["y"] - dy + 1e-15) and np.all(hi >= ref["y"] + dy - 1e-15)


def test_reference_passes_itself_and_an_offset_beyond_dy_fails():
    ref = ref_result()
    assert compare(ref, ref).passed
    shifted = Result(["time", "y"], np.column_stack([ref.time, ref["y"] + 0.0041]))
    report = compare(shifted, ref)
    assert not report.passed and report["y"].failures > 0


def test_time_shift_inside_dt_passes_and_outside_fails():
    ref = ref_result()
    # the reference does not extend before its start time: the result starts a little later,
    # inside dt (0.01 s), so that it still covers the reference's time range
    t = ref.time[ref.time >= 0.008]
    for shift, ok in ((0.009, True), (0.05, False)):
        test = Result(["time", "y"], np.column_stack([t, np.sin(2 * (t - shift))]))
        report = compare(test, ref)
        assert report.passed is ok and report.coverage == ""
        assert (report["y"].failures > 0) is not ok


def test_vertical_jump_rows_are_part_of_the_reference():
    t = np.array([0.0, 1.0, 1.0, 2.0])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    ref = Result(["time", "y"], np.column_stack([t, y]))
    # a result that jumps 0.004 s late lies inside the tube (dt = 0.004 s)
    tt = np.array([0.0, 0.5, 1.0, 1.0035, 1.0036, 1.5, 2.0])
    yy = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    assert compare(Result(["time", "y"], np.column_stack([tt, yy])), ref).passed
    yy[1] = 0.5
    assert not compare(Result(["time", "y"], np.column_stack([tt, yy])), ref).passed


def test_nan_fails_and_missing_signals_are_reported():
    ref = Result(["time", "y", "z"], np.column_stack([np.arange(3.0), np.zeros(3), np.ones(3)]))
    test = Result(["time", "y"], np.column_stack([np.arange(3.0), [0.0, np.nan, 0.0]]))
    report = compare(test, ref)
    assert not report["y"].passed and report.missing == ("z",)


def test_a_result_must_cover_the_reference_time_range():
    ref = ref_result()  # 0 .. 5 s, dt = 0.01 s
    for keep in (ref.time <= 0.5, ref.time >= 1.0):  # ends early / starts late
        part = Result(["time", "y"], ref.values[keep])
        report = compare(part, ref)
        assert not report.passed and not report["y"].passed
        assert (
            report["y"].failures == 0 and report["y"].worst == 0.0
        )  # the values are inside the tube
        lo, hi = part.time.min(), part.time.max()
        assert report.coverage.startswith(f"result covers {lo:g} .. {hi:g} s, reference 0 .. 5 s")
        assert report.coverage in str(report) and "y: FAILED" in str(report)


def test_end_times_within_dt_or_float_noise_cover_the_reference():
    ref = ref_result()
    noisy = Result(["time", "y"], np.column_stack([ref.time * (1 - 1e-15), ref["y"]]))
    assert noisy.time[-1] < 5.0 and compare(noisy, ref).passed
    inside = Result(["time", "y"], ref.values[ref.time <= 4.995])  # 5 ms short, dt = 10 ms
    report = compare(inside, ref)
    assert report.passed and report.coverage == "", str(report)
    longer = Result(
        ["time", "y"],
        np.column_stack([np.linspace(-1, 6, 1401), np.sin(2 * np.linspace(-1, 6, 1401))]),
    )
    assert compare(longer, ref).passed


@pytest.mark.parametrize("tol", [0.0, -1.0, float("nan"), float("inf")])
def test_compare_rejects_a_bad_tolerance(tol):
    with pytest.raises(ValueError, match="tol must be a finite number > 0"):
        compare(ref_result(), ref_result(), tol=tol)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty file"),
        ('"time","y"\n', "no data rows (only a header line)"),
        ('"time","y"\n0,1\n\n1,x\n', "line 4, column 'y': 'x' is not a number"),
        ('"time","y"\n0,1\n1\n', "line 3: 1 values, the header has 2 columns"),
        ('"s","y"\n0,1\n', "first column is 's', expected 'time'"),
    ],
)
def test_read_csv_says_why_a_file_is_not_a_result(tmp_path, text, reason):
    from contactfmu.cosim.results import CsvError, read_csv

    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(CsvError) as err:
        read_csv(path)
    assert err.value.reason == reason and str(err.value) == f"{path}: {reason}"
    assert isinstance(err.value, ValueError)


def test_read_csv_reads_nan_unless_finite_is_asked(tmp_path):
    from contactfmu.cosim.results import CsvError, read_csv

    path = tmp_path / "r.csv"
    path.write_text('"time","y"\n0,1\n1,nan\n')
    assert np.isnan(read_csv(path)["y"][1])
    with pytest.raises(CsvError, match="line 3, column 'y': 'nan' is not finite"):
        read_csv(path, finite=True)


T = np.linspace(0.0, 2.0, 201)


def _ramp(a, b):
    """a until 0.5 s, linear to b at 1.5 s, b until 2 s (plateaus longer than dt = 4 ms)."""
    return np.interp(T, [0.0, 0.5, 1.5, 2.0], [a, a, b, b])


@pytest.mark.parametrize(
    "y, dy",
    [
        # rising from 1 to 3: range 2, |y_min| = 1, |y_max| = 3: dy = 2e-3*max(2, 1) = 4e-3
        (_ramp(1.0, 3.0), 4e-3),
        # falling from -1 to -5: range 4, |y_min| = 5, |y_max| = 1: dy = 2e-3*5 = 1e-2
        (_ramp(-1.0, -5.0), 1e-2),
        # rising from 10 to 11: range 1, |y_min| = 10 (|y_max| = 11): dy = 2e-3*10 = 2e-2
        (_ramp(10.0, 11.0), 2e-2),
    ],
    ids=["rising", "falling", "offset"],
)
def test_tube_height_takes_the_minimum_not_the_maximum(y, dy):
    """csv-compare's legacy base: baseY = max(y_max - y_min, |y_min|, floor); a rising and a falling
    reference where |y_min| and |y_max| differ, dy computed by hand. On the plateaus the tube is
    y +- dy (on the ramp the time tolerance widens it): a result 0.9*dy off passes, 1.1*dy off
    fails."""
    ref = Result(["time", "y"], np.column_stack([T, y]))
    lo, hi, dt, dy_tube = tube_bounds(T, y, T)
    assert dy_tube == pytest.approx(dy, rel=1e-12) and dt == pytest.approx(4e-3)
    flat = (T <= 0.49) | (T >= 1.51)
    assert np.allclose(hi[flat] - y[flat], dy, rtol=1e-9, atol=0)
    assert np.allclose(y[flat] - lo[flat], dy, rtol=1e-9, atol=0)
    for offset, ok in ((0.9, True), (-0.9, True), (1.1, False), (-1.1, False)):
        shifted = Result(["time", "y"], np.column_stack([T, y + offset * dy]))
        report = compare(shifted, ref)
        assert report.passed is ok, (offset, str(report))
        assert report["y"].dy == pytest.approx(dy, rel=1e-12)
        assert (report["y"].failures == 0) if ok else (report["y"].failures >= flat.sum())
