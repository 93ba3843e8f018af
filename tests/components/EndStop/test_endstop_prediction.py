"""EndStop's prediction (components/EndStop/prediction.py): each state's linear motion and guards, the
events and their transitions, and predict() against closed-form motions and numerical integration."""

import math

import numpy as np
import pytest
from endstop_cases import (
    BOTH,
    DETACH1,
    DETACH2,
    ELASTIC,
    FREE,
    STOP1,
    STOP2,
    assert_same,
    bounce_loop,
    close,
    documented_elastic_force,
    fired,
    outside,
    pressed,
    rigid_stops,
)
from scipy.linalg import expm
from scipy.optimize import brentq

from contactfmu.components.EndStop import law as endstop
from contactfmu.components.EndStop import prediction as endstop_prediction
from contactfmu.mechanics import motion
from contactfmu.mechanics.motion import EventStorm


def linear_motion(x0, w0, mu, g, c, d, xe, t):
    """mu*x'' = mu*g - c*(x - xe) - d*x' from (x0, w0), by the matrix exponential."""
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    z = expm(a * t) @ np.array([x0, w0, 1.0])
    return z[0], z[1]


XS = [-0.05, -0.03, -0.021, -0.019, 0.0, 0.009, 0.011, 0.03]


WS = [-2.0, -0.3, -1e-3, 1e-3, 0.3, 2.0]


def apply(event, stop, sf, x, w, p, mu=2.0):
    """_event's new (stop, sf, x, w) for the located event."""
    return endstop_prediction._event(event, stop, sf, x, w, mu, p, endstop.Prediction(), 0.1)[:4]


def documented_exit(stop, x, w, p):
    """Elastic End Stop (its documentation, Results): the state a motion at (x, w) in state `stop` changes to
    when it leaves that state's region (None: it stays)."""
    if stop == FREE:
        return STOP1 if x > p.l1 else STOP2 if x < -p.l2 else None
    if stop == STOP1:  # leaves when Fstop <= 0 (crossing to < 0): detaching if still behind stop 1
        return (DETACH1 if x > p.l1 else FREE) if p.k1 * (x - p.l1) + p.b1 * w < 0.0 else None
    if stop == STOP2:
        return (DETACH2 if x < -p.l2 else FREE) if p.k2 * (x + p.l2) + p.b2 * w > 0.0 else None
    if (
        stop == DETACH1
    ):  # stop 1 passed -> free; dv changes sign (driven into the stop again) -> stop 1
        return FREE if x < p.l1 else STOP1 if w > 0.0 else None
    if stop == DETACH2:
        return FREE if x > -p.l2 else STOP2 if w < 0.0 else None


EVENTS = [("hit1", 1.0), ("hit2", -1.0)]


def reference_motion(side, L, a_away, a_back, ci, eps_dv, mu, t_end):
    """From rest at dx = 0, the body pressed toward the stop at distance L in direction side: the
    impacts (time, rebound speed, impulse) up to t_end, bounce by bounce, and the state function."""
    T = math.sqrt(2.0 * L / a_back)
    arrival = math.sqrt(2.0 * a_back * L)
    impacts = []
    while T <= t_end:
        rebound = ci * arrival
        if rebound <= eps_dv:
            impacts.append((T, 0.0, side * mu * arrival))
            break
        impacts.append((T, rebound, side * mu * (arrival + rebound)))
        h = rebound * rebound / (2.0 * a_away)
        T += rebound / a_away + math.sqrt(2.0 * h / a_back)
        arrival = math.sqrt(2.0 * a_back * h)

    def state(t):
        """(dx, dv, stop, direction of dv or 0)"""
        if not impacts or t < impacts[0][0]:
            return side * a_back * t * t / 2.0, side * a_back * t, endstop.FREE, side
        k = max(i for i, imp in enumerate(impacts) if imp[0] <= t)
        Tk, s, _ = impacts[k]
        if s == 0.0:
            return side * L, 0.0, (endstop.STOP1 if side > 0 else endstop.STOP2), 0
        tau = t - Tk
        if tau <= s / a_away:
            return (
                side * (L - s * tau + a_away * tau * tau / 2.0),
                -side * (s - a_away * tau),
                endstop.FREE,
                -side,
            )
        tau -= s / a_away
        h = s * s / (2.0 * a_away)
        return side * (L - h + a_back * tau * tau / 2.0), side * a_back * tau, endstop.FREE, side

    return impacts, state


TIMES = [0.01, 0.05, 0.0731, 0.11, 0.2, 0.2583, 0.31, 0.4, 0.55, 0.8, 1.3]


def check_prediction(pred, impacts, state, times, friction):
    assert len(pred.states) == len(times)
    for t, (x, w, stop, sf) in zip(times, pred.states):
        xr, wr, stopr, direction = state(t)
        assert abs(x - xr) <= 1e-13 and abs(w - wr) <= 1e-12, (t, x, xr, w, wr)  # measured 1e-15
        assert stop == stopr, (t, stop, stopr)
        assert sf == (direction if friction else 0), (t, sf)
    assert pred.impacts == len(impacts)
    assert close(pred.impulse, sum(i[2] for i in impacts), 1e-13)  # measured 2e-16
    # the element transmits a force from the first impact on; with friction at once
    assert pred.onset == (0.0 if friction else pytest.approx(impacts[0][0], rel=1e-14, abs=0.0))
    assert pred.flights == 0


def continuous_contact_reference(p, mu, g, x0, w0, t):
    """Stop 1 of the elastic end stop engaged, the continuous friction law in parallel (its documentation and
    the module docstring): mu*dv' = mu*g - k1*(dx - l1) - b1*dv - Ff(dv), where for dv >= 0.49 >> dvL
    the law is Fsl + (Fst - Fsl)*exp(1 - dv/dvL) = Fsl to far below rounding: the linear
    spring-damper under a constant force (underdamped here), in closed form."""
    delta, w0sq = p.b1 / (2.0 * mu), p.k1 / mu
    wd = math.sqrt(w0sq - delta * delta)
    y0 = x0 - (p.l1 + (mu * g - p.Fsl) / p.k1)  # from the equilibrium
    e, c, s = math.exp(-delta * t), math.cos(wd * t), math.sin(wd * t)
    return (
        x0 - y0 + e * (y0 * c + (w0 + delta * y0) / wd * s),
        e * (w0 * c - (delta * w0 + w0sq * y0) / wd * s),
    )


def rattling_elastic():
    # undamped elastic stops 2e-6 apart, hit at 1 m/s: four state changes per cycle of ~6 ms
    return endstop.Parameters(
        mode=endstop.ELASTIC, l1=1e-6, l2=1e-6, k1=1e6, k2=1e6, b1=0.0, b2=0.0
    )


def _triangle(x0, u, lo, hi, t):
    """Position and velocity at t of a point moving at speed |u| between two perfectly elastic
    walls lo < hi, from x0 with velocity u (the unfolded motion folded back)."""
    period = 2.0 * (hi - lo)
    z = ((x0 - lo) + u * t) % period  # unfolded distance from lo, modulo a round trip
    return (lo + z, u) if z <= hi - lo else (hi - (z - (hi - lo)), -u)


def test_tiny_mass_dragged_by_continuous_friction_settles_at_once():
    """m = 1 g at dv = -1 m/s, rigid stops 1 cm away: the friction (8 N above dvL) stops the relative
    motion after 1.25e-4 s and 6.25e-5 m and keeps it at dv = 0 (was: the friction linearized at the
    start, held, drove dv to +12 m/s into stop 1, then 10000 plastic impacts and an error)."""
    import time

    p = endstop.Parameters(
        l1=0.01,
        l2=0.01,
        mode=1,
        kind=1,
        friction=True,
        kindF=1,
        Fst=10.0,
        Fsl=8.0,
        dvL=1e-3,
        eps_Fi=0.0,
    )
    t0 = time.process_time()
    pred = endstop_prediction.predict(0.0, -1.0, endstop.FREE, 0, 1e-3, 0.0, (1e-4, 1e-3, 2e-3), p)
    assert time.process_time() - t0 < 0.1
    (x1, w1, *_), (x2, w2, s2, _), (x3, w3, *_) = pred.states
    assert -1.0 < w1 < -0.1  # still sliding at 1e-4 s
    assert w2 == w3 and abs(w2) < 1e-12 and s2 == endstop.FREE and pred.impacts == 0
    assert x2 == pytest.approx(-1.0 / (2 * 8000.0), rel=1e-3) and x3 == pytest.approx(x2, abs=1e-15)


