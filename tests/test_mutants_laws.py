"""Behaviours of the contact laws and the integrator that the mutation run (mutation/run.py) found
untested: src/contactfmu/components/ElastoGap/law.py, hardstop.py, mass_with_stop_and_friction.py and ode.py.

Every expected value is independent of the code under test: the MSL / MapleSim equations written
out here (msl-reference.md sections 2 and 3, the Hardstop page), closed forms, scipy's solve_ivp
or expm of the documented equations, or a documented statement (a docstring's contract).
Physics modules only: no FMU is built.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from contactfmu.mechanics import contact_motion
from contactfmu.components.ElastoGap import law as elastogap
from contactfmu.components.TranslationalHardstop import law as hardstop
from contactfmu.mechanics import ode
from contactfmu.components.MassWithStopAndFriction import law as msf
from test_physics_mutants import dp_step   # Dormand & Prince (1980), the tableau written out there


# ---- ElastoGap (msl-reference.md 2.3) ----------------------------------------------------------

def msl_elastogap(s_rel, v_rel, c, d, s_rel0=0.0, n=1.0, s_ref=1.0, f_ref=None):
    """flange_b.f of MSL ElastoGap v4.1.0, written out from msl-reference.md 2.3."""
    if f_ref is None:
        f_ref = c * s_ref
    if not s_rel < s_rel0:
        return 0.0
    f_c = -f_ref * abs((s_rel - s_rel0) / s_ref) ** n
    f_d = min(max(d * v_rel, f_c), -f_c)
    return f_c + f_d


def rate_along(law, s, v, a, dt=1e-7, side=0):
    """d/dt law(s(t), v(t)) for s(t) = s + v t + a t^2/2: central (side 0) or one-sided difference."""
    def f(t):
        return law(s + v * t + 0.5 * a * t * t, v + a * t)
    if side > 0:
        return (f(dt) - f(0.0)) / dt
    if side < 0:
        return (f(0.0) - f(-dt)) / dt
    return (f(dt) - f(-dt)) / (2 * dt)


def test_elastogap_defaults_are_the_documented_ones():
    """s_rel0 = 0, n = 1, s_ref = 1 (f_ref = c*s_ref) are MSL's defaults (msl-reference.md 2.1)."""
    c, d = 10.0, 2.0
    for s in (0.5, -0.1):
        for v in (-0.3, 0.2):
            f = msl_elastogap(s, v, c, d)
            assert elastogap.force(s, v, c, d)[0] == pytest.approx(f, rel=1e-12, abs=1e-15)
            assert elastogap.unmodified_force(s, v, c, d) == pytest.approx(
                (-c * abs(s) + d * v) if s < 0 else 0.0, rel=1e-12, abs=1e-15)
            assert elastogap.clipped_force(s, v, c, d) == pytest.approx(
                min((-c * abs(s) + d * v) if s < 0 else 0.0, 0.0), rel=1e-12, abs=1e-15)
            rate = rate_along(lambda x, w: msl_elastogap(x, w, c, d), s, v, 0.7)
            assert elastogap.force_rate(s, v, 0.7, c, d) == pytest.approx(rate, rel=1e-6, abs=1e-9)
            ds = (msl_elastogap(s + 1e-8, v, c, d) - msl_elastogap(s - 1e-8, v, c, d)) / 2e-8
            dv = (msl_elastogap(s, v + 1e-8, c, d) - msl_elastogap(s, v - 1e-8, c, d)) / 2e-8
            assert elastogap.interface(s, v, c, d) == pytest.approx((ds, dv), rel=1e-6, abs=1e-9)
    # the exponent alone: s_ref must default to 1 (f_ref = c*s_ref: n = 1 hides s_ref)
    f = msl_elastogap(-0.1, 0.01, c, d, n=1.5)
    assert elastogap.force(-0.1, 0.01, c, d, n=1.5)[0] == pytest.approx(f, rel=1e-12)
    assert elastogap.unmodified_force(-0.1, 0.01, c, d, n=1.5) == pytest.approx(-c * 0.1 ** 1.5 + d * 0.01, rel=1e-12)
    assert elastogap.clipped_force(-0.1, 0.01, c, d, n=1.5) == pytest.approx(-c * 0.1 ** 1.5 + d * 0.01, rel=1e-12)
    rate = rate_along(lambda x, w: msl_elastogap(x, w, c, d, n=1.5), -0.1, 0.01, 0.7)
    assert elastogap.force_rate(-0.1, 0.01, 0.7, c, d, n=1.5) == pytest.approx(rate, rel=1e-6)
    ds = (msl_elastogap(-0.1 + 1e-8, 0.01, c, d, n=1.5) - msl_elastogap(-0.1 - 1e-8, 0.01, c, d, n=1.5)) / 2e-8
    assert elastogap.interface(-0.1, 0.01, c, d, n=1.5) == pytest.approx((ds, d), rel=1e-6)


