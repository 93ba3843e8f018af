"""The FMU-side integrator, src/contactfmu/mechanics/ode.py (integrate, Event, the step-size
controller, the Hermite interpolant and the event location), against scipy's solve_ivp with
events, the Dormand & Prince (1980) tableau written out here (dp_step), closed forms and the
documented contract of integrate (its docstring). No FMU is built.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from contactfmu.mechanics import ode
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
    rhs = lambda t, y: [y[1], -y[0]]  # noqa: E731  harmonic: s = sin t
    rising = Event(lambda t, y: y[0] - 0.5, direction=+1)
    falling = Event(lambda t, y: y[0] - 0.9, direction=-1)
    t, y, ev, _ = integrate(rhs, 0.0, [0.0, 1.0], 10.0, events=[falling, rising])
    assert ev is rising and t == pytest.approx(math.asin(0.5), abs=1e-9)
    t, y, ev, _ = integrate(rhs, t, y, 10.0, events=[falling])  # rising through 0.9 is ignored
    assert ev is falling and t == pytest.approx(math.pi - math.asin(0.9), abs=1e-9)


def test_event_at_the_start_does_not_trigger_again():
    rhs = lambda t, y: [1.0]  # noqa: E731
    ev0 = Event(lambda t, y: y[0], direction=0)
    t, y, ev, _ = integrate(rhs, 0.0, [0.0], 1.0, events=[ev0])
    assert ev is None and t == 1.0 and y[0] == pytest.approx(1.0)


@pytest.mark.parametrize("t_end", [1e-9, 1e-4, 0.37])
def test_short_and_odd_spans_end_exactly(t_end):
    rhs = lambda t, y: [y[0]]  # noqa: E731
    t, y, ev, _ = integrate(rhs, 0.0, [1.0], t_end)
    assert t == t_end and y[0] == pytest.approx(np.exp(t_end), rel=1e-9)


# ---- ode: one Dormand-Prince step against the tableau of the literature ---------------------------

DP_C = [0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1]


DP_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]


DP_B5 = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]


DP_B4 = [5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def dp_step(f, t, y, h):
    """Dormand & Prince (1980), RK5(4)7M: (5th-order solution, 5th - 4th order difference)."""
    y = np.asarray(y, float)
    k = []
    for i in range(7):
        k.append(
            np.asarray(f(t + DP_C[i] * h, y + h * sum(a * kj for a, kj in zip(DP_A[i], k))), float)
        )
    y5 = y + h * sum(b * kj for b, kj in zip(DP_B5, k))
    y4 = y + h * sum(b * kj for b, kj in zip(DP_B4, k))
    return y5, y5 - y4


SYSTEMS = [  # (rhs, y0): 1, 2 (the two-state fast path) and 3 states; nonlinear and time dependent
    (lambda t, y: [y[0] * math.cos(t)], [1.3]),
    (lambda t, y: [y[1], -4.0 * y[0] - 0.3 * y[1] + math.sin(3 * t)], [0.5, -0.2]),
    (lambda t, y: [y[1], y[2], -y[0] * y[1] + t], [0.1, 0.2, -0.3]),
]


@pytest.mark.parametrize("rhs, y0", SYSTEMS)
def test_one_accepted_step_is_the_dormand_prince_step_and_the_next_step_follows_the_controller(
    rhs, y0
):
    t0, h = 0.2, 0.3
    y5, e = dp_step(rhs, t0, y0, h)
    sc = 1e-3 * np.maximum(np.abs(y0), np.abs(y5))  # atol 0: err = max |e|/(rtol*max|y|)
    err = np.max(np.abs(e) / sc)
    rtol = float(err / 0.5) * 1e-3  # chosen so that err = 0.5
    t, y, ev, h_next = ode.integrate(rhs, t0, y0, t0 + h, rtol=rtol, atol=0.0, h=h)
    assert t == t0 + h and ev is None
    assert y == pytest.approx(list(y5), rel=1e-13, abs=1e-15)
    assert h_next == pytest.approx(h * 0.9 * 0.5**-0.2, rel=1e-9)


def test_step_size_controller_limits_and_rejection():
    rhs, y0 = SYSTEMS[1]
    h = 0.3
    y5, e = dp_step(rhs, 0.0, y0, h)
    err = np.max(np.abs(e) / np.maximum(np.abs(y0), np.abs(y5)))
    # a tiny error: the next step grows by 5 at most (and max_step caps it)
    _, _, _, h_next = ode.integrate(rhs, 0.0, y0, h, rtol=1.0, atol=1.0, h=h)
    assert h_next == pytest.approx(5 * h)
    _, _, _, h_next = ode.integrate(rhs, 0.0, y0, h, rtol=1.0, atol=1.0, h=h, max_step=0.4)
    assert h_next == 0.4
    # err = 4 rejects the first step: it is retried with h*0.9*4**-0.2, and the result is that of the
    # steps taken then (the integration still ends exactly at t_end)
    rtol = float(err / 4.0)
    t, y, ev, _ = ode.integrate(rhs, 0.0, y0, h, rtol=rtol, atol=0.0, h=h)
    h1 = h * 0.9 * 4.0**-0.2
    y1, _ = dp_step(rhs, 0.0, y0, h1)
    assert t == h
    ref = solve_ivp(rhs, (0, h), y0, method="DOP853", rtol=1e-13, atol=1e-14).y[:, -1]
    assert y != pytest.approx(list(y5), rel=1e-12)  # not the rejected step's result
    assert y == pytest.approx(list(ref), rel=1e-3)
    # rtol very large would never reject: the initial step then comes from the state's scale
    t, y, ev, h_next = ode.integrate(lambda t, y: [1.0], 0.0, [2.0], 1.0)
    assert t == 1.0 and y == pytest.approx([3.0])


def test_hermite_interpolant_is_exact_for_cubics():
    p = np.poly1d([0.7, -1.1, 0.3, 2.0])
    dp = p.deriv()
    t0, t1 = 0.4, 1.3
    for t in (0.4, 0.55, 1.0, 1.3):
        assert ode._hermite(t0, [p(t0)], [dp(t0)], t1, [p(t1)], [dp(t1)], t)[0] == pytest.approx(
            p(t), rel=1e-13
        )


def test_crossing_directions():
    assert (
        ode._crosses(-1.0, 0.0, 1)
        and ode._crosses(-1.0, 1.0, 0)
        and not ode._crosses(-1.0, 1.0, -1)
    )
    assert (
        ode._crosses(1.0, 0.0, -1) and ode._crosses(1.0, -1.0, 0) and not ode._crosses(1.0, -1.0, 1)
    )
    assert not ode._crosses(0.0, 1.0, 1) and not ode._crosses(0.0, -1.0, -1)
    assert not ode._crosses(1.0, 2.0, 0) and not ode._crosses(-1.0, -2.0, 0)


@pytest.mark.parametrize(
    "direction, expected",
    [(1, math.asin(0.3)), (-1, math.pi - math.asin(0.3)), (0, math.asin(0.3))],
)
def test_event_located_on_a_known_crossing(direction, expected):
    """y = sin(t): y - 0.3 rises through 0 at asin(0.3) and falls at pi - asin(0.3)."""
    ev = ode.Event(lambda t, y: y[0] - 0.3, direction, "level")
    t, y, hit, _ = ode.integrate(
        lambda t, y: [y[1], -y[0]], 0.0, [0.0, 1.0], 5.0, [ev], rtol=1e-12, atol=1e-14
    )
    assert hit is ev and hit.name == "level" and hit.direction == direction
    assert t == pytest.approx(expected, abs=1e-10)
    assert y == pytest.approx([math.sin(expected), math.cos(expected)], abs=1e-9)


def test_integrate_edge_cases():
    def f(t, y):
        return [y[0]]

    assert ode.integrate(f, 1.0, [2.0], 1.0, h=0.1) == (1.0, [2.0], None, 0.1)
    t, y, ev, h = ode.integrate(lambda t, y: [math.inf], 0.0, [1.0], 1.0)
    assert t == 0.0 and y == [math.inf] and ev is None
    t, y, ev, h = ode.integrate(lambda t, y: [math.nan * 0 + 1.0, math.inf], 0.0, [1.0, 1.0], 1.0)
    assert math.isnan(y[0]) and y[1] == math.inf
    with pytest.raises(ode.StepBudgetExceeded):
        ode.integrate(f, 0.0, [1.0], 10.0, budget=[3], rtol=1e-12, atol=1e-14)
    budget = [1000]
    ode.integrate(f, 0.0, [1.0], 1.0, budget=budget)
    assert 0 < budget[0] < 1000
    # an overflowing solution ends at once with a non-finite state
    t, y, ev, h = ode.integrate(lambda t, y: [y[0] * y[0]], 0.0, [1.0], 2.0)
    assert not math.isfinite(y[0]) and t <= 2.0
    # an event exactly at 0 at the start does not trigger again unless it crosses
    ev = ode.Event(lambda t, y: y[0], 0)
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [ev])
    assert hit is None and t == 1.0
    ev = ode.Event(lambda t, y: y[0], -1)
    t, y, hit, _ = ode.integrate(lambda t, y: [-1.0], 0.0, [0.0], 1.0, [ev])
    assert hit is ev and t < 1e-10


# ---- ode.integrate --------------------------------------------------------------------------------


def test_integrate_backwards_span_returns_a_consistent_state():
    """t_end <= t0: nothing is integrated, and the (t, y) returned is a point of the solution (y = t - 1
    for y' = 1, y(1) = 0): the start, not t_end with the start's state."""
    t, y, ev, h = ode.integrate(lambda t, y: [1.0], 1.0, [0.0], 0.5)
    assert y[0] == pytest.approx(t - 1.0, abs=1e-15) and ev is None


def test_integrate_non_finite_derivative_at_the_start_gives_no_false_state_value():
    """A non-finite derivative at t0 ends at once with a non-finite state (docstring): each component is
    non-finite, none is a derivative passed off as the state."""
    t, y, ev, h = ode.integrate(lambda t, y: [1.0, math.inf], 0.0, [0.0, 0.0], 1.0)
    assert t == 0.0 and ev is None
    assert not any(math.isfinite(v) for v in y)


@pytest.mark.parametrize("t0, t_end", [(0.0, 1e-3), (1e6, 1e6 + 1.0), (-1e6, 0.0), (0.0, 1e6)])
def test_integrate_overflow_right_after_the_start_ends_one_shortest_step_later(t0, t_end):
    """A derivative non-finite for every t > t0: no finite step exists, so the integration ends after one
    step of h_min = 1e-15*max(1, |t0|, |t_end|) (docstring) with that non-finite state."""
    h_min = 1e-15 * max(1.0, abs(t0), abs(t_end))
    t, y, ev, h = ode.integrate(
        lambda t, y: [0.0] if t <= t0 else [math.inf], t0, [1.0], t_end, budget=[1000]
    )
    assert t == t0 + h_min and h == h_min and ev is None
    assert not math.isfinite(y[0])


def first_step(y0, f0, **kw):
    """End of integrate's first step on y' = f0 (constant), seen from the times rhs is called at."""
    calls = []

    def rhs(t, y):
        calls.append(t)
        return [f0]

    with pytest.raises(ode.StepBudgetExceeded):
        ode.integrate(rhs, 0.0, [y0], 1.0, budget=[1], **kw)
    return max(calls)


def test_integrate_first_step_is_the_usual_starting_step():
    """Without h (None, or a step that is not > 0) the first step is 0.01*max|y0|/max|f0| with |y0|
    floored at 1e-6 (the usual starting step, Hairer-Norsett-Wanner II.4); max_step caps it."""
    assert first_step(2.0, 4.0) == pytest.approx(0.01 * 2.0 / 4.0, rel=1e-12)
    assert first_step(0.0, 1.0) == pytest.approx(0.01 * 1e-6, rel=1e-12)
    assert first_step(2.0, 4.0, h=0.0) == pytest.approx(0.01 * 2.0 / 4.0, rel=1e-12)
    assert first_step(2.0, 4.0, max_step=1e-4) == pytest.approx(1e-4, rel=1e-12)


@pytest.mark.parametrize(
    "t0, t_end, h, steps",
    [
        (0.0, 1.0, 1.0 - 5e-13, 1),
        (0.0, 1000.0, 1000.0 - 5e-10, 1),
        (0.0, 1.0, 1.0 - 1.5e-12, 2),
        (0.0, 0.3, 0.2, 2),
        (-0.47026350752244794, 0.8364614512743888, 2.0, 1),
    ],
)  # t0 + (t_end - t0) rounds below t_end
def test_integrate_last_step_lands_on_t_end(t0, t_end, h, steps):
    """y' = 0 (zero error estimate): a step that would leave less than 1e-12*max(1, |t_end|) is stretched to
    t_end (no sliver step), a longer remainder is one more step; the last step ends exactly at t_end even
    where t + (t_end - t) rounds below it; each attempted step uses one unit of the budget (docstring)."""
    budget = [10]
    t, y, ev, _ = ode.integrate(lambda t, y: [0.0], t0, [1.0], t_end, h=h, budget=budget)
    assert t == t_end and y == [1.0] and 10 - budget[0] == steps


def test_integrate_budget_counts_attempted_steps_exactly():
    """budget [n]: n attempted steps are allowed, the (n+1)-th raises StepBudgetExceeded (docstring);
    y' = 0 over [0, 0.3] from h = 0.2 takes exactly two steps."""
    budget = [2]
    t, y, ev, _ = ode.integrate(lambda t, y: [0.0], 0.0, [1.0], 0.3, h=0.2, budget=budget)
    assert t == 0.3 and budget == [0]
    with pytest.raises(ode.StepBudgetExceeded, match="step budget used up"):
        ode.integrate(lambda t, y: [0.0], 0.0, [1.0], 0.3, h=0.2, budget=[1])


def test_integrate_zero_error_estimate_grows_the_step_by_five():
    """err = 0 (y' = 0): the next step is 5 times the last (the controller's largest factor, as for a
    tiny error: 0.9*err^(-1/5) capped at 5)."""
    t, y, ev, h_next = ode.integrate(lambda t, y: [0.0], 0.0, [1.0], 0.3, h=0.3)
    assert h_next == pytest.approx(5 * 0.3, rel=1e-15)


def test_integrate_rejects_a_step_whose_error_is_one_and_a_half():
    """err = max|e|/(rtol*max|y|) = 1.5 > 1: the step is rejected and retried shorter (Dormand-Prince
    error control), so covering the span takes at least two attempts."""
    rhs = lambda t, y: [y[1], -4.0 * y[0] - 0.3 * y[1]]  # noqa: E731
    y0, h = [0.5, -0.2], 0.3
    y5, e = dp_step(rhs, 0.0, y0, h)
    err = np.max(np.abs(e) / np.maximum(np.abs(y0), np.abs(y5)))
    budget = [50]
    t, y, ev, _ = ode.integrate(
        rhs, 0.0, y0, h, rtol=float(err / 1.5), atol=0.0, h=h, budget=budget
    )
    assert t == h and 50 - budget[0] >= 2


def test_integrate_overflow_of_the_state_ends_where_the_solution_passes_the_largest_float():
    """y' = 1e307 from y0 = 1.7e308: the solution passes the largest float at t* = (max - y0)/1e307; no
    finite step goes beyond it, so the integration ends within the shortest step after t* with y = inf."""
    big = 1.7976931348623157e308
    y0, f = 1.7e308, 1e307
    t_star = (big - y0) / f
    t, y, ev, h = ode.integrate(lambda t, y: [f], 0.0, [y0], 10.0)
    assert y == [math.inf] and ev is None
    assert t_star - 1e-9 <= t <= t_star + 1e-9


def test_integrate_event_of_time_and_default_direction():
    """An event may depend on t (g = t - 0.5 stops at t = 0.5); Event's default direction is 0 (either
    way), its default name empty."""
    ev = ode.Event(lambda t, y: t - 0.5)
    assert ev.direction == 0 and ev.name == ""
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [ev])
    assert (
        hit is ev and t == pytest.approx(0.5, abs=1e-12) and y[0] == pytest.approx(0.5, abs=1e-12)
    )
    falling = ode.Event(lambda t, y: 0.25 - y[0])  # falls through 0 at t = 0.25
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [falling])
    assert hit is falling and t == pytest.approx(0.25, abs=1e-12)


