"""EndStop's continuous friction in the prediction (components/EndStop/friction.py): the friction bands
and the bounces on a rigid stop under continuous friction, against references written out here."""

import bisect
import functools
import math

import numpy as np
import pytest
from endstop_cases import (
    FREE,
    STOP1,
    bounce_loop,
    close,
    documented_elastic_force,
    fired,
    rigid_stops,
)
from scipy.optimize import brentq

from contactfmu.components.EndStop import friction as endstop_friction
from contactfmu.components.EndStop import law as endstop
from contactfmu.components.EndStop import prediction as endstop_prediction
from contactfmu.mechanics import motion
from contactfmu.mechanics.motion import EventStorm


def _linear_bounces(sigma, ci, m):
    """The rebounds and flight times (scaled: tau = B*t, sigma = s*B/G) of m bounces under the
    linear friction Ff = B*mu*v: the flight from -sigma returns at tau with
    phi1(tau) = (1 - exp(-tau))/tau = 1/(1 + sigma) (y(tau) = tau + (1 + sigma)*expm1(-tau) = 0),
    arriving at tau - sigma (momentum), rebounding at ci times that."""
    from scipy.optimize import brentq

    sigmas, taus = [sigma], []
    for _ in range(m):
        s = sigmas[-1]
        tau = brentq(
            lambda x: -math.expm1(-x) / x * (1.0 + s) - 1.0,
            s,
            3.0 * s + 1e-300,
            xtol=1e-300,
            rtol=1e-15,
        )
        taus.append(tau)
        sigmas.append(ci * (tau - s))
    return sigmas, taus


def band_params(mode=endstop.ELASTIC):
    return endstop.Parameters(
        mode=mode,
        l1=0.01,
        l2=0.02,
        k1=100.0,
        b1=2.0,
        friction=True,
        kindF=endstop.CONTINUOUS,
        Fst=10.0,
        Fsl=6.0,
        dvL=1e-3,
    )


def phi2_ref(x):
    """(x - 1 + exp(-x))/x^2 (its Taylor series near 0, where the closed form cancels)."""
    if abs(x) < 0.1:
        return sum((-x) ** n / math.factorial(n + 2) for n in range(12))
    return (x + math.expm1(-x)) / (x * x)


def closed_v(va, A, B, t):
    """v(t) = A/B + (va - A/B)*exp(-B*t), written va + (A - B*va)*(1 - exp(-B*t))/B (no cancellation)."""
    if B == 0.0:
        return va + A * t
    return va + (A - B * va) * -math.expm1(-B * t) / B


def closed_y(va, A, B, t):
    """Displacement of dv/dt = A - B*v from va after t: va*t + (A - B*va)*t^2*phi2(B*t) (the closed
    form A/B*t + (va - A/B)*(1 - exp(-B*t))/B without its cancellation)."""
    return va * t + (A - B * va) * t * t * phi2_ref(B * t)


def closed_time(va, vb, A, B):
    """Time from va to vb (> va) of dv/dt = A - B*v: the root of v(t) = vb (brentq), None if never."""
    if B == 0.0:
        return (vb - va) / A if A > 0.0 else None
    vinf = A / B
    if not (va < vb and (B < 0.0 and A - B * va > 0.0 or vb < vinf)):
        return None
    hi = 1e-12
    while closed_v(va, A, B, hi) < vb:
        hi *= 2.0
    return brentq(lambda t: closed_v(va, A, B, t) - vb, 0.0, hi, xtol=1e-300, rtol=1e-15)


def band_line(nodes, values, mu, G, j):
    """(A, B) of band j (between nodes[j-1] and nodes[j]; 0 and len(nodes): the constant outer bands)."""
    if j == 0:
        return G - values[0] / mu, 0.0
    if j == len(nodes):
        return G - values[-1] / mu, 0.0
    k = (values[j] - values[j - 1]) / (nodes[j] - nodes[j - 1])
    return G - (values[j - 1] - k * nodes[j - 1]) / mu, k / mu


def band_time(va, vb, A, B):
    """Time from va to vb (> va) within one band (log form of v(t) = vb), None if never."""
    aa = A - B * va
    if not aa > 0.0:
        return None
    if B == 0.0:
        return (vb - va) / aa
    x = B * (vb - va) / aa
    if not x < 1.0:
        return None
    return -math.log1p(-x) / B


def ref_flight(s, bands, mu, G, distance, apex=False):
    """(duration, arrival speed) of the flight from -s (v positive into the stop) up to 0 (the apex)
    and back to the stop, band by band; None if it reaches `distance` or does not come back (apex:
    the apex's distance from the stop instead)."""
    nodes, values = bands
    t = y = 0.0
    v = -s
    while v < 0.0:
        j = bisect.bisect_right(nodes, v)
        A, B = band_line(nodes, values, mu, G, j)
        vb = min(nodes[j], 0.0) if j < len(nodes) else 0.0
        dt = band_time(v, vb, A, B)
        if dt is None:
            return None
        t, y, v = t + dt, y + closed_y(v, A, B, dt), vb
    depth = -y
    if apex:
        return depth
    if not 0.0 < depth < distance:
        return None
    y = 0.0
    while True:
        j = bisect.bisect_right(nodes, v)
        A, B = band_line(nodes, values, mu, G, j)
        vb = nodes[j] if j < len(nodes) else math.inf
        dt = band_time(v, vb, A, B) if vb < math.inf else None
        dt = math.inf if dt is None else dt  # the band's end is not reached
        if dt == math.inf or y + closed_y(v, A, B, dt) >= depth:
            rest = depth - y
            hi = dt if dt < math.inf else 1e-12
            while dt == math.inf and closed_y(v, A, B, hi) < rest:
                hi *= 2.0
            tau = brentq(lambda x: closed_y(v, A, B, x) - rest, 0.0, hi, xtol=1e-300, rtol=1e-15)
            return t + tau, closed_v(v, A, B, tau)
        t, y, v = t + dt, y + closed_y(v, A, B, dt), vb


