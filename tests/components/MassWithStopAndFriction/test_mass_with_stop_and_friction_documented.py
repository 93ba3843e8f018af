"""MassWithStopAndFriction FMU: documented behaviours (the FMU's description, README "FMUs" and
"Conventions", MSL 4.1 Translational.Components.MassWithStopAndFriction documentation) that had no
test, each against a value derived here: closed forms, or solve_ivp of the equations written out in
the test. Nothing here comes from contactfmu.mechanics, contactfmu.components or contactfmu.monolithic.

The Stribeck law (MSL 4.1 MassWithStopAndFriction), written out again:
    sliding forward  f = F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*|v|)
    sliding backward f = F_prop*v - F_Coulomb - F_Stribeck*exp(-fexp*|v|)
    m*a = F - f (F: the external force on the body), lossPower = f*v
    stuck: a = 0, f = sa = F; breakaway when |F| > f0_max = 1.001*(F_Coulomb + F_Stribeck)
"""

import math

import numpy as np
import pytest
from fmu_helpers import slave_fixture
from scipy.integrate import solve_ivp

from contactfmu.cosim import System

STRIBECK = dict(
    m=1.0, F_prop=1.0, F_Coulomb=5.0, F_Stribeck=10.0, fexp=2.0
)  # stop1 of MSL Friction


STOPS = dict(L=1.0, smax=0.9, smin=-0.9)  # stop2 of MSL Friction: the centre stops at +-0.4


FRICTIONLESS = dict(F_prop=0.0, F_Coulomb=0.0, F_Stribeck=0.0)


def stribeck(v, m=1.0, F_prop=1.0, F_Coulomb=5.0, F_Stribeck=10.0, fexp=2.0):
    """The sliding friction force of the MSL model (module docstring), for v != 0."""
    return F_prop * v + math.copysign(F_Coulomb + F_Stribeck * math.exp(-fexp * abs(v)), v)


def sliding_motion(F, s0, v0, t_end, events=(), law=STRIBECK):
    """solve_ivp (DOP853, rtol 1e-13) of m*a = F - f(v) with the friction loss integral as a
    third state: y = (s, v, integral of f*v)."""
    m = law["m"]

    def rhs(t, y):
        f = stribeck(y[1], **law)
        return [y[1], (F - f) / m, f * y[1]]

    return solve_ivp(
        rhs,
        (0.0, t_end),
        [s0, v0, 0.0],
        method="DOP853",
        rtol=1e-13,
        atol=1e-15,
        events=list(events),
        dense_output=True,
    )


def terminal(fun, direction):
    fun.terminal, fun.direction = True, direction
    return fun


mass = slave_fixture("MassWithStopAndFriction")


def push(s, F):
    """External force F on the body through flange_a (the input is the cut force of the
    connected element; the body receives its negative)."""
    s.set(flange_a__f=-F)


def ints(s, *names):
    return s.fmu.getInteger(s.vr(names))


def bools(s, *names):
    return s.fmu.getBoolean(s.vr(names))


def record(s, F, t_end, h, names, t0=0.0):
    """Constant force F from t0; the outputs `names` at every communication point t0, t0 + h, ..,
    t0 + t_end (no step after the last)."""
    n = int(round(t_end / h))
    rows = []
    for k in range(n + 1):
        push(s, F)
        rows.append(s.get(*names))
        if k < n:
            s.fmu.doStep(t0 + k * h, h)
    return t0 + np.arange(n + 1) * h, np.array(rows)


