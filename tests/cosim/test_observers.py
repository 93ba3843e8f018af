"""The observers (cosim.observers): the Recorder's dense output, the recording times interpolated
between the communication points of an algorithm whose steps do not end on them."""

import math

import numpy as np
import pytest

from contactfmu.cosim import System
from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm
from contactfmu.cosim.observers import Recorder


def recorder_of(points, real, grid, states=None):
    """A Recorder holding the rows `points` ([t, outputs...] at communication points) of outputs
    of which `real` says which are Real, with the recording times `grid` and the FMUs' discrete
    outputs `states` at the points (default: none), without FMUs."""
    rec = Recorder.__new__(Recorder)
    rec.states = states or []
    rec.names = [f"y{i}" for i in range(len(real))]
    rec.real = list(real)
    rec.rows = [list(map(float, row)) for row in points]
    rec.grid = np.asarray(grid, dtype=float)
    return rec


def test_dense_output_holds_discrete_outputs_and_never_overshoots_real_ones():
    """Recorder docstring: Real outputs by the shape-preserving cubic (monotone between points: a
    flat stretch stays flat, a rise stays within its ends), Integer/Boolean outputs held from the
    communication point before, a recording time that is a communication point read as it is."""
    points = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [3.0, 1.0, 2.0], [4.0, 5.0, 2.0]]
    rec = recorder_of(points, [True, False], [0.0, 0.5, 1.0, 2.0, 2.9, 3.0, 3.5, 4.0])
    table = rec.table()
    assert list(table[:, 0]) == [0.0, 0.5, 1.0, 2.0, 2.9, 3.0, 3.5, 4.0]
    real, held = table[:, 1], table[:, 2]
    assert list(held) == [0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    assert (real[2], real[5], real[7]) == (1.0, 1.0, 5.0)  # read at the communication points
    assert 0.0 < real[1] < 1.0 and 1.0 < real[6] < 5.0  # within the ends of the rise
    assert real[3] == 1.0 and real[4] == 1.0  # the flat stretch between t = 1 and 3 stays flat
    assert list(rec.interpolated()) == [False, True, False, True, True, False, True, False]


def test_dense_output_draws_a_straight_line_over_a_step_with_a_discrete_change():
    """Recorder docstring: PCHIP within each stretch of equal discrete outputs, a straight line
    over the step in which one changed. A contact force: 0 while free (t <= 2), then rising as
    (t - 2)^2; the contact state changes between the points at 2 and 3. Across the kink PCHIP of
    all points would bend the free stretch below 0 or the rise off its parabola; split, the free
    stretch stays 0, the step across the change is the chord, and the contact stretch is the
    parabola to PCHIP's accuracy."""
    t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    f = [0.0, 0.0, 0.0, 1.0, 4.0, 9.0, 16.0]
    states = [(0,), (0,), (0,), (1,), (1,), (1,), (1,)]
    grid = [0.5, 1.5, 2.5, 4.5, 5.5]
    split = recorder_of([[a, b] for a, b in zip(t, f)], [True], grid, states).table()[:, 1]
    assert list(split[:3]) == [0.0, 0.0, 0.5]
    assert split[3] == pytest.approx(4.5**2 - 4 * 4.5 + 4, rel=0.02)
    assert split[4] == pytest.approx(5.5**2 - 4 * 5.5 + 4, rel=0.02)
    # one stretch (no discrete outputs): the free stretch next to the kink is bent
    whole = recorder_of([[a, b] for a, b in zip(t, f)], [True], grid).table()[:, 1]
    assert whole[1] != 0.0 or whole[2] != 0.5


def test_dense_output_keeps_the_last_of_points_at_one_time():
    """A step below the rounding of t ends where it started: the later point at that time."""
    rec = recorder_of([[0.0, 1.0], [1.0, 2.0], [1.0, 3.0], [2.0, 3.0]], [True], [0.0, 1.0, 1.5])
    assert list(rec.table()[:, 1]) == [1.0, 3.0, 3.0]


def test_dense_output_stops_at_the_last_communication_point():
    """A run that ended early (an error) has recording times only up to where it got."""
    rec = recorder_of([[0.0, 2.0], [0.4, 3.0]], [True], [0.0, 0.25, 0.5, 0.75])
    table = rec.table()
    assert list(table[:, 0]) == [0.0, 0.25]
    assert table[1, 1] == 2.0 + 0.25 / 0.4  # two points: the straight line


def test_adaptive_steps_are_not_bounded_by_the_recording_times(fmu_dir):
    """A mass driven by A*sin(w*t) (exact: s = v0*t + A/(m*w)*(t - sin(w*t)/w)), recorded every 1 ms
    over 2 s: the adaptive master takes the same steps as without recording times, far fewer than
    the 2000 recording times (before, every recording time ended a step), and the interpolated
    rows add no error to that of the communication points (measured: 1.98e-5 m against 1.98e-5 m,
    the steps' own error at rtol 1e-6; 583 steps)."""
    m, amplitude, f, v0 = 2.0, 4.0, 0.5, 0.5
    w = 2.0 * math.pi * f

    def run(**grid):
        s = System()
        s.add("mass", fmu_dir / "Mass.fmu", m=m, L=0.0, s_start=0.0, v_start=v0)
        s.add("force", fmu_dir / "Force.fmu")
        s.add("sine", fmu_dir / "Sine.fmu", amplitude=amplitude, f=f)
        s.connect("sine.y", "force.f")
        s.connect("force.flange", "mass.flange_b")
        r = s.simulate(2.0, outputs=["mass.s"], rtol=1e-6, atol=1e-8, **grid)
        exact = v0 * r.time + amplitude / (m * w) * (r.time - np.sin(w * r.time) / w)
        return r, np.max(np.abs(r["mass.s"] - exact))

    r, error = run(output_interval=1e-3)
    points, error_at_points = run()
    assert r.steps == points.steps
    accepted = [x for x in r.steps if x.accepted]
    assert len(r.time) == 2001 and len(accepted) < 800 and len(points.time) == len(accepted) + 1
    assert points.interpolated is None
    assert not r.interpolated[0] and not r.interpolated[-1]
    assert r.interpolated.sum() >= 2001 - len(accepted) - 1
    assert error <= 1.1 * error_at_points


def test_adaptive_steps_end_on_the_recording_times_when_not_dense(fmu_dir):
    """Adaptive(dense=False): every recording time ends a step (read, none interpolated), the
    steps at most the output interval."""
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu", m=2.0, L=0.0, s_start=0.0, v_start=0.5)
    s.add("force", fmu_dir / "Force.fmu")
    s.add("sine", fmu_dir / "Sine.fmu", amplitude=4.0, f=0.5)
    s.connect("sine.y", "force.f")
    s.connect("force.flange", "mass.flange_b")
    scheme = AdaptiveAlgorithm(Adaptive(rtol=1e-6, atol=1e-8, dense=False))
    r = s.simulate(0.5, output_interval=0.01, outputs=["mass.s"], scheme=scheme)
    ends = {round(x.t + x.h, 12) for x in r.steps if x.accepted}
    assert len(r.time) == 51 and {round(t, 12) for t in r.time[1:]} <= ends
    assert r.interpolated is None or not r.interpolated.any()
    assert max(x.h for x in r.steps) <= 0.01 + 1e-15


def _gap(fmu_dir, s_start=3.0, v_start=-0.25):
    """A mass (flange_b) at s_start against an ElastoGap whose flange_b is held at 2.95 m (in
    contact while s_rel = 2.95 - s < s_rel0 = 0)."""
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, L=0.0, s_start=s_start, v_start=v_start)
    s.add("gap", fmu_dir / "ElastoGap.fmu", c=1e3, d=0.0, s_rel0=0.0)
    s.add("stop", fmu_dir / "Fixed.fmu", s0=2.95)
    s.connect("mass.flange_b", "gap.flange_a")
    s.connect("gap.flange_b", "stop.flange")
    return s


