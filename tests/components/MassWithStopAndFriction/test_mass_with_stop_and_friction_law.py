"""The MassWithStopAndFriction law, src/contactfmu/components/MassWithStopAndFriction/law.py:
parameters and their MSL start values, the Stribeck friction law, the modes (stuck, forward,
backward, free) and their transitions (breakaway at f0_max, stick, stop impacts), Body.step under
a force ramp and its error reports.

Every expected value is independent of the code under test: the MSL 4.1
Translational.Components.MassWithStopAndFriction documentation written out here (stuck while
|F| <= f0_max, breakaway when F > f0_max), closed forms, or scipy's solve_ivp of those equations.
No FMU is built.
"""

import math

import pytest
from scipy.integrate import solve_ivp

from contactfmu.components.MassWithStopAndFriction import law as msf
from contactfmu.mechanics import ode

# ---- MassWithStopAndFriction ----------------------------------------------------------------------


def test_msf_parameters_and_friction_law():
    p = msf.Parameters(
        m=2.0, L=0.4, smax=3.0, smin=-1.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, fexp=3.0
    )
    assert (p.lo, p.hi) == (pytest.approx(-0.8), pytest.approx(2.8))
    assert p.f0 == 10.0 and p.f0_max == pytest.approx(10.01)
    assert not p.has_no_friction()
    assert msf.Parameters(F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0).has_no_friction()
    assert not msf.Parameters(F_prop=0.1, F_Coulomb=0.0, F_Stribeck=0.0).has_no_friction()
    assert msf.sliding_friction(p, 0.7, True) == pytest.approx(
        0.5 * 0.7 + 4.0 + 6.0 * math.exp(-3.0 * 0.7)
    )
    assert msf.sliding_friction(p, -0.7, False) == pytest.approx(
        -0.5 * 0.7 - 4.0 - 6.0 * math.exp(-3.0 * 0.7)
    )
    assert (
        msf.stopped_flag(p, -0.8) == -1
        and msf.stopped_flag(p, 2.8) == 1
        and msf.stopped_flag(p, 0.0) == 0
    )
    assert msf.start_checks(p, 0.0, 0.0) is None
    assert msf.start_checks(p, -0.8, 0.0) is None and msf.start_checks(p, 2.8, 0.0) is None
    assert "smin" in msf.start_checks(p, -0.9, 0.0)
    assert "v = -1.0" in msf.start_checks(p, -0.8, -1.0)
    assert "smax" in msf.start_checks(p, 2.9, 0.0)
    assert "v = 1.0" in msf.start_checks(p, 2.8, 1.0)
    assert "s - L/2 = -1.1" in msf.start_checks(p, -0.9, 0.0)


