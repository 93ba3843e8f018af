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


# ---- the tube against hand-computed bounds ----------------------------------------------------
# tol = 1/16 and references spanning 4 s make dt = 0.25 s exactly (binary fractions), so window
# ends that fall on reference points are exact


def _res(t, *columns, names=None):
    names = names or ["time"] + [f"y{i}" if i else "y" for i in range(len(columns))]
    return Result(names, np.column_stack([np.asarray(t, float), *columns]))


def _brute_bounds(t_ref, y_ref, t, dt, dy):
    """The documented tube, by definition: min/max of the piecewise-linear reference over
    [t - dt, t + dt] (its values at the window ends and every reference point inside, the
    reference clipped at its ends), minus/plus dy."""
    lower, upper = [], []
    for x in t:
        vals = [np.interp(x - dt, t_ref, y_ref), np.interp(x + dt, t_ref, y_ref)]
        vals += [v for s, v in zip(t_ref, y_ref) if x - dt <= s <= x + dt]
        lower.append(min(vals) - dy)
        upper.append(max(vals) + dy)
    return np.array(lower), np.array(upper)


@pytest.mark.parametrize(
    "t_ref, tol, dt",
    [
        ([0.0, 4.0], 1 / 16, 0.25),  # range 4
        ([10.0, 11.0], 2e-3, 2e-3 * 10.0),  # |t_min| = 10 beats the range 1
        ([-3.0, -1.0], 2e-3, 2e-3 * 3.0),  # negative start: |t_min| = 3 beats the range 2
        ([-1.0, 3.0], 2e-3, 2e-3 * 4.0),  # range 4 beats |t_min| = 1
        ([0.0, 0.0], 2e-3, 2e-3 * 1e-12),  # a single time: the floor 1e-12 s
    ],
    ids=["range", "offset-start", "negative-start", "range-over-negative-start", "one-time"],
)
def test_tube_width_dt_follows_the_legacy_base(t_ref, tol, dt):
    """baseX = max(t_max - t_min, |t_min|, 1e-12), dt = tol*baseX."""
    _, _, dt_tube, _ = tube_bounds(t_ref, [1.0, 1.0], t_ref, tol)
    assert dt_tube == pytest.approx(dt, rel=1e-12, abs=0)


@pytest.mark.parametrize(
    "y, tol, floor, dy",
    [
        ([2.0, 2.0], 2e-3, 1e-12, 2e-3 * 2.0),  # constant: |y_min|
        ([-5.0, -5.0], 2e-3, 1e-12, 2e-3 * 5.0),  # constant negative: |y_min|
        ([0.0, 0.0], 2e-3, 1e-12, 2e-3 * 1e-12),  # zero: the floor
        ([0.0, 0.0], 2e-3, 0.5, 2e-3 * 0.5),  # zero: a floor given
        ([0.0, 1e-3], 2e-3, 0.5, 2e-3 * 0.5),  # the floor beats a small range
        ([3.0, -1.0], 2e-3, 1e-12, 2e-3 * 4.0),  # falling: range 4 > |y_max| = 3 > |y_min| = 1
        ([-1.0, 2.0], 1e-2, 1e-12, 1e-2 * 3.0),  # rising through 0, another tol
        ([-6.0, -2.0], 1e-2, 1e-12, 1e-2 * 6.0),  # rising negative: |y_min| = 6 > range 4
        ([1.0, 7.0], 1e-2, 1e-12, 1e-2 * 6.0),  # rising: range 6 > |y_min| = 1 (|y_max| = 7)
        ([7.0, 3.0], 1e-2, 1e-12, 1e-2 * 4.0),  # falling: range 4 > |y_min| = 3 (|y_max| = 7)
        ([9.0, 5.0], 1e-2, 1e-12, 1e-2 * 5.0),  # falling: |y_min| = 5 > range 4 (|y_max| = 9)
    ],
    ids=[
        "constant",
        "constant-negative",
        "zero-floor",
        "zero-given-floor",
        "floor-over-range",
        "falling-through-0",
        "rising-through-0",
        "rising-negative",
        "rising",
        "falling",
        "falling-offset",
    ],
)
def test_tube_height_dy_follows_the_legacy_base(y, tol, floor, dy):
    """baseY = max(y_max - y_min, |y_min|, floor), dy = tol*baseY; the bounds of a constant
    reference are y -+ dy."""
    lo, hi, _, dy_tube = tube_bounds([0.0, 4.0], y, [0.0, 2.0], tol, floor)
    assert dy_tube == pytest.approx(dy, rel=1e-12, abs=0)
    if y[0] == y[1]:
        np.testing.assert_allclose(lo, y[0] - dy, rtol=1e-12, atol=0)
        np.testing.assert_allclose(hi, y[0] + dy, rtol=1e-12, atol=0)