def ref_bounces(side, s, mu, G, p, span, bands=None):
    """Bounce by bounce: (dt, w, impulse, impacts, permanent) of the documented impact law with the
    flights of ref_flight, up to the last flight ending within span; None without one. As
    documented for friction_bounces: flights rising less than the rounding of the stop's position
    (s^2/2 <= 1e-16*G*|l|) with ci < 1 end the bouncing (permanent contact, the rebound's momentum
    taken, the impacts still to come counted until eps_dv, 1e9 for eps_dv = 0)."""
    bands = bands or endstop_friction.friction_bands(p)
    ci, eps = p.restitution, p.eps_dv
    at_stop = abs(p.l1) if side > 0 else abs(p.l2)
    t = J = 0.0
    n = 0
    global flights
    flights = 0
    while True:
        f = ref_flight(s, bands, mu, G, p.l1 + p.l2)
        if f is None:
            break
        if ci < 1.0 and s * s <= 2e-16 * G * at_stop:
            rest = math.ceil(math.log(eps / s) / math.log(ci)) if eps > 0.0 else 10**9
            return t, 0.0, side * mu * (J + s), n + rest, True
        if t + f[0] > span:
            break
        t += f[0]
        n += 1
        flights += 1
        after = ci * f[1]
        if after <= eps:
            return t, 0.0, side * mu * (J + f[1]), n, True
        J += f[1] + after
        s = after
    if n == 0:
        return None
    return t, -side * s, side * mu * J, n, False


def pressed(ci=0.8, eps_dv=1e-4, **kw):
    return endstop.Parameters(
        mode=endstop.RIGID, ci=ci, friction=True, kindF=endstop.CONTINUOUS, eps_dv=eps_dv, **kw
    )


def same(result, expected, rel):
    assert (result is None) == (expected is None), (result, expected)
    if expected is None:
        return
    dt, w, J, n, permanent = result
    assert (n, permanent) == expected[3:]
    assert type(n) is int and type(permanent) is bool
    assert dt == pytest.approx(expected[0], rel=rel)
    assert w == pytest.approx(expected[1], rel=rel, abs=0.0)
    assert J == pytest.approx(expected[2], rel=rel)


P = pressed()


BANDS = endstop_friction.friction_bands(P)


P_TAIL = pressed(Fst=10.0, Fsl=4.0, dvL=0.05)  # a wide transition and a long decaying tail


BANDS_TAIL = endstop_friction.friction_bands(P_TAIL)


@functools.cache
def reference(side, s, mu, G, span, ci, eps, l1, l2, **kw):
    """(ref_bounces' result, the number of flights it followed)."""
    p = pressed(ci, eps, l1=l1, l2=l2, **kw)
    return ref_bounces(side, s, mu, G, p, span), flights


flights = 0


def frictionless(side, s, mu, G, ci, eps, span):
    """Bounces without friction, one by one: flights 2*s/G, rebound ci*s, the last impact plastic."""
    t = J = 0.0
    n = 0
    while t + 2.0 * s / G <= span:
        t += 2.0 * s / G
        n += 1
        if ci * s <= eps:
            return t, 0.0, side * mu * (J + s), n, True
        J += s + ci * s
        s *= ci
    return t, -side * s, side * mu * J, n, False


@functools.cache
def affine(s0, B1, G, ci, m):
    """The envelope's map z' = (z + 2/3)/ci from z0 = G/(B1*s0), m times: the rebound speeds
    s_j = G/(B1*z_j) (j = 0..m) and the cumulative durations of the cycles, (s_j + s_{j+1}/ci)/G each."""
    z = G / (B1 * s0)
    speeds, ends = [s0], [0.0]
    for _ in range(m):
        z = (z + 2.0 / 3.0) / ci
        speeds.append(G / (B1 * z))
        ends.append(ends[-1] + (speeds[-2] + speeds[-1] / ci) / G)
    return speeds, ends


ENV = [
    (5e-6, 2e4, 100.0, 0.9995),
    (5e-6, 2e4, 100.0, 1.0),
    (1e-4, 3.0, 0.5, 0.999),
    (2e-9, 2e4, 100.0, 0.9999),
]


def approximate_flight(s, bands, mu, G):
    """A flight of the body pressed at G from s, far within the first band (sigma = s*B1/G < 1e-6):
    the linear damper's series: duration 2s/G*(1 - sigma/3), arrival s*(1 - 2*sigma/3) (O(sigma^2))."""
    j0 = bisect.bisect_right(bands[0], 0.0)
    sigma = s * (bands[1][j0] - bands[1][j0 - 1]) / (bands[0][j0] - bands[0][j0 - 1]) / mu / G
    return 2.0 * s / G * (1.0 - sigma / 3.0), s * (1.0 - 2.0 * sigma / 3.0)


def test_continuous_friction_bands_interpolate_the_law():
    """friction_bands: continuous, odd, within BAND_TOL of the law (a little more between the checked points)."""
    for kindTrans in (1, 2):
        p = endstop.Parameters(
            friction=True, kindF=1, Fst=10.0, Fsl=8.0, dvL=1e-3, kindTrans=kindTrans
        )
        bands = endstop_friction.friction_bands(p)
        nodes, values = bands
        assert list(nodes) == sorted(nodes) and len(nodes) < 1000
        assert all(v == -w for v, w in zip(values, reversed(values)))
        worst = max(
            abs(
                endstop_friction.interpolated_friction(dv, bands)
                - endstop.continuous_friction(dv, p)
            )
            for dv in np.linspace(-0.05, 0.05, 20001)
        )
        assert worst < 2 * endstop_friction.BAND_TOL * 10.0 + (
            0.1 if kindTrans == 2 else 0.0
        )  # tanh: jump at dvL


@pytest.mark.parametrize("ci", [1.0, 0.9995])
def test_friction_bounce_envelope_follows_the_linear_damper_bounces(ci):
    """The envelope of friction_bounces (z = 1/sigma mapped affinely, durations by Euler-Maclaurin)
    against 3000 bounces of the linear friction's return map solved one by one (brentq): the
    rebound speed after them and their duration to 1e-7 (measured 1e-8 and 9e-9 from sigma = 1e-3,
    the envelope's largest: the neglected 4/(135 z^2) per bounce)."""
    G, B, sigma0 = 100.0, 2e4, 1e-3
    sigmas, taus = _linear_bounces(sigma0, ci, 3000)
    s0 = sigma0 * G / B
    total = sum(taus) / B
    # a span that ends inside the 3001st bounce: the envelope stops one whole cycle earlier
    dt, s_new, m, permanent = endstop_friction._friction_envelope(
        s0, B, G, ci, 0.0, total + 0.5 * taus[-1] / B
    )
    assert not permanent and m == 2999
    assert s_new == pytest.approx(sigmas[m] * G / B, rel=1e-7)
    assert dt == pytest.approx(sum(taus[:m]) / B, rel=1e-7)


