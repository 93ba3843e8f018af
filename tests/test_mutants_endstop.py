"""Tests of src/contactfmu/components/EndStop/law.py written to kill its surviving mutants (mutation/run.py,
mutation/REPORT.md). Every expected value is independent of the code under test: the SimulationX
EndStop documentation (seed 004: states, transitions, force laws, impact law) or the module's
docstring contracts written out again here, closed-form motions (free flight, the damped
spring-mass solution by the matrix exponential, the restitution law, momentum balance) and
scipy's integrators on the documented equations. (predict and _bounce_series are exercised only
through documented end-to-end behaviours.)"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from contactfmu.mechanics import contact_motion as cm
from contactfmu.components.EndStop import law as es

FREE, STOP1, STOP2, DETACH1, DETACH2, BOTH = es.FREE, es.STOP1, es.STOP2, es.DETACH1, es.DETACH2, es.BOTH


# ---- helpers: the documented equations, written out ------------------------------------------------

def linear_motion(x0, w0, mu, g, c, d, xe, t):
    """mu*x'' = mu*g - c*(x - xe) - d*x' from (x0, w0), by the matrix exponential."""
    a = np.array([[0.0, 1.0, 0.0], [-c / mu, -d / mu, g + c * xe / mu], [0.0, 0.0, 0.0]])
    z = expm(a * t) @ np.array([x0, w0, 1.0])
    return z[0], z[1]


def documented_elastic_force(stop, x, w, p):
    """Fstop of the Elastic End Stop (seed 004): Fs + Fd of the side(s) of `stop` engaged by position."""
    f = 0.0
    if stop in (STOP1, BOTH) and x >= p.l1:
        f += p.k1 * (x - p.l1) + p.b1 * w
    if stop in (STOP2, BOTH) and x <= -p.l2:
        f += p.k2 * (x + p.l2) + p.b2 * w
    return f


def outside(guard, x, w):
    """first_crossing's contract: the motion leaves the guard's region where inside*(alpha*x + beta*w
    - level) < 0."""
    alpha, beta, level, inside, _ = guard
    return inside * (alpha * x + beta * w - level) < 0.0


def fired(guards, x, w):
    """Names of the events whose regions the state (x, w) is outside of."""
    return {g[4] for g in guards if outside(g, x, w)}


ELASTIC = dict(mode=es.ELASTIC, l1=0.01, l2=0.02, k1=100.0, k2=300.0, b1=2.0, b2=5.0)
XS = [-0.05, -0.03, -0.021, -0.019, 0.0, 0.009, 0.011, 0.03]
WS = [-2.0, -0.3, -1e-3, 1e-3, 0.3, 2.0]


def apply(event, stop, sf, x, w, p, mu=2.0):
    """_event's new (stop, sf, x, w) for the located event."""
    return es._event(event, stop, sf, x, w, mu, p, es.Prediction(), 0.1)[:4]


# ---- _piece: the motion of each state ---------------------------------------------------------------

@pytest.mark.parametrize("stop, x0, w0, c, d, xe", [
    (FREE, 0.0, 0.4, 0.0, 0.0, 0.0),
    (DETACH1, 0.012, -0.4, 0.0, 0.0, 0.0),
    (DETACH2, -0.025, 0.4, 0.0, 0.0, 0.0),
    (STOP1, 0.012, 0.4, 100.0, 2.0, 0.01),
    (STOP2, -0.025, -0.4, 300.0, 5.0, -0.02),
])
@pytest.mark.parametrize("damp", [0.0, 0.7])
def test_piece_follows_the_documented_equation_of_each_elastic_state(stop, x0, w0, c, d, xe, damp):
    """mu*x'' = mu*g - Fstop - damp*x' (Fs = k*(dx -+ l), Fd = b*dv of the engaged stop, seed 004; damp:
    the linearized continuous friction of the _piece docstring), against the matrix exponential."""
    p = es.Parameters(**ELASTIC)
    mu, g = 2.0, 3.0
    piece, _ = es._piece(stop, 0, x0, w0, mu, g, damp, p)
    for t in (0.013, 0.05, 0.2):
        assert piece.state(t) == pytest.approx(linear_motion(x0, w0, mu, g, c, d + damp, xe, t), rel=1e-9, abs=1e-13)
    assert piece.acceleration(x0, w0) == pytest.approx(g - (documented_elastic_force(stop, x0, w0, p)
                                                            + damp * w0) / mu, rel=1e-12)


@pytest.mark.parametrize("x0", [-0.05, -0.03, -0.02, -0.015, -0.01, 0.0])
@pytest.mark.parametrize("k1, k2", [(100.0, 300.0), (0.3, 0.4)])
def test_piece_of_a_preloaded_elastic_element_engages_the_sides_by_position(x0, k1, k2):
    """l1 + l2 < 0 (seed 004, 'both sides at stop'): each side acts as its spring-damper with its
    preload while geometrically engaged (dx >= l1 resp. dx <= -l2), including the boundary; the
    motion is mu*x'' = mu*g - sum of the engaged Fs + Fd - damp*x' (matrix exponential)."""
    p = es.Parameters(mode=es.ELASTIC, l1=-0.02, l2=0.01, k1=k1, k2=k2, b1=2.0, b2=5.0)
    mu, g, damp = 2.0, 3.0, 0.5
    for w0 in (0.4, -0.4):
        one, two = x0 >= p.l1, x0 <= -p.l2
        c = (k1 if one else 0.0) + (k2 if two else 0.0)
        d = (2.0 if one else 0.0) + (5.0 if two else 0.0) + damp
        # sum of the springs k1*(x - l1) + k2*(x + l2) = c*(x - xe)
        xe = ((k1 * p.l1 if one else 0.0) - (k2 * p.l2 if two else 0.0)) / c
        piece, guards = es._piece(BOTH, 0, x0, w0, mu, g, damp, p)
        for t in (1e-4, 0.01, 0.3):
            assert piece.state(t) == pytest.approx(linear_motion(x0, w0, mu, g, c, d, xe, t), rel=1e-9, abs=1e-13)
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
    p = es.Parameters(mode=es.ELASTIC, l1=-0.02, l2=0.01, k1=0.0, k2=0.0, b1=2.0, b2=5.0)
    mu, g = 2.0, 3.0
    piece, _ = es._piece(BOTH, 0, -0.015, 0.4, mu, g, 0.0, p)      # both engaged: b = 7
    for t in (0.01, 0.3):
        k = 7.0 / mu
        w = g / k + (0.4 - g / k) * math.exp(-k * t)
        x = -0.015 + g / k * t + (0.4 - g / k) * (1 - math.exp(-k * t)) / k
        assert piece.state(t) == pytest.approx((x, w), rel=1e-9)


