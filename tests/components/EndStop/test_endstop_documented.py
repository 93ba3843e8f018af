"""EndStop FMU against the documented behaviours (SimulationX Mechanics.Translation.EndStop 4.1,
as read in the FMU's description, src/contactfmu/components/EndStop/slave.py), each checked through FMI against an
independent value: an analytic solution, or scipy's solve_ivp of the documented equations written out
here (nothing from contactfmu.physics or contactfmu.monolithic).

One-line bugs ("restitution ignores kind", "rigid stop never separates", "ignores m2",
"stick-slip holds only 0.85*Fst") passed the older tests; the tests below fail on each of them.

Conventions (documented): dx = ctr1.x - ctr2.x, dv = ctr1.v - ctr2.v; stop 1 in contact for dx >= l1,
stop 2 for dx <= -l2; Fi = Fstop + Ff acts on ctr1's body as -Fi and on ctr2's body as +Fi.
"""

import math

import numpy as np
import pytest
from endstop_cases import sequence, system
from fmpy.fmi1 import FMICallException
from fmu_helpers import Slave
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from contactfmu.cosim import System

FMI2_ERROR = 3


# ---- the documented laws, written out independently -------------------------------------------------------


def gevrey(z, eps_sigma):
    """Gevrey transition 0.5*(1 + tanh(eps_sigma*(z - 0.5)/(z*(1 - z)))), exactly 0 for z <= 0 and 1 for z >= 1."""
    if z <= 0.0:
        return 0.0
    if z >= 1.0:
        return 1.0
    return 0.5 * (1.0 + math.tanh(eps_sigma * (z - 0.5) / (z * (1.0 - z))))


def tanh_step(z, eps_tau):
    """tanh transition 0.5*(1 + tanh((z - 0.5)/eps_tau))."""
    return 0.5 * (1.0 + math.tanh((z - 0.5) / eps_tau))


def friction_law(dv, Fst, Fsl, dvL, kindTrans=1, eps_sigma=1.0, eps_tau=0.1):
    """Continuous transition (kindF = 1) as documented in the FMU: Ff = Fst*(2*T(z) - 1), z = (dv/dvL + 1)/2,
    for |dv| <= dvL; sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)) beyond."""
    if abs(dv) <= dvL:
        z = 0.5 * (dv / dvL + 1.0)
        T = gevrey(z, eps_sigma) if kindTrans == 1 else tanh_step(z, eps_tau)
        return Fst * (2.0 * T - 1.0)
    return math.copysign(Fsl + (Fst - Fsl) * math.exp(1.0 - abs(dv) / dvL), dv)


def friction_slope(dv, Fst, Fsl, dvL, eps_sigma=1.0):
    """d Ff/d dv of the Gevrey law, differentiated by hand:
    d/dz [(z - 0.5)/(z(1 - z))] = (z^2 - z + 0.5)/(z(1 - z))^2, dz/d dv = 1/(2 dvL)."""
    if abs(dv) <= dvL:
        z = 0.5 * (dv / dvL + 1.0)
        q = eps_sigma * (z - 0.5) / (z * (1.0 - z))
        dT = 0.5 * eps_sigma * (z * z - z + 0.5) / (z * (1.0 - z)) ** 2 / math.cosh(q) ** 2
        return Fst * 2.0 * dT / (2.0 * dvL)
    return -(Fst - Fsl) / dvL * math.exp(1.0 - abs(dv) / dvL)


def first_change(time, values, after=0.0):
    """First recorded time > after at which values differs from its value at `after`, and the new value."""
    k0 = np.searchsorted(time, after)
    k = k0 + np.argmax(values[k0:] != values[k0])
    assert values[k] != values[k0], "no change"
    return time[k], int(values[k])


def one_body(fmu_dir, offset=0.0, **kwargs):
    """test_endstop.system (Mass at ctr1, Fixed at ctr2, pushed by offset + amplitude*sin(2 pi f t))."""
    return system(fmu_dir, push=offset, **kwargs)


def stops(side, gap=0.0):
    """l1, l2 with the stop `side` at distance gap from dx = 0 and the other one 1 m away."""
    return {"l1": gap, "l2": 1.0} if side == 1 else {"l1": 1.0, "l2": gap}


def integer(slave, name):
    return slave.fmu.getInteger(slave.vr([name]))[0]


# ---- rigid stop: kind of impact, both stops ------------------------------------------------------------