@pytest.mark.parametrize("direction", [1, -1])
def test_loss_power_is_friction_force_times_velocity_while_sliding(mass, direction):
    """Documented: lossPower = f*v (MSL 4.1 MassWithStopAndFriction equations; README/FMU description). 1 kg at 3 m/s
    (either direction) with a constant 4 N along the motion (below f0 = 15 N): it decelerates,
    sticks, and is then held by f = sa = 4 N. Expected from solve_ivp of the written-out Stribeck
    law: lossPower(t) = f(v(t))*v(t) while sliding (measured 1.1e-11 W of 24 W, tolerance 1e-10 W),
    exactly 0 once stuck although f = 4 N (v = 0), and its integral over the run = the kinetic
    energy m*v0^2/2 plus the work of the force F*(s_stick - s0) (trapezoid at 1 ms: measured
    9.9e-6 J of 9.7 J, tolerance 1e-4 J)."""
    F, v0, h = 4.0 * direction, 3.0 * direction, 1e-3
    s = mass(**STRIBECK, v_start=v0)
    t, rows = record(s, F, 1.0, h, ("lossPower", "v", "f"))
    loss, v, f = rows.T
    ref = sliding_motion(F, 0.0, v0, 1.0, [terminal(lambda t, y: y[1], -direction)])
    t_stick, (s_stick, _, dissipated) = ref.t_events[0][0], ref.y_events[0][0]
    sliding = t < t_stick
    _, v_ref, _ = ref.sol(t[sliding])
    expected = np.array([stribeck(x) * x for x in v_ref])
    assert np.all(loss[sliding] > 0.0)
    assert np.max(np.abs(loss[sliding] - expected)) < 1e-10
    stuck = t > t_stick
    assert np.all(v[stuck] == 0.0) and np.all(f[stuck] == F)  # held by the friction force
    assert np.all(loss[stuck] == 0.0)
    work = 0.5 * v0**2 + F * s_stick
    assert dissipated == pytest.approx(work, rel=1e-12)  # the reference's own balance
    assert np.trapezoid(loss, t) == pytest.approx(work, abs=1e-4)


def test_loss_power_excludes_the_dirac_impulse_of_a_stop_impact(mass):
    """Documented: "lossPower excludes the Dirac impulse of a stop impact" (FMU description;
    MSL 4.1 MassWithStopAndFriction: the kinetic energy lost at a stop is not in lossPower). 40 N from rest
    towards the right stop (centre at 0.4 m), solve_ivp: it hits at 0.1596 s with 5.014 m/s,
    kinetic energy 12.57 J. Expected: before the hit lossPower = f(v)*v of the written-out law
    (measured 7.7e-12 W, tolerance 1e-10 W); at every communication point after it (the step
    with the impact included) lossPower = f*v = 40 N * 0 = 0 exactly (an impulse spread over
    the 1 ms step would read 1.3e4 W), while f holds the 40 N; the integral of lossPower up to
    the located impact equals the friction work 40 N * 0.4 m - 12.57 J = 3.428 J (measured
    6.7e-5 J, tolerance 7e-4 J), not the 16 J the force put in."""
    F, h = 40.0, 1e-3
    s = mass(**STRIBECK, **STOPS)
    t, rows = record(s, F, 0.25, h, ("lossPower", "v", "f"))
    loss, v, f = rows.T
    t_hit = s.get("lastEventTime")
    ref = sliding_motion(F, 0.0, 0.0, 1.0, [terminal(lambda t, y: y[0] - 0.4, 1)])
    v_hit, friction_work = ref.y_events[0][0][1:]
    kinetic = 0.5 * v_hit**2
    assert kinetic > 12.5 and friction_work == pytest.approx(F * 0.4 - kinetic, rel=1e-12)
    before = t < t_hit
    _, v_ref, _ = ref.sol(t[before][1:])
    assert np.max(np.abs(loss[before][1:] - np.array([stribeck(x) * x for x in v_ref]))) < 1e-10
    after = t > t_hit
    assert after.sum() > 50 and np.all(v[after] == 0.0) and np.all(f[after] == F)
    assert np.all(loss[after] == 0.0)
    last = np.flatnonzero(before)[-1]
    integral = np.trapezoid(loss[before], t[before]) + loss[last] * (t_hit - t[last])
    assert integral == pytest.approx(friction_work, abs=7e-4)


