"""Behaviours the mutation run (mutation/run.py) found untested in MassWithStopAndFriction's stuck
phase (Body._stuck_until) and in contact_motion's phi2, cycle skipping (_cycles), follow, the work
bound (first_crossing, bound_work) and the Coupler.

Every expected value is independent of the code under test: the MSL equations (msl-reference.md
3.1-3.4: stuck while |F| <= f0_max, breakaway when F > f0_max), the Taylor series of phi2 summed
in exact rational arithmetic, a docstring's contract written out (the rattle envelope's sums, the
shadow a commit starts). Physics modules only: no FMU is built; the whole file runs in well under 1 s.
"""
import math
from fractions import Fraction

import pytest

from contactfmu.mechanics import contact_motion as cm
from contactfmu.components.MassWithStopAndFriction import law as msf
from test_mutants_contact_motion import rattle_reference, two_stops   # two spring-damper stops, their contact map


# ---- MassWithStopAndFriction, stuck under a force ramp (msl-reference.md 3.1/3.2) ---------------

@pytest.mark.parametrize("dF", [1.0, 0.5])
def test_msf_breakaway_of_a_unit_and_a_slow_ramp_at_the_analytic_time(dF):
    """Stuck (v = 0) under F(t) = dF*t: breakaway forward when F > f0_max (MSL), i.e. just after
    t = f0_max/dF, inside the step; then sliding forward."""
    p = msf.Parameters(m=1.0)                   # f0_max = 1.001*(5 + 10) = 15.015
    body = msf.Body(p)
    assert body.initialize(0.0) == msf.STUCK
    body.step(0.0, 15.015 / dF + 0.5, 0.0, dF)
    assert body.events[0][1] == "breakaway forward"
    assert body.events[0][0] == pytest.approx(15.015 / dF, abs=3e-13)   # measured: 3e-14
    assert body.mode == msf.FORWARD and body.v > 0.0


@pytest.mark.parametrize("side", ["hi", "lo"])
def test_msf_body_held_at_a_stop_by_a_slow_ramp_pushing_into_it(side):
    """At a stop (s = hi or lo, stuck) a force pushing into the stop is held whatever its size (MSL:
    breakaway forward only with s < hi, backward only with s > lo): a slow ramp through f0_max
    leaves the body where it is, without an event."""
    p = msf.Parameters(m=1.0, smax=1.0, smin=-1.0)
    sign = 1.0 if side == "hi" else -1.0
    s = p.hi if side == "hi" else p.lo
    body = msf.Body(p, s=s)
    F0 = sign * (p.f0_max - 1e-4)               # crosses +-f0_max at t = 1 s
    assert body.initialize(F0) == msf.STUCK
    body.step(0.0, 2.0, F0, sign * 1e-4)
    assert (body.s, body.v, body.mode, body.events) == (s, 0.0, msf.STUCK, [])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_msf_stuck_at_f0_max_under_a_slowly_receding_force_stays_stuck(sign):
    """F = -f0_max exactly, rising slowly (dF = 1e-4 N/s), or F = +f0_max falling slowly: |F| <= f0_max
    throughout, no breakaway condition (F < -f0_max or F > f0_max) ever holds: stuck over the step."""
    p = msf.Parameters(m=1.0)
    body = msf.Body(p)
    F0 = -sign * p.f0_max
    assert body.initialize(F0) == msf.STUCK
    body.step(0.0, 1.0, F0, sign * 1e-4)
    assert (body.s, body.v, body.mode, body.events) == (0.0, 0.0, msf.STUCK, [])


@pytest.mark.parametrize("side", ["hi", "lo"])
def test_msf_body_held_at_a_stop_while_the_force_into_it_slowly_falls_below_f0_max(side):
    """At a stop, a force into it above f0_max falling slowly through f0_max: held (no breakaway
    away from the stop is possible, F pushes into it), no event."""
    p = msf.Parameters(m=1.0, smax=1.0, smin=-1.0)
    sign = 1.0 if side == "hi" else -1.0
    s = p.hi if side == "hi" else p.lo
    body = msf.Body(p, s=s)
    F0 = sign * (p.f0_max + 1e-4)               # crosses +-f0_max at t = 1 s, on the way down
    assert body.initialize(F0) == msf.STUCK
    body.step(0.0, 2.0, F0, -sign * 1e-4)
    assert (body.s, body.v, body.mode, body.events) == (s, 0.0, msf.STUCK, [])


# ---- phi2 against its Taylor series in exact arithmetic -----------------------------------------