def test_the_recorder_reads_every_output_by_default_at_every_recording_time(fmu_dir):
    """outputs=None: every output of every instance, instance by instance in the order added, each
    in the order of its model description; a row per recording time, read there."""
    from cosim_systems import oscillator

    s = oscillator(fmu_dir)
    r = s.simulate(stop_time=0.02, step=1e-3, output_interval=1e-2)
    expected = [
        f"{i.name}.{v.name}"
        for i in s.instances.values()
        for v in i.md.modelVariables
        if v.causality == "output"
    ]
    assert r.names == ["time", *expected] and len(expected) > 10
    assert list(r.time) == [0.0, 0.01, 0.02]
    assert r.values.shape == (3, 1 + len(expected))
    # s = 3 + 0.5 cos(10 t) at the recording times; the wall holds still
    assert r["mass.s"][0] == 3.5 and r["mass.v"][0] == 0.0
    assert r["mass.s"][1:] == pytest.approx(3.0 + 0.5 * np.cos(10.0 * r.time[1:]), abs=1e-4)
    assert list(r["wall.flange.s"]) == [0.0, 0.0, 0.0]


def test_the_recorder_keeps_the_order_asked_for_and_records_discrete_outputs_as_numbers(fmu_dir):
    """Outputs of several instances and types (Boolean, Real) in the order given, each in its
    column; a Boolean output as 1.0/0.0."""
    r = _gap(fmu_dir).simulate(
        stop_time=2e-3, step=1e-3, outputs=["gap.contact", "mass.s", "stop.flange.s", "mass.v"]
    )
    assert r.names == ["time", "gap.contact", "mass.s", "stop.flange.s", "mass.v"]
    first = list(r.values[0])
    # s_rel = 2.95 - 3.0 < s_rel0 = 0: in contact
    assert first == [0.0, 1.0, 3.0, 2.95, -0.25]
    assert r.values.dtype == np.float64 and type(r.values[0, 1]) is np.float64
    free = _gap(fmu_dir, s_start=2.0).simulate(stop_time=1e-3, step=1e-3, outputs=["gap.contact"])
    assert list(free["gap.contact"]) == [0.0, 0.0]