def test_heat_port_heat_flow_is_minus_loss_power_and_does_not_change_the_mechanics(mass):
    """Documented: useHeatPort = true: heatPort.Q_flow = -lossPower; false: 0 (FMU variable
    description; MSL 4.1 Interfaces.PartialElementaryConditionalHeatPortWithoutT, the conditional
    heat port: the mechanics are not affected by
    the thermal side). Same run (3 m/s, 2 N against the motion) with both settings: Q_flow is
    exactly -lossPower (lossPower up to 24 W) resp. exactly 0, and s, v are bit-identical."""
    runs = {}
    for use in (True, False):
        s = mass(**STRIBECK, useHeatPort=use, v_start=3.0)
        runs[use] = record(s, -2.0, 0.5, 1e-3, ("lossPower", "heatPort.Q_flow", "s", "v"))[1]
    on, off = runs[True], runs[False]
    assert on[:, 0].max() > 20.0
    assert np.array_equal(on[:, 1], -on[:, 0])
    assert np.all(off[:, 1] == 0.0)
    assert np.array_equal(on[:, [0, 2, 3]], off[:, [0, 2, 3]])


def test_free_mode_without_friction_is_a_plain_mass_between_the_stops(mass):
    """Documented: free = (f0 <= 0 and F_prop <= 0) strictly between the stops (MSL 4.1
    MassWithStopAndFriction equations):
    mode Free (2), not locked, f = 0, m*a = F. 2 kg, no friction, L = 1 m, stops +-0.9 (centre
    +-0.4), from s = -0.1 m under 3 N: expected s = -0.1 + 0.75 t^2 (closed form; measured
    4.4e-15 m, tolerance 5e-14 m), lossPower 0, the right stop hit at sqrt(2*0.5/1.5) s (located:
    measured 2.3e-14 s, tolerance 2.5e-13 s). At the stop free is false (s = hi): Stuck, locked,
    stopped = 1, f = 3 N holds it. Pulled with 1 N it starts backward (startBackward, f = 0,
    a = -0.5) and is free again off the stop: s = 0.4 - 0.25 t^2 (measured 6.1e-16 m)."""
    s = mass(m=2.0, **FRICTIONLESS, **STOPS, s_start=-0.1)
    push(s, 3.0)
    assert ints(s, "mode") == [2] and bools(s, "free", "locked") == [True, False]
    assert s.get("f", "a", "lossPower") == [0.0, 1.5, 0.0]
    h, t_hit = 1e-3, math.sqrt(2 * 0.5 / 1.5)
    t, rows = record(s, 3.0, 0.8, h, ("s", "f", "lossPower"))
    assert np.max(np.abs(rows[:, 0] - (-0.1 + 0.75 * t**2))) < 5e-14
    assert np.all(rows[:, 1:] == 0.0)
    for k in range(800, 1000):
        push(s, 3.0)
        s.fmu.doStep(k * h, h)
    assert s.get("lastEventTime") == pytest.approx(t_hit, abs=2.5e-13)
    assert s.get("s", "v", "f") == [0.4, 0.0, 3.0]
    assert ints(s, "mode", "stopped") == [0, 1] and bools(s, "free", "locked") == [False, True]
    push(s, -1.0)
    assert ints(s, "mode") == [-1] and bools(s, "startBackward", "free") == [True, False]
    assert s.get("f", "a") == [0.0, -0.5]
    for k in range(100):
        push(s, -1.0)
        s.fmu.doStep(1.0 + k * h, h)
    assert ints(s, "mode") == [2] and bools(s, "free") == [True]
    assert s.get("s") == pytest.approx(0.4 - 0.25 * 0.1**2, abs=6e-15)


def test_viscous_friction_alone_is_not_free(mass):
    """Documented: free needs F_prop <= 0 too. With F_prop = 0.5 N.s/m and no Coulomb/Stribeck
    friction (f0 = f0_max = 0) the body is Stuck at rest (locked, not free), breaks away under any
    force F > 0 (startForward, f = F_prop*0 = 0) and then slides with f = F_prop*v: expected
    v = F/F_prop*(1 - exp(-F_prop*t/m)) (closed form; measured 4.0e-14 m/s, tolerance 4e-13 m/s),
    f = F_prop*v, mode Forward, free false throughout."""
    s = mass(m=1.0, F_prop=0.5, F_Coulomb=0.0, F_Stribeck=0.0)
    assert ints(s, "mode") == [0] and bools(s, "free", "locked") == [False, True]
    push(s, 1.0)
    assert ints(s, "mode") == [1] and bools(s, "startForward", "free", "locked") == [
        True,
        False,
        False,
    ]
    assert s.get("f", "a") == [0.0, 1.0]
    t, rows = record(s, 1.0, 2.0, 1e-3, ("v", "f"))
    v = 1.0 / 0.5 * (1.0 - np.exp(-0.5 * t))
    assert np.max(np.abs(rows[:, 0] - v)) < 4e-13
    assert np.array_equal(rows[1:, 1], 0.5 * rows[1:, 0])
    assert ints(s, "mode") == [1] and bools(s, "free") == [False]