@pytest.mark.parametrize("mode, stop, sf", [(es.RIGID, STOP1, 0), (es.RIGID, STOP2, 0), (es.RIGID, STOP1, 1),
                                            (es.ELASTIC, FREE, 0), (es.RIGID, FREE, 0)])
def test_piece_of_a_held_state_does_not_move(mode, stop, sf):
    """Rigid connection at a stop (dv = 0, seed 004) or stuck friction (sf = 0, dv = 0): the piece
    stays at x with zero velocity and zero acceleration, and no transition is located in it."""
    p = es.Parameters(mode=mode, l1=0.01, l2=0.02, friction=True, kindF=es.STICK_SLIP, Fst=10.0, Fsl=8.0)
    x = 0.01 if stop == STOP1 else -0.02 if stop == STOP2 else 0.003
    piece, guards = es._piece(stop, sf, x, 0.0, 2.0, 3.0, 0.0, p)
    assert guards == []
    assert piece.state(0.7) == (x, 0.0)
    assert piece.acceleration(x, 0.0) == 0.0


@pytest.mark.parametrize("sf", [1, -1])
@pytest.mark.parametrize("stop, x0, c, d, xe", [(FREE, 0.0, 0.0, 0.0, 0.0), (STOP1, 0.012, 100.0, 2.0, 0.01),
                                                (STOP2, -0.025, 300.0, 5.0, -0.02), (DETACH1, 0.012, 0.0, 0.0, 0.0),
                                                (DETACH2, -0.025, 0.0, 0.0, 0.0), (BOTH, -0.015, 400.0, 7.0, None)])
def test_piece_sliding_stick_slip_friction(sf, stop, x0, c, d, xe):
    """Stick-slip (kindF 2) sliding: Ff = Fsl*sign(dv) in parallel with the stop (Fi = Fstop + Ff, seed
    004), so mu*x'' = mu*g - Fstop - Fsl*sf; sliding ends (event 'stick') when dv reaches 0."""
    pre = stop == BOTH
    p = es.Parameters(**{**ELASTIC, **(dict(l1=-0.02, l2=0.01) if pre else {})}, friction=True,
                      kindF=es.STICK_SLIP, Fst=10.0, Fsl=8.0)
    if pre:
        xe = (100.0 * p.l1 - 300.0 * p.l2) / 400.0
    mu, g = 2.0, 3.0
    w0 = 0.4 * sf
    piece, guards = es._piece(stop, sf, x0, w0, mu, g, 0.0, p)
    for t in (0.01, 0.04):
        assert piece.state(t) == pytest.approx(linear_motion(x0, w0, mu, g - 8.0 * sf / mu, c, d, xe, t), rel=1e-9,
                                               abs=1e-13)
    stick = [gd for gd in guards if gd[4] == "stick"]
    assert len(stick) == 1
    assert not outside(stick[0], x0, 0.5 * sf) and outside(stick[0], x0, -0.5 * sf)
    assert apply("stick", stop, sf, x0, -1e-9 * sf, p)[1:] == (0, x0, 0.0)


@pytest.mark.parametrize("kindF", [es.CONTINUOUS, es.STICK_SLIP])
@pytest.mark.parametrize("sf", [0, 1, -1])
def test_piece_without_friction_ignores_the_friction_kind(kindF, sf):
    """friction = false: kindF and sf are not used (seed 004: visible only if friction); free flight
    x = x0 + w0*t + g*t^2/2 and only the stops' transitions."""
    p = es.Parameters(**ELASTIC, friction=False, kindF=kindF)
    piece, guards = es._piece(FREE, sf, 0.0, 0.4, 2.0, 3.0, 0.0, p)
    assert piece.state(0.05) == pytest.approx((0.4 * 0.05 + 1.5 * 0.05 ** 2, 0.4 + 3.0 * 0.05), rel=1e-12)
    assert {gd[4] for gd in guards} == {"enter1", "enter2"}


def documented_exit(stop, x, w, p):
    """Elastic End Stop (seed 004, Results): the state a motion at (x, w) in state `stop` changes to
    when it leaves that state's region (None: it stays)."""
    if stop == FREE:
        return STOP1 if x > p.l1 else STOP2 if x < -p.l2 else None
    if stop == STOP1:   # leaves when Fstop <= 0 (crossing to < 0): detaching if still behind stop 1
        return (DETACH1 if x > p.l1 else FREE) if p.k1 * (x - p.l1) + p.b1 * w < 0.0 else None
    if stop == STOP2:
        return (DETACH2 if x < -p.l2 else FREE) if p.k2 * (x + p.l2) + p.b2 * w > 0.0 else None
    if stop == DETACH1:   # stop 1 passed -> free; dv changes sign (driven into the stop again) -> stop 1
        return FREE if x < p.l1 else STOP1 if w > 0.0 else None
    if stop == DETACH2:
        return FREE if x > -p.l2 else STOP2 if w < 0.0 else None