def test_dense_output_reads_the_discrete_outputs_of_every_fmu(fmu_dir):
    """A dense adaptive run through a contact (the mass, at 2.94 m moving at 0.25 m/s, reaches
    2.95 m at t = 0.04 s): the Recorder reads the discrete outputs of every FMU at every
    communication point (one tuple per point, in instance order), which split the curves."""
    s = _gap(fmu_dir, s_start=2.94, v_start=0.25)
    rec = {}
    original = Recorder.table

    def table(self):
        rec["r"] = self
        return original(self)

    Recorder.table = table
    try:
        r = s.simulate(
            0.08, output_interval=0.01, outputs=["mass.s", "gap.contact"], rtol=1e-6, atol=1e-9
        )
    finally:
        Recorder.table = original
    recorder = rec["r"]
    assert len(recorder.states) == len(recorder.rows) > len(r.time)
    # the discrete outputs of all FMUs: the gap's contact flag and its Boolean (integrates) output
    discrete = [
        (i.name, v.name)
        for i in s.instances.values()
        for kind in ("Integer", "Boolean")
        for v in i.md.modelVariables
        if v.causality == "output" and v.type == kind
    ]
    assert ("gap", "contact") in discrete
    assert all(len(x) == len(discrete) for x in recorder.states)
    k = discrete.index(("gap", "contact"))
    contact = [x[k] for x in recorder.states]
    assert contact[0] == 0 and contact[-1] == 1  # the gap closes at t = 0.04 s
    # held from the communication point before: free up to 0.03 s, in contact from 0.05 s
    assert list(r["gap.contact"][:4]) == [0.0] * 4 and list(r["gap.contact"][5:]) == [1.0] * 4
    # free flight up to the contact: s = 2.94 + 0.25 t (interpolated rows on the line)
    assert r["mass.s"][:4] == pytest.approx(2.94 + 0.25 * r.time[:4], abs=1e-9)
    assert r.interpolated is not None and r.interpolated.any()


def test_the_recorder_takes_what_the_adaptive_master_reads_anyway(fmu_dir, monkeypatch):
    """The adaptive master reads, at the end of every accepted step, the bodies' motion, the
    elements' outputs with their forces and every FMU's discrete outputs: a dense recording of
    the mass's motion, the gap's force and relative position and its contact flag (through a
    contact) is taken from there (base.Algorithm.observed), no get call of the recorder's own, and
    is bit for bit the recording of a recorder that reads every value itself."""
    outputs = ["mass.s", "mass.v", "gap.f", "gap.s_rel", "gap.contact"]
    recorders = []
    bind = Recorder.bind

    def run(offer):
        def recording(self, offered=None):
            recorders.append(self)
            bind(self, offered if offer else None)

        monkeypatch.setattr(Recorder, "bind", recording)
        return _gap(fmu_dir, s_start=2.94, v_start=0.25).simulate(
            0.08, output_interval=0.01, outputs=outputs, rtol=1e-6, atol=1e-9
        )

    taken, read = run(True), run(False)
    assert read.names == taken.names and np.array_equal(read.values, taken.values)
    assert list(taken["gap.contact"][[0, -1]]) == [0.0, 1.0]  # through the contact
    own, itself = recorders
    assert {type(c[0]).__name__ for c in own.calls} == {"_Taken"}
    assert {type(d).__name__ for d in own.discrete} == {"_Taken"}
    assert {type(c[0]).__name__ for c in itself.calls} == {"Reader"}
    assert len(own.rows) == len(itself.rows) > 9 and own.states == itself.states