def test_msf_settle_and_outputs():
    p = msf.Parameters(m=2.0, F_prop=0.5, F_Coulomb=4.0, F_Stribeck=6.0, smin=-1.0, smax=1.0)
    S, Fw, B, Fr = msf.STUCK, msf.FORWARD, msf.BACKWARD, msf.FREE
    assert msf.settle(p, 0.0, 1.0, S, 0.0) == (Fw, False, False)
    assert msf.settle(p, 0.0, -1.0, S, 0.0) == (B, False, False)
    assert msf.settle(p, 0.0, 0.0, S, 10.02) == (Fw, True, False)
    assert msf.settle(p, 0.0, 0.0, S, -10.02) == (B, False, True)
    assert msf.settle(p, 0.0, 0.0, S, 10.005) == (S, False, False)
    assert msf.settle(p, 0.0, 0.0, Fw, 10.005) == (Fw, True, False)
    assert msf.settle(p, 0.0, 0.0, B, -10.005) == (B, False, True)
    assert msf.settle(p, 0.0, 0.0, Fw, 9.9) == (S, False, False)
    assert msf.settle(p, 1.0, 0.0, S, 20.0) == (S, False, False)  # at the right stop
    assert msf.settle(p, -1.0, 0.0, S, -20.0) == (S, False, False)
    assert msf.settle(p, 1.0, 0.0, Fw, 10.005) == (S, False, False)
    free = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0, smin=-1.0, smax=1.0)
    assert msf.settle(free, 0.0, 0.0, S, 0.0) == (Fr, False, False)
    assert msf.settle(free, 1.0, 0.0, S, 0.0) == (S, False, False)
    assert msf.outputs(p, 0.0, 0.0, S, 3.0) == (0.0, 3.0, 3.0)
    assert msf.outputs(free, 0.0, 0.0, Fr, 3.0) == (1.5, 0.0, 1.5)
    a, f, sa = msf.outputs(p, 0.0, 0.0, Fw, 12.0)
    assert (a, f, sa) == pytest.approx(((12.0 - 10.0) / 2.0, 10.0, (12.0 - 10.0) / 2.0 + 10.01))
    a, f, sa = msf.outputs(p, 0.0, 0.0, B, -12.0)
    assert (a, f, sa) == pytest.approx(((-12.0 + 10.0) / 2.0, -10.0, (-12.0 + 10.0) / 2.0 - 10.01))
    a, f, sa = msf.outputs(p, 0.0, 0.3, Fw, 12.0)
    fr = 0.5 * 0.3 + 4.0 + 6.0 * math.exp(-2.0 * 0.3)
    assert (a, f) == pytest.approx(((12.0 - fr) / 2.0, fr))


def test_msf_coulomb_slide_stops_at_the_analytic_time_and_holds():
    """F_prop = F_Stribeck = 0: constant deceleration F_Coulomb/m; stops at v0*m/F_C, s = v0^2*m/(2 F_C)."""
    p = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=3.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.1, v=1.5)
    assert body.initialize(0.0) == msf.FORWARD
    body.step(0.0, 2.0, 0.0)
    assert body.mode == msf.STUCK and body.v == 0.0
    assert body.s == pytest.approx(0.1 + 1.5**2 * 2.0 / (2 * 3.0), rel=1e-9)
    assert body.events[-1][1] == "stuck (v = 0)"
    assert body.events[-1][0] == pytest.approx(1.5 * 2.0 / 3.0, abs=1e-9)


def test_msf_stribeck_slide_matches_solve_ivp():
    p = msf.Parameters(m=1.5)
    body = msf.Body(p, s=0.0, v=-0.5)
    body.initialize(0.0)
    F0, dF = 30.0, -4.0
    body.step(0.0, 0.2, F0, dF)

    def rhs(t, y):
        v = y[1]
        f = p.F_prop * v - p.F_Coulomb - p.F_Stribeck * math.exp(-p.fexp * abs(v))
        return [v, (F0 + dF * t - f) / p.m]

    def stuck(t, y):
        return y[1]

    stuck.terminal, stuck.direction = True, 1
    ref = solve_ivp(
        rhs, (0, 0.2), [0.0, -0.5], method="DOP853", rtol=1e-12, atol=1e-14, events=stuck
    )
    assert body.events[0][1] == "stuck (v = 0)"
    assert body.events[0][0] == pytest.approx(ref.t_events[0][0], abs=1e-9)
    # F(t) = 30 - 4t > f0_max at once: breakaway forward at the same instant, then forward sliding
    assert body.events[1][1] == "breakaway forward"
    assert body.mode == msf.FORWARD and body.v > 0.0


def test_msf_breakaway_when_a_ramp_reaches_f0_max():
    p = msf.Parameters(m=1.0)
    body = msf.Body(p)
    body.initialize(0.0)
    body.step(
        0.0, 1.0, 2.0, 10.0
    )  # F = 2 + 10 t reaches f0_max = 15.015 at t = 1.3015: no breakaway yet
    assert body.mode == msf.STUCK and body.events == []
    body.step(1.0, 1.0, 12.0, 10.0)
    assert body.events[0][1] == "breakaway forward"
    assert body.events[0][0] == pytest.approx(1.0 + (p.f0_max - 12.0) / 10.0, abs=1e-12)
    body = msf.Body(p)
    body.initialize(0.0)
    body.step(0.0, 1.0, -2.0, -20.0)
    assert body.events[0][1] == "breakaway backward"
    assert body.events[0][0] == pytest.approx((p.f0_max - 2.0) / 20.0, abs=1e-12)


