"""The MassWithStopAndFriction FMU through FMI calls (fmpy): each documented statement of MSL 4.1
Translational.Components.MassWithStopAndFriction (stuck below f0_max, breakaway, the Stribeck curve,
stick time, stop impacts, start checks, parameter checks, state round trips), and every fmi2DoStep
under huge forces returning the truth in bounded time (run in a subprocess).
"""

import math

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmu_helpers import Slave, slave_fixture
from fmu_subprocess import run_in_subprocess
from scipy.integrate import solve_ivp


def test_mass_with_stop_and_friction_huge_forces_step_quickly(fmu_dir):
    """flange_b.f4 = -1.797e308, flange_a.f3 = -1e300 (finite, F = 1.797e308 N): the mass reaches the
    right stop within 5e-154 s and is held there; the step used to run for minutes."""
    r = run_in_subprocess(
        fmu_dir,
        """
        s = Slave(FMU + "/MassWithStopAndFriction.fmu").init()
        s.set(flange_b__f4=-1.797e308, flange_a__f3=-1e300)
        ok, cpu = timed(s, 0.0, 0.2243)
        print(json.dumps(dict(ok=ok, cpu=cpu, out=s.get("s", "v"), errors=s.errors())))
    """,
    )
    assert r["cpu"] < 1.0, r
    assert r["ok"], r["errors"]
    assert r["out"] == [25.0, 0.0]


def test_mass_with_stop_and_friction_overflowing_force_sum_is_an_error_at_once(fmu_dir):
    """Two finite force inputs whose sum overflows: fmi2Error naming the non-finite outputs, quickly."""
    r = run_in_subprocess(
        fmu_dir,
        """
        s = Slave(FMU + "/MassWithStopAndFriction.fmu").init()
        s.set(flange_b__f4=-1.797e308, flange_a__f3=-1.797e308)
        ok, cpu = timed(s, 0.0, 0.2243)
        print(json.dumps(dict(ok=ok, cpu=cpu, errors=s.errors())))
    """,
    )
    assert r["cpu"] < 1.0 and not r["ok"]
    assert "non-finite output" in r["errors"][-1] and "internal error" not in r["errors"][-1]


P = dict(
    m=1.0, F_prop=1.0, F_Coulomb=5.0, F_Stribeck=10.0, fexp=2.0
)  # stop1 of the Friction example


F0_MAX = 1.001 * 15.0


mass = slave_fixture("MassWithStopAndFriction", **P)


def push(s, F, dF=0.0):
    """External force F on the body (flange_a.f is the cut force: the body gets -flange_a.f)."""
    s.set(flange_a__f=-F)
    if dF:
        s.fmu.setRealInputDerivatives(s.vr(["flange_a.f"]), [1], [-dF])


def run(s, F, steps, h=1e-3, t0=0.0):
    for k in range(steps):
        push(s, F)
        s.fmu.doStep(t0 + k * h, h)


def test_stuck_below_f0_max_stays_exactly_still(mass):
    s = mass(s_start=0.3)
    for k, F in enumerate((0.999 * F0_MAX, 15.0, -15.01, 7.0)):
        run(s, F, 200, t0=0.2 * k)  # time goes on (FMUs refuse a jump back)
        assert s.get("s", "v") == [0.3, 0.0]
        assert s.fmu.getInteger(s.vr(["mode"])) == [0]
        assert s.get("f", "sa") == pytest.approx([F, F])  # friction holds the whole force
        assert s.fmu.getBoolean(s.vr(["locked"])) == [True]


def test_breakaway_at_f0_max_and_not_below(mass):
    s = mass()
    assert s.get("f0", "f0_max") == pytest.approx([15.0, F0_MAX])
    run(s, F0_MAX * (1 - 1e-9), 100)
    assert s.get("v") == 0.0
    push(s, F0_MAX * (1 + 1e-9))
    assert s.fmu.getBoolean(s.vr(["startForward"])) == [True]  # breakaway at this instant
    assert s.fmu.getInteger(s.vr(["mode"])) == [1]
    assert s.get("f") == pytest.approx(15.0)  # sliding starts with f0
    s.fmu.doStep(0.1, 1e-3)
    assert s.get("v") > 0.0


def test_breakaway_time_on_a_force_ramp_is_located_inside_the_step(mass):
    s = mass()
    k = 100.0  # F = k t reaches f0_max at t = 0.15015 s
    for n in range(200):
        t = n * 1e-3
        push(s, k * t, k)
        s.fmu.doStep(t, 1e-3)
    # measured error 1.0e-15 s (the ramp is linear in the step: the crossing is exact)
    assert s.get("lastEventTime") == pytest.approx(F0_MAX / k, abs=1e-14)
    assert s.get("v") > 0.0


