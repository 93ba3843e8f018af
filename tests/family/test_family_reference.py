"""The monolithic reference of the generated systems (contactfmu.family.reference) against
closed-form solutions derived here from the documentation, against the project's other
monolithic references (contactfmu.monolithic: MSL Friction, the ElastoGap impact), and against
itself solved by another integrator."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from contactfmu import monolithic
from contactfmu.family import Body, Drive, Link, Spec, generate
from contactfmu.family.reference import solve


def one_body(link_kind, params, x0, v0=0.0, rest=0.1, drive=None, stop_time=0.05, body=None):
    """A body starting at x0 (at rest, or v0), joined to a wall at 0 by one link of `rest`."""
    body = body or Body("body1", "Mass", 1.0, x0, v0)
    drives = (drive,) if drive else ()
    link = Link("link1", link_kind, "wall0", "body1", rest, params)
    return Spec(0, "chain", {"wall0": 0.0}, (body,), (link,), drives, stop_time)


def test_a_driven_spring_damper_follows_the_closed_form_forced_oscillation():
    """m*x'' + d*x' + c*x = A*sin(w*t + phi) from rest: the particular solution
    Im(A*exp(i*(w*t + phi))/(c - m*w^2 + i*d*w)) plus the damped free oscillation that starts it
    from x = 0, v = 0."""
    m, c, d, amplitude, freq, phi = 1.0, 400.0, 2.0, 3.0, 1.3, 0.4
    spec = one_body(
        "SpringDamper",
        {"c": c, "d": d, "s_rel0": 0.0},
        0.1,
        drive=Drive("drive1", "body1", amplitude, freq, phi),
        stop_time=3.0,
    )
    t = np.linspace(0.0, 3.0, 301)
    sol = solve(spec, t_eval=t)
    w = 2.0 * math.pi * freq
    z = amplitude / complex(c - m * w * w, d * w)
    xp = (z * np.exp(1j * (w * t + phi))).imag
    xp0, vp0 = (z * np.exp(1j * phi)).imag, (1j * w * z * np.exp(1j * phi)).imag
    sigma, wd = d / (2.0 * m), math.sqrt(c / m - (d / (2.0 * m)) ** 2)
    c1 = -xp0
    c2 = (-vp0 + sigma * c1) / wd
    x = xp + np.exp(-sigma * t) * (c1 * np.cos(wd * t) + c2 * np.sin(wd * t))
    got = sol.at(t)["body1.s"] - 0.1
    assert np.max(np.abs(got - x)) < 1e-8 * np.ptp(x)
    # the link's force is flange_b.f = c*s_rel + d*v_rel
    s_rel, v_rel = sol.signals["body1.s"] - 0.1, sol.signals["body1.v"]
    assert np.allclose(sol.signals["link1.f"], c * s_rel + d * v_rel, rtol=0, atol=1e-9)


def test_an_elastogap_impact_rebounds_as_the_projects_elastogap_reference():
    """1 kg at 1 m/s into an ElastoGap (c = 1e5, d = 20): the restitution of
    monolithic.elastogap_impact, which tests/test_reference_independence.py checks against the
    closed form of the bounded damper."""
    spec = one_body("ElastoGap", {"c": 1e5, "d": 20.0, "s_rel0": 0.0, "n": 1.0}, 0.101, v0=-1.0)
    sol = solve(spec)
    expected = monolithic.elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)["restitution"]
    assert sol.signals["body1.v"][-1] == pytest.approx(expected, rel=1e-7)
    assert [what for _, what in sol.events] == [
        "link1 0->2",
        "link1 2->1",
        "link1 1->3",
        "link1 3->0",
    ]
    f = sol.signals["link1.f"]
    assert np.all(f <= 1e-12 * np.max(np.abs(f)))  # it never pulls (but for rounding at a root)


def test_a_hardstop_impact_rebounds_with_the_kelvin_voigt_restitution():
    """Into the lower stop of a TranslationalHardstop (b = 4 mm) at v0: inside it the body is the
    damped oscillator about s_rel = -b/2, and it leaves there after half a damped period with
    v0*exp(-pi*sigma/wd); the force jumps by d*v0 when the stop is reached."""
    m, c, d, b, v0 = 1.0, 1e5, 30.0, 4e-3, 1.0
    spec = one_body("TranslationalHardstop", {"c": c, "d": d, "b": b}, 0.1, v0=-v0, stop_time=0.015)
    sol = solve(spec)
    sigma = d / (2.0 * m)
    wd = math.sqrt(c / m - sigma**2)
    assert sol.signals["body1.v"][-1] == pytest.approx(
        v0 * math.exp(-math.pi * sigma / wd), rel=1e-7
    )
    (t_in, _), (t_out, _) = sol.events
    assert t_in == pytest.approx(0.5 * b / v0, rel=1e-9)
    assert t_out - t_in == pytest.approx(math.pi / wd, rel=1e-7)
    at_entry = sol.signals["link1.f"][sol.t == t_in]  # before and after the event
    assert at_entry[0] == 0.0 and at_entry[-1] == pytest.approx(-d * v0, rel=1e-6)


def test_an_elastic_end_stop_releases_when_its_force_vanishes_and_detaches():
    """Into stop 1 of an elastic EndStop at v0: the spring-damper k1, b1 from dx = l1 until its
    force k1*(dx - l1) + b1*dv reaches 0 (SimulationX: "the end stop does not transmit any drag
    forces"), the body still behind the stop (state 11, detaching), free once dx < l1 again."""
    m, k, b, l1, v0 = 1.0, 2e4, 40.0, 3e-3, 1.0
    params = {"l1": l1, "l2": 0.05, "k1": k, "k2": k, "b1": b, "b2": b, "mode": 2}
    spec = one_body("EndStop", params, 0.1 + l1 - 1e-4, v0=v0, stop_time=0.04)
    sol = solve(spec)
    sigma = b / (2.0 * m)
    wd = math.sqrt(k / m - sigma**2)

    def x(t):
        return v0 / wd * math.exp(-sigma * t) * math.sin(wd * t)

    def v(t):
        return v0 * math.exp(-sigma * t) * (math.cos(wd * t) - sigma / wd * math.sin(wd * t))

    t_release = brentq(lambda t: k * x(t) + b * v(t), 1e-9, math.pi / wd)
    assert [what for _, what in sol.events][:3] == ["link1 0->1", "link1 1->11", "link1 11->0"]
    t_in = 1e-4 / v0
    assert sol.events[1][0] - t_in == pytest.approx(t_release, rel=1e-7)
    assert sol.signals["body1.v"][-1] == pytest.approx(v(t_release), rel=1e-7)
    assert np.all(sol.signals["link1.f"] >= -1e-9)  # no drag force


@pytest.fixture(scope="module")
def msl_friction():
    t = np.linspace(0.0, 5.0, 501)
    return t, monolithic.friction(t)


def test_stop_and_friction_bodies_follow_the_msl_friction_example(msl_friction):
    """MSL Translational.Examples.Friction's stop1 (driven by 25*sin(pi/2*t), sticking and breaking
    away) and stop2 (on a spring, hitting its stops at +-0.4 m): the same bodies as generated
    systems (L = 0, the stops of the centre) against monolithic.friction, which solves each body
    mode by mode with its own equations."""
    t, ref = msl_friction
    law = dict(F_prop=1.0, fexp=2.0)
    stop1 = Spec(
        0,
        "tree",
        {},
        (
            Body(
                "stop1",
                "MassWithStopAndFriction",
                1.0,
                0.0,
                0.0,
                dict(law, F_Coulomb=5.0, F_Stribeck=10.0, smin=-24.5, smax=24.5),
            ),
        ),
        (),
        (Drive("sine", "stop1", 25.0, 0.25, 0.0),),
        5.0,
    )
    body2 = Body(
        "stop2",
        "MassWithStopAndFriction",
        1.0,
        0.0,
        -5.0,
        dict(law, F_Coulomb=3.0, F_Stribeck=5.0, smin=-0.4, smax=0.4),
    )
    spring = Link("spring", "Spring", "wall0", "stop2", 1.5, {"c": 500.0, "s_rel0": 0.0})
    stop2 = Spec(0, "tree", {"wall0": -1.75}, (body2,), (spring,), (), 5.0)
    for spec, name in ((stop1, "stop1"), (stop2, "stop2")):
        got = solve(spec, t_eval=t).at(t)
        for q in ("s", "v"):
            key = f"{name}.{q}"
            assert np.max(np.abs(got[key] - ref[key])) < 1e-6 * np.ptp(ref[key]), key


@pytest.mark.parametrize("topology", ["chain", "tree", "loop"])
def test_two_integrators_agree_on_generated_systems(topology):
    """LSODA at rtol 1e-10 and Radau at 1e-8, each with every event located, on a generated
    system of every link and body kind: within 1e-5 of each signal's range."""
    spec = generate(11, bodies=4, topology=topology)
    spec = Spec(spec.seed, topology, spec.walls, spec.bodies, spec.links, spec.drives, 0.3)
    t = np.linspace(0.0, 0.3, 301)
    a = solve(spec, t_eval=t).at(t)
    b = solve(spec, t_eval=t, method="Radau", rtol=1e-8, atol=1e-10).at(t)
    for key in a:
        assert np.max(np.abs(a[key] - b[key])) <= 1e-5 * max(np.ptp(a[key]), 1e-9), key


FRICTION = {"l1": 0.05, "l2": 0.05, "k1": 1e4, "k2": 1e4, "b1": 10.0, "b2": 10.0, "mode": 2}


def test_end_stop_friction_is_the_documented_transition():
    """Ff = Fst*T(dv/dvL) within |dv| <= dvL, z = (dv/dvL + 1)/2 mapped to -1 .. 1: at dv = dvL/2
    (z = 3/4) Gevrey 2*0.5*(1 + tanh(eps_sigma*0.25/0.1875)) - 1 = tanh(4/3*eps_sigma), tanh
    tanh(0.25/eps_tau); beyond, sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)), equal to Fst at
    dvL for the Gevrey shape (exactly 1 at z = 1); odd in dv. The shape is an advanced setting:
    without adv the Gevrey shape with eps_sigma = 1, whatever kindTrans says."""
    from contactfmu.family.reference import link_law

    def law(**params):
        p = dict(FRICTION, friction=True, kindF=1, Fst=10.0, Fsl=6.0, dvL=0.01, **params)
        return link_law(Link("link1", "EndStopFriction", "wall0", "body1", 0.1, p)).friction

    def ff(friction, dv):
        return friction.force(dv, friction.band(dv))

    gevrey = law()
    assert ff(gevrey, 0.005) == pytest.approx(10.0 * math.tanh(4.0 / 3.0), rel=1e-12)
    assert ff(gevrey, -0.005) == pytest.approx(-ff(gevrey, 0.005), rel=1e-14)
    assert ff(gevrey, 0.01) == pytest.approx(10.0, rel=1e-12)
    assert ff(gevrey, 0.01 * (1 + 1e-12)) == pytest.approx(10.0, rel=1e-9)
    assert ff(gevrey, 0.03) == pytest.approx(6.0 + 4.0 * math.exp(-2.0), rel=1e-12)
    assert ff(gevrey, 0.0) == 0.0
    tanh = law(adv=True, kindTrans=2, eps_tau=0.2)
    assert ff(tanh, 0.005) == pytest.approx(10.0 * math.tanh(0.25 / 0.2), rel=1e-12)
    assert ff(law(kindTrans=2, eps_tau=0.2), 0.005) == ff(gevrey, 0.005)  # (no adv)
    assert ff(law(adv=True, eps_sigma=2.0), 0.005) == pytest.approx(
        10.0 * math.tanh(8.0 / 3.0), rel=1e-12
    )


def test_end_stop_friction_decelerates_a_body_sliding_in_the_backlash():
    """A 2 kg body at 0.5 m/s in the backlash of an EndStop to a wall, Fst = Fsl = 3 N: beyond dvL
    the friction is Fsl, against the motion: v = v0 - Fsl/m*t down to dvL = 0.01 m/s at
    t1 = (v0 - dvL)*m/Fsl, where the transition region starts (event), x(t1) = x0 + v0*t1 -
    Fsl*t1^2/(2*m); no stop is reached (backlash 20 cm each side)."""
    m, v0, fsl, dvl = 2.0, 0.5, 3.0, 0.01
    params = dict(FRICTION, l1=0.2, l2=0.2, friction=True, kindF=1, Fst=fsl, Fsl=fsl, dvL=dvl)
    body = Body("body1", "Mass", m, 0.1, v0)
    t1 = (v0 - dvl) * m / fsl
    spec = one_body("EndStopFriction", params, 0.1, body=body, stop_time=t1 + 0.05)
    sol = solve(spec, t_eval=np.linspace(0.0, t1, 11))
    assert sol.events[0][1] == "link1 (0, 1)->(0, 0)"
    assert sol.events[0][0] == pytest.approx(t1, rel=1e-9)
    before = sol.t <= t1
    assert sol.signals["body1.v"][before] == pytest.approx(v0 - fsl / m * sol.t[before], rel=1e-9)
    x1 = sol.at(np.array([t1]))["body1.s"][0]
    assert x1 == pytest.approx(0.1 + v0 * t1 - fsl * t1**2 / (2 * m), rel=1e-9)