@pytest.mark.parametrize("v0, side", [(2.0, "right stop"), (-2.0, "left stop")])
def test_msf_free_body_hits_a_stop_at_the_analytic_time(v0, side):
    p = msf.Parameters(m=1.0, L=0.2, smax=1.0, smin=-1.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.0, v=v0)
    assert body.initialize(0.0) == msf.FREE
    body.step(0.0, 1.0, 0.0)
    assert body.events[-1][1] == side + " impact"
    assert body.events[-1][0] == pytest.approx(0.9 / 2.0, abs=1e-10)
    assert (
        body.s == pytest.approx(0.9 if v0 > 0 else -0.9)
        and body.v == 0.0
        and body.mode == msf.STUCK
    )
    # pushed into the stop: held; pulled away: free again (F/m)
    body.step(1.0, 0.5, 3.0 if v0 > 0 else -3.0)
    assert body.s == pytest.approx(0.9 if v0 > 0 else -0.9) and body.v == 0.0


def test_msf_free_body_under_a_force_ramp_is_the_polynomial():
    p = msf.Parameters(m=2.0, F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)
    body = msf.Body(p, s=0.5, v=0.1)
    body.initialize(0.0)
    body.step(0.0, 0.8, 3.0, 1.5)
    t = 0.8
    assert body.s == pytest.approx(
        0.5 + 0.1 * t + (3.0 * t**2 / 2 + 1.5 * t**3 / 6) / 2.0, rel=1e-9
    )
    assert body.v == pytest.approx(0.1 + (3.0 * t + 1.5 * t**2 / 2) / 2.0, rel=1e-9)


# ---- MassWithStopAndFriction, stuck under a force ramp (MSL 4.1 MassWithStopAndFriction documentation) ---


@pytest.mark.parametrize("dF", [1.0, 0.5])
def test_msf_breakaway_of_a_unit_and_a_slow_ramp_at_the_analytic_time(dF):
    """Stuck (v = 0) under F(t) = dF*t: breakaway forward when F > f0_max (MSL), i.e. just after
    t = f0_max/dF, inside the step; then sliding forward."""
    p = msf.Parameters(m=1.0)  # f0_max = 1.001*(5 + 10) = 15.015
    body = msf.Body(p)
    assert body.initialize(0.0) == msf.STUCK
    body.step(0.0, 15.015 / dF + 0.5, 0.0, dF)
    assert body.events[0][1] == "breakaway forward"
    assert body.events[0][0] == pytest.approx(15.015 / dF, abs=3e-13)  # measured: 3e-14
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
    F0 = sign * (p.f0_max - 1e-4)  # crosses +-f0_max at t = 1 s
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
    F0 = sign * (p.f0_max + 1e-4)  # crosses +-f0_max at t = 1 s, on the way down
    assert body.initialize(F0) == msf.STUCK
    body.step(0.0, 2.0, F0, -sign * 1e-4)
    assert (body.s, body.v, body.mode, body.events) == (s, 0.0, msf.STUCK, [])


# ---- Body._stuck_until: the breakaway time of a stuck mass under a linear force ---------------------


def _breakaway(F0, dF, h, **params):
    from contactfmu.components.MassWithStopAndFriction import law as msf

    body = msf.Body(msf.Parameters(**params))
    body.initialize(F0)
    body.step(0.0, h, F0, dF)
    return body.events[0] if body.events else None


@pytest.mark.parametrize(
    "F0,dF,direction", [(-1.001 * 15.0, 0.5, "forward"), (1.001 * 15.0, -0.5, "backward")]
)
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
        assert abs(t - expected) <= 4.0 * math.ulp(f0_max) / abs(dF) + 4.0 * math.ulp(expected), (
            F0,
            dF,
            t,
            expected,
        )