@pytest.mark.parametrize("n, s_ref, f_ref", [(1.5, 1.0, None), (1.0, 2.0, 7.0), (1.5, 0.5, 3.0)])
@pytest.mark.parametrize("v", [-0.5, -0.05, 0.0, 0.05, 0.5])
def test_elastogap_rate_and_derivatives_with_exponent_and_reference(n, s_ref, f_ref, v):
    """force_rate and interface are the time and partial derivatives of the MSL law (2.3) for
    n != 1 or s_ref != 1, in every damper regime (bounded to f_c, unbounded, bounded to -f_c)."""
    c, d, s, a = 10.0, 1.0, -0.1, 0.7

    def law(x, w):
        return msl_elastogap(x, w, c, d, n=n, s_ref=s_ref, f_ref=f_ref)
    rate = rate_along(law, s, v, a)
    assert elastogap.force_rate(s, v, a, c, d, n=n, s_ref=s_ref, f_ref=f_ref) == pytest.approx(rate, rel=1e-6, abs=1e-9)
    ds = (law(s + 1e-8, v) - law(s - 1e-8, v)) / 2e-8
    dv = (law(s, v + 1e-8) - law(s, v - 1e-8)) / 2e-8
    assert elastogap.interface(s, v, c, d, n=n, s_ref=s_ref, f_ref=f_ref) == pytest.approx((ds, dv), rel=1e-6, abs=1e-9)


def test_elastogap_rate_and_derivatives_on_the_clamp_bounds_are_the_unbounded_law():
    """At d*v_rel = f_c or = -f_c exactly, min(max(f_d2, f_c), -f_c) = f_d2 (msl-reference 2.3): the
    unbounded law applies; its derivatives are the one-sided ones on the unbounded side."""
    c, d = 10.0, 2.0            # s_rel = -0.1: f_c = -1.0 exactly; v_rel = -+0.5: d*v_rel = -+1.0

    def law(x, w):
        return msl_elastogap(x, w, c, d)
    assert elastogap.force(-0.1, -0.5, c, d)[2] == -1.0 and elastogap.force(-0.1, 0.5, c, d)[2] == 1.0
    # lower bound, a motion going into the unbounded region (f_d2 - f_c grows: d*a > c*v)
    assert elastogap.force_rate(-0.1, -0.5, 0.0, c, d) == pytest.approx(
        rate_along(law, -0.1, -0.5, 0.0, side=1), rel=1e-5)
    # upper bound, going into the unbounded region (f_d2 + f_c falls: d*a + c*v < 0)
    assert elastogap.force_rate(-0.1, 0.5, -5.0, c, d) == pytest.approx(
        rate_along(law, -0.1, 0.5, -5.0, side=1), rel=1e-5)
    dv_up = (law(-0.1, -0.5 + 1e-8) - law(-0.1, -0.5)) / 1e-8
    ds_up = (law(-0.1 - 1e-8, -0.5) - law(-0.1, -0.5)) / -1e-8
    assert elastogap.interface(-0.1, -0.5, c, d) == pytest.approx((ds_up, dv_up), rel=1e-6)
    dv_dn = (law(-0.1, 0.5) - law(-0.1, 0.5 - 1e-8)) / 1e-8
    ds_dn = (law(-0.1, 0.5) - law(-0.1 - 1e-8, 0.5)) / 1e-8
    assert elastogap.interface(-0.1, 0.5, c, d) == pytest.approx((ds_dn, dv_dn), rel=1e-6)