def phi2_exact(z, terms=150):
    """sum_n (-z)^n/(n + 2)! (phi2's docstring) in rational arithmetic, rounded once."""
    z = Fraction(z)
    total, term = Fraction(0), Fraction(1, 2)
    for n in range(terms):
        total += term
        term *= -z / (n + 3)
    return float(total)


@pytest.mark.parametrize("z", [0.0, 1e-9, -0.3, 0.4999, 0.5, -0.5, 0.7, 1.0, -1.2, 1.49, -1.49, 3.0, 20.0])
def test_phi2_is_its_series(z):
    """phi2(z) = (z - 1 + exp(-z))/z^2 = sum (-z)^n/(n + 2)!: to a few ulps on both sides of the
    switch at |z| = 0.5 (the 16-term series would be 2e-13 off at |z| = 1.5)."""
    assert cm.phi2(z) == pytest.approx(phi2_exact(z), rel=4e-15, abs=0.0)       # measured: <= 4.4e-16


# ---- _cycles: the cycle map of three exits of the same key --------------------------------------

def records_of(ts, ws, contact, free, changes, x=0.01, key=("UP", "GAP", False), per_cycle=4):
    """Exit records (key, t, x, w, changes, len(history), contact_time, free_time) of follow."""
    return [(key, t, x, w, changes + 2 * i, per_cycle * (i + 1), c, f)
            for i, (t, w, c, f) in enumerate(zip(ts, ws, contact, free, strict=True))]


def test_cycles_sum_the_periodic_rattle_without_other_forces():
    """g = 0, the speed returned exactly (undamped): cycles of duration c + f are skipped, the speed
    unchanged (follow's docstring: whole cycles up to the last complete one before the next time);
    cycle: 0.25 s in contact + 0.5 s of flight at 1 m/s, span 10 s: m = 12 ((m + 1)*0.75 <= 10)."""
    rec = records_of([1.0, 1.75, 2.5], [-1.0, -1.0, -1.0], [0.5, 0.75, 1.0], [1.0, 1.5, 2.0], 10)
    history = ["UP", "GAP", "LOW", "GAP"] * 3
    m = int(10.0 / 0.75) - 1                     # S(m + 1) <= span: the largest m with (m + 1)*0.75 <= 10
    dt, factor, more = cm._cycles(rec, history, 0.0, 10.0, 14)
    assert (factor, more) == (1.0, 2 * m)
    assert dt == pytest.approx(m * 0.75, rel=1e-14)


def test_cycles_sum_a_damped_rattle_without_other_forces_and_refuse_a_change_of_any_measure():
    """g = 0: skipped only if ratio, contact time AND speed*flight time agree (follow's docstring);
    with all three: the geometric series of the cycles written out."""
    rho, c, q, span = 0.9, 0.25, 0.5, 4.0
    u = [1.0, rho, rho * rho]
    ts = [1.0, 1.0 + c + q / u[0], 1.0 + 2 * c + q / u[0] + q / u[1]]
    cont = [0.5, 0.5 + c, 0.5 + 2 * c]
    free = [1.0, 1.0 + q / u[0], 1.0 + q / u[0] + q / u[1]]
    history = ["UP", "GAP", "LOW", "GAP"] * 3
    dt, factor, more = cm._cycles(records_of(ts, [-v for v in u], cont, free, 10), list(history), 0.0, span, 14)
    # cycle j from the last exit (speed u2): c + q/(u2 rho^j); the largest m with S(m + 1) <= span
    durations = [c + q / (u[2] * rho ** j) for j in range(100)]
    m = max(k for k in range(100) if sum(durations[:k + 1]) <= span)
    assert m >= 1 and more == 2 * m
    assert factor == pytest.approx(rho ** m, rel=1e-14)
    assert dt == pytest.approx(sum(durations[:m]), rel=1e-13)
    # one measure differing between the two cycles: no skip
    wrong_ratio = [-1.0, -rho, -rho * rho * 0.99]
    assert cm._cycles(records_of(ts, wrong_ratio, cont, free, 10), list(history), 0.0, span, 14) is None
    wrong_contact = [0.5, 0.5 + c, 0.5 + 2.2 * c]
    assert cm._cycles(records_of(ts, [-v for v in u], wrong_contact, free, 10), list(history), 0.0, span, 14) is None
    wrong_flight = [1.0, 1.0 + q / u[0], 1.0 + q / u[0] + 1.1 * q / u[1]]
    assert cm._cycles(records_of(ts, [-v for v in u], cont, wrong_flight, 10), list(history), 0.0, span, 14) is None