@pytest.mark.parametrize("side", [1, 2])
@pytest.mark.parametrize("kind, ci, restitution", [(1, 0.8, 0.0), (2, 0.3, 1.0), (3, 0.3, 0.3)])
def test_rigid_impact_rebound_follows_the_kind(fmu_dir, side, kind, ci, restitution):
    """Documented: kind 1 plastic (ci = 0, the given ci ignored), 2 elastic (ci = 1, ci ignored), 3 by the
    coefficient ci; dv' = -ci*dv, and a rebound within eps_dv makes the contact permanent (stop = 1/2).
    A 1 kg body at 1 m/s hits a rigid stop (side 1: dx = l1 = 0; side 2: dx = -l2 = 0) 0.01 m away
    against a fixed ctr2, no other force. Analytic: impact at t = 0.01 s, rebound -restitution*v,
    impulse m*(1 + restitution)*|v| (sign of Fi), position at T: -restitution*v*(T - 0.01).
    Measured error 1e-15 (velocity, position); tolerance 1e-12."""
    sign = 1.0 if side == 1 else -1.0
    T = 0.05
    r = one_body(
        fmu_dir, s0=-0.01 * sign, v0=sign, mode=1, kind=kind, ci=ci, m1=1.0, **stops(side)
    ).simulate(T, 1e-3)
    assert r["mass.v"][-1] == pytest.approx(-restitution * sign, abs=1e-12)
    assert r["mass.s"][-1] == pytest.approx(-restitution * sign * (T - 0.01), abs=1e-12)
    impulses = r["endstop.impulse"][r["endstop.impulse"] != 0.0]
    assert impulses == pytest.approx([sign * (1.0 + restitution)], abs=1e-12)
    assert sequence(r["endstop.stop"]) == ([0, side] if restitution == 0.0 else [0])


# ---- rigid stop: separation at eps_Fi ------------------------------------------------------------------