@pytest.mark.parametrize("direction", [1, -1])
def test_sliding_friction_follows_the_stribeck_curve(mass, direction):
    s = mass(v_start=direction * 8.0)
    vs, fs = [], []
    for n in range(4000):  # free deceleration through the whole curve
        push(s, 0.0)
        v, f = s.get("v", "f")
        if v != 0.0:
            vs.append(v)
            fs.append(f)
        s.fmu.doStep(n * 1e-3, 1e-3)
    vs, fs = np.array(vs), np.array(fs)
    expected = np.sign(vs) * (5.0 + 10.0 * np.exp(-2.0 * np.abs(vs))) + 1.0 * vs
    assert np.abs(vs).max() == pytest.approx(8.0) and np.abs(vs).min() < 0.05
    assert np.max(np.abs(fs - expected)) < 2e-14  # measured 1.8e-15 N (both directions)
    assert s.get("v") == 0.0 and s.fmu.getInteger(s.vr(["mode"])) == [0]  # and then sticks


def test_stick_time_matches_solve_ivp(mass):
    s = mass(v_start=3.0)
    F = 4.0  # below f0: decelerates and sticks
    run(s, F, 1000)

    def rhs(t, y):
        return [y[1], F - (y[1] + 5.0 + 10.0 * math.exp(-2.0 * abs(y[1])))]

    def stop(t, y):
        return y[1]

    stop.terminal, stop.direction = True, -1
    ref = solve_ivp(rhs, (0, 1), [0.0, 3.0], method="DOP853", rtol=1e-13, atol=1e-14, events=stop)
    assert s.get("lastEventTime") == pytest.approx(
        ref.t_events[0][0], abs=3e-11
    )  # measured 2.8e-12 s
    assert s.get("s") == pytest.approx(ref.y_events[0][0][0], abs=6e-14)  # measured 6.0e-15 m
    assert s.get("v") == 0.0


def test_stop_impact_stops_dead_holds_while_pushed_and_leaves_when_pulled(mass):
    s = mass(L=1.0, smax=0.9, smin=-0.9)  # centre stops at -0.4 and +0.4
    run(s, 40.0, 400)  # pushed to the right
    assert s.get("s", "v") == [0.4, 0.0]
    assert s.fmu.getInteger(s.vr(["stopped", "mode"])) == [1, 0]
    hit = s.get("lastEventTime")
    # 0.15957134925093 s: solve_ivp (DOP853, rtol 1e-13) of the Stribeck law from rest under 40 N to
    # s = 0.4 (test_stop_impact_time_with_stribeck_friction_matches_solve_ivp in
    # test_mass_with_stop_and_friction_documented.py); measured 3.9e-14 s
    assert hit == pytest.approx(0.15957134925093, abs=4e-13)
    run(s, 1e6, 100, t0=0.4)  # any force into the stop is held
    assert s.get("s", "v") == [0.4, 0.0] and s.get("f") == pytest.approx(1e6)
    run(s, -0.99 * F0_MAX, 100, t0=0.5)  # pulled away with less than f0_max: stays
    assert s.get("s", "v") == [0.4, 0.0]
    run(s, -1.01 * F0_MAX, 50, t0=0.6)  # more than f0_max: leaves
    assert s.get("s") < 0.4 and s.get("v") < 0.0
    assert s.fmu.getInteger(s.vr(["stopped"])) == [0]


@pytest.mark.parametrize(
    "s0,v0,text",
    [
        (0.5, 0.0, "(s + L/2) must be <= smax"),
        (-0.45, 0.0, "(s - L/2) must be >= smin"),
        (0.4, 1.0, "(s + L/2) must be <= smax"),
    ],
)
def test_start_outside_the_stops_fails_with_a_clear_message(fmu_dir, s0, v0, text):
    s = Slave(fmu_dir / "MassWithStopAndFriction.fmu")
    s.set(L=1.0, smax=0.9, smin=-0.9, s_start=s0, v_start=v0)
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException) as exc:
        s.fmu.exitInitializationMode()
    assert exc.value.status == 3
    assert any(text in m for m in s.errors()), s.log


def test_start_at_a_stop_moving_away_is_allowed(mass):
    s = mass(L=1.0, smax=0.9, smin=-0.9, s_start=0.4, v_start=-1.0)
    assert s.get("s", "v") == [0.4, -1.0]


@pytest.mark.parametrize(
    "param,value",
    [
        ("m", 0.0),
        ("m", -1.0),
        ("F_prop", -1.0),
        ("F_Coulomb", -0.1),
        ("F_Stribeck", -2.0),
        ("fexp", -1.0),
        ("smin", 30.0),
    ],
)
def test_invalid_values_are_rejected(fmu_dir, param, value):
    s = Slave(fmu_dir / "MassWithStopAndFriction.fmu")
    s.set(**{param: value})
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException) as exc:
        s.fmu.exitInitializationMode()
    assert exc.value.status == 3
    assert any(f"Invalid parameter {param} = {value!r}" in m for m in s.errors()), s.log