def elastogap_reference(x0, w0, mu, g, times, k, d):
    """solve_ivp of mu*x'' = mu*g - f(x, x') with f the MSL ElastoGap law (s_rel0 = 0, n = 1)."""
    def rhs(t, y):
        return [y[1], g - msl_elastogap(y[0], y[1], k, d) / mu]
    sol = solve_ivp(rhs, (0, times[-1]), [x0, w0], method="DOP853", rtol=1e-12, atol=1e-14, t_eval=times,
                    max_step=times[-1] / 200)
    return sol.y.T


@pytest.mark.parametrize("x0, w0, g, times", [
    (-0.1, 0.0, -100.0, (0.02, 0.05, 0.1)),        # pushed in: unbounded damper, then bounded to f_c
    (0.0, -2.0, 0.0, (0.1, 0.3, 0.6, 1.2)),        # hit, rebound, fast separation (f = 0), lift-off
    (-0.05, 1.0, -3.0, (0.1, 0.3, 0.6, 1.2)),       # separating, decelerated back into contact
    (-0.05, 1.0, -30.0, (0.05, 0.1, 0.3)),          # fast separation (f = 0) turned back before lift-off
])
def test_elastogap_predict_follows_the_documented_law(x0, w0, g, times):
    """predict (closed form, regions of the law) against solve_ivp of the MSL law (2.3)."""
    k, d, mu = 10.0, 2.0, 1.0
    states, onset, changes = elastogap.predict(x0, w0, mu, g, times, k, d)
    ref = elastogap_reference(x0, w0, mu, g, times, k, d)
    for (x, w), (xr, wr) in zip(states, ref):
        assert x == pytest.approx(xr, abs=1e-8) and w == pytest.approx(wr, abs=1e-7)