@pytest.mark.parametrize("side", [1, 2])
def test_rigid_stop_separates_when_the_pull_exceeds_eps_Fi(fmu_dir, side):
    """Documented: at stop 1 the rigid connection holds while Fi > -eps_Fi and separates (-> free) when
    Fi <= -eps_Fi; at stop 2 while Fi < eps_Fi, separating at Fi >= eps_Fi. Fi while held is the force
    the surroundings put on the connection (here the applied force).

    A 1 kg body starts at the stop (dx = 0 = l1 resp. -l2), pressed on it by F(t) = A - R*sin(w t)/w
    (A = 2 N, R = 10 N/s, w = 2 pi 1e-3 rad/s: a ramp A - R*t to 1e-5) towards the stop; eps_Fi = 0.5 N
    (adv = true). Analytic: separation when F = -eps_Fi, t_s = asin((A + eps_Fi)*w/R)/w = 0.25000010 s;
    not before (the pull is below eps_Fi from t = 0.2 s to t_s). After t_s the body moves under F alone:
    m*s'' = F, s(t_s) = 0, v(t_s) = 0 (solve_ivp here).

    Measured (h = 1 ms): the stop output becomes 0 at the first point after t_s + 0.5*h (0.251 s, the
    applied force reaches the element as its mean over the last step); held Fi = F(t - h/2) within 1.2e-11 N;
    position after separation within 7.3e-5 m of the analytic motion (the one-step-late release:
    |F(t_s)|*h*(T - t_s)/m = 7.5e-5 m). Tolerances: release within [t_s, t_s + 1.5h]; Fi within 1e-9 N;
    position within 2*|F(t_s)|*h*(T - t_s)/m = 1.5e-4 m (a stop that never separates is 1.1e-2 m off)."""
    sign = 1.0 if side == 1 else -1.0
    A, R, eps, fr, h, T = 2.0, 10.0, 0.5, 1e-3, 1e-3, 0.4
    w = 2 * math.pi * fr

    def F(t):
        return sign * (A - R / w * np.sin(w * t))

    r = one_body(
        fmu_dir,
        s0=0.0,
        v0=0.0,
        offset=sign * A,
        amplitude=-sign * R / w,
        f=fr,
        mode=1,
        kind=1,
        m1=1.0,
        adv=True,
        eps_Fi=eps,
        **stops(side),
    ).simulate(T, h)
    ts = math.asin((A + eps) * w / R) / w
    stop = r["endstop.stop"]
    t_contact, state = first_change(r.time, stop)
    assert state == side and t_contact < 0.01
    t_release, state = first_change(r.time, stop, after=t_contact)
    assert state == 0
    assert ts <= t_release <= ts + 1.5 * h  # stays while the pull is below eps_Fi
    assert sequence(stop) == [0, side, 0]
    held = (r.time >= t_contact + 2 * h) & (r.time < ts)
    assert np.all(stop[held] == side)
    assert r["endstop.Fi"][held] == pytest.approx(F(r.time[held] - h / 2), abs=1e-9)
    sol = solve_ivp(
        lambda t, y: [y[1], F(t)], (ts, T), [0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-15
    )
    assert r["mass.s"][-1] == pytest.approx(sol.y[0, -1], abs=2 * (eps * h) * (T - ts))
    assert abs(sol.y[0, -1]) > 1e-2


# ---- m2: the inertia at ctr2 ---------------------------------------------------------------------------


def two_bodies(fmu_dir, m1, m2, v1, v2, **params):
    """Body 1 (mass m1, or fixed if m1 = 0) at ctr1, body 2 (m2, or fixed) at ctr2, both starting at s = 0."""
    s = System()
    s.add("endstop", fmu_dir / "EndStop.fmu", m1=m1, m2=m2, **params)
    for name, m, v, flange in (("body1", m1, v1, "ctr1"), ("body2", m2, v2, "ctr2")):
        if m > 0.0:
            s.add(name, fmu_dir / "Mass.fmu", m=m, s_start=0.0, v_start=v)
            s.connect(
                f"{name}.{'flange_b' if flange == 'ctr1' else 'flange_a'}", f"endstop.{flange}"
            )
        else:
            s.add(name, fmu_dir / "Fixed.fmu")
            s.connect(f"{name}.flange", f"endstop.{flange}")
    return s


@pytest.mark.parametrize(
    "m1, m2, v1, v2, ci, side",
    [
        (
            0.0,
            2.0,
            0.0,
            -1.0,
            0.5,
            1,
        ),  # only the body at ctr2 moves: it hits stop 1 (dx = -s2 reaches l1)
        (0.0, 2.0, 0.0, 1.0, 0.5, 2),  # ... and stop 2
        (1.0, 3.0, 1.0, 0.0, 0.5, 1),  # both bodies: the reduced mass m1*m2/(m1 + m2) = 0.75 kg
        (1.0, 3.0, -0.5, 1.5, 0.6, 2),
        (1.0, 3.0, 1.0, 0.0, 1.0, 1),
    ],
)
def test_rigid_impact_with_the_inertia_at_ctr2(fmu_dir, m1, m2, v1, v2, ci, side):
    """Documented (the component README's impact formulas): momentum conservation
    m1*v1 + m2*v2 = m1*v1' + m2*v2' and restitution v1' - v2' = -ci*(v1 - v2); m1, m2 are the masses at
    ctr1, ctr2 (0: fixed side). Analytic: impulse J = mu*(1 + ci)*(v1 - v2), mu = m1*m2/(m1 + m2) (mu = m2
    with ctr1 fixed), v1' = v1 - J/m1, v2' = v2 + J/m2. Stop 0.01 m away, no other force.
    Measured error 7e-15 m/s; tolerance 1e-12 m/s."""
    r = two_bodies(
        fmu_dir, m1, m2, v1, v2, mode=1, kind=3, ci=ci, **stops(side, gap=0.01)
    ).simulate(0.1, 1e-3)
    dv = v1 - v2
    mu = m2 if m1 == 0.0 else m1 * m2 / (m1 + m2)
    J = mu * (1.0 + ci) * dv
    assert r["body2.v"][-1] == pytest.approx(v2 + J / m2, abs=1e-12)
    if m1 > 0.0:
        assert r["body1.v"][-1] == pytest.approx(v1 - J / m1, abs=1e-12)
    assert r["endstop.impulse"][r["endstop.impulse"] != 0.0] == pytest.approx([J], abs=1e-12)
    assert np.all(r["endstop.stop"] == 0)  # rebounds above eps_dv: no permanent contact


# ---- elastic stop: documented results and the first output derivative ---------------------------------

ELASTIC = {"l1": 0.01, "l2": 0.02, "k1": 2e4, "b1": 30.0, "k2": 5e3, "b2": 10.0}
FRICTION = {"friction": True, "kindF": 1, "Fst": 10.0, "Fsl": 8.0, "dvL": 0.05}
# (ctr1.x, ctr1.v, ctr1.a, ctr2.x, ctr2.v, ctr2.a): at stop 1, stop 2, free, slow in the friction transition
POINTS = [
    (0.015, 0.3, 2.0, 0.001, 0.1, -1.0),  # dx = 0.014, dv = 0.2: stop 1, Fstop = 86 N
    (0.016, 0.31, -4.0, 0.0, 0.29, 1.0),  # dx = 0.016, dv = 0.02 (in the friction transition)
    (-0.024, -0.1, 3.0, 0.001, 0.1, 0.5),  # dx = -0.025, dv = -0.2: stop 2, Fstop = -27 N
    (0.002, -0.03, 1.0, 0.0, 0.0, -2.0),
]  # free, |dv| < dvL


def documented_results(dx, dv, friction, p=ELASTIC, fr=FRICTION):
    """(Fs, Fd, Fstop, Ff, Fi, Pl, stop) of the elastic end stop at (dx, dv), documented: stop 1: Fs = k1*(dx - l1),
    Fd = b1*dv; stop 2: Fs = k2*(dx + l2), Fd = b2*dv; Fstop = Fs + Fd; Fi = Fstop + Ff; Pl = Ff*dv."""
    if dx >= p["l1"]:
        fs, fd, stop = p["k1"] * (dx - p["l1"]), p["b1"] * dv, 1
    elif dx <= -p["l2"]:
        fs, fd, stop = p["k2"] * (dx + p["l2"]), p["b2"] * dv, 2
    else:
        fs, fd, stop = 0.0, 0.0, 0
    ff = friction_law(dv, fr["Fst"], fr["Fsl"], fr["dvL"]) if friction else 0.0
    return fs, fd, fs + fd, ff, fs + fd + ff, ff * dv, stop


@pytest.mark.parametrize("friction", [False, True])
def test_elastic_results_follow_the_documented_formulas(fmu_dir, friction):
    """Documented results of the Elastic End Stop: Fs = k1*(dx - l1), Fd = b1*dv, Fstop = Fs + Fd at stop 1
    (stop 2: k2*(dx + l2), b2*dv), Fstop = 0 free; Fi = Fstop + Ff, also with friction at a stop contact
    (friction parallel to the stop); Pl = Ff*dv; dx = ctr1.x - ctr2.x, dv = ctr1.v - ctr2.v. Without m1/m2
    the FMU outputs the law at its inputs: expected values from documented_results (written out here).
    Measured: exact to rounding (4e-16 relative); tolerance 1e-12 relative + 1e-12 absolute."""
    s = Slave(fmu_dir / "EndStop.fmu").init(**ELASTIC, **(FRICTION if friction else {}))
    for x1, v1, a1, x2, v2, a2 in POINTS:
        s.set(ctr1__x=x1, ctr1__v=v1, ctr1__a=a1, ctr2__x=x2, ctr2__v=v2, ctr2__a=a2)
        fs, fd, fstop, ff, fi, pl, stop = documented_results(x1 - x2, v1 - v2, friction)
        got = s.get("Fs", "Fd", "Fstop", "Ff", "Fi", "Pl", "dx", "dv", "ctr1.F", "ctr2.F")
        assert got == pytest.approx(
            [fs, fd, fstop, ff, fi, pl, x1 - x2, v1 - v2, fi, -fi], rel=1e-12, abs=1e-12
        )
        assert integer(s, "stop") == stop
        if friction:
            assert ff != 0.0 and integer(s, "sf") == (1 if v1 > v2 else -1)
    s.close()


@pytest.mark.parametrize("friction", [False, True])
def test_elastic_output_derivative_is_the_time_derivative_of_the_law(fmu_dir, friction):
    """The outputs that declare a derivative (ctr1.F, ctr2.F = -ctr1.F) deliver, without m1/m2, the exact
    first derivative (fmi2GetRealOutputDerivatives, order 1) of Fi = Fstop + Ff along the inputs' motion:
    d/dt [k*(dx - l) + b*dv] = k*dv + b*da (da = ctr1.a - ctr2.a), plus dFf/d dv * da with the slope of
    the Gevrey law differentiated by hand (friction_slope). Only ctr1.F and ctr2.F declare one (their
    description says "first derivative available"; maxOutputDerivativeOrder = 1).
    Measured: stop law exact to rounding (1e-16 relative); with friction 1.7e-10 relative (the FMU's central
    difference of the law); tolerance 2e-9 relative + 1e-9 absolute."""
    s = Slave(fmu_dir / "EndStop.fmu").init(**ELASTIC, **(FRICTION if friction else {}))
    assert s.md.coSimulation.maxOutputDerivativeOrder == 1
    assert {
        n for n, v in s.vars.items() if "first derivative available" in (v.description or "")
    } == {"ctr1.F", "ctr2.F"}
    vr = s.vr(["ctr1.F", "ctr2.F"])
    for x1, v1, a1, x2, v2, a2 in POINTS:
        s.set(ctr1__x=x1, ctr1__v=v1, ctr2__x=x2, ctr2__v=v2)
        s.set(ctr1__a=a1, ctr2__a=a2)
        dx, dv, da = x1 - x2, v1 - v2, a1 - a2
        rate = 0.0
        if dx >= ELASTIC["l1"]:
            rate = ELASTIC["k1"] * dv + ELASTIC["b1"] * da
        elif dx <= -ELASTIC["l2"]:
            rate = ELASTIC["k2"] * dv + ELASTIC["b2"] * da
        if friction:
            rate += friction_slope(dv, FRICTION["Fst"], FRICTION["Fsl"], FRICTION["dvL"]) * da
        der = s.fmu.getRealOutputDerivatives(vr, [1, 1])
        assert der == pytest.approx([rate, -rate], rel=2e-9, abs=1e-9)
        if dx >= ELASTIC["l1"] or dx <= -ELASTIC["l2"]:
            assert abs(rate) > 100.0
    s.close()


# ---- continuous friction: kindTrans, eps_sigma, eps_tau --------------------------------------------------

SHAPES = [  # (adv, kindTrans, eps_sigma, eps_tau): the transition the FMU must use
    (True, 1, 1.0, 0.1),
    (True, 1, 3.0, 0.1),
    (True, 1, 0.3, 0.1),
    (True, 2, 1.0, 0.1),
    (True, 2, 1.0, 0.3),
    (True, 2, 1.0, 0.03),
]


@pytest.mark.parametrize("adv, kindTrans, eps_sigma, eps_tau", SHAPES)
def test_transition_shape_parameters_at_the_inputs(fmu_dir, adv, kindTrans, eps_sigma, eps_tau):
    """Documented (adv = true): kindTrans 1 Gevrey 0.5*(1 + tanh(eps_sigma*(z - 0.5)/(z*(1 - z)))), kindTrans 2
    tanh 0.5*(1 + tanh((z - 0.5)/eps_tau)), z = (dv/dvL + 1)/2 mapped to -1..1 (Ff = Fst*(2T - 1) for
    |dv| <= dvL), sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)) beyond. Ff at 11 dv against friction_law
    written out here (elastic mode, stops out of reach, no masses: the law at the inputs); the shape
    parameter must have an effect: Ff differs from the default shape by > 0.1 N somewhere.
    Measured: exact to rounding (1.8e-15 N); tolerance 1e-12 relative + 1e-12 N. The shapes differ from
    the default by 1.9 to 7.3 N."""
    fr = {"Fst": 10.0, "Fsl": 8.0, "dvL": 0.01}
    s = Slave(fmu_dir / "EndStop.fmu").init(
        l1=1.0,
        l2=1.0,
        friction=True,
        kindF=1,
        adv=adv,
        kindTrans=kindTrans,
        eps_sigma=eps_sigma,
        eps_tau=eps_tau,
        **fr,
    )
    got, expected, default = [], [], []
    for dv in (-0.03, -0.01, -0.007, -0.003, -0.0005, 0.0, 0.001, 0.0025, 0.005, 0.0085, 0.02):
        s.set(ctr1__v=dv)
        got.append(s.get("Ff"))
        expected.append(
            friction_law(dv, kindTrans=kindTrans, eps_sigma=eps_sigma, eps_tau=eps_tau, **fr)
        )
        default.append(friction_law(dv, **fr))
    s.close()
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)
    if (kindTrans, eps_sigma) != (1, 1.0):
        assert max(abs(a - b) for a, b in zip(got, default)) > 0.1