def test_nan_is_rejected(fmu_dir):
    s = Slave(fmu_dir / "MassWithStopAndFriction.fmu")
    with pytest.raises(FMICallException):
        s.set(F_Coulomb=math.nan)
    assert any("F_Coulomb" in m for m in s.errors())


def test_state_round_trip_through_events_is_bit_identical(mass):
    s = mass(L=1.0, smax=0.9, smin=-0.9, v_start=-5.0)
    state = s.fmu.getFMUstate()

    def go():
        out = []
        for n in range(300):
            push(s, -500 * (s.get("s") + 0.25))
            s.fmu.doStep(n * 1e-3, 1e-3)
            out.append(s.get("s", "v", "lastEventTime"))
        return out

    first = go()
    s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(s.fmu.serializeFMUstate(state)))
    assert go() == first


@pytest.mark.parametrize(
    "F0,dF,h",
    [(15.0149, 1e-4, 2.0), (-15.0149, -1e-4, 2.0), (15.0, 1e-9, 2e7), (15.014999999, 1e-12, 2e3)],
)
def test_a_slowly_rising_force_breaks_a_stuck_mass_away_when_it_passes_f0_max(F0, dF, h):
    """Stuck (v = 0), the force rising so slowly that a time nudge of 1e-15 s moves it by less than its
    rounding (1e-4 N/s: 1e-19 N against an ulp of 1.8e-15 N at 15 N). It must break away where the
    force passes f0_max = 1.001*(F_Coulomb + F_Stribeck) (MSL), within the time resolution of the
    force, ulp(f0_max)/|dF| (before: 'more than 1000 mode changes in one step', an internal error)."""
    from contactfmu.components.MassWithStopAndFriction import law as msf

    body = msf.Body(msf.Parameters(**P))
    body.initialize(F0)
    body.step(0.0, h, F0, dF)
    t, what = body.events[0]  # (then it slides, and may reach a stop)
    expected = (math.copysign(F0_MAX, dF) - F0) / dF
    assert what == "breakaway " + ("forward" if dF > 0 else "backward")
    assert abs(t - expected) <= 4.0 * math.ulp(F0_MAX) / abs(dF) + 4.0 * math.ulp(expected)


@pytest.mark.parametrize(
    "F_prop, m, v_start, F, expected",
    [
        # F_prop/m = 1e300: v relaxes within 1e-300 s to the balance F = F_prop*v + f0 (here
        # 8.5e-299 m/s), or to rest when F does not exceed f0; v_start only moves the body by
        # about v_start*m/F_prop
        (1e300, 1.0, 1.0, 100.0, (8.5e-299, 1)),
        (1e300, 1.0, 1.0, 0.0, (0.0, 0)),
        (1e300, 1.0, 0.0, 1e303, (1000.0, 1)),
        (1e300, 1e-3, -2.0, -1e300, (-1.0, -1)),
        (1e10, 1.0, 0.5, 100.0, (8.5e-9, 1)),  # m/F_prop = 1e-10 s: beyond any integrator step too
    ],
)
def test_a_huge_viscous_friction_gives_the_quasi_static_motion(
    fmu_dir, F_prop, m, v_start, F, expected
):
    """F_prop/m far beyond 1/step (the velocity's time constant m/F_prop far below it): the
    stiff limit of the MSL equations, v at the balance velocity (F_prop*v + F_Coulomb +
    F_Stribeck*exp(-fexp*|v|) = F, MSL's sliding friction) or at rest, in bounded time; not an
    integrator failure (a step budget used up, or non-finite outputs)."""
    r = run_in_subprocess(
        fmu_dir,
        f"""
        s = Slave(FMU + "/MassWithStopAndFriction.fmu").init(
            m={m!r}, F_prop={F_prop!r}, v_start={v_start!r}, smin=-1e3, smax=1e3
        )
        rows, cpu_total = [], 0.0
        for k in range(5):
            s.set(flange_a__f=-{F!r})
            ok, cpu = timed(s, k * 1e-3, 1e-3)
            cpu_total += cpu
            rows.append((ok, s.get("s", "v"), s.fmu.getInteger(s.vr(["mode"]))[0]))
        print(json.dumps(dict(rows=rows, cpu=cpu_total, errors=s.errors())))
    """,
    )
    assert r["cpu"] < 1.0, r
    assert r["errors"] == []
    v_bal, mode = expected
    s_prev = None
    for ok, (s, v), got_mode in r["rows"]:
        assert ok and got_mode == mode, r
        assert v == pytest.approx(v_bal, rel=1e-8, abs=0.0), r
        if s_prev is not None:  # then it moves at the balance velocity
            assert s - s_prev == pytest.approx(v * 1e-3, rel=1e-9, abs=1e-300), r
        s_prev = s