@pytest.mark.parametrize("stop", [FREE, STOP1, STOP2, DETACH1, DETACH2])
def test_piece_guards_and_events_are_the_documented_transitions(stop):
    """For states (x, w) around each region: no guard fires inside the documented region; outside,
    the fired guard's event applied by _event gives the documented next state (seed 004)."""
    p = es.Parameters(**ELASTIC)
    for x in XS:
        for w in WS:
            expected = documented_exit(stop, x, w, p)
            piece, guards = es._piece(stop, 0, x, w, 2.0, 3.0, 0.0, p)
            names = fired(guards, x, w)
            if expected is None:
                assert names == set(), (x, w)
                continue
            assert names, (x, w)
            outcomes = {apply(name, stop, 0, x, w, p)[0] for name in names}
            if stop in (DETACH1, DETACH2) and len(names) == 2:
                assert outcomes == {FREE, STOP1 if stop == DETACH1 else STOP2}    # both conditions at once
            else:
                assert outcomes == {expected}, (x, w, names)


def test_stop_2_release_is_located_at_the_documented_force_zero():
    """At stop 2 from -l2 at -1 m/s (b2 = 0): half a period of the undamped contact, pi*sqrt(mu/k2),
    until Fstop = k2*(dx + l2) reaches 0; the release event then makes the state free."""
    p = es.Parameters(mode=es.ELASTIC, l1=0.01, l2=0.02, k2=400.0, b2=0.0)
    mu = 1.0
    piece, guards = es._piece(STOP2, 0, -0.02, -1.0, mu, 0.0, 0.0, p)
    times = [(cm.first_crossing(piece, *gd[:4], 1.0), gd[4]) for gd in guards]
    (tc, name), = times
    assert tc == pytest.approx(math.pi * math.sqrt(mu / 400.0), rel=1e-9)
    x, w = piece.state(tc)
    assert w == pytest.approx(1.0, rel=1e-6)
    assert apply(name, STOP2, 0, x, w, p)[0] == FREE


@pytest.mark.parametrize("mode", [es.RIGID, es.ELASTIC])
def test_free_flight_reaches_stop_2_at_the_analytic_time(mode):
    """Free flight from dx = 0 at -0.5 m/s under g = -2: dx = -l2 at t with -0.5*t - t^2 = -l2; the
    located event is the impact (rigid) or the contact (elastic) with stop 2."""
    p = es.Parameters(mode=mode, l1=0.01, l2=0.02, k2=300.0)
    piece, guards = es._piece(FREE, 0, 0.0, -0.5, 2.0, -2.0, 0.0, p)
    best = min((cm.first_crossing(piece, *gd[:4], 1.0) or math.inf, gd[4]) for gd in guards)
    t = (-0.5 + math.sqrt(0.25 + 4 * 0.02)) / 2.0
    assert best[0] == pytest.approx(t, rel=1e-9)
    x, w = piece.state(best[0])
    new = apply(best[1], FREE, 0, x, w, p)
    if mode == es.ELASTIC:
        assert new[0] == STOP2
    else:   # impact: restitution law dv' = -ci*dv at the stop's position
        assert new[0] == FREE and new[2] == -0.02 and new[3] == pytest.approx(-0.8 * (-0.5 - 2.0 * t), rel=1e-9)


# ---- Parameters: the documented defaults (docs/fmus.md "EndStop", its variable table) ---------------------------

def test_parameter_defaults_are_the_documented_start_values():
    """Parameters() carries the start values of the EndStop variable table of docs/fmus.md."""
    p = es.Parameters()
    assert (p.l1, p.l2, p.mode, p.kind, p.ci) == (0.01, 0.01, 2, 3, 0.8)
    assert (p.k1, p.k2, p.b1, p.b2) == (1e6, 1e6, 100.0, 100.0)
    assert (p.friction, p.kindF, p.Fst, p.Fsl, p.dvL) == (False, 1, 10.0, 8.0, 1e-3)
    assert (p.eps_Fi, p.eps_dv, p.dFfrel, p.eps_dvsl, p.eps_dI) == (1e-6, 1e-4, 1e-3, 1e-6, 1e-8)
    assert (p.kindTrans, p.eps_sigma, p.eps_tau) == (1, 1.0, 0.1)


# ---- _event: the documented transitions and the impact law -------------------------------------------

@pytest.mark.parametrize("event, side", [("hit1", STOP1), ("hit2", STOP2)])
def test_impact_follows_the_restitution_law_and_the_momentum_balance(event, side):
    """Rigid impact (seed 004): dv' = -ci*dv at the stop's position, permanent contact (dv' = 0, state
    1/2) when |dv'| <= eps_dv (equality included); impulse mu*(dv - dv') added to those before,
    counted, and the first one sets the onset."""
    p = es.Parameters(mode=es.RIGID, kind=es.BY_COEFFICIENT, ci=0.5, l1=0.25, l2=0.5, eps_dv=0.25)
    x_stop = 0.25 if side == STOP1 else -0.5
    into = 1.0 if side == STOP1 else -1.0
    mu = 2.0
    pred = es.Prediction()
    pred.impulse, pred.impacts = 3.0, 4
    stop, sf, x, w = es._event(event, FREE, 0, x_stop + into * 1e-12, into * 2.0, mu, p, pred, 0.3)
    assert (stop, sf, x, w) == (FREE, 0, x_stop, -into * 1.0)           # rebound 0.5*2 > eps_dv
    assert pred.impulse == 3.0 + mu * into * 3.0 and pred.impacts == 5 and pred.onset == 0.3
    stop, sf, x, w = es._event(event, FREE, 0, x_stop, into * 0.5, mu, p, pred, 0.4)   # |dv'| = 0.25 = eps_dv
    assert (stop, x, w) == (side, x_stop, 0.0)
    assert pred.impulse == 3.0 + mu * into * 3.0 + mu * into * 0.5 and pred.impacts == 6 and pred.onset == 0.3