def test_start_backward_at_breakaway_below_minus_f0_max(mass):
    """Documented: startBackward (MSL 4.1 MassWithStopAndFriction equations): at rest (Stuck), F < -f0_max with
    s > lo starts sliding backward: startBackward true, startForward false, mode Backward (-1),
    the friction force f = F_prop*0 - F_Coulomb - F_Stribeck = -f0 (no exp term), sa = a - f0_max
    (a_relfric = sa + f0_max), a = (F + f0)/m (measured: f and a exact, sa 1.8e-15 N off; tolerance
    3e-14 N). Just above -f0_max it stays Stuck with f = sa = F."""
    f0 = 15.0
    f0_max = 1.001 * f0
    s = mass(**STRIBECK)
    push(s, -f0_max * (1 - 1e-9))
    assert ints(s, "mode") == [0] and bools(s, "startBackward", "locked") == [False, True]
    assert s.get("f", "sa") == [-f0_max * (1 - 1e-9)] * 2
    F = -f0_max * (1 + 1e-9)
    push(s, F)
    assert ints(s, "mode") == [-1]
    assert bools(s, "startBackward", "startForward", "locked") == [True, False, False]
    a = (F + f0) / 1.0
    assert s.get("f", "a", "sa") == pytest.approx([-f0, a, a - f0_max], rel=0, abs=3e-14)
    s.fmu.doStep(0.0, 1e-3)
    assert s.get("v") < 0.0 and ints(s, "mode") == [-1] and bools(s, "startBackward") == [False]


def test_start_backward_time_on_a_force_ramp_is_located_inside_the_step(mass):
    """Documented: the breakaway is an event located inside the communication step (FMU
    description). F = -100 N/s * t with its derivative set: F reaches -f0_max = -15.015 N at
    t = 0.15015 s (closed form); measured 1.0e-15 s, tolerance 1e-14 s."""
    s = mass(**STRIBECK)
    k, h = -100.0, 1e-3
    for n in range(200):
        push(s, k * n * h)
        s.fmu.setRealInputDerivatives(s.vr(["flange_a.f"]), [1], [-k])
        s.fmu.doStep(n * h, h)
    assert s.get("lastEventTime") == pytest.approx(1.001 * 15.0 / -k, abs=1e-14)
    assert s.get("v") < 0.0


def test_start_backward_is_blocked_at_the_left_stop(mass):
    """Documented: breakaway into a stop is blocked (startBackward needs s > lo, MSL 4.1
    MassWithStopAndFriction equations):
    at the left stop (centre at lo = smin + L/2 = -0.4 m) a 100 N push to the left, far beyond
    f0_max, leaves it Stuck: startBackward false, locked, stopped = -1, f = sa = -100 N, s and v
    unchanged over a step."""
    s = mass(**STRIBECK, **STOPS, s_start=-0.4)
    push(s, -100.0)
    assert ints(s, "mode", "stopped") == [0, -1] and bools(s, "startBackward", "locked") == [
        False,
        True,
    ]
    assert s.get("f", "sa", "a") == [-100.0, -100.0, 0.0]
    s.fmu.doStep(0.0, 1e-3)
    assert s.get("s", "v") == [-0.4, 0.0]


def test_start_with_negative_velocity_is_backward_after_the_initial_event_iteration(mass):
    """Documented initialization (MSL 4.1 MassWithStopAndFriction equations): v(0) < 0 gives mode
    Backward; the first row
    of the Dymola result already holds the values after the event iteration at t = 0+ (Friction:
    stop2.mode = -1, stop2.startBackward = 0). 5 m/s backward: mode -1, startBackward false, and
    the friction force of the law at v = -5: -5 - 5 - 10*exp(-10) = -10.000454 N."""
    s = mass(**STRIBECK, v_start=-5.0)
    assert ints(s, "mode") == [-1] and bools(s, "startBackward", "startForward") == [False, False]
    assert s.get("f") == pytest.approx(stribeck(-5.0), rel=1e-15)


