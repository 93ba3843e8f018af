"""The FMU-side integrator (src/contactfmu/mechanics/ode.py) against scipy's solve_ivp with events."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from contactfmu.mechanics.ode import Event, integrate


def stribeck_rhs(F):
    # a sliding mass (Forward) under a time-varying force, the MSL Stribeck law
    def rhs(t, y):
        s, v = y
        return [v, F(t) - (1.0 * v + 5.0 + 10.0 * math.exp(-2.0 * abs(v)))]
    return rhs


def test_smooth_solution_matches_solve_ivp():
    rhs = stribeck_rhs(lambda t: 25 * math.sin(math.pi / 2 * t) + 20)
    t, y, ev, _ = integrate(rhs, 0.0, [0.0, 1.0], 0.7, rtol=1e-11, atol=1e-13)
    ref = solve_ivp(rhs, (0, 0.7), [0.0, 1.0], method="DOP853", rtol=1e-13, atol=1e-14)
    assert ev is None and t == 0.7
    assert y == pytest.approx(ref.y[:, -1], rel=1e-9, abs=1e-11)


def test_event_time_matches_solve_ivp():
    rhs = stribeck_rhs(lambda t: 10 * math.cos(3 * t))
    stop = Event(lambda t, y: y[1], direction=-1, name="v falls through 0")
    t, y, ev, _ = integrate(rhs, 0.0, [0.0, 2.0], 5.0, events=[stop])

    def g(t, y):
        return y[1]
    g.terminal, g.direction = True, -1
    ref = solve_ivp(rhs, (0, 5), [0.0, 2.0], method="DOP853", rtol=1e-13, atol=1e-14, events=g)
    assert ev is stop
    assert t == pytest.approx(ref.t_events[0][0], abs=1e-10)
    assert y[0] == pytest.approx(ref.y_events[0][0][0], abs=1e-10)
    assert abs(y[1]) < 1e-9


def test_earliest_of_several_events_and_direction():
    rhs = lambda t, y: [y[1], -y[0]]                      # noqa: E731  harmonic: s = sin t
    rising = Event(lambda t, y: y[0] - 0.5, direction=+1)
    falling = Event(lambda t, y: y[0] - 0.9, direction=-1)
    t, y, ev, _ = integrate(rhs, 0.0, [0.0, 1.0], 10.0, events=[falling, rising])
    assert ev is rising and t == pytest.approx(math.asin(0.5), abs=1e-9)
    t, y, ev, _ = integrate(rhs, t, y, 10.0, events=[falling])   # rising through 0.9 is ignored
    assert ev is falling and t == pytest.approx(math.pi - math.asin(0.9), abs=1e-9)


def test_event_at_the_start_does_not_trigger_again():
    rhs = lambda t, y: [1.0]                                # noqa: E731
    ev0 = Event(lambda t, y: y[0], direction=0)
    t, y, ev, _ = integrate(rhs, 0.0, [0.0], 1.0, events=[ev0])
    assert ev is None and t == 1.0 and y[0] == pytest.approx(1.0)


@pytest.mark.parametrize("t_end", [1e-9, 1e-4, 0.37])
def test_short_and_odd_spans_end_exactly(t_end):
    rhs = lambda t, y: [y[0]]                               # noqa: E731
    t, y, ev, _ = integrate(rhs, 0.0, [1.0], t_end)
    assert t == t_end and y[0] == pytest.approx(np.exp(t_end), rel=1e-9)