def test_transition_shape_is_the_default_without_adv(fmu_dir):
    """Documented: kindTrans, eps_sigma, eps_tau are only enabled with adv = true; with adv = false the
    defaults (Gevrey, eps_sigma = 1) hold whatever is set. Measured: exact; tolerance 1e-12."""
    fr = {"Fst": 10.0, "Fsl": 8.0, "dvL": 0.01}
    s = Slave(fmu_dir / "EndStop.fmu").init(
        l1=1.0,
        l2=1.0,
        friction=True,
        kindF=1,
        adv=False,
        kindTrans=2,
        eps_sigma=3.0,
        eps_tau=0.3,
        **fr,
    )
    for dv in (-0.004, 0.001, 0.0025, 0.008):
        s.set(ctr1__v=dv)
        assert s.get("Ff") == pytest.approx(friction_law(dv, **fr), rel=1e-12)
    s.close()


@pytest.mark.parametrize(
    "kindTrans, eps_sigma, eps_tau", [(1, 1.0, 0.1), (1, 3.0, 0.1), (2, 1.0, 0.1), (2, 1.0, 0.3)]
)
def test_transition_shape_sets_the_creep_velocity_in_a_run(fmu_dir, kindTrans, eps_sigma, eps_tau):
    """Continuous friction (kindF = 1) has no sticking: a 1 kg body (m1 = 1) pushed by 5 N < Fst = 10 N
    creeps at the velocity where the documented law balances the push, Ff(dv*) = 5 N, on the rising
    branch |dv| < dvL = 0.01 m/s (brentq on friction_law written out here), so the creep speed depends on
    the shape (kindTrans, eps_sigma, eps_tau; adv = true). Run 0.2 s at 1 ms (the transient lasts a few ms).
    Measured: within 2.6e-7 m/s (the element's friction law is interpolated to 1e-3 N, slope ~2e3 N.s/m),
    Ff within 4.7e-4 N of the push; tolerances 3e-6 m/s, 5e-3 N; the creep speeds are 2.57e-3 (default),
    9.1e-4, 1.10e-3, 3.30e-3 m/s."""
    fr = {"Fst": 10.0, "Fsl": 8.0, "dvL": 0.01}
    push = 5.0
    r = one_body(
        fmu_dir,
        offset=push,
        mode=2,
        l1=1.0,
        l2=1.0,
        m1=1.0,
        friction=True,
        kindF=1,
        adv=True,
        kindTrans=kindTrans,
        eps_sigma=eps_sigma,
        eps_tau=eps_tau,
        **fr,
    ).simulate(0.2, 1e-3)
    creep = brentq(
        lambda dv: (
            friction_law(dv, kindTrans=kindTrans, eps_sigma=eps_sigma, eps_tau=eps_tau, **fr) - push
        ),
        1e-12,
        fr["dvL"],
        xtol=1e-15,
    )
    late = r.time > 0.1
    assert r["mass.v"][late] == pytest.approx(creep, abs=3e-6)
    assert r["endstop.Ff"][late] == pytest.approx(push, abs=5e-3)
    default = brentq(lambda dv: friction_law(dv, **fr) - push, 1e-12, fr["dvL"], xtol=1e-15)
    if (kindTrans, eps_sigma) != (1, 1.0):
        assert abs(creep - default) > 5e-4