def test_integrate_two_events_at_the_same_instant_report_the_first_listed():
    """The first event in time stops the integration; two crossing at the same instant: the one listed
    first (module docstring: it stops at the first event)."""
    a = ode.Event(lambda t, y: y[0] - 0.5, 1, "a")
    b = ode.Event(lambda t, y: y[0] - 0.5, 1, "b")
    c = ode.Event(lambda t, y: y[0] - 0.7, 1, "c")
    for events, first in (([a, b, c], a), ([b, a, c], b), ([c, b, a], b)):
        t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, events, h=1.0)
        assert hit is first and t == pytest.approx(0.5, abs=1e-12)


def g_calls_to_locate(tc, t_tol, t_end):
    """Number of event-function calls to locate y = t crossing tc within one step [0, t_end]."""
    calls = []

    def g(t, y):
        calls.append(t)
        return y[0] - tc

    t, y, hit, _ = ode.integrate(
        lambda t, y: [1.0], 0.0, [0.0], t_end, [ode.Event(g, 1)], h=t_end, t_tol=t_tol
    )
    return t, len(calls)


def test_integrate_event_bisection_stops_at_the_time_tolerance():
    """The crossing is bisected on the step's interpolant down to a bracket of t_tol*max(1, |t|): from
    a step of 1 with t_tol = 2^-10 that is exactly 10 halvings (plus g at the step's two ends), and the
    time returned is past the crossing by at most t_tol."""
    tc = 0.5 + 1e-5
    t, n = g_calls_to_locate(tc, 2.0**-10, 1.0)
    assert n == 2 + 10 and tc <= t <= tc + 2.0**-10
    # beyond |t| = 1 the tolerance is relative: 8 -> t_tol*|t| ~ 0.01 at t ~ 5: log2(8/0.01) ~ 10 halvings
    tc = 5.0 + 1e-4
    t, n = g_calls_to_locate(tc, 2.0**-9, 8.0)
    assert tc <= t <= tc + 2.0**-9 * t and n <= 2 + math.ceil(math.log2(8.0 / (2.0**-9 * tc)))


@pytest.mark.parametrize("tc", [0.3, 0.5 + 2.0**-40, 0.7, 1.0 / 3.0])
def test_integrate_event_bisection_with_zero_tolerance_ends_on_adjacent_floats(tc):
    """t_tol = 0: the bisection runs down to adjacent floats and stops there; the time returned is the
    first float at which y = t has crossed tc, i.e. tc itself (y = t is reproduced exactly)."""
    ev = ode.Event(lambda t, y: y[0] - tc, 1)
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [ev], h=1.0, t_tol=0.0)
    assert hit is ev and abs(t - tc) <= 4 * math.ulp(tc)
