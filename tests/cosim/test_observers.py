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
    rows add no error to that of the communication points (measured: 5.72e-5 m against 5.62e-5 m,
    the steps' own error at rtol 1e-6)."""
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
    assert len(r.time) == 2001 and len(accepted) < 200 and len(points.time) == len(accepted) + 1
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