def test_release_and_detach_transitions_at_the_stop_points():
    """Module docstring: at stop 1 released -> 11 only if still dx > l1, else 0; 11 -> 0 when dx < l1,
    -> 1 when dv > 0 again (stop 2 mirrored); checked at the stop points themselves and with a
    negative l2 (stop 2 at dx = +0.01)."""
    for p in (es.Parameters(**ELASTIC), es.Parameters(mode=es.ELASTIC, l1=0.05, l2=-0.01)):
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


# ---- elastic_transition: the documented transitions at sampled states ---------------------------------

def test_elastic_transition_corners():
    """Module docstring's transitions at their boundaries: Fstop = 0 releases (<= 0 at stop 1, >= 0 at
    stop 2), 11 -> 0 only for dx < l1, 11 -> 1 only for dv > 0 (stop 2 mirrored), a small positive
    force keeps the contact, and a motion leaving the contact point free stays free."""
    T = es.elastic_transition
    p = es.Parameters(mode=es.ELASTIC, l1=0.25, l2=0.5, k1=4.0, k2=4.0, b1=2.0, b2=2.0)
    assert T(STOP1, 0.5, -0.5, p) == DETACH1                   # 4*0.25 - 2*0.5 = 0: released
    assert T(STOP1, 0.5, -0.25, p) == STOP1                    # Fstop = 0.5 > 0
    assert T(STOP2, -0.75, 0.5, p) == DETACH2                  # 4*(-0.25) + 2*0.5 = 0: released
    assert T(STOP2, -0.75, 0.25, p) == STOP2                   # Fstop = -0.5 < 0
    assert T(DETACH1, 0.25, -0.5, p) == DETACH1                # at dx = l1: not yet passed
    assert T(DETACH1, 0.2, -0.5, p) == FREE
    assert T(DETACH1, 0.3, 0.0, p) == DETACH1                  # dv = 0: not driven in again
    assert T(DETACH2, -0.5, 0.5, p) == DETACH2
    assert T(DETACH2, -0.45, 0.5, p) == FREE
    assert T(DETACH2, -0.6, 0.0, p) == DETACH2
    q = es.Parameters(mode=es.ELASTIC, l1=0.25, l2=0.5, k1=4.0, k2=4.0, b1=0.0, b2=0.0)
    assert T(DETACH2, -0.6, -0.5, q) == STOP2                  # driven in again: Fstop = -0.4 < 0 holds
    assert T(FREE, 0.25, -0.5, p) == FREE                      # leaving the contact point: no drag force
    assert T(FREE, -0.5, 0.5, p) == FREE
    # a negative l2 (stop 2 at dx = +0.01, l1 + l2 > 0): behind stop 2 when dx < 0.01
    r = es.Parameters(mode=es.ELASTIC, l1=0.05, l2=-0.01, k2=100.0, b2=10.0)
    assert T(STOP2, 0.0, 1.0, r) == DETACH2                    # 100*0.01*(-1) + 10 > 0, dx < -l2
    assert T(DETACH2, 0.0, 1.0, r) == DETACH2
    assert T(DETACH2, 0.02, 1.0, r) == FREE


# ---- _settle: instantaneous transitions --------------------------------------------------------------

def test_settle_rigid_and_stick_slip_states():
    """Rigid preloaded element: both sides (3); rigid at a stop with stick-slip friction: dv = 0, so the
    friction is stuck (sf 0); otherwise sf follows the sign of dv, and at dv = 0 sticks while the force
    friction must hold, mu*g - Fstop, is within Fst (equality included), else slides along it."""
    S = es._settle
    rigid_pre = es.Parameters(mode=es.RIGID, l1=-0.02, l2=0.01)
    assert S(FREE, 0, 0.0, 0.0, 2.0, 1.0, rigid_pre) == (BOTH, 0)
    ss = dict(friction=True, kindF=es.STICK_SLIP, Fst=10.0, Fsl=8.0)
    rigid = es.Parameters(mode=es.RIGID, l1=0.01, l2=0.02, **ss)
    assert S(STOP1, 1, 0.01, 0.0, 2.0, 100.0, rigid) == (STOP1, 0)
    el = es.Parameters(**ELASTIC, **ss)
    assert S(STOP1, 0, 0.02, 0.5, 2.0, 0.0, el) == (STOP1, 1)
    assert S(FREE, 0, 0.0, -0.5, 2.0, 0.0, el) == (FREE, -1)
    assert S(FREE, 0, 0.0, 0.0, 2.0, 5.0, el) == (FREE, 0)        # |need| = 10 = Fst
    assert S(FREE, 0, 0.0, 0.0, 2.0, 5.5, el) == (FREE, 1)
    assert S(FREE, 0, 0.0, 0.0, 2.0, -5.5, el) == (FREE, -1)
    # at stop 1 (elastic) with dv = 0: Fstop = 100*(0.03 - 0.01) = 2 N; need = mu*g - 2
    assert S(STOP1, 0, 0.03, 0.0, 2.0, 5.5, el) == (STOP1, 0)     # need = 9
    assert S(STOP1, 0, 0.03, 0.0, 2.0, -4.5, el) == (STOP1, -1)   # need = -11
    small = es.Parameters(**ELASTIC, friction=True, kindF=es.STICK_SLIP, Fst=0.25, Fsl=0.2)
    assert S(FREE, 0, 0.0, 0.0, 1.0, 0.5, small) == (FREE, 1)
    # no friction: the friction state is left alone
    nof = es.Parameters(**ELASTIC, friction=False, kindF=es.STICK_SLIP)
    assert S(FREE, 0, 0.0, 0.5, 2.0, 0.0, nof) == (FREE, 0)


# ---- _band: the friction band the motion is in -------------------------------------------------------

def band_params(mode=es.ELASTIC):
    return es.Parameters(mode=mode, l1=0.01, l2=0.02, k1=100.0, b1=2.0, friction=True, kindF=es.CONTINUOUS,
                         Fst=10.0, Fsl=6.0, dvL=1e-3)