# ---- stick-slip: needs the masses, breaks away at Fst -----------------------------------------------------


@pytest.mark.parametrize("mode", [2, 1])
def test_stick_slip_without_the_masses_is_refused(fmu_dir, mode):
    """Documented in the FMU: stick-slip friction (friction = true, kindF = 2) needs m1 or m2 (> 0), like the
    Rigid End Stop; without them fmi2ExitInitializationMode fails with fmi2Error and the message names
    m1, m2 and stick-slip; with m1 or m2 set it initializes."""
    params = {"mode": mode, "friction": True, "kindF": 2, "l1": 0.1, "l2": 0.1}
    s = Slave(fmu_dir / "EndStop.fmu")
    s.set(**params)
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException) as error:
        s.fmu.exitInitializationMode()
    assert error.value.status == FMI2_ERROR
    messages = s.errors()
    assert any("stick-slip" in m and "m1" in m and "m2" in m for m in messages), messages
    assert mode == 2 or any("Rigid End Stop" in m for m in messages)
    s.close()
    for mass in ("m1", "m2"):
        s = Slave(fmu_dir / "EndStop.fmu").init(**params, **{mass: 1.0})
        assert s.errors() == []
        s.close()


@pytest.mark.parametrize("direction", [1, -1])
def test_stick_slip_breaks_away_exactly_at_the_static_force(fmu_dir, direction):
    """Stick-slip (kindF = 2, documented in the FMU): stuck while the force needed to hold dv = 0 is within
    Fst (|Ff| <= Fst, Ff = that force), sliding with Ff = Fsl*sign(dv) beyond. A 1 kg body at rest (m1 = 1,
    stops out of reach) is pulled by F(t) = R*sin(w t)/w, R = 50 N/s, w = 2 pi 1e-3 rad/s (a ramp R*t to 1e-5):
    analytic break-away when |F| = Fst = 10 N: t_b = asin(Fst*w/R)/w = 0.20000 s (= Fst/R); afterwards
    m*v' = F - Fsl*sign (solve_ivp here). Holding only 0.85*Fst would break away at 0.170 s.

    Measured (h = 1 ms): sf leaves 0 at 0.201 s (the force reaches the element as its mean over the last
    step, it breaks away at the first point where that exceeds Fst: t_b + h/2 < t <= t_b + 3h/2); held
    Ff = F(t - h/2) within 5e-11 N; body while stuck: |v| <= 3.4e-4 m/s, |s| <= 4e-7 m (the coupling's
    catch-up of the one-step-old force); velocity from t_b + 10 ms on within 8.4e-6 m/s of the analytic
    one (the element locates the break-away inside the step). Tolerances: break-away within
    (t_b, t_b + 1.5h]; Ff within 1e-6 N and |Ff| <= Fst; stuck |v| < 1e-3 m/s, |s| < 1e-6 m; velocity
    1e-4 m/s (0.85*Fst: +0.0375 m/s)."""
    Fst, Fsl, R, fr, h, T = 10.0, 8.0, 50.0, 1e-3, 1e-3, 0.3
    w = 2 * math.pi * fr

    def F(t):
        return direction * R / w * np.sin(w * t)

    r = one_body(
        fmu_dir,
        amplitude=direction * R / w,
        f=fr,
        mode=2,
        l1=0.5,
        l2=0.5,
        m1=1.0,
        friction=True,
        kindF=2,
        Fst=Fst,
        Fsl=Fsl,
    ).simulate(T, h)
    tb = math.asin(Fst * w / R) / w
    assert r["endstop.sf"][0] == 0
    t_break, sf = first_change(r.time, r["endstop.sf"])
    assert sf == direction
    assert tb < t_break <= tb + 1.5 * h
    assert sequence(r["endstop.sf"]) == [0, direction]
    stuck = (r.time > 2 * h) & (r.time < tb)
    assert np.all(np.abs(r["endstop.Ff"][stuck]) <= Fst)
    assert r["endstop.Ff"][stuck] == pytest.approx(F(r.time[stuck] - h / 2), abs=1e-6)
    assert np.max(np.abs(r["mass.v"][stuck])) < 1e-3 and np.max(np.abs(r["mass.s"][stuck])) < 1e-6
    sliding = r.time > t_break
    assert r["endstop.Ff"][sliding] == pytest.approx(direction * Fsl)
    sol = solve_ivp(
        lambda t, y: [F(t) - direction * Fsl],
        (tb, T),
        [0.0],
        method="DOP853",
        rtol=1e-12,
        atol=1e-15,
        dense_output=True,
    )
    late = r.time > tb + 0.01
    assert r["mass.v"][late] == pytest.approx(sol.sol(r.time[late])[0], abs=1e-4)
    assert abs(sol.y[0, -1]) > 0.4