def test_tube_bounds_of_a_rising_ramp_by_hand():
    """y = t on 0 .. 4 s, tol = 1/16: dt = 0.25, dy = 0.25 (range 4). At t the tube is
    [t - dt - dy, t + dt + dy], clipped at the reference's ends (0 and 4)."""
    t = np.array([0.0, 0.1, 1.0, 2.0, 3.9, 4.0])
    lo, hi, dt, dy = tube_bounds([0.0, 4.0], [0.0, 4.0], t, 1 / 16)
    assert (dt, dy) == (0.25, 0.25)
    np.testing.assert_allclose(lo, [-0.25, -0.25, 0.5, 1.5, 3.4, 3.5], rtol=0, atol=1e-15)
    np.testing.assert_allclose(hi, [0.5, 0.6, 1.5, 2.5, 4.25, 4.25], rtol=0, atol=1e-15)


def test_tube_bounds_of_a_falling_ramp_by_hand():
    """y = 8 - 2t on 0 .. 4 s (8 .. 0), tol = 1/16: dt = 0.25, dy = 0.5 (range 8; |y_min| = 0,
    |y_max| = 8 would give the same: see the next reference). At t the window reaches 2*dt in y."""
    t = np.array([0.0, 1.0, 2.0, 3.8, 4.0])
    lo, hi, dt, dy = tube_bounds([0.0, 4.0], [8.0, 0.0], t, 1 / 16)
    assert (dt, dy) == (0.25, 0.5)
    # lower(t) = 8 - 2*(t + dt) - dy (clipped at 0), upper(t) = 8 - 2*(t - dt) + dy (clipped at 8)
    np.testing.assert_allclose(lo, [7.0, 5.0, 3.0, -0.5, -0.5], rtol=0, atol=1e-15)
    np.testing.assert_allclose(hi, [8.5, 7.0, 5.0, 1.4, 1.0], rtol=0, atol=1e-15)


def test_tube_bounds_of_a_falling_offset_reference_use_its_minimum():
    """y from 12 down to 10 over 0 .. 4 s: range 2, |y_min| = 10, |y_max| = 12: dy = tol*10."""
    lo, hi, dt, dy = tube_bounds([0.0, 4.0], [12.0, 10.0], [0.0, 4.0], 1 / 16)
    assert dy == 10 / 16
    # at t = 0: window 0 .. 0.25, y from 12 to 11.875; at t = 4: window 3.75 .. 4, 10.125 .. 10
    np.testing.assert_allclose(lo, [11.875 - dy, 10.0 - dy], rtol=0, atol=1e-15)
    np.testing.assert_allclose(hi, [12.0 + dy, 10.125 + dy], rtol=0, atol=1e-15)


def test_tube_sees_both_values_of_an_event_row_at_each_end_of_the_window():
    """Event rows (duplicated time stamps) at exactly t - dt and t + dt: the rectangles around
    both values reach t, so the tube at t spans them all."""
    t_ref = [0.0, 0.75, 0.75, 1.25, 1.25, 4.0]
    y_ref = [5.0, 5.0, 0.0, 0.0, 10.0, 10.0]
    lo, hi, dt, dy = tube_bounds(t_ref, y_ref, [1.0, 1.0 + 2**-20, 1.0 - 2**-20], 1 / 16)
    assert (dt, dy) == (0.25, 10 / 16)
    assert lo[0] == 0.0 - dy and hi[0] == 10.0 + dy
    # just later, the jump at 0.75 (5 -> 0) leaves the window: the tube's bottom stays 0, but
    # 5 no longer raises it; 10 at 1.25 + 2**-20 is still in the window (clipped interpolation)
    assert lo[1] == -dy and hi[1] == 10.0 + dy
    # just earlier, the jump at 1.25 (0 -> 10) leaves the window: the top is 5 (at 0.75)
    assert lo[2] == -dy and hi[2] == 5.0 + dy