def test_a_motion_that_overflows_is_non_finite_at_once_not_an_event_storm():
    """A position near the largest float against an elastic stop (k1 = 3.4e7 N/m: the force
    overflows), the case test_properties' random inputs found: the prediction returns non-finite
    states, which the FMU reports as fmi2Error naming them, after a few motion evaluations (was:
    every crossing counted as one, 1e6 evaluations, then an EventStorm)."""
    from contactfmu.mechanics.motion import work

    p = endstop.Parameters(mode=endstop.ELASTIC, k1=34322457.16591906, b1=0.0)
    start = work()
    pred = endstop_prediction.predict(
        1.7976931348623157e308, 1.05, endstop.FREE, 0, 3.1441020360228853, 0.0, (0.01, 0.02), p
    )
    assert work() - start < 100
    assert len(pred.states) == 2 and all(
        math.isnan(x) and math.isnan(w) for x, w, *_ in pred.states
    )


@pytest.mark.parametrize("push, w0", [(2.0, 0.5), (-9.0, 0.5), (9.99, 0.0)])
def test_tiny_mass_under_a_force_below_static_friction_slides_at_the_equilibrium_velocity(push, w0):
    """A held force mu*g below Fst: the relative velocity settles where the friction balances it
    (on the rising branch, |dv| < dvL), without events once there. (From 0.5 m/s with 9.99 N the
    friction of the tail, about Fsl = 8 N, would not stop it.)"""
    p = endstop.Parameters(
        l1=1.0, l2=1.0, mode=1, friction=True, kindF=1, Fst=10.0, Fsl=8.0, dvL=1e-3
    )
    mu = 1e-3
    pred = endstop_prediction.predict(0.0, w0, endstop.FREE, 0, mu, push / mu, (1e-3, 2e-3), p)
    w = pred.states[-1][1]
    assert pred.states[0][1] == pytest.approx(w, rel=1e-9)
    assert abs(w) < 1e-3 and endstop.continuous_friction(w, p) == pytest.approx(push, abs=2e-3)


def test_friction_bounces_summed_agree_with_bounce_by_bounce(monkeypatch):
    """A body dropped on a rigid stop with continuous friction (ci = 0.8, eps_dv = 1e-4: 34
    impacts): the summed bounces give the states and the impulse of the same motion followed
    event by event (bands crossed and impacts located one by one: more state changes than a
    prediction follows, MAX_SEGMENTS and motion.MAX_WORK raised for this reference), to
    1e-8."""
    p = pressed(0.8, 1e-4)
    times = [0.02, 0.05, 0.1, 1.0]
    summed = endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 100.0, times, p)
    with monkeypatch.context() as patch:
        patch.setattr(endstop_prediction, "_bounce_series", lambda *args: None)
        patch.setattr(endstop_prediction, "MAX_SEGMENTS", 10**5)
        patch.setattr(motion, "MAX_WORK", 10**6)
        each = endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 100.0, times, p)
    assert summed.impacts == each.impacts == 34
    assert summed.impulse == pytest.approx(each.impulse, rel=1e-8)
    for (x, w, stop, _), (xr, wr, stopr, _) in zip(summed.states, each.states):
        assert (
            stop == stopr
            and x == pytest.approx(xr, rel=1e-12, abs=1e-12)
            and w == pytest.approx(wr, rel=1e-7, abs=1e-12)
        )
    assert summed.states[-1][:3] == (p.l1, 0.0, endstop.STOP1)  # at rest on the stop
    assert summed.changes < each.changes / 5


@pytest.mark.parametrize("ci, eps_dv", [(0.8, 0.0), (0.95, 1e-4), (1.0, 0.0), (0.9999, 0.0)])
def test_pressed_body_with_continuous_friction_comes_to_rest_quickly(ci, eps_dv):
    """Dropped at 1 m/s onto rigid stop 1 with continuous friction and pressed at 100 m/s2: within
    1 s it rests on the stop (dx = l1, dv = 0, state 1; with ci = 1 the bounce speeds decay like
    exp(-B*t/3), B = 2e4 1/s, below the smallest float long before), and the prediction is quick
    (these bounces used to end in 'prediction did not finish' after 1 s of CPU)."""
    import time

    p = pressed(ci, eps_dv)
    start = time.process_time()
    pred = endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 100.0, [0.01, 0.1, 1.0], p)
    cpu = time.process_time() - start
    assert pred.states[-1][:3] == (p.l1, 0.0, endstop.STOP1)
    assert cpu < 0.5


@pytest.mark.parametrize(
    "stop, x0, w0, c, d, xe",
    [
        (FREE, 0.0, 0.4, 0.0, 0.0, 0.0),
        (DETACH1, 0.012, -0.4, 0.0, 0.0, 0.0),
        (DETACH2, -0.025, 0.4, 0.0, 0.0, 0.0),
        (STOP1, 0.012, 0.4, 100.0, 2.0, 0.01),
        (STOP2, -0.025, -0.4, 300.0, 5.0, -0.02),
    ],
)
@pytest.mark.parametrize("damp", [0.0, 0.7])
def test_piece_follows_the_documented_equation_of_each_elastic_state(stop, x0, w0, c, d, xe, damp):
    """mu*x'' = mu*g - Fstop - damp*x' (Fs = k*(dx -+ l), Fd = b*dv of the engaged stop, its documentation; damp:
    the linearized continuous friction of the _piece docstring), against the matrix exponential."""
    p = endstop.Parameters(**ELASTIC)
    mu, g = 2.0, 3.0
    piece, _ = endstop_prediction._piece(stop, 0, x0, w0, mu, g, damp, p)
    for t in (0.013, 0.05, 0.2):
        assert piece.state(t) == pytest.approx(
            linear_motion(x0, w0, mu, g, c, d + damp, xe, t), rel=1e-9, abs=1e-13
        )
    assert piece.acceleration(x0, w0) == pytest.approx(
        g - (documented_elastic_force(stop, x0, w0, p) + damp * w0) / mu, rel=1e-12
    )


@pytest.mark.parametrize("x0", [-0.05, -0.03, -0.02, -0.015, -0.01, 0.0])
@pytest.mark.parametrize("k1, k2", [(100.0, 300.0), (0.3, 0.4)])
def test_piece_of_a_preloaded_elastic_element_engages_the_sides_by_position(x0, k1, k2):
    """l1 + l2 < 0 (its documentation, 'both sides at stop'): each side acts as its spring-damper with its
    preload while geometrically engaged (dx >= l1 resp. dx <= -l2), including the boundary; the
    motion is mu*x'' = mu*g - sum of the engaged Fs + Fd - damp*x' (matrix exponential)."""
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=-0.02, l2=0.01, k1=k1, k2=k2, b1=2.0, b2=5.0)
    mu, g, damp = 2.0, 3.0, 0.5
    for w0 in (0.4, -0.4):
        one, two = x0 >= p.l1, x0 <= -p.l2
        c = (k1 if one else 0.0) + (k2 if two else 0.0)
        d = (2.0 if one else 0.0) + (5.0 if two else 0.0) + damp
        # sum of the springs k1*(x - l1) + k2*(x + l2) = c*(x - xe)
        xe = ((k1 * p.l1 if one else 0.0) - (k2 * p.l2 if two else 0.0)) / c
        piece, guards = endstop_prediction._piece(BOTH, 0, x0, w0, mu, g, damp, p)
        for t in (1e-4, 0.01, 0.3):
            assert piece.state(t) == pytest.approx(
                linear_motion(x0, w0, mu, g, c, d, xe, t), rel=1e-9, abs=1e-13
            )
        force = documented_elastic_force(BOTH, x0, w0, p) + damp * w0
        assert piece.acceleration(x0, w0) == pytest.approx(g - force / mu, rel=1e-12, abs=1e-12)
        # the piece is valid while the engaged sides stay those at x0: guards fire exactly when they change
        for x in XS + [-0.0201, -0.0199, -0.0101, -0.0099]:
            changed = (x >= p.l1, x <= -p.l2) != (one, two)
            if x in (p.l1, -p.l2):
                continue
            for w in WS:
                assert bool(fired(guards, x, w)) == changed, (x0, x, w)