# ---- the documented elastic state machine, integrated here ---------------------------------------------


def reference_elastic(x0, v0, m, push, T, p, friction=None):
    """The documented Elastic End Stop on a body of mass m at ctr1 (ctr2 fixed), pushed by the constant force
    push, integrated with solve_ivp phase by phase: 0 free; dx >= l1 -> 1, dx <= -l2 -> 2; 1: spring-damper
    k1, b1, leaves when Fstop = k1*(dx - l1) + b1*dv <= 0: -> 11 if dx > l1 else 0; 11: free, dx < l1 -> 0,
    dv > 0 (driven into the stop again) -> 1; 2 and 21 mirrored. friction: Ff(dv) in parallel.
    Returns ([(t, new state)], dense solution of (x, v) over [0, T] as a function of t)."""
    Ff = friction or (lambda v: 0.0)
    l1, l2, k1, b1, k2, b2 = (p[k] for k in ("l1", "l2", "k1", "b1", "k2", "b2"))

    def stop_force(state, x, v):
        if state == 1:
            return k1 * (x - l1) + b1 * v
        if state == 2:
            return k2 * (x + l2) + b2 * v
        return 0.0

    def event(fn, direction):
        fn.terminal, fn.direction = True, direction
        return fn

    guards = {  # state: [(event function, direction, next state or a function of (x, v))]
        0: [(lambda t, y: y[0] - l1, 1, 1), (lambda t, y: y[0] + l2, -1, 2)],
        1: [(lambda t, y: stop_force(1, *y), -1, lambda x, v: 11 if x > l1 else 0)],
        11: [(lambda t, y: y[0] - l1, -1, 0), (lambda t, y: y[1], 1, 1)],
        2: [(lambda t, y: stop_force(2, *y), 1, lambda x, v: 21 if x < -l2 else 0)],
        21: [(lambda t, y: y[0] + l2, 1, 0), (lambda t, y: y[1], -1, 2)],
    }
    t, y, state = 0.0, [x0, v0], 0
    changes, pieces = [], []
    while t < T:
        rhs = (lambda s: lambda t, y: [y[1], (push - stop_force(s, *y) - Ff(y[1])) / m])(state)
        events = [event((lambda fn: lambda t, y: fn(t, y))(fn), d) for fn, d, _ in guards[state]]
        sol = solve_ivp(
            rhs,
            (t, T),
            y,
            method="DOP853",
            rtol=1e-11,
            atol=1e-14,
            events=events,
            dense_output=True,
        )
        pieces.append((t, sol.t[-1], sol.sol))
        fired = [i for i, te in enumerate(sol.t_events) if len(te)]
        if not fired:
            break
        i = min(fired, key=lambda j: sol.t_events[j][0])
        t, y = sol.t_events[i][0], list(sol.y_events[i][0])
        nxt = guards[state][i][2]
        state = nxt(*y) if callable(nxt) else nxt
        changes.append((t, state))

    def at(times):
        out = np.empty((2, len(times)))
        for j, tj in enumerate(times):
            for a, b, fn in pieces:
                if a <= tj <= b:
                    out[:, j] = fn(tj)
                    break
        return out

    return changes, at