def test_elastogap_predict_onset_and_changes_follow_the_contact_definition():
    """contact = s_rel < s_rel0 (strict, msl-reference 2.3) and f = 0 unless the law transmits: onset is
    the first time f can be non-zero (0 if at the start, None if never), changes the region changes
    (docstring's table: LINEAR is closed, APPROACH and SEPARATE strict)."""
    k, d, mu = 10.0, 2.0, 1.0
    # at s_rel = s_rel0 moving in: not yet in contact, one change (into contact) right after
    states, onset, changes = elastogap.predict(0.0, -1.0, mu, 0.0, (0.01,), k, d)
    assert onset is not None and onset > 0.0 and changes == 1
    # free flight away: never in contact; x = x0 + w0 t
    states, onset, changes = elastogap.predict(0.5, 1.0, mu, 0.0, (1.0,), k, d)
    assert onset is None and changes == 0 and states[0] == pytest.approx((1.5, 1.0), rel=1e-14)
    # fast separation (d*w > -k*x: f_d bounded to -f_c, f = 0): no force, one change (lift-off at x = 0)
    states, onset, changes = elastogap.predict(-0.1, 5.0, mu, 0.0, (1.0,), k, d)
    assert onset is None and changes == 1 and states[0] == pytest.approx((4.9, 5.0), rel=1e-12)
    # fast approach (d*w < k*x): f = 2*k*x transmits from the start
    states, onset, changes = elastogap.predict(-0.1, -5.0, mu, 0.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0
    # on the LINEAR/APPROACH boundary (d*w = k*x = -1) going into LINEAR: no region change
    states, onset, changes = elastogap.predict(-0.1, -0.5, mu, 0.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0
    # on the LINEAR/SEPARATE boundary (d*w = -k*x = 1) going into LINEAR (g = -5): no region change
    states, onset, changes = elastogap.predict(-0.1, 0.5, mu, -5.0, (1e-3,), k, d)
    assert onset == 0.0 and changes == 0


# ---- Hardstop (MapleSim page, lower branch read as s_rel < -b/2) ---------------------------------

@pytest.mark.parametrize("side", [1, -1])
def test_hardstop_at_rest_on_a_stop_edge_without_force_stays_free(side):
    """F = c*(s_rel -+ b/2) + d*v_rel only for |s_rel| > b/2 (strict): at rest on the edge with no other
    force the bodies never touch the stop: no onset, no change, the state kept."""
    b, c, d = 1.0, 100.0, 1.0
    states, onset, changes = hardstop.predict(side * 0.5, 0.0, 1.0, 0.0, (0.5, 1.0), b, c, d)
    assert onset is None and changes == 0
    assert states == [(side * 0.5, 0.0), (side * 0.5, 0.0)]


def test_hardstop_gap_of_exactly_2e_10_is_the_plain_spring_damper():
    """b <= 2e-10: F = c*s_rel + d*v_rel (page); the motion is expm of the linear system."""
    b, c, d, mu = 2e-10, 1.0, 0.1, 1.0
    x0, w0 = 1e-10, 0.0
    times = (1.0, math.pi, 5.0)
    states, onset, changes = hardstop.predict(x0, w0, mu, 0.0, times, b, c, d)
    A = np.array([[0.0, 1.0], [-c / mu, -d / mu]])
    for t, (x, w) in zip(times, states):
        xr, wr = expm(A * t) @ np.array([x0, w0])
        assert x == pytest.approx(xr, rel=1e-9, abs=1e-22) and w == pytest.approx(wr, rel=1e-9, abs=1e-22)


def kelvin_voigt_rattle(w0, mu, b, c, d, T):
    """Closed form of a body started at the gap centre with speed w0 > 0, g = 0: flights of b/|w| (b/2
    first), contacts y = |w| e^(-sigma t) sin(omega t)/omega lasting pi/omega, exit speed times
    exp(-sigma pi/omega). Returns (x, w, changes) at T."""
    half, sig = b / 2, d / (2 * mu)
    om = math.sqrt(c / mu - sig * sig)
    e, tc = math.exp(-sig * math.pi / om), math.pi / om
    t, x, w, changes, side, tf = 0.0, 0.0, w0, 0, 1, half / w0
    while True:
        if t + tf > T:
            return x + w * (T - t), w, changes
        t += tf
        changes += 1
        if t + tc > T:
            tt = T - t
            y = abs(w) * math.exp(-sig * tt) * math.sin(om * tt) / om
            dy = abs(w) * math.exp(-sig * tt) * (math.cos(om * tt) - sig * math.sin(om * tt) / om)
            return side * (half + y), side * dy, changes
        t += tc
        changes += 1
        w, side = -w * e, -side
        x, tf = -side * half, b / abs(w)


RATTLE = dict(w0=1.0, mu=1.0, b=1e-4, c=1e10, d=0.02)   # 30382 contact changes in 2 s


def test_hardstop_long_rattle_is_summed_by_default_and_matches_the_closed_form():
    """predict's default (exact=False) sums the cycles of a g = 0 rattle of 30000 changes (more than
    contact_motion.MAX_SEGMENTS) and gives the closed-form Kelvin-Voigt bounce sequence."""
    r = RATTLE
    states, onset, changes = hardstop.predict(0.0, r["w0"], r["mu"], 0.0, (2.0,), r["b"], r["c"], r["d"])
    x, w, n = kelvin_voigt_rattle(r["w0"], r["mu"], r["b"], r["c"], r["d"], 2.0)
    assert n > contact_motion.MAX_SEGMENTS and changes == n
    assert onset == pytest.approx(r["b"] / 2 / r["w0"], rel=1e-12)
    assert states[0][0] == pytest.approx(x, abs=3e-9) and states[0][1] == pytest.approx(w, rel=1e-9)


def test_hardstop_exact_prediction_is_event_by_event_and_refuses_an_event_storm():
    """exact=True: every change simulated (contact_motion.follow docstring), so a rattle of more than
    MAX_SEGMENTS changes raises EventStorm instead of being summed."""
    r = RATTLE
    with pytest.raises(contact_motion.EventStorm):
        hardstop.predict(0.0, r["w0"], r["mu"], 0.0, (2.0,), r["b"], r["c"], r["d"], exact=True)


# ---- MassWithStopAndFriction (msl-reference.md 3.1, 3.2) -----------------------------------------

def test_mwsf_parameter_defaults_are_msl_start_values():
    """m = 1, L = 0, smax = 25, smin = -25, F_prop = 1, F_Coulomb = 5, F_Stribeck = 10, fexp = 2,
    v_small = 1e-3 (msl-reference 3.2 table): f0 = 15, f0_max = 1.001*f0, centre stops at -+25."""
    p = msf.Parameters()
    assert (p.m, p.L, p.smax, p.smin) == (1.0, 0.0, 25.0, -25.0)
    assert (p.F_prop, p.F_Coulomb, p.F_Stribeck, p.fexp, p.v_small) == (1.0, 5.0, 10.0, 2.0, 1e-3)
    assert (p.lo, p.hi, p.f0) == (-25.0, 25.0, 15.0) and p.f0_max == pytest.approx(15.015, rel=1e-15)
    body = msf.Body(p)
    assert (body.s, body.v) == (0.0, 0.0)                    # s.start = 0, v.start = 0


def test_mwsf_free_only_without_any_friction():
    """free = (f0 <= 0) and (F_prop <= 0) (msl-reference 3.2): a small Coulomb force is not free."""
    assert not msf.Parameters(F_prop=0.0, F_Coulomb=0.5, F_Stribeck=0.0).has_no_friction()
    assert msf.Parameters(F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0).has_no_friction()


def test_mwsf_sliding_friction_keeps_the_stribeck_term_at_unit_speed():
    """Forward at v = 1: f = F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*|v|) (3.2); only v = 0 drops exp."""
    p = msf.Parameters(m=2.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, fexp=3.0)
    a, f, sa = msf.outputs(p, 0.0, 1.0, msf.FORWARD, 12.0)
    fr = 0.5 + 4.0 + 6.0 * math.exp(-3.0)
    assert f == pytest.approx(fr, rel=1e-14) and a == pytest.approx((12.0 - fr) / 2.0, rel=1e-14)
    a, f, sa = msf.outputs(p, 0.0, -1.0, msf.BACKWARD, -12.0)
    assert f == pytest.approx(-fr, rel=1e-14)


def test_mwsf_breakaway_hysteresis_is_strict():
    """startForward holds while sa > f0 (strict), startBackward while sa < -f0 and s > lo (3.1, 3.2): at
    sa = -+f0 exactly, at the left stop, or with no force, the mass is stuck."""
    p = msf.Parameters(m=2.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, smin=-1.0, smax=1.0)
    assert msf.settle(p, 0.0, 0.0, msf.FORWARD, p.f0) == (msf.STUCK, False, False)
    assert msf.settle(p, 0.0, 0.0, msf.BACKWARD, -p.f0) == (msf.STUCK, False, False)
    assert msf.settle(p, 0.0, 0.0, msf.BACKWARD, 0.0) == (msf.STUCK, False, False)
    between = -0.5 * (p.f0 + p.f0_max)
    assert msf.settle(p, p.lo, 0.0, msf.BACKWARD, between) == (msf.STUCK, False, False)
    assert msf.settle(p, 0.0, 0.0, msf.BACKWARD, between) == (msf.BACKWARD, False, True)


def test_mwsf_start_check_messages():
    """MSL's initialization asserts (3.2): the left one reports s - L/2, the right one s + L/2; the
    velocity is added only when the mass starts exactly on the stop."""
    p = msf.Parameters(L=0.4, smax=3.0, smin=-1.0)
    assert msf.start_checks(p, -0.9, 0.0).endswith(f"but s - L/2 = {-0.9 - 0.2!r} m")
    assert msf.start_checks(p, 2.9, 0.0).endswith(f"but s + L/2 = {2.9 + 0.2!r} m")
    assert msf.start_checks(p, p.hi, 1.0).endswith(f"but s + L/2 = {p.hi + 0.2!r} m with v = 1.0 m/s > 0")
    assert msf.start_checks(p, p.lo, -1.0).endswith(f"but s - L/2 = {p.lo - 0.2!r} m with v = -1.0 m/s < 0")


def forward_reference(p, s0, v0, F0, dF, t0, h, sign=1):
    """solve_ivp of m*a = F(t) - f with the MSL sliding friction (3.2), F(t) = F0 + dF*(t - t0)."""
    def rhs(t, y):
        v = y[1]
        f = p.F_prop * v + sign * (p.F_Coulomb + p.F_Stribeck * math.exp(-p.fexp * abs(v)))
        return [v, (F0 + dF * (t - t0) - f) / p.m]
    sol = solve_ivp(rhs, (t0, t0 + h), [s0, v0], method="DOP853", rtol=1e-13, atol=1e-14)
    return sol.y[:, -1]


@pytest.mark.parametrize("sign", [1, -1])
def test_mwsf_slide_under_a_force_ramp_starting_late_matches_solve_ivp(sign):
    """Forward (backward) sliding from t = 5 s under F = F0 + dF*(t - 5): the MSL Stribeck law (3.2)."""
    p = msf.Parameters(m=1.5, F_prop=0.8, F_Coulomb=3.0, F_Stribeck=6.0, fexp=1.5)
    F0, dF = sign * 20.0, sign * 30.0
    body = msf.Body(p, s=0.1, v=sign * 0.4)
    assert body.initialize(F0) == (msf.FORWARD if sign > 0 else msf.BACKWARD)
    body.step(5.0, 0.4, F0, dF)
    s, v = forward_reference(p, 0.1, sign * 0.4, F0, dF, 5.0, 0.4, sign)
    assert body.s == pytest.approx(s, rel=1e-9) and body.v == pytest.approx(v, rel=1e-9)


def test_mwsf_restored_breakaway_keeps_sliding_and_keeps_the_event_log():
    """A mass restored in startForward (mode Forward at v = 0) keeps sliding while f0 < sa <= f0_max
    (hysteresis, 3.1), following the forward law (solve_ivp); events passed in are continued (latest last)."""
    p = msf.Parameters(F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, smin=-5.0, smax=5.0)
    F = 0.5 * (p.f0 + p.f0_max)
    log = [[0.0, "breakaway forward"]]
    body = msf.Body(p, s=0.0, v=0.0, mode=msf.FORWARD, events=log)
    body.step(1.0, 0.5, F)
    s, v = forward_reference(p, 0.0, 0.0, F, 0.0, 1.0, 0.5)
    assert body.mode == msf.FORWARD
    assert body.s == pytest.approx(s, rel=1e-8) and body.v == pytest.approx(v, rel=1e-8)
    body.step(1.5, 20.0, -40.0)         # pulled back: stops (v = 0), then breaks away backward
    assert body.events is log and log[0] == [0.0, "breakaway forward"]
    assert [e[1] for e in log[1:3]] == ["stuck (v = 0)", "breakaway backward"]


def test_mwsf_stop_impact_then_breakaway_away_from_the_stop_is_logged():
    """A stop impact makes the mass Stuck at the stop (v := 0); a force pulling away beyond f0_max breaks it
    away at the same instant (msl-reference 3.2, Examples.Friction stop2 in 4.3): both are logged."""
    p = msf.Parameters(smin=-0.1, smax=5.0)
    body = msf.Body(p, s=0.0, v=-5.0)
    body.initialize(20.0)
    body.step(0.0, 0.1, 20.0)
    whats = [e[1] for e in body.events]
    assert whats[:2] == ["left stop impact", "breakaway forward"]
    assert body.events[0][0] == body.events[1][0]
    assert body.mode == msf.FORWARD and body.v > 0.0


def test_mwsf_step_returns_the_breakaway_flags_of_its_end():
    """startForward is true only while the mass is still at v = 0 (settle docstring, 3.1): a step that
    breaks away at its start and slides to its end returns (False, False)."""
    p = msf.Parameters()
    body = msf.Body(p)
    body.initialize(0.0)
    assert body.step(0.0, 0.5, 20.0) == (False, False)
    assert body.events[0] == [0.0, "breakaway forward"] and body.v > 0.0


def test_mwsf_overflowing_motion_is_reported_as_a_non_finite_state():
    """A force whose acceleration overflows ends the step with a non-finite state (step's comment:
    reported as non-finite outputs), not the previous state."""
    p = msf.Parameters(m=1e-300, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)
    body = msf.Body(p)
    body.initialize(1e10)
    body.step(0.0, 1.0, 1e10)
    assert not math.isfinite(body.s + body.v)


def test_mwsf_too_stiff_a_step_raises_step_budget_exceeded():
    """F_prop = 1e9 N.s/m on 1 kg (time constant 1 ns) cannot be followed by the explicit integrator over
    1 s: step() raises StepBudgetExceeded (bounded time, module docstring), not a hang."""
    p = msf.Parameters(F_prop=1e9)
    body = msf.Body(p, s=0.0, v=1.0)
    body.initialize(0.0)
    with pytest.raises(ode.StepBudgetExceeded):
        body.step(0.0, 1.0, 1e9)


def test_mwsf_chattering_step_raises_after_1000_mode_changes():
    """F_Coulomb < 0 (f0_max < f0, outside MSL's intent) with f0_max < F < f0: breakaway, v turns back
    at once, stuck, breakaway... The guard ends the step with the documented RuntimeError."""
    p = msf.Parameters(F_Coulomb=-5.0, F_Stribeck=0.0, F_prop=1.0)
    body = msf.Body(p)
    body.initialize(0.0)
    with pytest.raises(RuntimeError, match="more than 1000 mode changes in one step"):
        body.step(0.0, 1.0, -5.002)


@pytest.mark.parametrize("rtol, atol", [(1e-3, 1e-12), (1e-10, 1e-3)])
def test_mwsf_step_tolerances_are_passed_to_the_integrator(rtol, atol):
    """The step size of an error-controlled 5th-order method scales as tol^(1/5): tolerances 1e7 times
    looser give integrator steps about 25 times longer than the defaults (rtol 1e-10, atol 1e-12)."""
    p = msf.Parameters(m=1.0, F_prop=0.3, F_Coulomb=1.0, F_Stribeck=8.0, fexp=3.0, smin=-100.0, smax=100.0)
    steps = []
    for kw in ({}, {"rtol": rtol, "atol": atol}):
        body = msf.Body(p, s=0.0, v=0.2)
        body.initialize(5.0)
        body.step(0.0, 10.0, 5.0, 0.0, **kw)
        steps.append(body.h_int)
    assert steps[1] > 5.0 * steps[0]


def test_mwsf_ramp_starting_exactly_at_f0_max_breaks_away_at_once():
    """Stuck with F(t) = f0_max + dF*(t - t0), dF > 0: sa > f0_max just after t0 (3.1), so the mass
    breaks away at t0 (to rounding); a threshold reached exactly at the step's start used to be
    dropped (t < tau) and the breakaway waited for the end of the step."""
    p = msf.Parameters()
    body = msf.Body(p)
    body.initialize(0.0)
    body.step(0.0, 0.5, p.f0_max, 10.0)
    assert body.events and body.events[0][1] == "breakaway forward"
    assert body.events[0][0] == pytest.approx(0.0, abs=1e-12)


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
    t, y, ev, h = ode.integrate(lambda t, y: [0.0] if t <= t0 else [math.inf], t0, [1.0], t_end, budget=[1000])
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


@pytest.mark.parametrize("t0, t_end, h, steps", [
    (0.0, 1.0, 1.0 - 5e-13, 1), (0.0, 1000.0, 1000.0 - 5e-10, 1), (0.0, 1.0, 1.0 - 1.5e-12, 2), (0.0, 0.3, 0.2, 2),
    (-0.47026350752244794, 0.8364614512743888, 2.0, 1)])     # t0 + (t_end - t0) rounds below t_end
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
    rhs = lambda t, y: [y[1], -4.0 * y[0] - 0.3 * y[1]]      # noqa: E731
    y0, h = [0.5, -0.2], 0.3
    y5, e = dp_step(rhs, 0.0, y0, h)
    err = np.max(np.abs(e) / np.maximum(np.abs(y0), np.abs(y5)))
    budget = [50]
    t, y, ev, _ = ode.integrate(rhs, 0.0, y0, h, rtol=float(err / 1.5), atol=0.0, h=h, budget=budget)
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
    assert hit is ev and t == pytest.approx(0.5, abs=1e-12) and y[0] == pytest.approx(0.5, abs=1e-12)
    falling = ode.Event(lambda t, y: 0.25 - y[0])           # falls through 0 at t = 0.25
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
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], t_end, [ode.Event(g, 1)], h=t_end, t_tol=t_tol)
    return t, len(calls)