def test_piece_of_a_preloaded_element_without_stiffness_is_a_damper():
    """k1 = k2 = 0 with preload: only the dampers of the engaged sides act (mu*x'' = mu*g - b*x')."""
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=-0.02, l2=0.01, k1=0.0, k2=0.0, b1=2.0, b2=5.0)
    mu, g = 2.0, 3.0
    piece, _ = endstop_prediction._piece(BOTH, 0, -0.015, 0.4, mu, g, 0.0, p)  # both engaged: b = 7
    for t in (0.01, 0.3):
        k = 7.0 / mu
        w = g / k + (0.4 - g / k) * math.exp(-k * t)
        x = -0.015 + g / k * t + (0.4 - g / k) * (1 - math.exp(-k * t)) / k
        assert piece.state(t) == pytest.approx((x, w), rel=1e-9)


@pytest.mark.parametrize(
    "mode, stop, sf",
    [
        (endstop.RIGID, STOP1, 0),
        (endstop.RIGID, STOP2, 0),
        (endstop.RIGID, STOP1, 1),
        (endstop.ELASTIC, FREE, 0),
        (endstop.RIGID, FREE, 0),
    ],
)
def test_piece_of_a_held_state_does_not_move(mode, stop, sf):
    """Rigid connection at a stop (dv = 0, its documentation) or stuck friction (sf = 0, dv = 0): the piece
    stays at x with zero velocity and zero acceleration, and no transition is located in it."""
    p = endstop.Parameters(
        mode=mode, l1=0.01, l2=0.02, friction=True, kindF=endstop.STICK_SLIP, Fst=10.0, Fsl=8.0
    )
    x = 0.01 if stop == STOP1 else -0.02 if stop == STOP2 else 0.003
    piece, guards = endstop_prediction._piece(stop, sf, x, 0.0, 2.0, 3.0, 0.0, p)
    assert guards == []
    assert piece.state(0.7) == (x, 0.0)
    assert piece.acceleration(x, 0.0) == 0.0


@pytest.mark.parametrize("sf", [1, -1])
@pytest.mark.parametrize(
    "stop, x0, c, d, xe",
    [
        (FREE, 0.0, 0.0, 0.0, 0.0),
        (STOP1, 0.012, 100.0, 2.0, 0.01),
        (STOP2, -0.025, 300.0, 5.0, -0.02),
        (DETACH1, 0.012, 0.0, 0.0, 0.0),
        (DETACH2, -0.025, 0.0, 0.0, 0.0),
        (BOTH, -0.015, 400.0, 7.0, None),
    ],
)
def test_piece_sliding_stick_slip_friction(sf, stop, x0, c, d, xe):
    """Stick-slip (kindF 2) sliding: Ff = Fsl*sign(dv) in parallel with the stop (Fi = Fstop + Ff, seed
    004), so mu*x'' = mu*g - Fstop - Fsl*sf; sliding ends (event 'stick') when dv reaches 0."""
    pre = stop == BOTH
    p = endstop.Parameters(
        **{**ELASTIC, **(dict(l1=-0.02, l2=0.01) if pre else {})},
        friction=True,
        kindF=endstop.STICK_SLIP,
        Fst=10.0,
        Fsl=8.0,
    )
    if pre:
        xe = (100.0 * p.l1 - 300.0 * p.l2) / 400.0
    mu, g = 2.0, 3.0
    w0 = 0.4 * sf
    piece, guards = endstop_prediction._piece(stop, sf, x0, w0, mu, g, 0.0, p)
    for t in (0.01, 0.04):
        assert piece.state(t) == pytest.approx(
            linear_motion(x0, w0, mu, g - 8.0 * sf / mu, c, d, xe, t), rel=1e-9, abs=1e-13
        )
    stick = [gd for gd in guards if gd[4] == "stick"]
    assert len(stick) == 1
    assert not outside(stick[0], x0, 0.5 * sf) and outside(stick[0], x0, -0.5 * sf)
    assert apply("stick", stop, sf, x0, -1e-9 * sf, p)[1:] == (0, x0, 0.0)


@pytest.mark.parametrize("kindF", [endstop.CONTINUOUS, endstop.STICK_SLIP])
@pytest.mark.parametrize("sf", [0, 1, -1])
def test_piece_without_friction_ignores_the_friction_kind(kindF, sf):
    """friction = false: kindF and sf are not used (its documentation: visible only if friction); free flight
    x = x0 + w0*t + g*t^2/2 and only the stops' transitions."""
    p = endstop.Parameters(**ELASTIC, friction=False, kindF=kindF)
    piece, guards = endstop_prediction._piece(FREE, sf, 0.0, 0.4, 2.0, 3.0, 0.0, p)
    assert piece.state(0.05) == pytest.approx(
        (0.4 * 0.05 + 1.5 * 0.05**2, 0.4 + 3.0 * 0.05), rel=1e-12
    )
    assert {gd[4] for gd in guards} == {"enter1", "enter2"}


@pytest.mark.parametrize("stop", [FREE, STOP1, STOP2, DETACH1, DETACH2])
def test_piece_guards_and_events_are_the_documented_transitions(stop):
    """For states (x, w) around each region: no guard fires inside the documented region; outside,
    the fired guard's event applied by _event gives the documented next state (its documentation)."""
    p = endstop.Parameters(**ELASTIC)
    for x in XS:
        for w in WS:
            expected = documented_exit(stop, x, w, p)
            piece, guards = endstop_prediction._piece(stop, 0, x, w, 2.0, 3.0, 0.0, p)
            names = fired(guards, x, w)
            if expected is None:
                assert names == set(), (x, w)
                continue
            assert names, (x, w)
            outcomes = {apply(name, stop, 0, x, w, p)[0] for name in names}
            if stop in (DETACH1, DETACH2) and len(names) == 2:
                assert outcomes == {
                    FREE,
                    STOP1 if stop == DETACH1 else STOP2,
                }  # both conditions at once
            else:
                assert outcomes == {expected}, (x, w, names)


def test_stop_2_release_is_located_at_the_documented_force_zero():
    """At stop 2 from -l2 at -1 m/s (b2 = 0): half a period of the undamped contact, pi*sqrt(mu/k2),
    until Fstop = k2*(dx + l2) reaches 0; the release event then makes the state free."""
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=0.01, l2=0.02, k2=400.0, b2=0.0)
    mu = 1.0
    piece, guards = endstop_prediction._piece(STOP2, 0, -0.02, -1.0, mu, 0.0, 0.0, p)
    times = [(motion.first_crossing(piece, *gd[:4], 1.0), gd[4]) for gd in guards]
    ((tc, name),) = times
    assert tc == pytest.approx(math.pi * math.sqrt(mu / 400.0), rel=1e-9)
    x, w = piece.state(tc)
    assert w == pytest.approx(1.0, rel=1e-6)
    assert apply(name, STOP2, 0, x, w, p)[0] == FREE