def test_band_is_the_line_through_its_end_nodes_and_is_left_at_them():
    """band_at docstring: Ff = F0 + slope*dv within the band of the friction_bands nodes containing dv
    (the line through its end nodes, constant values[0]/values[-1] beyond the outer nodes, so continuous),
    left ('band' guards) exactly when dv leaves [lo, hi]."""
    p = band_params()
    bands = endstop_friction.friction_bands(p)
    nodes, values = bands
    n = len(nodes)
    for j in list(range(1, n, max(1, n // 25))) + [1, n - 1]:
        lo, hi = nodes[j - 1], nodes[j]
        w = 0.5 * (lo + hi)
        f0, slope, guards = endstop_friction.band_at(bands, FREE, 0.0, w, 2.0, 1.0, p)
        assert f0 + slope * lo == pytest.approx(values[j - 1], rel=1e-12, abs=1e-12)
        assert f0 + slope * hi == pytest.approx(values[j], rel=1e-12, abs=1e-12)
        assert f0 + slope * w == pytest.approx(
            float(np.interp(w, nodes, values)), rel=1e-12, abs=1e-12
        )
        assert fired(guards, 0.0, w) == set()
        assert fired(guards, 0.0, lo - 1e-9 * (hi - lo)) and fired(
            guards, 0.0, hi + 1e-9 * (hi - lo)
        )
        assert (
            fired(guards, 0.0, 0.999 * lo + 0.001 * hi) == set()
            and fired(guards, 0.0, 0.001 * lo + 0.999 * hi) == set()
        )
    for w, end in ((nodes[0] - 1.0, 0), (nodes[-1] + 1.0, -1)):
        f0, slope, guards = endstop_friction.band_at(bands, FREE, 0.0, w, 2.0, 1.0, p)
        assert slope == 0.0
        assert f0 == pytest.approx(values[end], rel=1e-15)  # continuous at the outer node
        assert fired(guards, 0.0, w) == set() and len(guards) == 1
        assert fired(guards, 0.0, nodes[end] - 1e-6 * nodes[end])  # back inside the outer node


@pytest.mark.parametrize("i", [0, 5, None, -6, -1])
@pytest.mark.parametrize(
    "mu, g, stop, x",
    [
        (2.0, 1.0, FREE, 0.0),
        (2.0, -1.0, FREE, 0.0),
        (0.5, 40.0, STOP1, 0.2),
        (2.0, 1.0, STOP1, 0.2),
    ],
)
def test_band_at_a_node_is_the_one_the_acceleration_moves_into(i, mu, g, stop, x):
    """band_at docstring: at a node, the band the motion moves into by the sign of its acceleration
    mu*x'' = mu*g - Fstop - Ff(node) there (Fstop of the elastic stop, its documentation)."""
    p = band_params()
    bands = endstop_friction.friction_bands(p)
    nodes, values = bands
    i = len(nodes) // 2 if i is None else i % len(nodes)
    w = nodes[i]
    for g_shift in (0.0, 2.0 * values[i] / mu):
        gg = g + g_shift
        acc = mu * gg - documented_elastic_force(stop, x, w, p) - values[i]
        f0, slope, guards = endstop_friction.band_at(bands, stop, x, w, mu, gg, p)
        other = w + (1e-7 if acc > 0 else -1e-7) * max(
            abs(w), 1e-3
        )  # just into the band moved into
        assert f0 + slope * other == pytest.approx(
            float(np.interp(other, nodes, values)), rel=1e-9, abs=1e-12
        )
        assert fired(guards, x, other) == set()


def test_band_at_a_node_with_a_small_positive_acceleration_moves_up():
    """0 < mu*x'' < 1 N at a node: the band above it (the sign of the acceleration decides)."""
    p = band_params()
    bands = endstop_friction.friction_bands(p)
    nodes, values = bands
    i = len(nodes) // 2 + 3
    mu = 1.0
    g = values[i] + 0.5  # acc = 0.5 N
    f0, slope, guards = endstop_friction.band_at(bands, FREE, 0.0, nodes[i], mu, g, p)
    up = 0.5 * (nodes[i] + nodes[i + 1])
    assert f0 + slope * up == pytest.approx(float(np.interp(up, nodes, values)), rel=1e-12)


def test_bounce_series_continuous_friction_above_negligible_follows_the_flights():
    mu, g = 2.0, 9.81
    p = rigid_stops(friction=True, kindF=endstop.CONTINUOUS, Fst=1e-3, Fsl=8e-4)
    pred = endstop.Prediction()
    got = endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0, pred)
    assert got is not None and got[4] is True
    assert 1 <= pred.flights <= got[3]  # the flights solved one by one
    # within the friction's share of the pressing force of the series without friction
    want = bounce_loop(1.0, 0.5, g, g, 0.8, p.eps_dv, mu, p.l1 + p.l2, 10.0)
    assert close(got[0], want[0], 1e-3) and close(got[2], want[2], 1e-3)
    pred2 = endstop.Prediction()
    pred2.flights = endstop_friction.BOUNCE_EXACT - 1  # the budget of the prediction is shared
    with pytest.raises(EventStorm):
        endstop_prediction._bounce_series("hit1", -0.5, mu, g, p, 10.0, pred2)


@pytest.mark.parametrize(
    "va, vb, A, B",
    [
        (-1.0, -0.2, 100.0, 50.0),
        (-1.0, 0.5, 3.0, 2.0),
        (0.2, 1.7, 3.0, 1.5),
        (0.5, 3.0, 4.0, -3.0),
        (0.5, 2.0, 1.0, 0.0),
        (-0.3, 0.0, 100.0, 2e4),
        (1e-3, 2e-3, 1.0, 1e-9),
    ],
)
def test_segment_is_the_closed_form_of_the_band(va, vb, A, B):
    """Time (brentq on v(t) = vb) and displacement of dv/dt = A - B*v from va to vb (measured
    agreement 3e-16 relative)."""
    t = closed_time(va, vb, A, B)
    seg = endstop_friction._segment(va, vb, A, B)
    assert seg[0] == pytest.approx(t, rel=1e-13)
    if B == 0.0:
        y = va * t + A * t * t / 2.0
    elif abs(B * t) > 1e-3:
        y = A / B * t + (va - A / B) * (1.0 - math.exp(-B * t)) / B
    else:
        y = closed_y(va, A, B, t)
    assert seg[1] == pytest.approx(y, rel=1e-12)


@pytest.mark.parametrize(
    "va, vb, A, B",
    [
        (0.0, 1.0, 0.0, 0.0),  # no acceleration
        (1.0, 2.0, 1.0, 1.0),  # at the asymptote A/B already: aa = 0
        (2.0, 3.0, 1.0, 1.0),  # decelerating
        (0.0, math.inf, 1.0, 0.0),  # the outer band never ends
        (0.0, 2.0, 2.0, 1.0),  # vb = A/B: reached only as t -> inf
        (0.0, 3.0, 2.0, 1.0),
    ],
)  # beyond the asymptote
def test_segment_that_never_gets_there_is_none(va, vb, A, B):
    assert endstop_friction._segment(va, vb, A, B) is None


def test_segment_just_below_the_asymptote_is_finite():
    """vb a little below A/B = 2: t = ln(2/(2 - vb)) (the closed form's time of v(t) = vb)."""
    vb = 2.0 - 1e-9
    t, y = endstop_friction._segment(0.0, vb, 2.0, 1.0)
    assert t == pytest.approx(math.log(2.0 / (2.0 - vb)), rel=1e-7)
    assert y == pytest.approx(2.0 * t - 2.0 * (1.0 - math.exp(-t)), rel=1e-7)


@pytest.mark.parametrize(
    "va, R, A, B",
    [
        (0.0, 0.01, 100.0, 0.0),
        (0.0, 1e-3, 100.0, 2e4),
        (0.5, 0.2, 3.0, 1.0),
        (2.0, 0.5, 1.0, -2.0),
        (1.0, 3.0, 1.0, 1.0),
        (0.0, 1e-12, 100.0, 2e4),
        (3e-5, 5e-7, 100.0, 2e4),
        (0.1, 1e3, 5.0, 0.5),
        (0.0, 0.2, 0.5, 0.0),
        (1.0, 1.0, -50.0, -50.0),
        (1.0, 1e-3, 0.0, -50.0),
        (1.0, 10.0, 0.0, -50.0),
    ],
)  # fast exponential growth: Newton from the guess within its 100 steps
def test_reach_is_the_closed_form_of_the_band(va, R, A, B):
    """Time at which y(t) = R (brentq on the closed form) and the speed then (measured 4e-16)."""
    hi = 1e-12
    while closed_y(va, A, B, hi) < R:
        hi *= 2.0
    t = brentq(lambda x: closed_y(va, A, B, x) - R, 0.0, hi, xtol=1e-300, rtol=1e-15)
    got = endstop_friction._reach(va, R, A, B)
    assert got[0] == pytest.approx(t, rel=1e-13)
    assert got[1] == pytest.approx(closed_v(va, A, B, t), rel=1e-13)


@pytest.mark.parametrize(
    "va, R, A, B",
    [(0.0, 1.0, 0.0, 0.0), (1.0, 1.0, 0.5, 1.0), (0.0, 1.0, -1.0, 0.0), (0.0, 1e308, 1e300, -1e3)],
)
def test_reach_that_never_gets_there_is_none(va, R, A, B):
    """No motion (aa = 0 at rest), decelerating (aa < 0), or a displacement beyond the largest float."""
    assert endstop_friction._reach(va, R, A, B) is None


def test_reach_at_constant_speed():
    """aa = 0 with va > 0: uniform motion, t = R/va."""
    t, v = endstop_friction._reach(2.0, 3.0, 2.0, 1.0)
    assert t == pytest.approx(1.5, rel=1e-15) and v == 2.0
    t, v = endstop_friction._reach(0.5, 3.0, 0.5, 1.0)
    assert t == pytest.approx(6.0, rel=1e-15) and v == 0.5


@pytest.mark.parametrize(
    "bands, mu, G, s",
    [
        (BANDS, 1.0, 100.0, 1.0),
        (BANDS, 1.0, 100.0, 3e-3),
        (BANDS, 1.0, 100.0, 6.25e-5),
        (BANDS, 1.0, 100.0, 3e-5),
        (BANDS, 1.0, 100.0, 9.375e-05),
        (BANDS_TAIL, 2.0, 7.0, 0.6),
        (BANDS_TAIL, 2.0, 7.0, 0.02),
        (BANDS_TAIL, 0.5, 30.0, 0.3),
        (BANDS_TAIL, 0.5, 30.0, 25.0),
    ],
)
def test_flight_is_the_band_by_band_integration(bands, mu, G, s):
    """Duration and arrival speed of one flight (at nodes, between them, in the first band, beyond
    the last node) as the band by band closed form (measured agreement 1e-15 to 3e-14)."""
    expected = ref_flight(s, bands, mu, G, 100.0)
    got = endstop_friction._flight(s, endstop_friction._flight_table(bands, mu, G), 100.0)
    assert got[0] == pytest.approx(expected[0], rel=1e-12)
    assert got[1] == pytest.approx(expected[1], rel=1e-12)


def test_flight_reaching_the_other_stop_or_not_coming_back_is_none():
    """The apex at or beyond the other stop: None (just below it: the flight); a pressing
    acceleration below the sliding friction (G < Fsl/mu) brings the flight back at the friction's
    equilibrium speed (the band's asymptote A/B)."""
    table = endstop_friction._flight_table(BANDS, 1.0, 100.0)
    depth = ref_flight(1.0, BANDS, 1.0, 100.0, 1.0, apex=True)
    flight = ref_flight(1.0, BANDS, 1.0, 100.0, 1.0)
    assert endstop_friction._flight(1.0, table, depth * (1.0 - 1e-9)) is None
    assert endstop_friction._flight(1.0, table, depth * (1.0 + 1e-9)) == pytest.approx(
        flight, rel=1e-12
    )
    weak = endstop_friction._flight_table(BANDS_TAIL, 1.0, 3.0)  # G = 3 < Fsl = 4 N / 1 kg
    slow = ref_flight(0.5, BANDS_TAIL, 1.0, 3.0, 1.0)
    assert slow[1] < 0.05 * 0.5
    assert endstop_friction._flight(0.5, weak, 1.0) == pytest.approx(slow, rel=1e-12)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize(
    "s, mu, G, span, ci, eps, l1, l2",
    [
        (1.0, 1.0, 100.0, 10.0, 0.8, 1e-4, 0.01, 0.02),  # the whole series, permanent (34 impacts)
        (1.0, 1.0, 100.0, 0.05, 0.8, 1e-4, 0.01, 0.02),  # span cuts the series
        (0.3, 2.0, 40.0, 10.0, 0.5, 1e-3, 0.02, 0.01),  # another mass and pressing acceleration
        (0.3, 2.0, 40.0, 10.0, 0.5, 0.0, 0.02, 0.01),  # eps_dv = 0: ends below the rounding of l
        (
            1e-9,
            1.0,
            100.0,
            10.0,
            0.8,
            1e-12,
            0.01,
            1e-6,
        ),  # side 1: at rest at once; side 2: bounces first
        (0.5, 1.0, 100.0, 10.0, 0.0, 1e-4, 0.01, 0.02),  # plastic: one impact
        (0.02, 1.0, 100.0, 10.0, 0.9, 0.005, 0.01, 0.02),
    ],
)  # a few bounces
def test_friction_bounces_are_the_bounce_by_bounce_series(side, s, mu, G, span, ci, eps, l1, l2):
    """Every element of (dt, w, impulse, impacts, permanent) as the bounces followed one by one
    (measured agreement 2e-15 to 4e-13)."""
    expected, n = reference(side, s, mu, G, span, ci, eps, l1, l2)
    p = pressed(ci, eps, l1=l1, l2=l2)
    pred = endstop.Prediction()
    got = endstop_friction.friction_bounces(side, -side * s, mu, side * G, p, span, pred)
    same(got, expected, 1e-11)
    assert pred.flights == n


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_friction_bounces_without_a_whole_flight_or_reaching_the_other_stop_are_none(side):
    p = pressed(0.8, 1e-4, l1=0.01, l2=0.02)
    flight = ref_flight(1.0, BANDS, 1.0, 100.0, 0.03)
    assert (
        endstop_friction.friction_bounces(
            side, -side, 1.0, side * 100.0, p, flight[0] * (1.0 - 1e-9)
        )
        is None
    )
    assert (
        endstop_friction.friction_bounces(
            side, -side, 1.0, side * 100.0, p, flight[0] * (1.0 + 1e-9)
        )[3]
        == 1
    )
    near = pressed(0.8, 1e-4, l1=0.001, l2=0.0005)  # the first apex beyond the other stop
    assert ref_flight(1.0, BANDS, 1.0, 100.0, 0.0015) is None
    assert endstop_friction.friction_bounces(side, -side, 1.0, side * 100.0, near, 10.0) is None


@pytest.mark.parametrize(
    "mu, g",
    [
        (1.0, -100.0),
        (1.0, 0.0),
        (0.0, 100.0),
        (-1.0, 100.0),
        (1.0, math.inf),
        (math.inf, 100.0),
        (1.0, math.nan),
    ],
)
def test_friction_bounces_not_pressed_onto_the_stop_are_none(mu, g):
    """Only a finite acceleration pressing onto the stop (side*g > 0) and a finite positive mass."""
    assert endstop_friction.friction_bounces(1.0, -1.0, mu, g, pressed(), 10.0) is None


def test_friction_bounces_without_friction_bands_are_none():
    """Fst = Fsl = 0: friction_bands has a single node (no law to fly through)."""
    p = pressed(Fst=0.0, Fsl=0.0)
    assert len(endstop_friction.friction_bands(p)[0]) < 2
    assert endstop_friction.friction_bounces(1.0, -1.0, 1.0, 100.0, p, 10.0) is None


def test_friction_bounces_beyond_bounce_exact_are_an_event_storm():
    """At most BOUNCE_EXACT flights per prediction (pred.flights counts them): n left for n
    bounces is enough, n - 1 is not."""
    p = pressed(0.8, 1e-4, l1=0.01, l2=0.02)
    expected, n = reference(1.0, 1.0, 1.0, 100.0, 10.0, 0.8, 1e-4, 0.01, 0.02)
    assert n == expected[3] == 32
    pred = endstop.Prediction()
    pred.flights = endstop_friction.BOUNCE_EXACT - n
    same(endstop_friction.friction_bounces(1.0, -1.0, 1.0, 100.0, p, 10.0, pred), expected, 1e-11)
    assert pred.flights == endstop_friction.BOUNCE_EXACT
    pred = endstop.Prediction()
    pred.flights = endstop_friction.BOUNCE_EXACT - n + 1
    with pytest.raises(EventStorm, match="more than 20000 bounces"):
        endstop_friction.friction_bounces(1.0, -1.0, 1.0, 100.0, p, 10.0, pred)
    pred.flights = endstop_friction.BOUNCE_EXACT
    with pytest.raises(EventStorm):
        endstop_friction.friction_bounces(-1.0, 1.0, 1.0, -100.0, p, 10.0, pred)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("span", [10.0, 0.0735])
def test_friction_below_rounding_hands_over_to_the_bounces_without_friction(side, span):
    """Friction of 1e-16 N on a body pressed at 100 m/s2 (a first band |v| <= 0.625 m/s of slope
    2e-17 N.s/m, below 1e-17*(1 - ci) of the pressing force there): two flights from 2 m/s through
    the friction's tail, then the series without friction (measured agreement 1e-16)."""
    p = pressed(0.5, 1e-4, l1=0.03, l2=0.05, Fst=1e-16, Fsl=0.8e-16, dvL=10.0)
    bands = endstop_friction.friction_bands(p)
    head = ref_bounces(side, 2.0, 1.0, 100.0, p, span, bands)
    assert head[3] >= 2
    t, J, s = 0.0, 0.0, 2.0
    for _ in range(2):  # the flights above the first band
        f = ref_flight(s, bands, 1.0, 100.0, 0.08)
        t, J, s = t + f[0], J + f[1] * 1.5, 0.5 * f[1]
    assert s < 0.625
    dt, w, dJ, n, permanent = frictionless(side, s, 1.0, 100.0, 0.5, 1e-4, span - t)
    got = endstop_friction.friction_bounces(side, -side * 2.0, 1.0, side * 100.0, p, span)
    same(got, (t + dt, w, side * J + dJ, 2 + n, permanent), 1e-12)


@pytest.mark.parametrize("s0, B1, G, ci", ENV)
@pytest.mark.parametrize("m", [1, 2, 37, 1500])
def test_friction_envelope_is_the_affine_map_up_to_span(s0, B1, G, ci, m):
    """A span ending in the middle of cycle m + 1 (m + 1 whole cycles within it): the envelope takes
    m or m - 1 whole cycles (at least one before span is left to the exact bounces; its bisection
    of the cycle count ends within one cycle), their duration and the rebound speed after them as
    the map iterated (measured agreement 3e-13 relative)."""
    speeds, ends = affine(s0, B1, G, ci, 1600)
    span = ends[m + 1] + 0.5 * (ends[m + 2] - ends[m + 1])
    got = endstop_friction._friction_envelope(s0, B1, G, ci, 0.0, span)
    if m == 1:
        assert got == pytest.approx((ends[1], speeds[1], 1, False), rel=1e-11)
        return
    dt, s_new, n, permanent = got
    assert m - 1 <= n <= m and not permanent and type(n) is int
    assert dt == pytest.approx(ends[n], rel=1e-11)
    assert s_new == pytest.approx(speeds[n], rel=1e-11)


@pytest.mark.parametrize("s0, B1, G, ci", ENV)
def test_friction_envelope_without_two_whole_cycles_is_none(s0, B1, G, ci):
    speeds, ends = affine(s0, B1, G, ci, 3)
    assert endstop_friction._friction_envelope(s0, B1, G, ci, 0.0, ends[2] * (1.0 - 1e-9)) is None


@pytest.mark.parametrize("s0, B1, G, ci", ENV)
@pytest.mark.parametrize("k", [1, 2, 40, 900])
def test_friction_envelope_stops_before_the_rebound_reaches_eps_dv(s0, B1, G, ci, k):
    """eps_dv between the rebounds s_k and s_(k+1) of the map: the envelope takes the k cycles whose
    rebound stays above eps_dv (the exact bounces do the last one); eps_dv >= s0: None."""
    speeds, ends = affine(s0, B1, G, ci, 1000)
    eps = math.sqrt(speeds[k] * speeds[k + 1])
    got = endstop_friction._friction_envelope(s0, B1, G, ci, eps, 1e9)
    n = got[2]
    assert (k - 1 <= n <= k or k == 1 and n == 1) and got[3] is False  # bisection: within one cycle
    assert got[0] == pytest.approx(ends[n], rel=1e-11)
    assert got[1] == pytest.approx(speeds[n], rel=1e-11)
    assert endstop_friction._friction_envelope(s0, B1, G, ci, s0, 1e9) is None
    assert endstop_friction._friction_envelope(s0, B1, G, ci, s0 * (1.0 + 1e-12), 1e9) is None


@pytest.mark.parametrize("s0, B1, G, ci", [(5e-6, 2e4, 100.0, 0.999), (1e-4, 3.0, 0.5, 0.9995)])
def test_friction_envelope_to_rest_sums_the_whole_series(s0, B1, G, ci):
    """eps_dv = 0 and ci < 1 with a span beyond the series' end: permanent after all its cycles
    (counted as 1e18), the duration the sum of the map's cycles (iterated to 1e-14 of the first)."""
    z, s, total = G / (B1 * s0), s0, 0.0
    while s > 1e-14 * s0:
        z = (z + 2.0 / 3.0) / ci
        total += (s + G / (B1 * z) / ci) / G
        s = G / (B1 * z)
    got = endstop_friction._friction_envelope(s0, B1, G, ci, 0.0, 2.0 * total)
    assert got[1:] == (0.0, 10**18, True)
    assert got[0] == pytest.approx(total, rel=1e-11)
    assert endstop_friction._friction_envelope(s0, B1, G, ci, 0.0, 0.999 * total)[3] is False


def test_friction_envelope_elastic_runs_to_span():
    """ci = 1: the speeds decay like 1/k, never permanent short of 1e300 cycles; a span of 4 ms
    (about 6e14 cycles) ends where the map's duration reaches it: with z_j = z0 + 2j/3 the cycles
    last (1/z_j + 1/z_(j+1))/B1, summed by the digamma function (measured agreement 1e-12)."""
    from scipy.special import digamma

    s0, B1, G = 5e-6, 2e4, 100.0
    z0 = G / (B1 * s0)
    dt, s_new, m, permanent = endstop_friction._friction_envelope(s0, B1, G, 1.0, 0.0, 0.004)

    def S(k):  # sum_{j<k} 1/z_j
        return 1.5 * (digamma(1.5 * z0 + k) - digamma(1.5 * z0))

    assert not permanent and 10**14 < m < 10**15
    assert s_new == pytest.approx(G / (B1 * (z0 + 2.0 * m / 3.0)), rel=1e-12)
    assert dt == pytest.approx((S(m) + S(m + 1) - 1.0 / z0) / B1, rel=1e-10)
    assert 0.004 * (1 - 1e-10) < dt + 2.0 * s_new / G and dt < 0.004


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("eps, span", [(0.0, 4e-5), (4.6e-6, 1.0)])
def test_friction_bounces_through_the_envelope_are_the_linear_damper_bounces(side, eps, span):
    """Slow bounces in the first band (sigma = s*B1/G = 1e-3, ci = 0.9995): the envelope skips
    most of them; the result is that of the exact bounces followed one by one (the linear damper's
    flights; measured agreement 2e-9, the envelope's neglected O(1/z^2)). From 5.02e-6 m/s (sigma =
    1.003e-3, above the envelope's 1e-3) a few exact bounces come first, then the envelope."""
    expected, _ = reference(side, 5.02e-6, 1.0, 100.0, span, 0.9995, eps, 0.01, 0.02)
    got = endstop_friction.friction_bounces(
        side, -side * 5.02e-6, 1.0, side * 100.0, pressed(0.9995, eps, l1=0.01, l2=0.02), span
    )
    assert got[3:] == expected[3:] and type(got[3]) is int
    assert got[:3] == pytest.approx(expected[:3], rel=2e-8)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("mu", [1.0, 1e5])
def test_friction_bounces_to_rest_through_the_envelope(side, mu):
    """eps_dv = 0, ci = 0.999: the envelope sums the whole series (permanent, counted as 1e18
    impacts): its duration and impulse sum(mu*(arrival + rebound)) as the map iterated (mu = 1e5: a
    first band of slope/mu = 0.2 1/s, below 1: the envelope all the same)."""
    B1 = endstop_friction._band_lines(BANDS, mu, 100.0)[bisect.bisect_right(BANDS[0], 0.0)][1]
    G, ci, s0 = 100.0, 0.999, 5e-6
    z, s, total, J = G / (B1 * s0), s0, 0.0, 0.0
    while s > 1e-14 * s0:
        z = (z + 2.0 / 3.0) / ci
        total += (s + G / (B1 * z) / ci) / G
        s = G / (B1 * z)
        J += s / ci + s
    got = endstop_friction.friction_bounces(side, -side * s0, mu, side * G, pressed(ci, 0.0), 1.0)
    assert got[1:2] + got[3:] == (0.0, 10**18, True)
    assert got[0] == pytest.approx(total, rel=1e-11)
    assert got[2] == pytest.approx(side * mu * J, rel=1e-9)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("span", [100.0, "after three"])
def test_friction_below_rounding_starts_at_its_documented_threshold(side, span):
    """Friction of 1e-16 N (first band |v| <= 0.625 m/s of slope B1 = 2e-17 N.s/m) on a body pressed
    at G = 0.1 m/s2, ci = 0.5: the bounces are followed one by one (pred.flights) while B1*s >
    1e-17*G*(1 - ci), i.e. s > 0.025 m/s: from 0.125 m/s three flights (0.125, 0.0625, 0.031), then
    the series without friction. A span ending before the first flight of that series: the three
    flights' result."""
    G, ci = 0.1, 0.5
    p = pressed(ci, 1e-4, l1=0.03, l2=0.5, Fst=1e-16, Fsl=0.8e-16, dvL=10.0)
    bands = endstop_friction.friction_bands(p)
    j0 = bisect.bisect_right(bands[0], 0.0)
    B1 = (bands[1][j0] - bands[1][j0 - 1]) / (bands[0][j0] - bands[0][j0 - 1])
    t, J, s, n = 0.0, 0.0, 0.125, 0
    while B1 * s > 1e-17 * G * (1.0 - ci):
        f = ref_flight(s, bands, 1.0, G, 0.53)
        t, J, s, n = t + f[0], J + f[1] * (1.0 + ci), ci * f[1], n + 1
    assert n == 3
    if span == "after three":
        span = t + 0.5 * 2.0 * s / G
        expected = (t, -side * s, side * J, 3, False)
    else:
        dt, w, dJ, m, permanent = frictionless(side, s, 1.0, G, ci, 1e-4, span - t)
        expected = (t + dt, w, side * J + dJ, n + m, permanent)
    pred = endstop.Prediction()
    got = endstop_friction.friction_bounces(side, -side * 0.125, 1.0, side * G, p, span, pred)
    assert pred.flights == 3
    same(got, expected, 1e-12)


@pytest.mark.parametrize("side", [1.0, -1.0])
@pytest.mark.parametrize("s, G", [(5e-5, 100.0), (1e-4, 1e7)])
def test_friction_bounces_outside_the_envelope_are_followed_one_by_one(side, s, G):
    """ci = 0.9995 with bounces the envelope does not cover: in the first band (|v| <= 6.25e-5 m/s,
    B1 = 2e4 1/s) with sigma = s*B1/G = 0.01 above ENVELOPE_SIGMA, and above the first band
    (1e-4 m/s, sigma = 2e-4): a span of five and a half flights gives the five exact bounces
    (measured agreement 1e-15)."""
    p = pressed(0.9995, 1e-12, l1=0.01, l2=0.02)
    f = ref_flight(s, BANDS, 1.0, G, 0.03)
    expected = ref_bounces(side, s, 1.0, G, p, 5.5 * f[0])
    assert expected[3] == 5
    got = endstop_friction.friction_bounces(side, -side * s, 1.0, side * G, p, 5.5 * f[0])
    same(got, expected, 1e-11)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_friction_bounces_with_a_growing_rebound_end_at_the_other_stop(side):
    """ci = 1.5: the apexes grow until one reaches the other stop (distance 0.03 m): the bounces before it."""
    p = pressed(1.5, 1e-4, l1=0.01, l2=0.02)
    expected = ref_bounces(side, 1.0, 1.0, 100.0, p, 10.0)
    assert expected[3] >= 2 and expected[4] is False
    same(
        endstop_friction.friction_bounces(side, -side, 1.0, side * 100.0, p, 10.0), expected, 1e-11
    )


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_plastic_rest_below_the_rounding_of_the_stop(side):
    """ci = 0 and a flight rising less than the rounding of the stop's position (s^2/2 <= 1e-16*G*l):
    at rest at once, the impact taking the momentum mu*s."""
    p = pressed(0.0, 1e-12, l1=0.01, l2=0.01)
    dt, w, J, n, permanent = endstop_friction.friction_bounces(
        side, -side * 1e-9, 2.0, side * 100.0, p, 10.0
    )
    assert (dt, w, permanent) == (0.0, 0.0, True)
    assert J == pytest.approx(side * 2e-9, rel=1e-15)
    assert (
        n >= 1
    )  # (the code counts 1e9: eps_dv's count of the rebounds, though ci = 0 leaves none)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_friction_bounces_end_where_a_flight_is_below_the_rounding_of_the_time(side):
    """eps_dv = 0, ci = 0.8, a stop position of 1e-30 m (its rounding no limit), pressed at G = 0.1
    m/s2 (flights 20 s/(m/s)): the bounces are followed until a flight is below half an ulp of the
    elapsed time (the time cannot advance): the result at that time, not permanent, with the pending
    rebound (about 150 bounces; the bounce where it stops to within one, at the float boundary)."""
    G, mu, ci = 0.1, 1000.0, 0.8
    p = pressed(ci, 0.0, l1=1e-30, l2=10.0) if side > 0.0 else pressed(ci, 0.0, l1=10.0, l2=1e-30)
    t, J, s, n = 0.0, 0.0, 1.0, 0
    while True:
        f = ref_flight(s, BANDS, mu, G, 10.0) if s > 1e-8 else approximate_flight(s, BANDS, mu, G)
        if f[0] <= 0.5 * math.ulp(t):
            break
        t, J, s, n = t + f[0], J + mu * f[1] * (1.0 + ci), ci * f[1], n + 1
    dt, w, got_J, m, permanent = endstop_friction.friction_bounces(
        side, -side, mu, side * G, p, 1e5
    )
    assert permanent is False and abs(m - n) <= 1 and 100 < n < 200
    assert dt == pytest.approx(t, rel=1e-12)
    assert got_J == pytest.approx(side * J, rel=1e-12)
    assert 2.0 * abs(w) / G <= 0.5 * math.ulp(dt) < 2.0 * abs(w) / (ci * G) * (1.0 + 1e-6)
    assert w * side < 0.0


def test_friction_envelope_elastic_down_to_a_tiny_eps_dv():
    """ci = 1, eps_dv = 1e-20 m/s: the map z_j = z0 + 2j/3 reaches z = G/(B1*eps_dv) = 5e17 after
    m = 1.5*(5e17 - z0) cycles (7.5e17, beyond the integers of a float: the bisection stops at 1e-12
    relative); the rebound after them is eps_dv to that precision (measured 2e-14). eps_dv = 1e-25:
    7.5e22 cycles, counted as 1e18."""
    s0, B1, G = 5e-6, 2e4, 100.0
    z0 = G / (B1 * s0)
    dt, s_new, m, permanent = endstop_friction._friction_envelope(s0, B1, G, 1.0, 1e-20, 1e9)
    assert not permanent
    assert m == pytest.approx(1.5 * (G / (B1 * 1e-20) - z0), rel=1e-12)
    assert s_new == pytest.approx(1e-20, rel=1e-12) and s_new > 1e-20
    dt, s_new, m, permanent = endstop_friction._friction_envelope(s0, B1, G, 1.0, 1e-25, 1e9)
    assert (m, permanent) == (10**18, False)
    assert s_new == pytest.approx(1e-25, rel=1e-12) and s_new > 1e-25


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_friction_bounces_in_a_flat_first_band_are_followed_one_by_one(side):
    """Fst = Fsl = 5e-324 N (the smallest float): the interpolant is 0 on its first band (slope B1 = 0,
    not a linear friction: neither the envelope nor the series without friction takes it), so the
    bounces in it are followed one by one (pred.flights = 7 for the 7 bounces from 1e-4 m/s at
    ci = 0.5 down to eps_dv = 1e-6), each exactly the frictionless flight."""
    p = pressed(0.5, 1e-6, Fst=5e-324, Fsl=5e-324)
    bands = endstop_friction.friction_bands(p)
    j0 = bisect.bisect_right(bands[0], 0.0)
    assert bands[1][j0] == 0.0 and bands[0][j0] > 1e-4
    pred = endstop.Prediction()
    got = endstop_friction.friction_bounces(side, -side * 1e-4, 1.0, side * 100.0, p, 10.0, pred)
    expected = frictionless(side, 1e-4, 1.0, 100.0, 0.5, 1e-6, 10.0)
    assert pred.flights == expected[3] == 7
    same(got, expected, 1e-14)


def test_endstop_friction_bands_stay_within_the_tolerance_of_the_law():
    p = endstop.Parameters(friction=True, Fst=10.0, Fsl=6.0, dvL=1e-3)
    nodes, values = endstop_friction.friction_bands(p)
    assert list(nodes) == sorted(nodes) and list(values) == pytest.approx(
        [-v for v in values[::-1]]
    )
    for dv in np.linspace(-8e-3, 8e-3, 3001):
        law = endstop.continuous_friction(dv, p)
        assert (
            abs(endstop_friction.interpolated_friction(dv, (nodes, values)) - law)
            <= 1.01e-4 * 10.0 + 1e-12
        )
    assert abs(endstop_friction.interpolated_friction(1.0, (nodes, values)) - 6.0) <= 1e-9
    assert endstop_friction.friction_bands(endstop.Parameters(friction=True, Fst=0.0, Fsl=0.0)) == (
        (0.0,),
        (0.0,),
    )


def test_negligible_continuous_friction_is_not_followed_through_its_bands():
    """hypothesis nightly (seed 1): an elastic stop (k2 = 1e6 N/m, b2 = 0) pressed at -1.8e300 m/s2
    with continuous friction of at most 0.014 N (1e-17 of mu*|g| and less: g - Ff/mu is g) moves as
    without friction, and its 212 bands are not followed: the motion is the frictionless one, float for
    float, within a few thousand motion evaluations (it was an EventStorm after a million)."""
    kw = dict(l1=0.01, l2=0.01, k1=1e6, k2=1e6, b1=100.0, b2=0.0, mode=endstop.ELASTIC)
    fr = dict(friction=True, kindF=endstop.CONTINUOUS, Fst=0.0, Fsl=0.014123476573556308)
    p = endstop.Parameters(**kw, **fr, dvL=0.05077133584831251, eps_sigma=0.004332913745435725)
    assert len(endstop_friction.friction_bands(p)[0]) > 200
    args = (-0.0014015458882014917, 0.05705984190980495, endstop.FREE, 0, 7.713184031817284)
    g, times = -1.777777777777778e300, (0.22877901833482753, 0.45755803666965505)
    start = motion.work()
    pred = endstop_prediction.predict(*args, g, times, p)
    assert motion.work() - start < 10000
    free = endstop_prediction.predict(*args, g, times, endstop.Parameters(**kw))
    assert pred.states == free.states and pred.changes == free.changes