def test_tube_sees_the_first_value_of_an_event_row_at_the_window_end():
    """y rises from 0 (t = 0.5) to 10 at t = 1.25, where it drops to 0 (an event row). The
    rectangle around (1.25, 10) reaches t = 1.0 (dt = 0.25): the tube there tops at 10 + dy,
    though the reference interpolated at the window's end (1.25) is the row after the drop, 0."""
    t_ref = [0.0, 0.5, 1.25, 1.25, 4.0]
    y_ref = [0.0, 0.0, 10.0, 0.0, 0.0]
    lo, hi, dt, dy = tube_bounds(t_ref, y_ref, [1.0, 1.0 - 2**-20], 1 / 16)
    assert (dt, dy) == (0.25, 10 / 16)
    assert hi[0] == 10.0 + dy and lo[0] == 0.0 - dy
    # just earlier the row leaves the window: the top is the rising reference at 1.25 - 2**-20
    assert hi[1] == pytest.approx(10.0 * (0.75 - 2**-20) / 0.75 + dy, rel=1e-15)


def test_tube_of_a_boolean_signal():
    """A discrete (Boolean) signal is compared as the numbers 0 and 1: dy = tol*1."""
    t = np.array([0.0, 1.0, 2.0, 4.0])
    lo, hi, dt, dy = tube_bounds(t, np.array([False, False, True, True]), [0.0, 4.0], 1 / 16)
    assert (dt, dy) == (0.25, 1 / 16)
    np.testing.assert_array_equal(lo, [-1 / 16, 1 - 1 / 16])
    np.testing.assert_array_equal(hi, [1 / 16, 1 + 1 / 16])