@pytest.mark.parametrize("mode", [endstop.RIGID, endstop.ELASTIC])
def test_free_flight_reaches_stop_2_at_the_analytic_time(mode):
    """Free flight from dx = 0 at -0.5 m/s under g = -2: dx = -l2 at t with -0.5*t - t^2 = -l2; the
    located event is the impact (rigid) or the contact (elastic) with stop 2."""
    p = endstop.Parameters(mode=mode, l1=0.01, l2=0.02, k2=300.0)
    piece, guards = endstop_prediction._piece(FREE, 0, 0.0, -0.5, 2.0, -2.0, 0.0, p)
    best = min((motion.first_crossing(piece, *gd[:4], 1.0) or math.inf, gd[4]) for gd in guards)
    t = (-0.5 + math.sqrt(0.25 + 4 * 0.02)) / 2.0
    assert best[0] == pytest.approx(t, rel=1e-9)
    x, w = piece.state(best[0])
    new = apply(best[1], FREE, 0, x, w, p)
    if mode == endstop.ELASTIC:
        assert new[0] == STOP2
    else:  # impact: restitution law dv' = -ci*dv at the stop's position
        assert (
            new[0] == FREE
            and new[2] == -0.02
            and new[3] == pytest.approx(-0.8 * (-0.5 - 2.0 * t), rel=1e-9)
        )


@pytest.mark.parametrize("event, side", [("hit1", STOP1), ("hit2", STOP2)])
def test_impact_follows_the_restitution_law_and_the_momentum_balance(event, side):
    """Rigid impact (its documentation): dv' = -ci*dv at the stop's position, permanent contact (dv' = 0, state
    1/2) when |dv'| <= eps_dv (equality included); impulse mu*(dv - dv') added to those before,
    counted, and the first one sets the onset."""
    p = endstop.Parameters(
        mode=endstop.RIGID, kind=endstop.BY_COEFFICIENT, ci=0.5, l1=0.25, l2=0.5, eps_dv=0.25
    )
    x_stop = 0.25 if side == STOP1 else -0.5
    into = 1.0 if side == STOP1 else -1.0
    mu = 2.0
    pred = endstop.Prediction()
    pred.impulse, pred.impacts = 3.0, 4
    stop, sf, x, w = endstop_prediction._event(
        event, FREE, 0, x_stop + into * 1e-12, into * 2.0, mu, p, pred, 0.3
    )
    assert (stop, sf, x, w) == (FREE, 0, x_stop, -into * 1.0)  # rebound 0.5*2 > eps_dv
    assert pred.impulse == 3.0 + mu * into * 3.0 and pred.impacts == 5 and pred.onset == 0.3
    # |dv'| = 0.25 = eps_dv
    stop, sf, x, w = endstop_prediction._event(event, FREE, 0, x_stop, into * 0.5, mu, p, pred, 0.4)
    assert (stop, x, w) == (side, x_stop, 0.0)
    assert (
        pred.impulse == 3.0 + mu * into * 3.0 + mu * into * 0.5
        and pred.impacts == 6
        and pred.onset == 0.3
    )


def test_release_and_detach_transitions_at_the_stop_points():
    """Module docstring: at stop 1 released -> 11 only if still dx > l1, else 0; 11 -> 0 when dx < l1,
    -> 1 when dv > 0 again (stop 2 mirrored); checked at the stop points themselves and with a
    negative l2 (stop 2 at dx = +0.01)."""
    for p in (
        endstop.Parameters(**ELASTIC),
        endstop.Parameters(mode=endstop.ELASTIC, l1=0.05, l2=-0.01),
    ):
        l1, l2 = p.l1, p.l2
        assert apply("release", STOP1, 0, l1, -0.5, p)[0] == FREE
        assert apply("release", STOP1, 0, l1 + 1e-3, -0.5, p)[0] == DETACH1
        assert apply("release", STOP2, 0, -l2, 0.5, p)[0] == FREE
        assert apply("release", STOP2, 0, -l2 - 1e-3, 0.5, p)[0] == DETACH2
        assert apply("release", STOP2, 0, -l2 + 1e-3, 0.5, p)[0] == FREE
        assert apply("passed", DETACH1, 0, l1 - 1e-3, -0.5, p)[0] == FREE
        assert apply("passed", DETACH2, 0, -l2 + 1e-3, 0.5, p)[0] == FREE
        assert apply("again", DETACH1, 0, l1 + 1e-3, 1e-9, p)[0] == STOP1
        assert apply("again", DETACH2, 0, -l2 - 1e-3, -1e-9, p)[0] == STOP2
        assert apply("enter1", FREE, 0, l1, 0.5, p)[0] == STOP1
        assert apply("enter2", FREE, 0, -l2, -0.5, p)[0] == STOP2
        # the motion itself is not changed by these transitions
        assert apply("release", STOP1, 1, l1 + 1e-3, -0.5, p)[1:] == (1, l1 + 1e-3, -0.5)


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize(
    "ci, eps_dv, span",
    [(0.8, 1e-3, 10.0), (0.8, 1e-3, 0.3), (0.6, 0.0, 0.25), (0.0, 1e-3, 1.0), (0.5, 0.0, 10.0)],
)
def test_bounce_series_without_friction_is_the_bounce_loop(event, side, ci, eps_dv, span):
    mu, g, speed = 2.0, 9.81, 0.5
    p = rigid_stops(ci=ci, eps_dv=eps_dv)
    got = endstop_prediction._bounce_series(event, -side * speed, mu, side * g, p, span)
    want = bounce_loop(side, speed, g, g, ci, eps_dv, mu, p.l1 + p.l2, span)
    # measured relative error <= 3e-16
    assert_same(got, want, rel=1e-13, impacts=10**9 if eps_dv == 0.0 and span == 10.0 else None)


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize("kind, ci", [(endstop.PLASTIC, 0.0), (endstop.ELASTIC_IMPACT, 1.0)])
def test_bounce_series_uses_the_restitution_of_the_kind_of_impact(event, side, kind, ci):
    mu, g, speed = 1.5, 9.81, 0.4
    p = rigid_stops(kind=kind, ci=0.5)
    got = endstop_prediction._bounce_series(event, -side * speed, mu, side * g, p, 0.7)
    assert_same(got, bounce_loop(side, speed, g, g, ci, p.eps_dv, mu, p.l1 + p.l2, 0.7), rel=1e-13)


@pytest.mark.parametrize("event, side", EVENTS)
@pytest.mark.parametrize(
    "Fsl, span", [(3.0, 10.0), (3.0, 0.2), (0.5, 10.0), (0.0, 0.3), (7.0, 10.0)]
)
def test_bounce_series_with_stick_slip_friction_slides_out_and_back(event, side, Fsl, span):
    # sliding away, friction adds to the pressing acceleration; sliding back, it subtracts
    mu, g, speed = 2.0, 9.81, 0.5
    p = rigid_stops(friction=True, kindF=endstop.STICK_SLIP, Fst=5.0, Fsl=Fsl)
    got = endstop_prediction._bounce_series(event, -side * speed, mu, side * g, p, span)
    want = bounce_loop(
        side, speed, g + Fsl / mu, g - Fsl / mu, 0.8, p.eps_dv, mu, p.l1 + p.l2, span
    )
    assert want is not None
    assert_same(got, want, rel=1e-13)  # measured 3e-16


def test_bounce_series_stick_slip_friction_holding_the_body_at_the_apex_is_none():
    mu, g = 2.0, 5.0
    for Fst in (10.0, 10.5):  # |mu*g| = 10 <= Fst: sticks at the apex
        p = rigid_stops(friction=True, kindF=endstop.STICK_SLIP, Fst=Fst, Fsl=3.0)
        assert endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None
        assert endstop_prediction._bounce_series("hit2", 0.5, mu, -g, p, 10.0) is None
    p = rigid_stops(friction=True, kindF=endstop.STICK_SLIP, Fst=9.99, Fsl=3.0)
    assert endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0) is not None
    p = rigid_stops(
        friction=True, kindF=endstop.STICK_SLIP, Fst=5.0, Fsl=-1.0
    )  # negative sliding friction
    assert endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None
    # sliding friction at least the pressing force: the body never comes back
    p = rigid_stops(friction=True, kindF=endstop.STICK_SLIP, Fst=5.0, Fsl=10.0)
    assert endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0) is None