def test_cycles_under_a_held_acceleration_follow_the_envelope_from_exact_changes():
    """g != 0: after EXACT_CHANGES changes simulated exactly (at 2000, not 2002) the envelope
    (_skip_envelope's docstring): cycle j takes tau1*q^(j + 1), q = rho1^p, p fitted to the two
    measured durations, leaves at u*rho1^(j + 2); at most as many cycles as change the speed by 2 %."""
    rho, p_exp = 0.999, 0.5                      # duration ~ speed^0.5
    u = [1.0, rho, rho * rho]
    tau0, tau1 = 0.2, 0.2 * rho ** p_exp
    t0 = 7.0
    ts = [t0, t0 + tau0, t0 + tau0 + tau1]
    # exit positions far from the times (a position read as a time would change every duration)
    rec = records_of(ts, [-v for v in u], [0.1, 0.15, 0.2], [0.3, 0.45, 0.6], cm.EXACT_CHANGES - 4, x=0.003,
                     per_cycle=2)
    history = ["FLOOR", "AIR"] * 3
    q = rho ** p_exp
    m = int(math.log(1.02) / -math.log(rho))     # the speed cap (the span is long)
    dt, factor, more = cm._cycles(rec, history, -9.81, 1000.0, cm.EXACT_CHANGES)
    assert more == 2 * m and factor == pytest.approx(rho ** m, rel=1e-13)
    assert dt == pytest.approx(sum(tau1 * q ** (j + 1) for j in range(m)), rel=1e-9)   # measured: 1e-13
    # before EXACT_CHANGES: still exact
    assert cm._cycles(list(rec), history, -9.81, 1000.0, cm.EXACT_CHANGES - 1) is None


# ---- the work bound: first_crossing counts, bound_work raises above MAX_WORK --------------------

class CountingPiece:
    """A Piece whose motion evaluations (state) are counted."""

    def __init__(self, piece):
        self.piece, self.calls = piece, 0

    def state(self, t):
        self.calls += 1
        return self.piece.state(t)

    def turning_points(self, alpha, beta, horizon):
        return self.piece.turning_points(alpha, beta, horizon)


def test_first_crossing_adds_its_motion_evaluations_to_work():
    """work(): motion evaluations done by first_crossing so far (one per evaluation of the motion)."""
    piece = CountingPiece(cm.Piece(0.0, 1.0, 1.0, 0.0))
    before = cm.work()
    t = cm.first_crossing(piece, 1.0, 0.0, 0.5, -1, 2.0)    # x = t reaches 0.5 at t = 0.5
    assert t == pytest.approx(0.5, rel=1e-15)
    assert piece.calls > 10 and cm.work() - before == piece.calls


def test_bound_work_raises_only_above_max_work():
    """bound_work docstring: EventStorm if MORE than MAX_WORK evaluations since start, naming what."""
    now = cm.work()
    cm.bound_work(now - cm.MAX_WORK, "exactly the bound")            # no error
    with pytest.raises(cm.EventStorm, match=f"^one more did not finish: more than {cm.MAX_WORK} motion"):
        cm.bound_work(now - cm.MAX_WORK - 1, "one more")


def test_follow_names_its_prediction_when_it_meets_the_work_bound(monkeypatch):
    """follow: a prediction needing more than MAX_WORK evaluations is an EventStorm naming the
    prediction's horizon (here MAX_WORK lowered to 20: one bounce needs more)."""
    monkeypatch.setattr(cm, "MAX_WORK", 20)
    classify, law = two_stops(0.1, 1e4, 10.0, 0.0)
    with pytest.raises(cm.EventStorm, match=r"^contact prediction over 0\.5 s did not finish"):
        cm.follow(0.0, 1.0, 1.0, 0.0, [0.5], classify, law)


# ---- Coupler ------------------------------------------------------------------------------------

class Recorder:
    """predict(x, w, g, state, times) of the Coupler docstring: a uniform acceleration gl of the law,
    the first force at `onset`, the state passed on; records the calls."""

    def __init__(self, gl, onset):
        self.gl, self.onset, self.calls = gl, onset, []

    def __call__(self, x0, w0, g, state, times):
        self.calls.append((x0, w0, g, state, tuple(times)))
        return [(x0 + w0 * t + 0.5 * self.gl * t * t, w0 + self.gl * t, state) for t in times], self.onset, 0


def test_coupler_force_passes_the_shadow_state_to_the_law():
    """couple/advance_shadow docstrings: the law is predicted from the shadow's own discrete state."""
    c = cm.Coupler(1.0, 1e-3)
    c.shadow = [0.0, 1.0, 0, "held"]
    law = Recorder(0.0, 0.0)
    c.force(0.0, 1.0, law, lambda h: False)
    assert law.calls and all(call[3] == "held" for call in law.calls)