def test_integrate_event_bisection_stops_at_the_time_tolerance():
    """The crossing is bisected on the step's interpolant down to a bracket of t_tol*max(1, |t|): from
    a step of 1 with t_tol = 2^-10 that is exactly 10 halvings (plus g at the step's two ends), and the
    time returned is past the crossing by at most t_tol."""
    tc = 0.5 + 1e-5
    t, n = g_calls_to_locate(tc, 2.0 ** -10, 1.0)
    assert n == 2 + 10 and tc <= t <= tc + 2.0 ** -10
    # beyond |t| = 1 the tolerance is relative: 8 -> t_tol*|t| ~ 0.01 at t ~ 5: log2(8/0.01) ~ 10 halvings
    tc = 5.0 + 1e-4
    t, n = g_calls_to_locate(tc, 2.0 ** -9, 8.0)
    assert tc <= t <= tc + 2.0 ** -9 * t and n <= 2 + math.ceil(math.log2(8.0 / (2.0 ** -9 * tc)))


@pytest.mark.parametrize("tc", [0.3, 0.5 + 2.0 ** -40, 0.7, 1.0 / 3.0])
def test_integrate_event_bisection_with_zero_tolerance_ends_on_adjacent_floats(tc):
    """t_tol = 0: the bisection runs down to adjacent floats and stops there; the time returned is the
    first float at which y = t has crossed tc, i.e. tc itself (y = t is reproduced exactly)."""
    ev = ode.Event(lambda t, y: y[0] - tc, 1)
    t, y, hit, _ = ode.integrate(lambda t, y: [1.0], 0.0, [0.0], 1.0, [ev], h=1.0, t_tol=0.0)
    assert hit is ev and abs(t - tc) <= 4 * math.ulp(tc)