@pytest.mark.parametrize("event, side", EVENTS)
def test_bounce_series_negligible_continuous_friction_is_the_series_without_friction(event, side):
    mu, g, speed = 2.0, 9.81, 0.5
    tiny = 1e-17 * mu * abs(side * g)  # max(Fst, Fsl) at the documented bound
    for Fst, Fsl in ((tiny, 0.5 * tiny), (0.5 * tiny, tiny), (-tiny, 0.0)):
        p = rigid_stops(friction=True, kindF=endstop.CONTINUOUS, Fst=Fst, Fsl=Fsl)
        pred = endstop.Prediction()
        got = endstop_prediction._bounce_series(event, -side * speed, mu, side * g, p, 10.0, pred)
        assert_same(
            got, bounce_loop(side, speed, g, g, 0.8, p.eps_dv, mu, p.l1 + p.l2, 10.0), rel=1e-13
        )
        assert pred.flights == 0  # no flight with friction followed


@pytest.mark.parametrize(
    "event, u, g",
    [
        ("hit1", 0.5, 9.81),
        ("hit1", 1.5, 9.81),
        ("hit2", -0.5, -9.81),
        ("hit1", 0.0, 9.81),
        ("hit2", 0.0, -9.81),
        ("hit2", -1.0, -9.81),
    ],
)
def test_bounce_series_moving_into_the_stop_or_at_rest_is_none(event, u, g):
    assert endstop_prediction._bounce_series(event, u, 2.0, g, rigid_stops(), 10.0) is None


@pytest.mark.parametrize(
    "p",
    [
        rigid_stops(mode=endstop.ELASTIC),
        rigid_stops(l1=0.02, l2=-0.03),
        rigid_stops(l1=0.02, l2=-0.03, friction=True, kindF=endstop.CONTINUOUS, Fst=1.0, Fsl=0.8),
        rigid_stops(
            mode=endstop.ELASTIC, friction=True, kindF=endstop.STICK_SLIP, Fst=1.0, Fsl=0.8
        ),
    ],
)
def test_bounce_series_only_for_a_rigid_stop_with_backlash(p):
    assert endstop_prediction._bounce_series("hit1", -0.5, 2.0, 9.81, p, 10.0) is None
    assert endstop_prediction._bounce_series("hit2", 0.5, 2.0, -9.81, p, 10.0) is None


def test_bounce_series_preloaded_rigid_element_with_slow_elastic_bounces_is_none():
    # l1 + l2 < 0: the rigid_stops element is a connection on both sides; no bounces, even those slow
    # enough for the friction bounces' envelope (ci >= 0.999, speed in the friction's first band)
    p = rigid_stops(
        l1=0.02,
        l2=-0.03,
        friction=True,
        kindF=endstop.CONTINUOUS,
        Fst=1.0,
        Fsl=0.8,
        ci=0.9995,
        eps_dv=1e-13,
    )
    for u in (1e-7, 1e-9):
        assert endstop_prediction._bounce_series("hit1", -u, 2.0, 9.81, p, 1.0) is None
        assert endstop_prediction._bounce_series("hit2", u, 2.0, -9.81, p, 1.0) is None


def test_bounce_series_at_stop_2_leaving_at_unit_speed():
    p = rigid_stops()
    got = endstop_prediction._bounce_series("hit2", 1.0, 2.0, -100.0, p, 10.0)
    assert_same(
        got, bounce_loop(-1.0, 1.0, 100.0, 100.0, 0.8, p.eps_dv, 2.0, p.l1 + p.l2, 10.0), rel=1e-13
    )


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("ci, eps_dv", [(0.8, 1e-3), (0.6, 0.02), (0.0, 1e-3), (1.0, 1e-3)])
def test_predict_bounces_on_a_rigid_stop_are_the_bounce_loop(side, ci, eps_dv):
    mu, g = 2.0, 9.81
    p = rigid_stops(ci=ci, eps_dv=eps_dv)
    L = p.l1 if side > 0 else p.l2
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, mu, side * g, TIMES, p)
    impacts, state = reference_motion(side, L, g, g, ci, eps_dv, mu, TIMES[-1])
    check_prediction(pred, impacts, state, TIMES, False)
    assert pred.changes == len(impacts)  # each impact is a state change


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("Fsl", [0.0, 3.0])
def test_predict_bounces_with_stick_slip_friction_are_the_bounce_loop(side, Fsl):
    mu, g, ci, eps_dv = 2.0, 9.81, 0.7, 2e-3
    p = rigid_stops(ci=ci, eps_dv=eps_dv, friction=True, kindF=endstop.STICK_SLIP, Fst=5.0, Fsl=Fsl)
    L = p.l1 if side > 0 else p.l2
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, mu, side * g, TIMES, p)
    impacts, state = reference_motion(
        side, L, g + Fsl / mu, g - Fsl / mu, ci, eps_dv, mu, TIMES[-1]
    )
    assert impacts[-1][1] == 0.0
    check_prediction(pred, impacts, state, TIMES, True)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_predict_bounces_without_eps_dv_end_at_the_accumulation_point(side):
    # eps_dv = 0: infinitely many impacts (counted as 1e9) before the accumulation point, then the
    # contact is permanent; stop 2 the same as stop 1 (followed one by one it would never end)
    mu, g, ci = 2.0, 9.81, 0.5
    p = rigid_stops(ci=ci, eps_dv=0.0)
    L = p.l1 if side > 0 else p.l2
    T0, v0 = math.sqrt(2 * L / g), math.sqrt(2 * g * L)
    end = T0 + 2 * ci * v0 / g / (1 - ci)
    times = [0.5 * T0, T0 + 0.3 * (end - T0), end * 1.01, 1.0]
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, mu, side * g, times, p)
    assert pred.impacts >= 10**9
    # sum of mu*(1 + ci)*ci^k*v0 over all k (the rebounds tend to 0: no plastic last impact)
    assert close(pred.impulse, side * mu * (1 + ci) * v0 / (1 - ci), 1e-13)  # measured 2e-16
    impacts, state = reference_motion(side, L, g, g, ci, 0.0, mu, times[1])
    for t, st in zip(times[:2], pred.states[:2]):
        xr, wr, stopr, _ = state(t)
        assert abs(st[0] - xr) <= 1e-13 and abs(st[1] - wr) <= 1e-12 and st[2] == stopr
    for st in pred.states[2:]:
        assert st == (side * L, 0.0, endstop.STOP1 if side > 0 else endstop.STOP2, 0)


def test_predict_continuous_friction_bounces_count_their_flights_in_the_prediction():
    # a rigid_stops stop with continuous friction: the bounces after the first impact are flights solved
    # one by one (friction_bounces), counted in the prediction (pred.flights) and within its impacts
    mu, g = 2.0, 9.81
    p = rigid_stops(ci=0.6, eps_dv=1e-2, friction=True, kindF=endstop.CONTINUOUS, Fst=1.0, Fsl=0.8)
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, mu, g, [1.0], p)
    assert pred.impacts >= 3
    assert 1 <= pred.flights < pred.impacts
    assert pred.states[0][:3] == (p.l1, 0.0, endstop.STOP1)


@pytest.mark.parametrize(
    "dx, dv, g",
    [
        (0.0, 1e308, 1e308),
        (1e308, 0.0, 1e308),
        (1e308, 1e308, 0.0),
        (-1e308, -1e308, 1.0),
        (0.0, math.inf, 0.0),
        (0.0, 0.0, math.nan),
    ],
)
def test_predict_overflowing_inputs_give_non_finite_states(dx, dv, g):
    pred = endstop_prediction.predict(dx, dv, endstop.FREE, 0, 1.0, g, [0.1, 0.2], rigid_stops())
    assert len(pred.states) == 2 and pred.onset == 0.0
    assert all(
        math.isnan(s[0]) and math.isnan(s[1]) and s[2:] == (endstop.FREE, 0) for s in pred.states
    )