def test_coupler_commit_starts_a_shadow_only_without_one():
    """commit docstring: a step longer than planned that holds a contact starts the shadow at the
    step's start (as couple does: (x, w, 0 free steps, state)); an existing shadow is kept."""
    c = cm.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 0.0, 0.2, -1.0, 0.5, None
    c.commit(0.01, Recorder(0.0, 0.004))
    assert c.shadow == [0.2, -1.0, 0, None]
    assert (c.last_h, c.last_v, c.last_f) == (0.01, -1.0, 0.0)
    c = cm.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 0.0, 0.2, -1.0, 0.5, [0.3, -0.5, 1, "state"]
    law = Recorder(0.0, 0.0)
    c.commit(0.01, law)
    assert c.shadow == [0.3, -0.5, 1, "state"]


# ---- follow: a rattle between stops split into sub-regions of one linear law --------------------

def split_stops(half, c, depth, n):
    """(classify, law) of two undamped stops F = c*(x -+ half), each split into n regions of the same
    law at depths k*depth (k = 1 .. n-1) past its boundary: region +-k, the gap 0; on a boundary,
    the side the motion goes to (g = 0)."""
    bounds = [half + k * depth for k in range(n)]

    def classify(x, w):
        a, v = abs(x), (w if x > 0.0 else -w)
        k = sum(1 for b in bounds if a > b or (a == b and v > 0.0))
        return k if x > 0.0 else -k

    def law(region):
        k, s = abs(region), (1.0 if region > 0 else -1.0)
        if k == 0:
            return 0.0, 0.0, 0.0, ((1.0, 0.0, half, -1), (1.0, 0.0, -half, 1)), False
        exits = [(s, 0.0, bounds[k - 1], 1)]                     # s*x >= bound: still in region k
        if k < n:
            exits.append((s, 0.0, bounds[k], -1))
        return c, 0.0, s * half, tuple(exits), True
    return classify, law


def test_follow_skips_a_rattle_through_stops_split_into_regions():
    """follow docstring: a rattle (the same sequence of regions, left the same way) is summed as whole
    cycles, not simulated bounce by bounce; stops split into 4 regions of one undamped law (8 changes
    per stop) rattle periodically: the states are those of the analytic contact map (contact time
    pi/om, the speed returned), with 4 times the changes of unsplit stops, far beyond MAX_SEGMENTS
    changes one by one."""
    half, mu, c = 0.01, 1.0, 1e6
    classify, law = split_stops(half, c, 0.25e-3, 4)            # penetration 1e-3 m: all 4 regions
    times = [30.0, 60.0]
    out, onset, changes = cm.follow(0.0, 1.0, mu, 0.0, times, classify, law)
    ref, ref_onset, ref_changes = rattle_reference(0.0, 1.0, half, mu, c, 0.0, times)
    assert abs(ref[-1][0]) < half                                # the last time in the gap
    assert changes == 4 * ref_changes > cm.MAX_SEGMENTS
    assert onset == pytest.approx(ref_onset, rel=1e-12)
    for (x, w), (xr, wr) in zip(out, ref, strict=True):        # measured: 6e-12 m (the phase after 60 s), 3e-16
        assert x == pytest.approx(xr, rel=0.0, abs=6e-11)
        assert w == pytest.approx(wr, rel=4e-15)


# ---- Coupler in any master (motion, commit of the delivered force, held_motion) -------------------

def test_held_motion_is_the_uniformly_accelerated_motion():
    """x + h*w + a*h^2/2, w + a*h: written out with values whose products are exact in binary."""
    assert cm.held_motion(0.5, -2.0, 4.0, 0.25) == (0.5 - 0.5 + 0.125, -2.0 + 1.0)
    assert cm.held_motion(1.0, 0.0, -8.0, 0.5) == (0.0, -4.0)


def test_coupler_motion_uses_the_inputs_when_they_are_fresh_or_there_is_no_model_yet():
    """Coupler docstring: the inputs if they were set since the last step, else the element's model
    of the bodies at the end of the last step (none before the first step: the inputs)."""
    c = cm.Coupler(2.0, 1e-3)
    assert c.motion(0.1, -1.0, False) == (0.1, -1.0)          # no model yet
    c.expected = (0.3, 0.5)
    assert c.motion(0.1, -1.0, True) == (0.1, -1.0)           # fresh inputs (Gauss-Seidel)
    assert c.motion(0.1, -1.0, False) == (0.3, 0.5)           # one step old (Jacobi): the model