def test_the_progress_function_is_called_after_every_step():
    from contactfmu.cosim.observers import Observer, ProgressFunction

    seen = []
    p = ProgressFunction(seen.append)
    p.initialized(0.0)
    p.step_complete(0.1, False)
    p.step_complete(0.2, True)
    p.finished()
    assert seen == [0.1, 0.2]
    o = Observer()  # the interface does nothing
    assert (o.initialized(0.0), o.step_complete(0.1, True), o.finished()) == (None, None, None)


def test_the_progress_bar_shows_the_simulated_time_and_the_fraction_done(monkeypatch, capsys):
    from contactfmu.cosim import observers

    monkeypatch.setattr(observers.ProgressBar, "DELAY", 0.0)
    bar = observers.ProgressBar(1.0, 3.0)
    bar.step_complete(1.5, True)
    bar.step_complete(3.0, True)  # done
    bar.finished()
    err = capsys.readouterr().err
    assert "0.0%" in err and "100.0%|" in err and "2 of 2 s simulated" in err


def test_a_progress_bar_of_a_run_shorter_than_its_delay_writes_nothing(capsys):
    from contactfmu.cosim.observers import ProgressBar

    bar = ProgressBar(0.0, 1.0)
    bar.step_complete(0.5, True)
    bar.step_complete(1.0, True)
    bar.finished()
    assert capsys.readouterr().err == ""


def test_integer_outputs_are_read_with_their_own_call(fmu_dir):
    """An Integer output (EndStop's stop state) in its column, read by fmi2GetInteger: a mass 0.02 m
    into a stop of l1 = 0.01 m is at end stop 1 (stop = 1), its friction state 0."""
    s = System()
    s.add("es", fmu_dir / "EndStop.fmu", l1=0.01, k1=1e4, b1=0.0, mode=2)
    s.add("mass", fmu_dir / "Mass.fmu", m=4.0, s_start=0.02)
    s.connect("mass.flange_b", "es.ctr1")
    r = s.simulate(2e-3, 1e-3, outputs=["es.stop", "mass.s", "es.sf"])
    assert list(r["es.stop"]) == [1.0, 1.0, 1.0] and list(r["es.sf"]) == [0.0, 0.0, 0.0]
    assert r["mass.s"][0] == 0.02


def test_readers_are_called_with_the_time_read():
    """The time goes to every reader (it names the time in an FMU's error), the values to their
    columns; the discrete readers of dense output give one tuple per communication point."""
    rec = recorder_of([], [True, False, True], [0.0, 1.0])
    seen = []

    def reader(values):
        def call(t):
            seen.append(t)
            return values

        return call

    rec.calls = [(reader([1.5, 2.5]), [1, 3], True), (reader([7]), [2], False)]
    rec.width = 4
    rec.discrete = [reader([0, 1]), reader([3])]
    rec.step_complete(0.25, False)  # dense: every communication point is read
    assert rec.rows == [[0.25, 1.5, 7.0, 2.5]] and type(rec.rows[0][2]) is float
    assert rec.states == [(0, 1, 3)]
    assert seen == [0.25] * 4


def _pchip(t, f, x):
    from scipy.interpolate import PchipInterpolator

    return float(PchipInterpolator(t, f)(x))


def test_dense_output_interpolates_each_stretch_by_its_own_curve():
    """Recorder docstring, to the value: PCHIP through the points of each stretch of equal
    discrete outputs (here 0-3 and 4-6), the chord over the step in which they changed (3 to 4)."""
    t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    f = [0.0, 1.0, 4.0, 9.0, 12.0, 13.0, 16.0]
    states = [(0,)] * 4 + [(1,)] * 3
    grid = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    got = recorder_of([[a, b] for a, b in zip(t, f)], [True], grid, states).table()[:, 1]
    expected = [_pchip(t[:4], f[:4], x) for x in grid[:3]]
    expected += [9.0 + 0.5 * 3.0]  # the chord
    expected += [_pchip(t[4:], f[4:], x) for x in grid[4:]]
    assert list(got) == pytest.approx(expected, rel=1e-14)
    assert got[0] != pytest.approx(0.5)  # the curve, not the chord, near the start
    # a change after the first point: the first step is a chord, the rest one curve
    states = [(0,)] + [(1,)] * 6
    got = recorder_of([[a, b] for a, b in zip(t, f)], [True], [0.5, 1.5, 4.5], states).table()[:, 1]
    assert list(got) == pytest.approx(
        [0.5, _pchip(t[1:], f[1:], 1.5), _pchip(t[1:], f[1:], 4.5)], rel=1e-14
    )


def test_no_rows_no_interpolation():
    rec = recorder_of([], [True], [0.0, 1.0])
    assert rec.table().shape == (0, 2)
    assert rec.interpolated() is None