def test_predict_ignores_the_parameters_of_an_inactive_friction():
    # friction = false: the friction law's parameters do not enter (eps_tau = 0 would divide by 0)
    kw = dict(friction=False, kindTrans=endstop.TANH, eps_tau=0.0)
    for p in (rigid_stops(**kw), endstop.Parameters(mode=endstop.ELASTIC, **kw)):
        pred = endstop_prediction.predict(0.0, 0.1, endstop.FREE, 0, 1.0, 1.0, [0.01], p)
        x, w, stop, sf = pred.states[0]
        assert (
            close(x, 0.1 * 0.01 + 0.5 * 0.01**2, 1e-14)
            and close(w, 0.11, 1e-14)
            and stop == endstop.FREE
        )


def test_predict_impact_exactly_at_the_last_output_time():
    # free flight at 1 m/s from 0 to the stop at l1 = 0.5 (no other force): the impact is located at
    # the first float time strictly beyond the stop, which is here also the last output time
    p = rigid_stops(l1=0.5, l2=0.5)
    t_hit = math.nextafter(0.5, 1.0)
    pred = endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 0.0, [0.25, t_hit], p)
    assert len(pred.states) == 2
    assert pred.states[0] == (0.25, 1.0, endstop.FREE, 0)
    x, w, stop, sf = pred.states[1]
    assert abs(x - 0.5) <= 2e-16 and w in (1.0, -0.8) and stop == endstop.FREE
    assert pred.impacts <= 1


def test_predict_elastic_contact_with_continuous_friction_keeps_the_friction():
    p = endstop.Parameters(
        mode=endstop.ELASTIC,
        l1=0.01,
        l2=0.01,
        k1=1e4,
        b1=10.0,
        friction=True,
        kindF=endstop.CONTINUOUS,
        Fst=20.0,
        Fsl=15.0,
        dvL=1e-3,
    )
    mu, g, x0, w0 = 1.0, 50.0, 0.011, 0.5
    times = [0.002, 0.005, 0.008]
    pred = endstop_prediction.predict(x0, w0, endstop.STOP1, 0, mu, g, times, p)
    for t, (x, w, stop, sf) in zip(times, pred.states):
        xr, wr = continuous_contact_reference(p, mu, g, x0, w0, t)
        assert stop == endstop.STOP1 and w > 0.49
        # measured 2e-15 m, 1e-14 m/s (without the friction: 1e-4 m, 0.1 m/s off)
        assert abs(x - xr) <= 2e-14 and abs(w - wr) <= 2e-13, (x, xr, w, wr)


@pytest.mark.parametrize(
    "mode, stop, x0",
    [
        (endstop.ELASTIC, endstop.STOP1, 0.014),
        (endstop.ELASTIC, endstop.FREE, 0.0),
        (endstop.RIGID, endstop.FREE, 0.0),
    ],
)
def test_predict_starting_at_a_friction_node(mode, stop, x0):
    # dv = dvL is a node of the interpolated law: the motion leaves it in the band its acceleration
    # points into (here downwards: mu*g - Fstop - Fst < 0), i.e. dv decreases from dvL at once
    p = endstop.Parameters(
        mode=mode,
        l1=0.01,
        l2=0.01,
        k1=1e4,
        b1=10.0,
        friction=True,
        kindF=endstop.CONTINUOUS,
        Fst=20.0,
        Fsl=15.0,
        dvL=1e-3,
    )
    mu, g = 1.0, 10.0 if stop == endstop.FREE else 50.0
    acc = (
        g - (p.k1 * (x0 - p.l1) + p.b1 * p.dvL if stop == endstop.STOP1 else 0.0) / mu - p.Fst / mu
    )
    assert acc < 0.0
    t = 1e-12  # dv moves by ~3e-11, within the band below
    pred = endstop_prediction.predict(x0, p.dvL, stop, 0, mu, g, [t], p)
    x, w, st, _ = pred.states[0]
    assert st == stop
    assert pred.changes == 0  # no band left: started in the right one
    assert abs(x - (x0 + p.dvL * t + 0.5 * acc * t * t)) <= 1e-15
    assert abs(w - (p.dvL + acc * t)) <= 0.2 * abs(acc) * t


def test_predict_more_state_changes_than_its_limit_is_an_event_storm_naming_the_span(monkeypatch):
    monkeypatch.setattr(endstop_prediction, "MAX_SEGMENTS", 40)
    with pytest.raises(EventStorm) as info:
        endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 0.0, [100.0], rattling_elastic())
    assert (
        "EndStop" in str(info.value)
        and "40 state changes" in str(info.value)
        and "100.0 s" in str(info.value)
    )


def test_predict_more_work_than_its_limit_is_an_event_storm_naming_the_span(monkeypatch):
    from contactfmu.mechanics import motion

    monkeypatch.setattr(motion, "MAX_WORK", 200)
    with pytest.raises(EventStorm) as info:
        endstop_prediction.predict(0.0, 1.0, endstop.FREE, 0, 1.0, 0.0, [100.0], rattling_elastic())
    assert "EndStop prediction over 100.0 s" in str(info.value)


def test_endstop_rigid_drop_bounces_with_the_analytic_times_and_impulses():
    """A body falling from 0.1 m (g = 9.81 towards stop 1 at l1 = 0), ci = 0.5."""
    G, H, ci, mu = 9.81, 0.1, 0.5, 2.0
    p = endstop.Parameters(
        mode=endstop.RIGID, kind=endstop.BY_COEFFICIENT, ci=ci, l1=0.0, l2=1.0, eps_dv=1e-4
    )
    t1 = math.sqrt(2 * H / G)
    v1 = G * t1
    t2 = t1 + 2 * ci * v1 / G  # the second impact
    times = [0.5 * t1, t1 + 0.3 * (t2 - t1), t1 + 0.9 * (t2 - t1)]
    pred = endstop_prediction.predict(-H, 0.0, endstop.FREE, 0, mu, G, times, p)
    assert pred.onset == pytest.approx(t1, rel=1e-9)
    assert pred.impacts == 1 and pred.impulse == pytest.approx(mu * (1 + ci) * v1, rel=1e-9)
    for t, (x, w, stop, sf) in zip(times, pred.states):
        if t < t1:
            assert (x, w) == pytest.approx((-H + 0.5 * G * t * t, G * t), rel=1e-9)
        else:
            tau = t - t1
            assert (x, w) == pytest.approx(
                (-ci * v1 * tau + 0.5 * G * tau * tau, -ci * v1 + G * tau), rel=1e-9
            )
        assert stop == endstop.FREE
    # to the end of the bouncing: ci^k v1 speeds summed as a geometric series, total impulse of a
    # body coming to rest on the stop = mu*v1*(1 + 2 ci/(1 - ci)) (its momentum plus the weight's)
    t_end = t1 + 2 * ci * v1 / G / (1 - ci)
    pred = endstop_prediction.predict(-H, 0.0, endstop.FREE, 0, mu, G, [t_end + 0.1], p)
    x, w, stop, sf = pred.states[0]
    assert stop == endstop.STOP1 and w == 0.0 and x == pytest.approx(0.0, abs=1e-12)
    assert pred.impulse == pytest.approx(mu * v1 * (1 + 2 * ci / (1 - ci)), rel=1e-4)


