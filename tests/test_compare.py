"""The csv-compare style tube (msl-reference.md 6.2)."""
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
    assert dy == pytest.approx(0.002 * 2.0, rel=1e-4)      # range of sin is 2
    assert np.all(lo <= ref["y"] - dy + 1e-15) and np.all(hi >= ref["y"] + dy - 1e-15)


def test_reference_passes_itself_and_an_offset_beyond_dy_fails():
    ref = ref_result()
    assert compare(ref, ref).passed
    shifted = Result(["time", "y"], np.column_stack([ref.time, ref["y"] + 0.0041]))
    report = compare(shifted, ref)
    assert not report.passed and report["y"].failures > 0


def test_time_shift_inside_dt_passes_and_outside_fails():
    ref = ref_result()
    t = ref.time[ref.time >= 0.05]  # the reference does not extend before its start time
    for shift, ok in ((0.009, True), (0.05, False)):
        test = Result(["time", "y"], np.column_stack([t, np.sin(2 * (t - shift))]))
        assert compare(test, ref).passed is ok


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