def test_coupler_commit_models_the_bodies_with_the_delivered_force():
    """commit: the bodies' motion at the step's end under g - delivered/mu held over h, g from
    planning_step (the last step's velocity change plus its force's share); the delivered force and
    the start velocity become the next step's last_f and last_v."""
    mu, h = 2.0, 0.5
    c = cm.Coupler(mu, 1e-3)
    c.last_h, c.last_v, c.last_f = 0.25, 1.0, 3.0
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 7.0, 9.0, 9.0, 9.0, [1.0, 2.0, 0, None]
    c.commit(h, Recorder(0.0, None), x=0.5, w=2.0, delivered=4.0)
    g = (2.0 - 1.0) / 0.25 + 3.0 / mu                          # 5.5
    a = g - 4.0 / mu                                             # 3.5
    assert c.expected == (0.5 + h * 2.0 + 0.5 * a * h * h, 2.0 + a * h)
    assert (c.last_h, c.last_v, c.last_f) == (h, 2.0, 4.0)
    assert c.shadow == [1.0, 2.0, 0, None]


def test_coupler_commit_defaults_to_the_force_and_motion_last_computed():
    """Without x, w, delivered (a master that sets inputs and reads the force before every step):
    the motion and force of the last force() call."""
    c = cm.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 2.0, 0.25, -1.0, 0.0, [0.0, 0.0, 0, None]
    c.commit(0.5, Recorder(0.0, None))
    assert (c.last_v, c.last_f) == (-1.0, 2.0)
    assert c.expected == cm.held_motion(0.25, -1.0, 0.0 - 2.0, 0.5)


def test_coupler_commit_with_no_step_before_plans_without_other_forces():
    """First step (last_h = 0): planning_step gives g = 0, so the model moves under -delivered/mu only."""
    c = cm.Coupler(4.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 1.0, 0.0, 0.0, 0.0, [0.0, 0.0, 0, None]
    c.commit(0.5, Recorder(0.0, None), x=1.0, w=-2.0, delivered=8.0)
    assert c.expected == cm.held_motion(1.0, -2.0, -2.0, 0.5)


# ---- Body._stuck_until: the breakaway time of a stuck mass under a linear force ---------------------

def _breakaway(F0, dF, h, **params):
    from contactfmu.components.MassWithStopAndFriction import law as msf

    body = msf.Body(msf.Parameters(**params))
    body.initialize(F0)
    body.step(0.0, h, F0, dF)
    return body.events[0] if body.events else None


@pytest.mark.parametrize("F0,dF,direction", [(-1.001 * 15.0, 0.5, "forward"), (1.001 * 15.0, -0.5, "backward")])
def test_stuck_at_one_threshold_moving_to_the_other_breaks_away_there(F0, dF, direction):
    """A force exactly at -f0_max rising (at +f0_max falling) holds the mass until it passes the other
    threshold: MSL breaks away when |F| exceeds f0_max = 1.001*(F_Coulomb + F_Stribeck) = 15.015 N, at
    t = 2*f0_max/|dF| = 60.06 s, not at a threshold the force is leaving."""
    f0_max = 1.001 * 15.0
    t, what = _breakaway(F0, dF, 100.0)
    assert what == "breakaway " + direction
    assert abs(t - 2.0 * f0_max / abs(dF)) <= 4.0 * math.ulp(f0_max) / abs(dF) + 4.0 * math.ulp(t)


def test_breakaway_time_of_random_slow_ramps_is_the_threshold_crossing():
    """300 stuck masses under ramps F0 + dF*t (|dF| from 1e-12 to 1e3 N/s): each breaks away where the force
    passes f0_max, within 4 of the force's rounding steps (ulp(f0_max)/|dF|); about 3 % of such ramps
    need more than one step past the computed crossing before the rounded force is beyond it."""
    import random

    f0_max = 1.001 * 15.0
    rng = random.Random(7)
    for _ in range(300):
        sign = rng.choice((1.0, -1.0))
        F0 = sign * rng.uniform(-15.0, f0_max)
        dF = sign * 10.0 ** rng.uniform(-12.0, 3.0)
        expected = (sign * f0_max - F0) / dF
        t, what = _breakaway(F0, dF, 4.0 * expected + 10.0)
        assert what == "breakaway " + ("forward" if sign > 0 else "backward")
        assert abs(t - expected) <= 4.0 * math.ulp(f0_max) / abs(dF) + 4.0 * math.ulp(expected), (F0, dF, t, expected)