def test_flange_force_inputs_follow_the_msl_cut_force_convention(mass):
    """Documented (docs/conventions.md "Force sign", MSL 4.1 Translational.Interfaces.Flange_a
    documentation): the force inputs are the MSL flange.f
    of the connected compliant element (the force acting on that element); the forces of a node
    sum to zero, so the body receives their negative: m*a = -(flange_a.f + flange_b.f), the
    numbered inputs .f2.. added. Frictionless 2 kg: flange_b.f = -3 N gives a = +1.5 m/s2,
    flange_a.f = +5 N gives a = -2.5 m/s2, flange_b.f2 = -1 N adds +0.5 m/s2."""
    s = mass(m=2.0, **FRICTIONLESS)
    s.set(flange_b__f=-3.0)
    assert s.get("a") == 1.5
    s.set(flange_b__f=0.0, flange_a__f=5.0)
    assert s.get("a") == -2.5
    s.set(flange_a__f=0.0, flange_b__f2=-1.0)
    assert s.get("a") == 0.5


def test_force_source_and_spring_act_on_the_body_with_the_msl_signs(fmu_dir):
    """Documented (MSL 4.1 Translational.Sources.Force documentation): Sources.Force has flange.f =
    -f, so +f drives the body in +s;
    a Spring (f = c*(s_rel - s_rel0), flange_b.f = f) pulls the body at its flange_b towards its
    flange_a when stretched. Frictionless 2 kg body of length 1 m:
    1. Force f = 20 N at flange_b: s = 5 t^2 (closed form; measured 1.0e-14 m, tolerance 1e-13 m),
       push.flange.f = -20 N.
    2. MSL Friction's stop2 wiring: Fixed at -1.75 m, Spring c = 500 N/m, s_rel0 = 1 m, to the
       body's flange_a (= s - 0.5): force on the body -500*(s + 0.25), so from s = 0 at rest
       s = -0.25 + 0.25*cos(sqrt(250)*t) (closed form; at 1e-4 s steps measured 7.4e-7 m,
       tolerance 7.5e-6 m; the opposite sign would grow as cosh)."""
    body = fmu_dir / "MassWithStopAndFriction.fmu"
    sy = System()
    sy.add("push", fmu_dir / "Force.fmu", f=20.0)
    sy.add("body", body, m=2.0, L=1.0, **FRICTIONLESS)
    sy.connect("push.flange", "body.flange_b")
    r = sy.simulate(0.5, 1e-3, outputs=["body.s", "push.flange.f"])
    assert np.max(np.abs(np.asarray(r["body.s"]) - 5.0 * np.asarray(r.time) ** 2)) < 1e-13
    assert np.all(np.asarray(r["push.flange.f"]) == -20.0)

    sy = System()
    sy.add("fixed", fmu_dir / "Fixed.fmu", s0=-1.75)
    sy.add("spring", fmu_dir / "Spring.fmu", c=500.0, s_rel0=1.0)
    sy.add("body", body, m=2.0, L=1.0, **FRICTIONLESS)
    sy.connect("fixed.flange", "spring.flange_a")
    sy.connect("spring.flange_b", "body.flange_a")
    r = sy.simulate(1.0, 1e-4, outputs=["body.s"])
    expected = -0.25 + 0.25 * np.cos(math.sqrt(250.0) * np.asarray(r.time))
    assert np.max(np.abs(np.asarray(r["body.s"]) - expected)) < 7.5e-6