def check_changes(r, changes, h):
    """The stop output changes to each reference state at the first points after the reference times."""
    after = 0.0
    for t_ref, state in changes:
        t_fmu, got = first_change(r.time, r["endstop.stop"], after=after)
        assert got == state and t_ref <= t_fmu <= t_ref + 1.5 * h, (t_ref, state, t_fmu, got)
        after = t_fmu


def test_detaching_from_stop_2_and_driven_back_into_it(fmu_dir):
    """Documented elastic states at stop 2: 0 -> 2 (dx <= -l2) -> 21 (the force Fstop = k2*(dx + l2) + b2*dv
    turns >= 0 while still behind the stop) -> 2 (dv changes sign: driven into the stop again), the mirror of
    0 -> 1 -> 11 -> 1. A 1 kg body (m1 = 1) at dx = 0.01 m, dv = -1 m/s, pushed by -1 N towards stop 2
    (l2 = 0, k2 = 1e4 N/m, b2 = 400 N.s/m, overdamped). Expected: the state machine integrated by solve_ivp
    here (reference_elastic): changes at 0.009950 (-> 2), 0.031427 (-> 21), 0.073383 s (-> 2).
    Measured (h = 1e-4 s): each change at the first point after the reference time (0.17h to 0.73h
    later); position within 3.2e-7 m (depth 2.2 mm). Tolerances: changes within [t, t + 1.5h]; position
    3e-6 m. (The velocity is not compared: the bodies follow the element's motion a step later, 5e-3 m/s
    in the damped contact.)"""
    p = {"l1": 1.0, "l2": 0.0, "k1": 1e4, "b1": 400.0, "k2": 1e4, "b2": 400.0}
    h, T = 1e-4, 0.12
    changes, at = reference_elastic(0.01, -1.0, 1.0, -1.0, T, p)
    assert [c[1] for c in changes] == [2, 21, 2]
    r = one_body(fmu_dir, s0=0.01, v0=-1.0, offset=-1.0, m1=1.0, mode=2, **p).simulate(T, h)
    assert sequence(r["endstop.stop"]) == [0, 2, 21, 2]
    check_changes(r, changes, h)
    assert r["mass.s"] == pytest.approx(at(r.time)[0], abs=3e-6)
    assert np.min(r["mass.s"]) < -2e-3