@pytest.mark.parametrize("b1", [0.0, 40.0])
def test_endstop_elastic_hit_matches_the_kelvin_voigt_contact(b1):
    """From 1 cm before stop 1 at 1 m/s: free flight, then mu*x'' = -k1*(x - l1) - b1*x' until the
    stop force k1*(x - l1) + b1*x' reaches 0, then free again."""
    k1, mu, l1 = 1e4, 1.0, 0.0
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=l1, l2=1.0, k1=k1, b1=b1)
    a = np.array([[0.0, 1.0], [-k1 / mu, -b1 / mu]])

    def contact(tau):
        return expm(a * tau) @ np.array([0.0, 1.0])

    release = brentq(lambda tau: k1 * contact(tau)[0] + b1 * contact(tau)[1], 1e-4, 0.05)
    xr, wr = contact(release)
    times = [0.005, 0.01 + 0.5 * release, 0.01 + release + 0.02]
    pred = endstop_prediction.predict(-0.01, 1.0, endstop.FREE, 0, mu, 0.0, times, p)
    assert pred.onset == pytest.approx(0.01, rel=1e-9)
    (x0, w0, s0, _), (x1, w1, s1, _), (x2, w2, s2, _) = pred.states
    assert (x0, w0, s0) == (pytest.approx(-0.005), 1.0, endstop.FREE)
    assert (x1, w1) == pytest.approx(tuple(contact(0.5 * release)), rel=1e-8, abs=1e-12)
    assert s1 == endstop.STOP1
    assert (x2, w2) == pytest.approx((xr + 0.02 * wr, wr), rel=1e-7, abs=1e-12)
    assert s2 in (endstop.FREE, endstop.DETACH1)
    if b1 == 0.0:
        assert release == pytest.approx(math.pi * math.sqrt(mu / k1), rel=1e-9)


def test_endstop_stick_slip_sliding_decelerates_and_sticks():
    """Friction only (wide backlash), kindF 2: sliding at dv = 0.5 under Fsl = 8 N with mu = 2 kg
    stops at t = 0.5*2/8 and stays stuck (|mu*g| = 0 <= Fst)."""
    p = endstop.Parameters(
        l1=1.0, l2=1.0, friction=True, kindF=endstop.STICK_SLIP, Fst=10.0, Fsl=8.0
    )
    pred = endstop_prediction.predict(0.0, 0.5, endstop.FREE, 1, 2.0, 0.0, [0.1, 0.2], p)
    (x0, w0, _, sf0), (x1, w1, _, sf1) = pred.states
    assert (x0, w0, sf0) == (
        pytest.approx(0.5 * 0.1 - 0.5 * 4.0 * 0.01),
        pytest.approx(0.5 - 4.0 * 0.1),
        1,
    )
    assert (x1, w1, sf1) == (pytest.approx(0.5 * 0.125 - 0.5 * 4.0 * 0.125**2), 0.0, 0)
    assert pred.onset == 0.0
    # held force below the static level: stays stuck; above: breaks away, sliding with Fsl against it
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, 2.0, 4.9, [0.1], p)
    assert pred.states[0][1:] == (0.0, endstop.FREE, 0)
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, 2.0, 5.5, [0.1], p)
    assert pred.states[0][1] == pytest.approx((5.5 - 8.0 / 2.0) * 0.1) and pred.states[0][3] == 1
    pred = endstop_prediction.predict(0.0, 0.0, endstop.FREE, 0, 2.0, -5.5, [0.1], p)
    assert pred.states[0][1] == pytest.approx((-5.5 + 8.0 / 2.0) * 0.1) and pred.states[0][3] == -1


def test_endstop_rigid_stop_holds_until_the_force_pulls_away():
    p = endstop.Parameters(mode=endstop.RIGID, l1=0.0, l2=1.0, eps_Fi=1e-3)
    pred = endstop_prediction.predict(0.0, 0.0, endstop.STOP1, 0, 2.0, 1.0, [0.1], p)
    assert pred.states[0] == (0.0, 0.0, endstop.STOP1, 0)
    pred = endstop_prediction.predict(0.0, 0.0, endstop.STOP1, 0, 2.0, -1.0, [0.1], p)
    assert pred.states[0][:3] == (pytest.approx(-0.005), pytest.approx(-0.1), endstop.FREE)
    pred = endstop_prediction.predict(-1.0, 0.0, endstop.STOP2, 0, 2.0, -1.0, [0.1], p)
    assert pred.states[0] == (-1.0, 0.0, endstop.STOP2, 0)
    pred = endstop_prediction.predict(-1.0, 0.0, endstop.STOP2, 0, 2.0, 1.0, [0.1], p)
    assert pred.states[0][2] == endstop.FREE and pred.states[0][1] == pytest.approx(0.1)
    assert endstop._rigid_hold(endstop.STOP1, 1.0, -0.9e-3, p)
    assert not endstop._rigid_hold(endstop.STOP1, 1.0, -1.1e-3, p)
    assert endstop._rigid_hold(endstop.STOP2, 1.0, 0.9e-3, p) and not endstop._rigid_hold(
        endstop.STOP2, 1.0, 1.1e-3, p
    )
    pred = endstop_prediction.predict(math.inf, 0.0, endstop.FREE, 0, 1.0, 0.0, [0.1, 0.2], p)
    assert (
        pred.onset == 0.0 and all(math.isnan(s[0]) for s in pred.states) and len(pred.states) == 2
    )


def test_endstop_prediction_counts_only_the_state_changes_that_happen():
    p = endstop.Parameters(mode=endstop.ELASTIC, l1=0.01, l2=0.01)
    pred = endstop_prediction.predict(
        0.0, 0.01, endstop.FREE, 0, 1.0, 0.0, [0.1, 0.2], p
    )  # stays in the gap
    assert (pred.changes, pred.impacts, pred.impulse, pred.onset) == (0, 0, 0.0, None)
    pred = endstop_prediction.predict(
        0.0, 1.0, endstop.FREE, 0, 1.0, 0.0, [0.0105], p
    )  # reaches stop 1 only
    assert pred.changes == 1 and pred.onset == pytest.approx(0.01, rel=1e-12)


def test_endstop_bounce_storm_is_summed_in_closed_form():
    """endstop_prediction.predict (what the FMU runs): a relative acceleration of 2e301 m/s2 into stop 1 of a
    rigid stop (ci = 0.8) with stick-slip friction: about 1600 bounces within 1e-150 s end in
    permanent contact (the geometric series of the bounces, summed in closed form) instead of 'more
    than 10000 state changes'; the summed impulses equal the impacts' momentum changes."""
    import time

    p = endstop.Parameters(mode=1, friction=True, kindF=2)
    t0 = time.process_time()
    pred = endstop_prediction.predict(
        1e-300, 0.0, endstop.FREE, 0, 0.5, 1.987657047267876e301, (1e-3, 2e-3), p
    )
    assert time.process_time() - t0 < 0.1
    assert [s[:3] for s in pred.states] == [(0.01, 0.0, endstop.STOP1)] * 2
    assert pred.impacts > 1000
    # no friction, g = 9.81 from 0.1 m under the stop: impulse of all bounces = the momentum of the fall
    # and of the pushing force's impulse until the permanent contact: sum_k (1 + ci)*ci^k*v0 minus the
    # last plastic one's rebound, i.e. close to v0*(1 + ci)/(1 - ci)
    q = endstop.Parameters(mode=1, l1=0.0, l2=1.0, ci=0.8)
    v0 = (2 * 9.81 * 0.1) ** 0.5
    pred = endstop_prediction.predict(-0.1, 0.0, endstop.FREE, 0, 1.0, 9.81, (2.0,), q)
    assert pred.states[0][:3] == (0.0, 0.0, endstop.STOP1)
    assert pred.impulse == pytest.approx(v0 * 1.8 / 0.2, rel=1e-3)