# ---- MassWithStopAndFriction (MSL 4.1 Translational.Components.MassWithStopAndFriction) -----------


def test_mwsf_parameter_defaults_are_msl_start_values():
    """m = 1, L = 0, smax = 25, smin = -25, F_prop = 1, F_Coulomb = 5, F_Stribeck = 10, fexp = 2,
    v_small = 1e-3 (MSL 4.1 MassWithStopAndFriction parameter table): f0 = 15, f0_max = 1.001*f0,
    centre stops at -+25."""
    p = msf.Parameters()
    assert (p.m, p.L, p.smax, p.smin) == (1.0, 0.0, 25.0, -25.0)
    assert (p.F_prop, p.F_Coulomb, p.F_Stribeck, p.fexp, p.v_small) == (1.0, 5.0, 10.0, 2.0, 1e-3)
    assert (p.lo, p.hi, p.f0) == (-25.0, 25.0, 15.0) and p.f0_max == pytest.approx(
        15.015, rel=1e-15
    )
    body = msf.Body(p)
    assert (body.s, body.v) == (0.0, 0.0)  # s.start = 0, v.start = 0


def test_mwsf_free_only_without_any_friction():
    """free = (f0 <= 0) and (F_prop <= 0) (MSL 4.1 MassWithStopAndFriction equations): a small
    Coulomb force is not free."""
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
    assert msf.start_checks(p, p.hi, 1.0).endswith(
        f"but s + L/2 = {p.hi + 0.2!r} m with v = 1.0 m/s > 0"
    )
    assert msf.start_checks(p, p.lo, -1.0).endswith(
        f"but s - L/2 = {p.lo - 0.2!r} m with v = -1.0 m/s < 0"
    )


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
    body.step(1.5, 20.0, -40.0)  # pulled back: stops (v = 0), then breaks away backward
    assert body.events is log and log[0] == [0.0, "breakaway forward"]
    assert [e[1] for e in log[1:3]] == ["stuck (v = 0)", "breakaway backward"]


def test_mwsf_stop_impact_then_breakaway_away_from_the_stop_is_logged():
    """A stop impact makes the mass Stuck at the stop (v := 0); a force pulling away beyond f0_max breaks it
    away at the same instant (MSL 4.1 MassWithStopAndFriction equations, stop2 of
    Translational.Examples.Friction): both are logged."""
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
    """A 1 ng mass (time constant about 1 ns) whose Stribeck term falls faster than F_prop rises
    (F_prop < 2*fexp*F_Stribeck: no quasi-static limit taken) cannot be followed by the explicit
    integrator over 1 s: step() raises StepBudgetExceeded (bounded time, module docstring), not a
    hang."""
    p = msf.Parameters(m=1e-9, F_prop=1.0)
    body = msf.Body(p, s=0.0, v=1.0)
    body.initialize(100.0)
    with pytest.raises(ode.StepBudgetExceeded):
        body.step(0.0, 1.0, 100.0)


def test_mwsf_a_time_constant_far_below_the_step_is_the_quasi_static_limit():
    """F_prop = 1e9 N.s/m on 1 kg (time constant 1 ns) over 1 s under F = 1e9 N: v at once at
    the balance F = F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*v), s = v*t (plus the start
    transient, (v_start - v)*m/F_prop)."""
    p = msf.Parameters(F_prop=1e9)
    body = msf.Body(p, s=0.0, v=1.0)
    body.initialize(0.0)
    body.step(0.0, 1.0, 1e9)
    v = (1e9 - 5.0 - 10.0 * math.exp(-2.0 * body.v)) / 1e9
    assert body.mode == msf.FORWARD and body.v == pytest.approx(v, rel=1e-15)
    assert body.s == pytest.approx(v * 1.0, rel=1e-14)


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
    p = msf.Parameters(
        m=1.0, F_prop=0.3, F_Coulomb=1.0, F_Stribeck=8.0, fexp=3.0, smin=-100.0, smax=100.0
    )
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