@pytest.mark.parametrize("L", [0.3, 1.0])
def test_flange_positions_are_the_ends_of_the_rigid_body(mass, L):
    """Documented (MSL 4.1 Translational.Interfaces.PartialRigid and MassWithStopAndFriction): flange_a.s = s - L/2,
    flange_b.s = s + L/2, both flanges with the body's v and a; the stops act on the ends: at the
    right stop flange_b.s = smax, at the left stop flange_a.s = smin (to rounding: measured 0,
    tolerance 1e-15 m). Pushed right with 40 N into the right stop, then left with 40 N."""
    s = mass(**STRIBECK, L=L, smax=0.9, smin=-0.9, s_start=0.1)
    names = (
        "s",
        "v",
        "a",
        "flange_a.s",
        "flange_b.s",
        "flange_a.v",
        "flange_b.v",
        "flange_a.a",
        "flange_b.a",
    )
    rows = []
    for F, t0 in ((40.0, 0.0), (-40.0, 0.5)):
        _, part = record(s, F, 0.5, 1e-3, names, t0=t0)
        rows.append(part)
        if F > 0:
            assert s.get("flange_b.s") == pytest.approx(0.9, abs=1e-15) and ints(s, "stopped") == [
                1
            ]
        else:
            assert s.get("flange_a.s") == pytest.approx(-0.9, abs=1e-15) and ints(s, "stopped") == [
                -1
            ]
    rows = np.vstack(rows)
    sc, v, a = rows[:, 0], rows[:, 1], rows[:, 2]
    assert np.ptp(sc) > 0.5 and np.abs(a).max() > 1.0
    assert np.array_equal(rows[:, 3], sc - L / 2) and np.array_equal(rows[:, 4], sc + L / 2)
    for k in (5, 6):
        assert np.array_equal(rows[:, k], v)
    for k in (7, 8):
        assert np.array_equal(rows[:, k], a)


@pytest.mark.parametrize("h", [1e-3, 1e-2, 7e-3])
@pytest.mark.parametrize("direction", [1, -1])
def test_stop_impact_time_with_coulomb_friction_is_the_closed_form(mass, h, direction):
    """Documented: stop impacts are located inside the communication step (FMU description).
    Coulomb friction only (F_prop = 0, F_Stribeck = 0, F_Coulomb = 5 N), 40 N from rest at s = 0
    towards a stop 0.4 m away: constant acceleration (F - F_Coulomb)/m = 35 m/s2, hit at
    t = sqrt(2*0.4/35) = 0.15119 s (closed form), independent of the step. Measured at most 4.6e-14 s
    (1 ms, 10 ms and 7 ms steps), tolerance 5e-13 s; then s is clamped to the stop with v = 0."""
    s = mass(m=1.0, F_prop=0.0, F_Coulomb=5.0, F_Stribeck=0.0, fexp=2.0, **STOPS)
    for k in range(int(round(0.3 / h))):
        push(s, 40.0 * direction)
        s.fmu.doStep(k * h, h)
    assert s.get("lastEventTime") == pytest.approx(math.sqrt(2 * 0.4 / 35.0), abs=5e-13)
    assert s.get("s", "v") == [0.4 * direction, 0.0]
    assert ints(s, "stopped") == [direction]


@pytest.mark.parametrize("h,tolerance", [(1e-3, 4e-13), (1e-2, 5e-11)])
def test_stop_impact_time_with_stribeck_friction_matches_solve_ivp(mass, h, tolerance):
    """Documented: stop impacts located inside the step; the Stribeck law (module docstring) with
    F_prop = 1, F_Coulomb = 5, F_Stribeck = 10, fexp = 2: 40 N from rest, the right stop 0.4 m
    away is hit at 0.1595713 s (solve_ivp of the written-out law, rtol 1e-13). Measured 3.9e-14 s
    at 1 ms steps and 4.8e-12 s at 10 ms steps (the FMU's integrator tolerance over longer
    steps); tolerances 4e-13 s and 5e-11 s."""
    ref = sliding_motion(40.0, 0.0, 0.0, 1.0, [terminal(lambda t, y: y[0] - 0.4, 1)])
    s = mass(**STRIBECK, **STOPS)
    for k in range(int(round(0.3 / h))):
        push(s, 40.0)
        s.fmu.doStep(k * h, h)
    assert s.get("lastEventTime") == pytest.approx(ref.t_events[0][0], abs=tolerance)
    assert s.get("s", "v") == [0.4, 0.0]