def test_band_is_the_line_through_its_end_nodes_and_is_left_at_them():
    """_band docstring: Ff = F0 + slope*dv within the band of the friction_bands nodes containing dv
    (the line through its end nodes, constant values[0]/values[-1] beyond the outer nodes, so continuous),
    left ('band' guards) exactly when dv leaves [lo, hi]."""
    p = band_params()
    bands = es.friction_bands(p)
    nodes, values = bands
    n = len(nodes)
    for j in list(range(1, n, max(1, n // 25))) + [1, n - 1]:
        lo, hi = nodes[j - 1], nodes[j]
        w = 0.5 * (lo + hi)
        f0, slope, guards = es._band(bands, FREE, 0.0, w, 2.0, 1.0, p)
        assert f0 + slope * lo == pytest.approx(values[j - 1], rel=1e-12, abs=1e-12)
        assert f0 + slope * hi == pytest.approx(values[j], rel=1e-12, abs=1e-12)
        assert f0 + slope * w == pytest.approx(float(np.interp(w, nodes, values)), rel=1e-12, abs=1e-12)
        assert fired(guards, 0.0, w) == set()
        assert fired(guards, 0.0, lo - 1e-9 * (hi - lo)) and fired(guards, 0.0, hi + 1e-9 * (hi - lo))
        assert fired(guards, 0.0, 0.999 * lo + 0.001 * hi) == set() and fired(guards, 0.0, 0.001 * lo + 0.999 * hi) == set()
    for w, end in ((nodes[0] - 1.0, 0), (nodes[-1] + 1.0, -1)):
        f0, slope, guards = es._band(bands, FREE, 0.0, w, 2.0, 1.0, p)
        assert slope == 0.0
        assert f0 == pytest.approx(values[end], rel=1e-15)      # continuous at the outer node
        assert fired(guards, 0.0, w) == set() and len(guards) == 1
        assert fired(guards, 0.0, nodes[end] - 1e-6 * nodes[end])  # back inside the outer node


@pytest.mark.parametrize("i", [0, 5, None, -6, -1])
@pytest.mark.parametrize("mu, g, stop, x", [(2.0, 1.0, FREE, 0.0), (2.0, -1.0, FREE, 0.0), (0.5, 40.0, STOP1, 0.2),
                                            (2.0, 1.0, STOP1, 0.2)])
def test_band_at_a_node_is_the_one_the_acceleration_moves_into(i, mu, g, stop, x):
    """_band docstring: at a node, the band the motion moves into by the sign of its acceleration
    mu*x'' = mu*g - Fstop - Ff(node) there (Fstop of the elastic stop, seed 004)."""
    p = band_params()
    bands = es.friction_bands(p)
    nodes, values = bands
    i = len(nodes) // 2 if i is None else i % len(nodes)
    w = nodes[i]
    for g_shift in (0.0, 2.0 * values[i] / mu):
        gg = g + g_shift
        acc = mu * gg - documented_elastic_force(stop, x, w, p) - values[i]
        f0, slope, guards = es._band(bands, stop, x, w, mu, gg, p)
        other = w + (1e-7 if acc > 0 else -1e-7) * max(abs(w), 1e-3)     # just into the band moved into
        assert f0 + slope * other == pytest.approx(float(np.interp(other, nodes, values)), rel=1e-9, abs=1e-12)
        assert fired(guards, x, other) == set()


def test_band_at_a_node_with_a_small_positive_acceleration_moves_up():
    """0 < mu*x'' < 1 N at a node: the band above it (the sign of the acceleration decides)."""
    p = band_params()
    bands = es.friction_bands(p)
    nodes, values = bands
    i = len(nodes) // 2 + 3
    mu = 1.0
    g = values[i] + 0.5          # acc = 0.5 N
    f0, slope, guards = es._band(bands, FREE, 0.0, nodes[i], mu, g, p)
    up = 0.5 * (nodes[i] + nodes[i + 1])
    assert f0 + slope * up == pytest.approx(float(np.interp(up, nodes, values)), rel=1e-12)


# ---- _rattle: a rigid rattle between the two stops, leg by leg ----------------------------------------

def rigid(**kw):
    return es.Parameters(**{**dict(mode=es.RIGID, kind=es.BY_COEFFICIENT, ci=0.9, l1=0.01, l2=0.01, eps_dv=1e-4),
                            **kw})


def test_rattle_needs_a_motion_leaving_toward_the_other_stop():
    """_rattle docstring: None if not leaving toward the other stop (u >= 0 at stop 1, u <= 0 at stop
    2, dx = l1 being the upper stop); a leg leaving stop 2 upward with 0.5 m/s arrives after D/0.5."""
    p = rigid(ci=0.5)
    assert es._rattle(STOP1, 0.0, 1.0, 0.0, p, 1.0) is None
    assert es._rattle(STOP1, 0.5, 1.0, 0.0, p, 1.0) is None
    assert es._rattle(STOP2, 0.0, 1.0, 0.0, p, 1.0) is None
    got = es._rattle(STOP2, 0.5, 1.0, 0.0, p, 0.05)
    assert got[:2] == (pytest.approx(0.04, rel=1e-12), STOP1) and got[2] == pytest.approx(-0.25, rel=1e-12)
    assert got[3:] == (pytest.approx(0.75, rel=1e-12), 1, False)     # impulse mu*(0.5 + 0.25) at stop 1 (> 0)


@pytest.mark.parametrize("u", [-1.5, -2.0])
def test_rattle_leg_that_turns_back_before_the_other_stop_is_none(u):
    """Leaving stop 1 at s against a*D with s^2 <= 2*|a|*D (1.5^2 < 2*8*0.25 < 2*1.5^2; 2^2 = 2*8*0.25
    exactly: the apex just touches stop 2 without an impact speed): no leg arrives, no rattle."""
    p = rigid(l1=0.125, l2=0.125)
    assert es._rattle(STOP1, u, 1.0, 8.0, p, 10.0) is None


def test_rattle_from_rest_at_a_tiny_speed_falls_to_the_other_stop():
    """Leaving stop 1 at 1e-200 m/s with 10 m/s^2 toward stop 2 (g = -10): free fall over D, arrival
    speed sqrt(2*a*D) after sqrt(2*D/a); the rebound ci*sqrt(2aD) then turns back before stop 1."""
    p = rigid(ci=0.5)
    a, D = 10.0, 0.02
    got = es._rattle(STOP1, -1e-200, 2.0, -a, p, 0.1)
    v = math.sqrt(2 * a * D)
    assert got[0] == pytest.approx(math.sqrt(2 * D / a), rel=1e-12)
    assert got[1:3] == (STOP2, pytest.approx(0.5 * v, rel=1e-12))
    assert got[3] == pytest.approx(-2.0 * 1.5 * v, rel=1e-12) and got[4:] == (1, False)


def saturation(p, mu, g):
    """_rattle docstring: continuous friction is Fsl to rounding above dvL*(1 + ln((Fst - Fsl)/(1e-17*
    max(Fsl, mu*|g|, 1e-300)))) (where the excess (Fst - Fsl)*exp(1 - |dv|/dvL) is 1e-17 of the forces)."""
    excess = abs(p.Fst - p.Fsl)
    scale = 1e-17 * max(p.Fsl, mu * abs(g), 1e-300)
    return p.dvL * (1.0 + math.log(excess / scale)) if excess > scale else p.dvL


@pytest.mark.parametrize("Fst, Fsl, mu, g", [(10.0, 8.0, 1e4, 0.0), (10.0, 8.0, 1e6, 1e-4), (8.0, 8.0, 1e8, 0.0)])
def test_rattle_with_continuous_friction_only_above_its_saturation_speed(Fst, Fsl, mu, g):
    """A leg leaving at 1.01x the saturation speed (and arriving above it) is followed with the sliding
    level Fsl (arrival speed sqrt(s^2 - 2*(Fsl/mu + g)*D)); at 0.99x it is not (None)."""
    p = rigid(l1=0.001, l2=0.001, friction=True, kindF=es.CONTINUOUS, Fst=Fst, Fsl=Fsl, dvL=1e-3)
    v = saturation(p, mu, g)
    D = 0.002
    s = 1.01 * v
    s1 = math.sqrt(s * s - 2 * (Fsl / mu + g) * D)
    assert s1 > v
    got = es._rattle(STOP1, -s, mu, g, p, 2 * D / (s + s1) * (1 + 1e-9))
    assert got is not None and got[1] == STOP2 and got[2] == pytest.approx(0.9 * s1, rel=1e-12)
    assert es._rattle(STOP1, -0.99 * v, mu, g, p, 1.0) is None


def test_rattle_with_continuous_friction_and_no_other_force_is_never_followed():
    """Fsl = 0 and g = 0: the friction's excess Fst*exp(1 - |dv|/dvL) is never below rounding of forces
    that are all 0 (saturation speed ln(Fst/1e-317) -> inf): no leg is followed, even at 1 m/s."""
    p = rigid(friction=True, kindF=es.CONTINUOUS, Fst=10.0, Fsl=0.0, dvL=1e-3)
    assert es._rattle(STOP1, -1.0, 1.0, 0.0, p, 1.0) is None


@pytest.mark.parametrize("friction, kindF", [(False, es.CONTINUOUS), (True, es.STICK_SLIP)])
def test_rattle_at_low_speed_without_continuous_friction_is_followed(friction, kindF):
    """Without friction or with stick-slip (Fsl = 1e-3 N sliding), a slow rattle (1 cm/s, far below any
    continuous-friction saturation speed) is followed: arrival speed sqrt(s^2 - 2*Fsl/mu*D)."""
    p = rigid(friction=friction, kindF=kindF, Fst=10.0, Fsl=1e-3)
    s, D, mu = 0.01, 0.02, 1.0
    slide = 1e-3 / mu if friction else 0.0
    s1 = math.sqrt(s * s - 2 * slide * D)
    got = es._rattle(STOP1, -s, mu, 0.0, p, 2 * D / (s + s1) * (1 + 1e-9))
    assert got[:3] == (pytest.approx(2 * D / (s + s1), rel=1e-12), STOP2, pytest.approx(0.9 * s1, rel=1e-12))


def test_rattle_leg_ending_exactly_at_span_is_within_it_and_eps_dv_equality_is_permanent():
    """D = 0.25 at 0.5 m/s (g = 0): the leg takes 0.5 s, ending at span = 0.5 ('within span');
    ci*0.5 = 0.25 = eps_dv: permanent contact at stop 2 (|dv'| <= eps_dv), impulse of a plastic impact
    -mu*0.5 (mu = 2)."""
    p = rigid(ci=0.5, l1=0.125, l2=0.125, eps_dv=0.25)
    got = es._rattle(STOP1, -0.5, 2.0, 0.0, p, 0.5)
    assert got == (0.5, STOP2, 0.0, -1.0, 1, True)


def test_rattle_legs_shorter_than_the_smallest_float_are_not_followed():
    """_rattle docstring: a leg whose duration rounds to 0 (D = 1e-20 m at 1.7e308 m/s) is not followed."""
    p = rigid(l1=5e-21, l2=5e-21)
    assert es._rattle(STOP1, -1.7e308, 1.0, 0.0, p, 1.0) is None


def test_rattle_of_12000_legs_under_held_acceleration_is_followed_leg_by_leg():
    """_rattle docstring: the first RATTLE_EXACT (20000) legs are followed one by one, exact to rounding:
    12000 legs under g = 30 with ci = 0.99999 against the rattle written out leg by leg (constant
    acceleration per leg: s1^2 = s^2 + 2*a*D, duration 2*D/(s + s1), rebound ci*s1)."""
    from test_physics_mutants import rattle_one_by_one
    ci, g, mu, u = 0.99999, 30.0, 2.0, -2.0
    p = rigid(ci=ci)
    ref = rattle_one_by_one(STOP1, u, mu, g, ci, 1e-4, 0.02, 0.0, 1e9, max_legs=12000)
    span = ref[0] * (1 + 1e-12)
    got = es._rattle(STOP1, u, mu, g, p, span)
    assert got[4] == ref[4] == 12000 and got[1] == ref[1] and not got[5]
    assert got[0] == pytest.approx(ref[0], rel=1e-10)
    assert got[2] == pytest.approx(ref[2], rel=1e-9)
    assert got[3] == pytest.approx(ref[3], rel=1e-9)


# ---- _rattle_envelope: whole cycles of a long rattle ------------------------------------------------

def test_rattle_envelope_is_none_without_a_complete_cycle():
    """None when the first leg does not arrive (1 m/s against 100 m/s^2 over 2 cm) and for a plastic
    rattle (ci = 0: no rebound to leave with, though a 30 m/s^2 pull would bring it back)."""
    from test_physics_mutants import accelerations, make_leg
    D = 0.02
    acc = accelerations(100.0, 0.0)
    assert es._rattle_envelope(STOP1, 1.0, make_leg(acc, D), acc, D, 0.9, 1e-4, 1.0, 100.0, 0.0, 10.0) is None
    acc = accelerations(30.0, 0.0)
    assert es._rattle_envelope(STOP1, 3.0, make_leg(acc, D), acc, D, 0.0, 1e-4, 1.0, 30.0, 0.0, 10.0) is None


def envelope(at, s, g, slide, ci, eps, span, mu=1.0, D=0.02):
    from test_physics_mutants import accelerations, make_leg
    acc = accelerations(g, slide)
    return es._rattle_envelope(at, s, make_leg(acc, D), acc, D, ci, eps, mu, g, slide, span)


def cycles(at, s, m, g, slide, ci, mu=1.0, D=0.02):
    from test_physics_mutants import accelerations, cycles_one_by_one
    return cycles_one_by_one(at, s, m, accelerations(g, slide), D, ci, mu)


def test_rattle_envelope_fast_plastic_rattle_is_none():
    """ci = 0 (a fast rattle, |a|*D far below 1e-17*s^2, whose back leg would arrive from rest): no rebound, no rattle."""
    assert envelope(STOP1, 1000.0, 1e-10, 0.0, 0.0, 1e-4, 10.0) is None


@pytest.mark.parametrize("cycles_in_span, m", [(50.5, 49), (2.5, 1)])
def test_rattle_envelope_uniform_elastic_rattle_skips_all_whole_cycles_but_one(cycles_in_span, m):
    """ci = 1, g = 0: every cycle takes 2*D/s; whole cycles up to one before span: floor(span/T) - 1."""
    s, D = 40.0, 0.02
    T = 2 * D / s
    dt, sm, impulse, got_m = envelope(STOP1, s, 0.0, 0.0, 1.0, 1e-4, cycles_in_span * T)
    assert got_m == m and sm == s and dt == pytest.approx(m * T, rel=1e-12)


def test_rattle_envelope_fast_rattle_stays_fast_and_above_eps_dv():
    """Fast damped rattle (ci = 0.9, g = 1e-10): the skip ends with the speed still 'fast' (|a|*D <=
    1e-17*s^2, s >= sqrt(2e5) m/s), the last cycle it could take: s*r^(m+1) >= floor > s*r^(m+2) (r = ci^2);
    with eps_dv = 0 and no force only span limits it; a speed already within eps_dv: no skip."""
    s, g, ci, D = 1e4, 1e-10, 0.9, 0.02
    r = ci * ci
    floor = math.sqrt(g * D * 1e17)
    dt, sm, impulse, m = envelope(STOP1, s, g, 0.0, ci, 1e-4, 1e6)
    assert sm == pytest.approx(s * r ** m, rel=1e-12)
    assert s * r ** (m + 1) >= floor > s * r ** (m + 2)
    span = 0.05
    dt, sm, impulse, m = envelope(STOP1, 10.0, 0.0, 0.0, ci, 0.0, span)
    T = [2 * D / (10.0 * r ** j) * (1 + 1 / ci) / 2 for j in range(m + 2)]   # cycle j: D/s_j + D/(ci*s_j)
    assert sum(T[:m + 1]) <= span * (1 + 1e-12) < sum(T[:m + 2])
    assert dt == pytest.approx(sum(T[:m]), rel=1e-12)
    assert envelope(STOP1, 0.5, 0.0, 0.0, ci, 1.0, 10.0) is None


def test_rattle_envelope_fast_elastic_rattle_with_tiny_friction_has_no_net_impulse():
    """ci = 1, g = 0, Fsl/mu = 1e-9 (fast): the impacts return the speed every cycle, the friction's
    impulse over the skipped time is at most mu*slide*dt (momentum balance): |J| <= 1e-9*dt."""
    dt, sm, impulse, m = envelope(STOP1, 1e4, 0.0, 1e-9, 1.0, 1e-4, 1.0)
    assert m > 100 and abs(impulse) <= 1e-9 * dt * 1.01 + 1e-12


def test_rattle_envelope_periodic_rattle_span_of_exactly_four_periods():
    """ci = 1, g = 30 (E unchanged per cycle): span = 4 periods exactly holds 3 skipped + 1 more."""
    T = cycles(STOP1, 2.0, 1, 30.0, 0.0, 1.0)[0]
    dt, sm, impulse, m = envelope(STOP1, 2.0, 30.0, 0.0, 1.0, 1e-4, 4 * T)
    assert m == 3 and dt == pytest.approx(3 * T, rel=1e-12)


def test_rattle_envelope_slow_rattle_with_span_for_two_cycles_skips_one():
    """Slow rattle (ci = 0.9999, g = 40): span for 2.5 cycles: one cycle skipped (one more fits)."""
    T = cycles(STOP1, 3.0, 1, 40.0, 0.0, 0.9999)[0]
    dt, sm, impulse, m = envelope(STOP1, 3.0, 40.0, 0.0, 0.9999, 1e-4, 2.5 * T)
    assert m == 1 and sm == pytest.approx(cycles(STOP1, 3.0, 1, 40.0, 0.0, 0.9999)[2], rel=1e-12)


def test_rattle_envelope_slow_rattle_stops_before_the_rebound_reaches_eps_dv():
    """eps_dv just below the first rebound (0.995*ci*s): the skip keeps every rebound above it."""
    ci, s = 0.9999, 3.0
    eps = 0.995 * ci * s
    got = envelope(STOP1, s, 40.0, 0.0, ci, eps, 10.0)
    assert got is not None
    dt, sm, impulse, m = got
    assert ci * sm > eps and sm == pytest.approx(cycles(STOP1, s, m, 40.0, 0.0, ci)[2], rel=1e-9)


# exact decimal binary values: c2 = ci^2 = 1 - 2^-9 + 2^-20, slide = 1 - c2, g = 1 + c2: then
# ci^2*a12 + a21 = -2*c2 + 2*c2 = 0 exactly (no drift of E = s^2 toward a fixed point but the decay)
CI_EXACT = 1.0 - 2.0 ** -10


@pytest.mark.parametrize("ci, g, slide, s", [(0.9999, 40.0, 0.0, 3.0), (0.99999, -25.0, 0.0, 2.0),
                                             (0.9999, 10.0, 0.05, 3.0),
                                             (CI_EXACT, 1.0 + CI_EXACT ** 2, 1.0 - CI_EXACT ** 2, 2.0)])
def test_rattle_envelope_chunk_is_the_largest_within_the_energy_step(ci, g, slide, s):
    """_rattle_envelope docstring: chunks of as many cycles as change E = s^2 by at most RATTLE_STEP
    (span not limiting): |E_m/E_0 - 1| <= 0.02 < |E_(m+1)/E_0 - 1|, E_j from the cycles one by one."""
    got = envelope(STOP1, s, g, slide, ci, 1e-6, 100.0)
    assert got is not None
    dt, sm, impulse, m = got
    e = [cycles(STOP1, s, j, g, slide, ci)[2] ** 2 / s ** 2 for j in (m, m + 1)]
    assert abs(e[0] - 1) <= es.RATTLE_STEP * (1 + 1e-9) < abs(e[1] - 1)
    assert sm == pytest.approx(math.sqrt(e[0]) * s, rel=1e-9)


@pytest.mark.parametrize("s, g, fast", [(1e200, 30.0, True), (1e155, 1e300, False)])
def test_rattle_envelope_fast_or_slow_at_huge_speeds(s, g, fast):
    """Docstring: fast where |a|*D <= 1e-17*s^2 (checked as |a|*D/s^2 beyond 1e150 m/s): then the
    cycles are the geometric series (speed s*ci^(2m)); else (ci = 0.9: a cycle changes E by 34 % >
    RATTLE_STEP) no chunk. The legs in closed form scaled by s (s^2 overflows)."""
    from test_physics_mutants import accelerations
    D, ci = 0.02, 0.9
    acc = accelerations(g, 0.0)

    def leg(at, v):
        r = 2.0 * acc[at] * D / v / v
        if not 1.0 + r > 0.0:
            return None
        v1 = v * math.sqrt(1.0 + r)
        return (D / v) * (2.0 / (1.0 + v1 / v)), v1

    got = es._rattle_envelope(STOP1, s, leg, acc, D, ci, 1e-4, 1.0, g, 0.0, 1.0)
    if fast:
        dt, sm, impulse, m = got
        assert m >= 1 and sm == pytest.approx(s * ci ** (2 * m), rel=1e-12)
    else:
        assert got is None


@pytest.mark.parametrize("span", [10.0, 6.0])
def test_rattle_envelope_momentum_with_sliding_friction(span):
    """A rigid rattle with sliding friction (stick-slip, Fsl = 0.5 N) past RATTLE_EXACT legs (39571 legs
    in 10 s from 100 m/s, ci = 0.99999, g = 3 m/s2): after the envelope, the impulses minus mu*g*dt
    (the momentum balance without the held force, which removes the envelope's Simpson error in dt)
    equal those of the same number of legs followed one by one in closed form here (arrival speed
    sqrt(s^2 + 2*a*D), leg time 2*D/(s + s')), to 1e-8 (measured 3e-10; the friction's share of
    it is 1.3e-4), the legs end within span, and the speed is the one of the legs to 1e-12."""
    p = es.Parameters(mode=es.RIGID, l1=0.01, l2=0.01, ci=0.99999, friction=True,
                           kindF=es.STICK_SLIP, Fst=1.0, Fsl=0.5, eps_dv=0.0)
    mu, g = 1.0, 3.0
    dt, side, w, J, n, permanent = es._rattle(es.STOP1, -100.0, mu, g, p, span)
    assert not permanent and n > es.RATTLE_EXACT and dt <= span
    D, slide = p.l1 + p.l2, p.Fsl / mu
    along = {es.STOP1: -g - slide, es.STOP2: g - slide}    # acceleration along the leg leaving that stop
    t, at, s, impulses = 0.0, es.STOP1, 100.0, 0.0
    for _ in range(n):
        s1 = math.sqrt(s * s + 2.0 * along[at] * D)
        t += 2.0 * D / (s + s1)
        at = es.STOP2 if at == es.STOP1 else es.STOP1
        impulses += (1.0 if at == es.STOP1 else -1.0) * mu * (1.0 + p.ci) * s1
        s = p.ci * s1
    assert side == at and abs(w) == pytest.approx(s, rel=1e-12)
    assert J - mu * g * dt == pytest.approx(impulses - mu * g * t, abs=1e-8 * abs(impulses))
