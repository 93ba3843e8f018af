"""The reference's rigid EndStop (contactfmu.family.rigid, through family.reference.solve) against
closed forms derived here from the SimulationX documentation: impacts that reverse the relative
velocity times ci with the momentum conserved, permanent contact once a rebound is within eps_dv,
separation when the holding force passes eps_Fi."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from contactfmu.family import Body, Drive, Link, Spec
from contactfmu.family.reference import solve


def rigid(ci, l1, l2, eps_dv=1e-4, eps_Fi=1e-6):
    return {"mode": 1, "kind": 3, "ci": ci, "l1": l1, "l2": l2, "eps_dv": eps_dv, "eps_Fi": eps_Fi}


def test_two_free_bodies_bounce_between_the_stops_as_a_geometric_series():
    """Two bodies joined by a rigid EndStop, no other force, the second leaving at v0: dx reaches l1
    at l1/v0, then crosses the backlash l1 + l2 at ci^k*v0 after the k-th impact (stop 1 after
    odd k, stop 2 after even k); the velocity of the centre of mass is kept, dv = (-ci)^k*v0. The
    7th impact's rebound, 0.5^7 = 0.0078 m/s, is within eps_dv = 0.01: permanent contact at stop 1,
    the bodies move together from then on, held by no force."""
    m1, m2, v0, ci, l1, l2, eps_dv = 2.0, 1.0, 1.0, 0.5, 2e-3, 3e-3, 1e-2
    bodies = (Body("body1", "Mass", m1, 0.0), Body("body2", "Mass", m2, 0.1, v0))
    link = Link("link1", "EndStopRigid", "body1", "body2", 0.1, rigid(ci, l1, l2, eps_dv))
    sol = solve(Spec(0, "tree", {}, bodies, (link,), (), 0.8))
    times = [l1 / v0]
    for k in range(1, 7):
        times.append(times[-1] + (l1 + l2) / (ci**k * v0))
    assert [t for t, _ in sol.events] == pytest.approx(times, abs=1e-9)
    assert [what for _, what in sol.events] == [
        "link1 0->11",
        "link1 11->21",
        "link1 21->11",
        "link1 11->21",
        "link1 21->11",
        "link1 11->21",
        "link1 21->1",
    ]
    v_cm = m2 * v0 / (m1 + m2)
    mid = [(a + b) / 2 for a, b in zip([0.0] + times, times + [0.8])]
    at = sol.at(np.array(mid))
    v1, v2 = at["body1.v"], at["body2.v"]
    assert m1 * v1 + m2 * v2 == pytest.approx(np.full(8, m2 * v0), abs=1e-12)
    dv = [(-ci) ** k * v0 for k in range(7)] + [0.0]
    assert v2 - v1 == pytest.approx(dv, abs=1e-12)
    # held: dx stays l1, both at the centre's velocity, no force needed
    held = sol.t > times[-1] + 1e-9
    dx = sol.signals["body2.s"][held] - sol.signals["body1.s"][held] - 0.1
    assert np.max(np.abs(dx - l1)) < 1e-12
    assert np.max(np.abs(sol.signals["body1.v"][held] - v_cm)) < 1e-12
    assert np.max(np.abs(sol.signals["link1.f"][held])) < 1e-9


def drop(ci, A=10.0, freq=0.5, l1=4e-3, l2=5e-3, m=1.0, stop_time=0.55):
    """A body resting mid-backlash of a rigid EndStop to a wall, pushed towards the wall (stop 2)
    by F = A*sin(w*t - pi/2) = -A*cos(w*t): nearly constant at first, reversing at t = 1/(4*freq)."""
    body = Body("body1", "Mass", m, 0.1)
    link = Link("link1", "EndStopRigid", "wall0", "body1", 0.1, rigid(ci, l1, l2))
    drive = Drive("drive1", "body1", A, freq, -0.5 * math.pi)
    return Spec(0, "chain", {"wall0": 0.0}, (body,), (link,), (drive,), stop_time)


def closed_form_drop(spec):
    """The impacts of `drop` in closed form: between impacts s(t) = s_j + v_j*(t - t_j) + X(t) -
    X(t_j) - X'(t_j)*(t - t_j), X(t) = -A/(m*w^2)*sin(w*t + phase) (X'' = F/m); at s = -l2 the
    rebound -ci*v, until it is within eps_dv; held (dv = 0, Fi = F) until Fi >= eps_Fi. Returns
    (impact times, rebound speeds, the time of permanent contact, the release time)."""
    (body,), (link,), (d,) = spec.bodies, spec.links, spec.drives
    p, w = link.params, 2.0 * math.pi * d.freq
    k = d.amplitude / (body.m * w * w)

    def X(t):
        return -k * math.sin(w * t + d.phase)

    def V(t):
        return -k * w * math.cos(w * t + d.phase)

    t, s, v = 0.0, 0.0, 0.0
    times, speeds = [], []
    while True:

        def gap(tt, t=t, s=s, v=v):
            return s + v * (tt - t) + X(tt) - X(t) - V(t) * (tt - t) + p["l2"]

        # the next root: scan on a grid finer than the flight (2*v/g, g = A/m near t = 0)
        g = d.amplitude / body.m
        h = (2.0 * v / g if v > 0.0 else math.sqrt(2.0 * p["l2"] / g)) / 64.0
        lo = t + h
        while gap(lo + h) > 0.0:
            lo += h
        te = brentq(gap, lo, lo + h, xtol=1e-15, rtol=1e-15)
        speed = -(v + V(te) - V(t))  # approaching the wall
        times.append(te)
        if p["ci"] * speed <= p["eps_dv"]:
            break
        speeds.append(p["ci"] * speed)
        t, s, v = te, -p["l2"], p["ci"] * speed
    # held: the stop force on the body is -Fi, so Fi = F; released once F >= eps_Fi
    release = (math.asin(p["eps_Fi"] / d.amplitude) - d.phase) / w
    return times, speeds, times[-1], release


@pytest.mark.parametrize("ci, method", [(0.3, "LSODA"), (0.8, "LSODA"), (0.8, "Radau")])
def test_a_dropped_body_chatters_to_permanent_contact_and_is_released_when_the_force_reverses(
    ci, method
):
    """The rebounds ci^k*v decay geometrically and the documented eps_dv ends them (0.3: 7 impacts,
    0.8: 36): every impact time and rebound as the closed form; held at s_rel = -l2 with v = 0 and
    Fi = F until F reaches eps_Fi (just after the force reverses), then leaving the stop. Each
    flight restarts from the state the integrator's dense output gives at the located impact:
    over 36 impacts LSODA's drift by up to 1.3e-7 s (measured; Radau's 1.6e-9 s), over 7 by 1e-9."""
    spec = drop(ci)
    times, speeds, held_from, release = closed_form_drop(spec)
    assert len(times) == (7 if ci == 0.3 else 36)
    sol = solve(spec, method=method)
    impacts = [t for t, what in sol.events if what in ("link1 0->21", "link1 0->2")]
    drift = 2e-7 if (ci, method) == (0.8, "LSODA") else 2e-9
    assert impacts == pytest.approx(times, abs=drift)
    assert sol.events[len(times) * 2 - 2][1] == "link1 0->2"  # (each rebound: out, apex, back)
    # the velocity just after each impact: the last point at its time
    rebounds = [sol.signals["body1.v"][np.flatnonzero(sol.t == te)[-1]] for te in impacts[:-1]]
    assert rebounds == pytest.approx(speeds, rel=1e-6, abs=10.0 * drift)  # (g*drift, g = 10)
    t_release, what = sol.events[len(times) * 2 - 1]
    assert what == "link1 2->21" and t_release == pytest.approx(release, abs=1e-9)
    assert impacts[-1] == pytest.approx(held_from, abs=drift)
    held = (sol.t > impacts[-1]) & (sol.t < t_release)
    assert held.sum() > 50
    assert np.max(np.abs(sol.signals["body1.s"][held] - 0.1 + 5e-3)) < 1e-12
    assert np.max(np.abs(sol.signals["body1.v"][held])) < 1e-12
    d = spec.drives[0]
    force = d.amplitude * np.sin(2.0 * math.pi * d.freq * sol.t[held] + d.phase)
    assert np.max(np.abs(sol.signals["link1.f"][held] - force)) < 1e-9
    after = sol.at(np.array([release + 0.02]))
    assert after["body1.s"][0] > 0.1 - 5e-3 and after["body1.v"][0] > 0.0


def test_a_held_contact_takes_an_impact_that_pushes_into_it_and_lets_go_of_one_that_pulls():
    """Body 1 held against a wall (pressed by a constant force), body 2 hitting it through a
    second rigid EndStop: pushed towards the wall, the held contact keeps body 1 still (the wall's
    infinite mass) and body 2 rebounds at -ci*v; pulled away from the wall (body 2 leaving at
    speed and catching body 1 at its other stop), the held contact lets go and the two bodies
    share the momentum of the impact."""
    ci = 0.5
    walls = {"wall0": 0.0}
    link1 = Link("link1", "EndStopRigid", "wall0", "body1", 0.1, rigid(ci, 2e-3, 2e-3, 1e-2))
    link2 = Link("link2", "EndStopRigid", "body1", "body2", 0.1, rigid(ci, 3e-3, 3e-3))
    press = Drive("drive1", "body1", 0.0, 1.0, 0.0, offset=-5.0)  # towards the wall
    # body 1 starts on its stop 2 at rest (held from the start), body 2 3 mm from body 1's stop
    bodies = (Body("body1", "Mass", 1.0, 0.1 - 2e-3), Body("body2", "Mass", 2.0, 0.2 - 2e-3))
    # pushed: body 2 at -1 m/s; pulled: at +1 m/s, v1' - v2' = ci*v2, v1' + 2*v2' = 2*v2
    for v2, event, after in (
        (-1.0, "link2 0->21", (0.0, -ci * -1.0)),
        (1.0, "link1 2->21, link2 0->11", (2.0 * (1.0 + ci) / 3.0, 2.0 * (1.0 + ci) / 3.0 - ci)),
    ):
        moving = (bodies[0], Body("body2", "Mass", 2.0, 0.2 - 2e-3, v2))
        sol = solve(Spec(0, "chain", walls, moving, (link1, link2), (press,), 0.004))
        assert [(round(t, 9), what) for t, what in sol.events] == [(0.003, event)]
        before = sol.t < 0.003 - 1e-12
        assert np.max(np.abs(sol.signals["body1.v"][before])) == 0.0  # held against the wall
        assert np.max(np.abs(sol.signals["link1.f"][before] + 5.0)) < 1e-12  # Fi = F: holding
        just_after = np.flatnonzero(sol.t == sol.events[0][0])[-1]
        v = (sol.signals["body1.v"][just_after], sol.signals["body2.v"][just_after])
        assert v == pytest.approx(after, abs=1e-12)


def test_a_plastic_impact_holds_the_bodies_together_at_once():
    """kind 1 (plastic, ci = 0): the first impact leaves dv' = 0, within any eps_dv: permanent
    contact at stop 1 at l1/v0, both bodies at the velocity of their centre of mass."""
    p = {**rigid(0.9, 2e-3, 3e-3), "kind": 1}
    bodies = (Body("body1", "Mass", 3.0, 0.0), Body("body2", "Mass", 1.0, 0.1, 2.0))
    link = Link("link1", "EndStopRigid", "body1", "body2", 0.1, p)
    sol = solve(Spec(0, "tree", {}, bodies, (link,), (), 0.01))
    assert [(round(t, 12), what) for t, what in sol.events] == [(1e-3, "link1 0->1")]
    end = sol.at(np.array([0.01]))
    assert (end["body1.v"][0], end["body2.v"][0]) == pytest.approx((0.5, 0.5), abs=1e-12)


def test_a_rigid_end_stop_on_a_body_with_stop_and_friction_is_refused_by_name():
    friction = {"F_prop": 1.0, "F_Coulomb": 5.0, "F_Stribeck": 1.0, "fexp": 2.0}
    body = Body(
        "body1", "MassWithStopAndFriction", 1.0, 0.1, 0.0, {**friction, "smin": 0.0, "smax": 1.0}
    )
    link = Link("link1", "EndStopRigid", "wall0", "body1", 0.1, rigid(0.5, 1e-3, 1e-3))
    spec = Spec(0, "chain", {"wall0": 0.0}, (body,), (link,), (), 0.1)
    with pytest.raises(ValueError, match="link1: the reference knows rigid EndStops between Mass"):
        solve(spec)