def test_endstop_undamped_rigid_rattle_between_the_stops_is_followed_to_the_end():
    """Rigid stops 2 cm apart, elastic impacts (kind 2), 863 m/s, no other force: 43,150 impacts in
    1 s (used to end in 'more than 10000 state changes'). Legs in closed form, whole periods of
    the envelope beyond 20,000 legs: the state is the folded free flight, the impulses sum to the
    momentum change (their net is mu*(w0 - w))."""
    import time

    p = endstop.Parameters(mode=1, kind=2)
    t0 = time.process_time()
    pred = endstop_prediction.predict(
        0.0, -863.0, endstop.FREE, 0, 1.0, 0.0, (0.5, 1.0, 1.0 + 1.3e-5), p
    )
    assert time.process_time() - t0 < 0.2
    for (x, w, stop, _), t in zip(pred.states, (0.5, 1.0, 1.0 + 1.3e-5)):
        xe, we = _triangle(0.0, -863.0, -0.01, 0.01, t)
        assert stop == endstop.FREE
        assert w == we
        assert x == pytest.approx(xe, abs=1e-9)  # 863 m/s: 1e-9 m is 1.2e-12 s of phase
    assert pred.impacts == pytest.approx(863.0 * (1.0 + 1.3e-5) / 0.02, abs=1.0)
    assert pred.impulse == pytest.approx(1.0 * (-863.0 - pred.states[-1][1]), abs=1e-6)


def test_endstop_elastic_bouncing_on_one_stop_is_periodic():
    """Elastic impacts (kind 2) of a body dropped 1 um onto a rigid stop under g = 9.81 m/s2: the
    bounce repeats forever with period 2*sqrt(2*h/g) (about 22,000 impacts in 10 s; used to end in
    'more than 10000 state changes'). Whole periods are skipped: the state at 10 s is the
    analytic one, x = -(v0*tau - g*tau^2/2), tau the time since the last impact."""
    import time

    p = endstop.Parameters(mode=1, kind=2, l1=0.0, l2=1.0)
    h, g = 1e-6, 9.81
    t0 = time.process_time()
    pred = endstop_prediction.predict(-h, 0.0, endstop.FREE, 0, 1.0, g, (10.0,), p)
    assert time.process_time() - t0 < 0.2
    tf = math.sqrt(2.0 * h / g)
    v0 = g * tf
    tau = (10.0 - tf) % (2.0 * tf)
    x, w, stop, _ = pred.states[0]
    assert stop == endstop.FREE
    assert x == pytest.approx(-(v0 * tau - 0.5 * g * tau * tau), abs=1e-6 * h)
    assert w == pytest.approx(-v0 + g * tau, abs=1e-6 * v0)
    assert pred.impacts == math.floor((10.0 - tf) / (2.0 * tf)) + 1


def test_endstop_rattle_at_the_largest_float_speed_is_bounded():
    """hypothesis nightly (seed 1): a rigid elastic stop, the relative motion 999 m behind stop 2
    at -1.797e308 m/s. Each leg between the stops takes 2.2e-310 s; 2*D/(s + s') overflowed to a
    zero duration and the rattle never advanced (292 s of CPU in one 1 ms doStep). Now the
    periodic rattle's whole periods are skipped: 0.1 s of CPU, the motion between the stops with
    its speed."""
    import time

    p = endstop.Parameters(mode=1, kind=2)
    t0 = time.process_time()
    pred = endstop_prediction.predict(
        -999.0, -1.7976931348623157e308, endstop.FREE, 0, 2.0, -237.8, (1e-3, 2e-3), p
    )
    assert time.process_time() - t0 < 0.5
    for x, w, stop, _ in pred.states:
        assert -0.01 <= x <= 0.01 and abs(w) == 1.7976931348623157e308 and stop == endstop.FREE


def test_endstop_fall_through_falling_friction_bands_does_not_chatter():
    """hypothesis nightly (seed 1): a rigid stop with continuous friction (dvL = 9.6e-6 m/s,
    tanh transition) and a relative acceleration of -3.1e7 m/s2 from rest: the motion crossed a
    band end and came back on rounding (above), 10000 'band' changes within 2e-12 s and 'prediction
    did not finish'. Now it falls through the ~390 bands: at 1e-5 s (before stop 2) the velocity
    is g*t plus at most the friction's Fst/mu*t."""
    p = endstop.Parameters(
        mode=1,
        kind=3,
        ci=0.8,
        friction=True,
        kindF=1,
        Fst=10.0,
        Fsl=0.2962084028818947,
        dvL=9.634796683236928e-06,
        kindTrans=2,
        eps_dv=0.0,
        eps_Fi=0.0,
    )
    mu, g, t = 0.0009973959338114337, -31333333.198464483, 1e-5
    pred = endstop_prediction.predict(2.6e-15, 2.6e-11, endstop.FREE, 0, mu, g, (t,), p)
    x, w, stop, _ = pred.states[0]
    assert stop == endstop.FREE
    assert g * t <= w <= g * t + p.Fst / mu * t
    assert pred.changes < 1000


@pytest.mark.parametrize("mode", [endstop.ELASTIC, endstop.RIGID])
def test_stick_slip_static_below_sliding_friction_holds_up_to_the_sliding_force(mode):
    """Stick-slip with Fst < Fsl (hypothesis ci profile: Fst = 10, Fsl = 800 chattered between
    break-away and sticking, 10000 state changes in 0.6 s of CPU, then an EventStorm): a push
    between Fst and Fsl cannot keep a sliding start going (the friction Fsl exceeds it and stops
    the motion at once), so the friction stays stuck and holds the push (Filippov's sticking
    condition); beyond Fsl it breaks away and slides against Fsl."""
    p = endstop.Parameters(
        mode=mode, l1=0.01, l2=0.01, friction=True, kindF=endstop.STICK_SLIP, Fst=10.0, Fsl=800.0
    )
    mu = 2.0
    for push in (10.5, 400.0, 800.0):
        for side in (1.0, -1.0):
            g = side * push / mu
            pred = endstop_prediction.predict(0.0, 0.0, FREE, 0, mu, g, (1e-3, 0.01), p)
            assert pred.states == [(0.0, 0.0, FREE, 0)] * 2
            assert pred.changes == 0
            got = endstop.results(FREE, 0, 0.0, 0.0, mu * g, p)
            assert got[4] == side * push  # Ff holds the push
    g = 810.0 / mu  # beyond Fsl: slides with (810 - 800)/mu
    pred = endstop_prediction.predict(0.0, 0.0, FREE, 0, mu, g, (1e-3,), p)
    x, w, stop, sf = pred.states[0]
    assert (stop, sf) == (FREE, 1)
    assert w == pytest.approx(10.0 / mu * 1e-3, rel=1e-12)
    assert x == pytest.approx(0.5 * 10.0 / mu * 1e-6, rel=1e-12)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_an_elastic_stop_without_stiffness_and_damping_is_absent(side):
    """law.absent: a side with k = b = 0 transmits no force, so it is never entered (nightly
    property profile: k2 = b2 = 0 released and entered its zero-force contact at once, 10000
    state changes in 1.7 s of CPU, then an EventStorm); the body passes it in free flight. A side
    with damping only (k = 0, b > 0) is still a stop."""
    none = dict(k1=0.0, b1=0.0) if side > 0 else dict(k2=0.0, b2=0.0)
    p = endstop.Parameters(**{**ELASTIC, **none})
    mu, g, w0 = 0.5, side * 40.0, side * 0.1
    pred = endstop_prediction.predict(0.0, w0, FREE, 0, mu, g, (0.05, 0.13), p)
    assert pred.changes == 0 and pred.onset is None
    for (x, w, stop, sf), t in zip(pred.states, (0.05, 0.13)):
        assert stop == FREE
        assert (x, w) == pytest.approx((w0 * t + 0.5 * g * t * t, w0 + g * t), rel=1e-12)
    assert abs(pred.states[-1][0]) > 0.3  # well past the stop at 0.01
    damper = endstop.Parameters(**{**ELASTIC, **{k: (0.0 if k[0] == "k" else 50.0) for k in none}})
    pred = endstop_prediction.predict(0.0, w0, FREE, 0, mu, g, (0.05, 0.13), damper)
    assert pred.onset is not None and pred.states[-1][2] != FREE
