"""Helpers shared by EndStop's unit tests (tests/components/EndStop/): parameter sets and independent
references written out from the documentation."""

import math

from contactfmu.components.EndStop import law as endstop
from contactfmu.cosim import System

G = 9.81


def pressed(ci, eps_dv, **kw):
    return endstop.Parameters(
        mode=endstop.RIGID, ci=ci, friction=True, kindF=endstop.CONTINUOUS, eps_dv=eps_dv, **kw
    )


FREE, STOP1, STOP2, DETACH1, DETACH2, BOTH = (
    endstop.FREE,
    endstop.STOP1,
    endstop.STOP2,
    endstop.DETACH1,
    endstop.DETACH2,
    endstop.BOTH,
)


def documented_elastic_force(stop, x, w, p):
    """Fstop of the Elastic End Stop (its documentation): Fs + Fd of the side(s) of `stop` engaged by position."""
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


ELASTIC = dict(mode=endstop.ELASTIC, l1=0.01, l2=0.02, k1=100.0, k2=300.0, b1=2.0, b2=5.0)


def rigid(**kw):
    return endstop.Parameters(
        **{
            **dict(
                mode=endstop.RIGID,
                kind=endstop.BY_COEFFICIENT,
                ci=0.9,
                l1=0.01,
                l2=0.01,
                eps_dv=1e-4,
            ),
            **kw,
        }
    )


def bounce_loop(side, speed, a_away, a_back, ci, eps_dv, mu, distance, span, cap=5000):
    """(dt, w, impulse, impacts, permanent) of the complete bounces within span, or None.

    Bounce by bounce from the rebound speed `speed` just after an impact on the stop in direction
    `side` (+1 stop 1, -1 stop 2). None when the accelerations are not positive and finite, when an
    apex reaches the other stop (distance = l1 + l2 away), when the bounces grow (not a decaying
    series) or when no complete cycle fits in span. Stops after `cap` impacts (eps_dv = 0: the
    rebound underflows to 0 long before)."""
    if not (0.0 < a_away < math.inf and 0.0 < a_back < math.inf):
        return None
    t = impulse = 0.0
    impacts, s, permanent = 0, speed, False
    while impacts < cap:
        t_up = s / a_away
        h = s * s / (2.0 * a_away)
        if h >= distance:
            return None  # reaches the other stop
        arrival = math.sqrt(2.0 * a_back * h)
        t_down = math.sqrt(2.0 * h / a_back)
        if t + t_up + t_down > span:
            break
        t += t_up + t_down
        impacts += 1
        rebound = ci * arrival
        if rebound > s * (1.0 + 1e-9):
            return None  # growing bounces: no decaying series
        if rebound <= eps_dv:  # permanent contact: the last impact is plastic
            impulse += side * mu * arrival
            permanent, s = True, 0.0
            break
        impulse += side * mu * (arrival + rebound)
        s = rebound
    if impacts == 0:
        return None
    return t, (0.0 if permanent else -side * s), impulse, impacts, permanent


def close(a, b, rel, abs_=0.0):
    return abs(a - b) <= rel * max(abs(a), abs(b)) + abs_


def assert_same(got, want, rel=1e-12, impacts=None):
    """Every element of (dt, w, impulse, impacts, permanent)."""
    assert (got is None) == (want is None), (got, want)
    if want is None:
        return
    dt, w, J, n, perm = got
    assert close(dt, want[0], rel), (dt, want[0])
    assert close(w, want[1], rel, 1e-300), (w, want[1])
    assert close(J, want[2], rel), (J, want[2])
    assert n == (want[3] if impacts is None else impacts), (n, want[3])
    assert isinstance(n, int)
    assert perm is want[4] or perm == want[4]
    assert (w == 0.0) == perm


def rigid_stops(**kw):
    base = dict(
        mode=endstop.RIGID, l1=0.02, l2=0.03, kind=endstop.BY_COEFFICIENT, ci=0.8, eps_dv=1e-3
    )
    base.update(kw)
    return endstop.Parameters(**base)


def system(fmu_dir, push=0.0, m=1.0, s0=0.0, v0=0.0, amplitude=0.0, f=1.0, **params):
    """Mass (ctr1) -- EndStop -- fixed ground (ctr2), the mass pushed by push + amplitude*sin(2 pi f t)
    (the Sine FMU passes its derivative: the force varies linearly within a step)."""
    s = System()
    s.add("ground", fmu_dir / "Fixed.fmu")
    s.add("endstop", fmu_dir / "EndStop.fmu", **params)
    s.add("mass", fmu_dir / "Mass.fmu", m=m, s_start=s0, v_start=v0)
    s.add("g", fmu_dir / "Sine.fmu", amplitude=amplitude, offset=push, f=f)
    s.add("force", fmu_dir / "Force.fmu")
    s.connect("mass.flange_b", "endstop.ctr1")
    s.connect("ground.flange", "endstop.ctr2")
    s.connect("g.y", "force.f")
    s.connect("force.flange", "mass.flange_a")
    return s


OUT = [
    "mass.s",
    "mass.v",
    "endstop.Fi",
    "endstop.stop",
    "endstop.impulse",
    "endstop.sf",
    "endstop.Ff",
    "endstop.Fs",
    "endstop.Fd",
    "endstop.dx",
    "endstop.dv",
    "endstop.ctr1.F",
]


def sequence(values):
    out = [int(values[0])]
    for x in values[1:]:
        if int(x) != out[-1]:
            out.append(int(x))
    return out