def test_friction_acts_together_with_the_stop_contact(fmu_dir):
    """Documented: Fi = Fstop + Ff, friction in parallel to the stop, also during a contact. A 1 kg body
    (m1 = 1) at 1 m/s, 0.01 m before stop 1 (k1 = 1e4 N/m, b1 = 20 N.s/m), continuous friction
    Fst = 2 N, Fsl = 1 N, dvL = 0.05 m/s (Gevrey): the motion of the state machine with friction
    integrated by solve_ivp here (reference_elastic with friction_law: 0 -> 1 at 0.010051 s, -> 11 at
    0.039651 s, -> 0 at 0.041654 s); Fi = Fstop + Ff, Ff = friction_law(dv), at the contact
    Fstop = k1*(dx - l1) + b1*dv, at the recorded dx, dv; Pl = Ff*dv.
    Measured (h = 1e-4 s): changes 0.46h to 0.49h after the reference; position within 8.1e-8 m,
    velocity 5.5e-7 m/s; Fi - Fstop - Ff 7e-15 N; Ff - law 7e-16 N; Fstop - law 8e-4 N (peak 86.3 N;
    the outputs are those of the element's own motion, which the bodies follow). Tolerances: changes
    within [t, t + 1.5h]; 1e-6 m; 1e-5 m/s; 1e-12 N; 1e-9 N; 1e-2 N. Without the friction the
    motion differs by 1.8e-3 m."""
    p = {"l1": 0.0, "l2": 1.0, "k1": 1e4, "b1": 20.0, "k2": 1e4, "b2": 20.0}
    fr = {"Fst": 2.0, "Fsl": 1.0, "dvL": 0.05}
    h, T = 1e-4, 0.08

    def Ff(v):
        return friction_law(v, **fr)

    changes, at = reference_elastic(-0.01, 1.0, 1.0, 0.0, T, p, friction=Ff)
    assert [c[1] for c in changes] == [1, 11, 0]
    r = one_body(
        fmu_dir, s0=-0.01, v0=1.0, m1=1.0, mode=2, friction=True, kindF=1, **p, **fr
    ).simulate(T, h)
    check_changes(r, changes, h)
    ref = at(r.time)
    assert r["mass.s"] == pytest.approx(ref[0], abs=1e-6)
    assert r["mass.v"] == pytest.approx(ref[1], abs=1e-5)
    assert (
        np.max(np.abs(ref[0] - reference_elastic(-0.01, 1.0, 1.0, 0.0, T, p)[1](r.time)[0])) > 1e-3
    )
    dv, dx = r["endstop.dv"], r["endstop.dx"]
    assert r["endstop.Fi"] == pytest.approx(r["endstop.Fstop"] + r["endstop.Ff"], abs=1e-12)
    assert r["endstop.Ff"] == pytest.approx([Ff(v) for v in dv], abs=1e-9)
    assert r["endstop.Pl"] == pytest.approx(r["endstop.Ff"] * dv, abs=1e-12)
    contact = r["endstop.stop"] == 1
    assert contact.sum() > 250
    assert r["endstop.Fstop"][contact] == pytest.approx(
        p["k1"] * dx[contact] + p["b1"] * dv[contact], abs=1e-2
    )
    assert np.max(r["endstop.Fstop"]) > 80.0
    assert (
        np.max(np.abs(r["endstop.Ff"][contact])) > fr["Fsl"]
    )  # the friction acts during the contact