@pytest.mark.parametrize("n", [2, 3, 5, 17, 64, 100, 257])
def test_tube_bounds_equal_the_definition_on_random_references(n):
    """Windows holding 0 .. n points (every level of the range-extrema tables), against the
    tube computed by its definition."""
    rng = np.random.default_rng(n)
    t_ref = np.sort(rng.uniform(0.0, 4.0, n))
    t_ref[0], t_ref[-1] = 0.0, 4.0
    if n > 4:
        t_ref[n // 2] = t_ref[n // 2 + 1]  # an event row
    y_ref = rng.normal(size=n)
    t = np.concatenate([rng.uniform(-0.5, 4.5, 300), t_ref])
    for tol in (1e-3, 1 / 16, 0.2, 0.6):
        lo, hi, dt, dy = tube_bounds(t_ref, y_ref, t, tol)
        base = max(y_ref.max() - y_ref.min(), abs(y_ref.min()))
        assert dt == pytest.approx(tol * 4.0) and dy == pytest.approx(tol * base)
        lo_b, hi_b = _brute_bounds(t_ref, y_ref, t, dt, dy)
        np.testing.assert_allclose(lo, lo_b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(hi, hi_b, rtol=0, atol=1e-12)


# ---- compare(): what is checked and what the report says --------------------------------------


def _ref4(y=None):
    """Reference 0 .. 4 s on a 0.25 s grid (y = 1 unless given): with tol = 1/16, dt = 0.25 s."""
    t = np.arange(17) * 0.25
    return _res(t, np.ones_like(t) if y is None else y(t))


def test_compare_reports_the_worst_point_in_units_of_dy():
    ref = _ref4()  # y = 1: dy = 1/16
    t = np.arange(17) * 0.25
    y = np.ones_like(t)
    y[2] = 1 - 1.5 / 16  # 0.5 dy below the tube at t = 0.5
    y[8] = 1 + 3 / 16  # 2 dy above the tube at t = 2
    y[12] = 1 + 0.5 / 16  # inside (0.5 dy off)
    report = compare(_res(t, y), ref, tol=1 / 16)
    r = report["y"]
    assert not r.passed and not report.passed
    assert (r.points, r.failures) == (17, 2)
    assert r.worst == pytest.approx(2.0, rel=1e-12) and r.worst_time == 2.0
    assert (r.dt, r.dy) == (0.25, 1 / 16) and r.coverage == "" and report.coverage == ""
    assert str(r) == (
        "y: FAILED at 2 of 17 points; worst 2 dy outside at t = 2 s (dt = 0.25 s, dy = 0.0625)"
    )


def test_compare_counts_points_just_outside_and_passes_points_on_the_tube():
    ref = _ref4()
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    on = np.array([1.0, 1 + 1 / 16, 1 - 1 / 16, 1.0, 1.0])  # exactly on the bounds: inside
    r = compare(_res(t, on), ref, tol=1 / 16)["y"]
    assert r.passed and (r.failures, r.worst, r.points) == (0, 0.0, 5) and np.isnan(r.worst_time)
    above = on.copy()
    above[1] = np.nextafter(1 + 1 / 16, 2.0)
    r = compare(_res(t, above), ref, tol=1 / 16)["y"]
    assert not r.passed and r.failures == 1 and r.worst_time == 1.0 and 0 < r.worst < 1e-14


def test_compare_nan_is_the_worst_point():
    ref = _ref4()
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([1.0, 5.0, np.nan, 1.0, 1.0])
    r = compare(_res(t, y), ref, tol=1 / 16)["y"]
    assert not r.passed and r.failures == 2 and r.worst_time == 2.0


def test_compare_checks_the_result_at_its_own_times_inside_the_reference_range():
    """Result rows before and after the reference's range are not checked (nor counted)."""
    ref = _ref4()
    t = np.array([-1.0, -1e-13, 0.0, 2.0, 4.0, 4.0 + 1e-13, 5.0])
    y = np.array([100.0, 1.0, 1.0, 1.0, 1.0, 1.0, -100.0])
    r = compare(_res(t, y), ref, tol=1 / 16)["y"]
    assert r.passed and r.points == 5
    y[1] = 100.0  # 1e-13 s before the reference's start: float noise, checked
    r = compare(_res(t, y), ref, tol=1 / 16)["y"]
    assert not r.passed and r.failures == 1 and r.worst_time == -1e-13 and r.points == 5


def test_compare_checks_rows_up_to_1e_12_s_beyond_the_reference_range():
    """Rows at exactly t_min - 1e-12 and t_max + 1e-12 (float noise of the end times) are
    checked; rows further out are not."""
    ref = _ref4()
    t = np.array([0.0 - 1e-12, 2.0, 4.0 + 1e-12])
    for i in (0, 2):
        y = np.ones(3)
        y[i] = 5.0
        r = compare(_res(t, y), ref, tol=1 / 16)["y"]
        assert (r.points, r.failures, r.worst_time) == (3, 1, t[i])
    t_out = np.array([np.nextafter(-1e-12, -1.0), 0.0, 2.0, 4.0, np.nextafter(4.0 + 1e-12, 5.0)])
    r = compare(_res(t_out, [5.0, 1.0, 1.0, 1.0, 5.0]), ref, tol=1 / 16)["y"]
    assert r.passed and r.points == 3


@pytest.mark.parametrize(
    "t_ref, start, end, covers",
    [
        # 10 .. 11 s: dt = tol*|t_min| = 0.625 (not tol*range = 0.0625)
        ([10.0, 11.0], 10.5, 11.0, True),
        ([10.0, 11.0], 10.0, 10.5, True),
        ([10.0, 11.0], 10.75, 11.0, False),
        # 0 .. 0.5 s: dt = tol*0.5 = 1/32
        ([0.0, 0.5], 1 / 32, 0.5, True),
        ([0.0, 0.5], 0.0625, 0.5, False),
        ([0.0, 0.5], 0.0, 0.5 - 0.0625, False),
        # a reference of one instant, 0 s: dt = tol*1e-12 (the floor), 1/16e-12
        ([0.0, 0.0], 0.5e-13, 0.5e-13, True),
        ([0.0, 0.0], 1e-13, 1e-13, False),
    ],
)
def test_compare_coverage_gap_uses_the_legacy_time_base(t_ref, start, end, covers):
    ref = _res(t_ref, [1.0, 1.0])
    report = compare(_res([start, end], [1.0, 1.0]), ref, tol=1 / 16)
    assert (report.coverage == "") is covers and report.passed is covers


def test_compare_follows_a_rising_reference_in_time():
    """y = t on 0 .. 4 s, tol = 1/16: dt = dy = 0.25, the tube is t -+ 0.5 inside and ends at
    -0.25 and 4.25 (the reference clipped at its ends). A result on a finer grid 0.45 above
    leaves it only after t = 3.8 (at 3.875 by 0.075 and at 4 by 0.2 = 0.8 dy); 0.45 below
    only before t = 0.2, symmetrically."""
    ref = _ref4(lambda t: t)
    t = np.arange(33) * 0.125
    above = compare(_res(t, t + 0.45), ref, tol=1 / 16)["y"]
    assert (above.failures, above.worst_time) == (2, 4.0)
    assert above.worst == pytest.approx(0.8, rel=1e-12)
    below = compare(_res(t, t - 0.45), ref, tol=1 / 16)["y"]
    assert (below.failures, below.worst_time) == (2, 0.0)
    assert below.worst == pytest.approx(0.8, rel=1e-12)
    inside = compare(_res(t, np.clip(t + 0.45, None, 4.25)), ref, tol=1 / 16)
    assert inside.passed and inside["y"].failures == 0


@pytest.mark.parametrize(
    "start, end, covers",
    [
        (0.25, 3.75, True),  # both gaps exactly dt
        (np.nextafter(0.25, 1.0), 4.0, False),  # starts just over dt late
        (0.0, np.nextafter(3.75, 0.0), False),  # ends just over dt early
        (-1.0, 5.0, True),  # beyond both ends
    ],
)
def test_compare_coverage_gap_is_the_tube_dt(start, end, covers):
    ref = _ref4()
    t = np.array([start, 2.0, end])
    report = compare(_res(t, np.ones(3)), ref, tol=1 / 16)
    assert report.passed is covers and report["y"].passed is covers
    if covers:
        assert report.coverage == "" and report["y"].coverage == ""
    else:
        text = f"result covers {start:.6g} .. {end:.6g} s, reference 0 .. 4 s (allowed gap dt = 0.25 s)"
        assert report.coverage == text and report["y"].coverage == text
        assert str(report["y"]) == f"y: FAILED: {text}; inside the tube at its 3 points " + (
            "(dt = 0.25 s, dy = 0.0625)"
        )


def test_compare_coverage_and_failures_are_both_reported():
    ref = _ref4()
    t = np.array([0.0, 1.0, 2.0])
    r = compare(_res(t, [1.0, 2.0, 1.0]), ref, tol=1 / 16)["y"]
    assert r.coverage == ("result covers 0 .. 2 s, reference 0 .. 4 s (allowed gap dt = 0.25 s)")
    assert str(r) == (
        f"y: FAILED: {r.coverage}; at 1 of 3 points; worst 15 dy outside at t = 1 s "
        "(dt = 0.25 s, dy = 0.0625)"
    )


def test_compare_a_result_without_rows():
    ref = _ref4()
    report = compare(Result(["time", "y"], np.zeros((0, 2))), ref, tol=1 / 16)
    assert not report.passed and report.coverage == "the result has no rows"
    assert report["y"].points == 0 and report["y"].failures == 0
    assert str(report) == (
        "y: FAILED: the result has no rows; inside the tube at its 0 points "
        "(dt = 0.25 s, dy = 0.0625)"
    )


def test_compare_passed_signal_text():
    ref = _ref4()
    report = compare(ref, ref, tol=1 / 16)
    assert report.passed and report.coverage == "" and report.missing == ()
    assert str(report) == "y: PASSED (17 points, dt = 0.25 s, dy = 0.0625)"


def test_compare_signals_selected_missing_and_unknown():
    t = np.arange(17) * 0.25
    ref = _res(t, np.ones(17), 2 * np.ones(17), 3 * np.ones(17), names=["time", "a", "b", "c"])
    res = _res(t, np.ones(17), 9 * np.ones(17), names=["time", "a", "b"])
    report = compare(res, ref, tol=1 / 16)
    assert list(report) == ["a", "b"] and report.missing == ("c",)
    assert report["a"].passed and not report["b"].passed and not report.passed
    assert report["b"].dy == 2 / 16
    assert str(report).splitlines()[-1] == "c: FAILED: missing from the result"
    only = compare(res, ref, signals=["a"], tol=1 / 16)
    assert list(only) == ["a"] and only.missing == () and only.passed
    with pytest.raises(KeyError, match="reference has no signal 'q'"):
        compare(res, ref, signals=["a", "q"])


def test_compare_goes_on_after_a_missing_signal():
    t = np.arange(17) * 0.25
    ref = _res(t, *(np.ones(17),) * 4, names=["time", "a", "gone", "b", "lost"])
    res = _res(t, np.ones(17), np.ones(17), names=["time", "b", "a"])
    report = compare(res, ref, tol=1 / 16)
    assert list(report) == ["a", "b"] and report.missing == ("gone", "lost")
    assert str(report).splitlines() == [
        "a: PASSED (17 points, dt = 0.25 s, dy = 0.0625)",
        "b: PASSED (17 points, dt = 0.25 s, dy = 0.0625)",
        "gone: FAILED: missing from the result",
        "lost: FAILED: missing from the result",
    ]


def test_compare_every_signal_missing_fails_and_says_so():
    t = np.arange(17) * 0.25
    ref = _res(t, np.ones(17), names=["time", "a"])
    res = _res(t, np.ones(17), names=["time", "b"])
    report = compare(res, ref)
    assert len(report) == 0 and report.missing == ("a",) and not report.passed
    assert str(report) == "a: FAILED: missing from the result"
    short = compare(_res(t[:3], np.ones(3), names=["time", "b"]), ref, tol=1 / 16)
    assert str(short) == (
        "a: FAILED: missing from the result\n"
        "FAILED: result covers 0 .. 0.5 s, reference 0 .. 4 s (allowed gap dt = 0.25 s)"
    )


def test_an_empty_report_does_not_pass():
    from contactfmu.cosim.compare import Report

    assert not Report().passed and str(Report()) == ""


def test_compare_rejects_an_empty_reference():
    with pytest.raises(ValueError, match="^the reference has no rows$"):
        compare(_ref4(), Result(["time", "y"], np.zeros((0, 2))))


def test_compare_uses_the_tolerance_given():
    ref = _ref4()
    t = np.arange(17) * 0.25
    y = np.ones(17) + 0.05  # 0.8 dy at tol = 1/16, 25 dy at the default 2e-3
    assert compare(_res(t, y), ref, tol=1 / 16).passed
    r = compare(_res(t, y), ref)["y"]
    assert not r.passed and (r.dt, r.dy) == (pytest.approx(8e-3), pytest.approx(2e-3))
    assert r.worst == pytest.approx(24.0)


def test_compare_files_passes_signals_and_tolerance(tmp_path):
    from contactfmu.cosim.compare import compare_files

    ref = tmp_path / "ref.csv"
    res = tmp_path / "res.csv"
    ref.write_text('"time","a","b"\n0,1,1\n2,1,1\n4,1,1\n')
    res.write_text('"time","a","b"\n0,1.05,7\n2,1.05,7\n4,1.05,7\n')
    report = compare_files(res, ref, signals=["a"], tol=1 / 16)
    assert list(report) == ["a"] and report.passed
    assert (report["a"].dt, report["a"].dy) == (0.25, 1 / 16)
    default = compare_files(res, ref)
    assert list(default) == ["a", "b"] and not default["a"].passed and not default.passed
