"""EndStop: continuous friction (kindF = 1) in the prediction, as velocity bands, and the
bounces on a rigid stop under it.

Bands (friction_bands): the documented law Ff(dv) = Fst*T(dv/dvL) for |dv| <= dvL,
sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)) beyond (law.continuous_friction) as a continuous
piecewise linear function of dv, within BAND_TOL*max(Fst, Fsl) of it: within a band
Ff = F0 + slope*dv, a linear damper the prediction solves exactly (band_at gives the band of a
motion and its ends as guards).

Bounces (friction_bounces): on a rigid stop pressed by G = side*g > 0 the flight's relative
acceleration is dv/dt = A - B*dv in each band (A = G - F0/mu, B = slope/mu, _band_lines), so a
flight is solved band by band in closed form (_segment, _reach, _flight_table, _flight), and
slowly decaying bounces within the first band follow the envelope z' = (z + 2/3)/ci of
z = mu*G/(slope*s) (_friction_envelope).
"""

import bisect
import functools
import math

from ...mechanics.motion import EventStorm, phi1, phi2
from .bounces import geometric_bounces
from .law import CONTINUOUS, Parameters, Prediction, continuous_friction, stop_force

# largest deviation of the interpolated continuous friction from the law, / max(Fst, Fsl)
BAND_TOL = 1e-4
BAND_DEPTH = 16  # finest band: 2**-16 of the transition (or of the decaying tail)


def friction_bands(p):
    """(nodes, values): the continuous friction law (kindF = 1) as a continuous piecewise linear
    function of dv through (nodes[i], values[i]) (ascending, odd), constant beyond the outer
    nodes; within BAND_TOL*max(Fst, Fsl) of the law (adaptive bisection of the transition
    |dv| <= dvL and of the tail, which is cut where (Fst - Fsl)*exp(1 - |dv|/dvL) < 1e-12*max(Fst, Fsl)).
    Continuous, so that the velocity of a free motion under it is monotone (a scalar autonomous
    ODE): each band's end is crossed at most once per flight."""
    return _friction_bands(p.Fst, p.Fsl, p.dvL, p.kindTrans, p.eps_sigma, p.eps_tau)


@functools.lru_cache(maxsize=64)
def _friction_bands(Fst, Fsl, dvL, kindTrans, eps_sigma, eps_tau):
    p = Parameters(
        friction=True,
        kindF=CONTINUOUS,
        Fst=Fst,
        Fsl=Fsl,
        dvL=dvL,
        kindTrans=kindTrans,
        eps_sigma=eps_sigma,
        eps_tau=eps_tau,
    )
    scale = max(abs(Fst), abs(Fsl))
    if not (scale > 0.0 and math.isfinite(scale) and dvL > 0.0 and math.isfinite(dvL)):
        return (0.0,), (0.0,)
    tol = BAND_TOL * scale

    def level(u):
        return continuous_friction(u * dvL, p)

    us = [0.0]

    def refine(a, b, fa, fb, depth, min_depth):
        m = 0.5 * (a + b)
        fm = level(m)
        split = depth < min_depth
        if not split and depth < BAND_DEPTH:
            for q in (0.25, 0.5, 0.75):
                uq = a + q * (b - a)
                fq = fm if q == 0.5 else level(uq)
                if abs(fq - (fa + q * (fb - fa))) > tol:
                    split = True
                    break
        if split:
            refine(a, m, fa, fm, depth + 1, min_depth)
            refine(m, b, fm, fb, depth + 1, min_depth)
        else:
            us.append(b)

    refine(0.0, 1.0, 0.0, level(1.0), 0, 4)
    excess = abs(Fst - Fsl)
    if (
        excess > 1e-12 * scale
    ):  # the tail, up to where it is Fsl to 1e-12 (the outer bands are constant)
        end = 1.0 + math.log(excess / (1e-12 * scale))
        refine(1.0, end, level(1.0), level(end), 0, 3)
    nodes, values = [], []
    for u in us:
        wn = u * dvL
        if math.isfinite(wn) and (not nodes or wn > nodes[-1]):
            nodes.append(wn)
            values.append(continuous_friction(wn, p))
    nodes = [-n for n in reversed(nodes[1:])] + nodes
    values = [-v for v in reversed(values[1:])] + values
    # drop nodes between collinear bands (dv = 0, where the odd law's two bands are one line)
    i = 1
    while i < len(nodes) - 1:
        left = (values[i] - values[i - 1]) / (nodes[i] - nodes[i - 1])
        right = (values[i + 1] - values[i]) / (nodes[i + 1] - nodes[i])
        if left == right:
            del nodes[i], values[i]
        else:
            i += 1
    return tuple(nodes), tuple(values)


def interpolated_friction(dv, bands):
    """The piecewise linear friction of friction_bands at dv."""
    nodes, values = bands
    j = bisect.bisect_right(nodes, dv)
    if j == 0:
        return values[0]
    if j == len(nodes):
        return values[-1]
    slope = (values[j] - values[j - 1]) / (nodes[j] - nodes[j - 1])
    return values[j - 1] + slope * (dv - nodes[j - 1])


def band_at(bands, stop, x, w, mu, g, p):
    """(F0, slope, guards) of the friction band the motion (x, w) is in (at a node: the band it
    moves into, by the sign of its acceleration there): Ff = F0 + slope*dv within it, left when
    dv crosses one of its ends (event "band")."""
    nodes, values = bands
    j = bisect.bisect_right(nodes, w)
    if j > 0 and w == nodes[j - 1]:
        acc = mu * g - stop_force(stop, x, w, p) - values[j - 1]
        if acc < 0.0:
            j -= 1
    guards = []
    if j > 0:
        guards.append((0.0, 1.0, nodes[j - 1], 1, "band"))
    if j < len(nodes):
        guards.append((0.0, 1.0, nodes[j], -1, "band"))
    if j == 0:
        return values[0], 0.0, guards
    if j == len(nodes):
        return values[-1], 0.0, guards
    lo, hi = nodes[j - 1], nodes[j]
    slope = (values[j] - values[j - 1]) / (hi - lo)
    return values[j - 1] - slope * lo, slope, guards


BOUNCE_EXACT = 20000  # bounces with continuous friction followed one by one before their envelope
# largest scaled bounce speed s*slope/(mu*G) of the envelope (linear friction)
ENVELOPE_SIGMA = 1e-3
ENVELOPE_CI = 0.999  # smallest restitution of the envelope (below it the bounces die out quickly)


@functools.lru_cache(maxsize=64)
def _band_lines(bands, mu, G):
    """Per band j of friction_bands (j = 0: below the first node; j = len(nodes): above the last)
    the relative acceleration in it as A - B*v: G - Ff(v)/mu with Ff = F0 + slope*v."""
    nodes, values = bands
    lines = [(G - values[0] / mu, 0.0)]
    for j in range(1, len(nodes)):
        slope = (values[j] - values[j - 1]) / (nodes[j] - nodes[j - 1])
        lines.append((G - (values[j - 1] - slope * nodes[j - 1]) / mu, slope / mu))
    lines.append((G - values[-1] / mu, 0.0))
    return tuple(lines)


def _segment(va, vb, A, B):
    """(time, displacement) of the motion dv/dt = A - B*v from va to vb (> va); None if it does
    not get there (the acceleration vanishes first). Exact: v(t) = va + aa*t*phi1(B*t),
    y(t) = va*t + aa*t^2*phi2(B*t), aa = A - B*va."""
    aa = A - B * va
    if not aa > 0.0 or vb == math.inf:
        return None
    dv = vb - va
    if B == 0.0:
        t = dv / aa
    else:
        z = B * dv / aa
        if not z < 1.0:
            return None
        t = -math.log1p(-z) / B
    return t, va * t + aa * t * t * phi2(B * t)


def _reach(va, R, A, B):
    """(time, speed) at which the motion dv/dt = A - B*v from va >= 0 has moved R > 0 further
    (y(t) = va*t + aa*t^2*phi2(B*t), convex and increasing: Newton's method converges)."""
    aa = A - B * va
    if not (aa >= 0.0 and (aa > 0.0 or va > 0.0)):
        return None
    t = 2.0 * R / (va + math.sqrt(va * va + 2.0 * aa * R))
    for _ in range(100):
        y = va * t + aa * t * t * phi2(B * t)
        v = va + aa * t * phi1(B * t)
        if not (math.isfinite(y) and v > 0.0):
            return None
        step = (y - R) / v
        t -= step
        if abs(step) <= 4e-16 * t:
            break
    return t, va + aa * t * phi1(B * t)


@functools.lru_cache(maxsize=64)
def _flight_table(bands, mu, G):
    """The flights' band by band sums, once per (bands, mu, G): (nodes, lines, away, back) with
    away[i] = (time, displacement) from v = nodes[i] <= 0 up to 0 and back[i] = (time,
    displacement) from 0 up to nodes[i] >= 0 (None where the motion does not get there)."""
    nodes = bands[0]
    lines = _band_lines(bands, mu, G)
    j0 = bisect.bisect_right(nodes, 0.0)  # the band that holds v = 0+
    away = [None] * len(nodes)
    t = y = 0.0
    for i in range(j0 - 1, -1, -1):  # nodes[i] <= 0, from the top down
        seg = _segment(
            nodes[i], min(nodes[i + 1], 0.0) if i + 1 < len(nodes) else 0.0, *lines[i + 1]
        )
        if seg is None:
            break
        t, y = t + seg[0], y + seg[1]
        away[i] = (t, y)
    back = [None] * len(nodes)
    t = y = 0.0
    v = 0.0
    for i in range(j0, len(nodes)):
        seg = _segment(v, nodes[i], *lines[i])
        if seg is None:
            break
        t, y, v = t + seg[0], y + seg[1], nodes[i]
        back[i] = (t, y)
    return nodes, lines, tuple(away), tuple(back), j0


def _flight(s, table, distance):
    """(duration, arrival speed) of the flight leaving a rigid stop at speed s and pressed back
    (the relative velocity v, positive into the stop, goes from -s to 0 and back under dv/dt =
    A - B*v of each friction band): exact, band by band (whole bands from _flight_table, the
    partial ones solved). None if it reaches the other stop (distance away) or does not come back."""
    nodes, lines, away, back, j0 = table
    j = bisect.bisect_right(nodes, -s)  # -s lies in band j
    top = min(nodes[j], 0.0) if j < len(nodes) else 0.0
    seg = _segment(-s, top, *lines[j])
    if seg is None:
        return None
    t, y = seg
    if top < 0.0:
        if away[j] is None:
            return None
        t, y = t + away[j][0], y + away[j][1]
    y = -y  # distance of the apex from the stop
    if not 0.0 < y < distance:
        return None
    # the band the return ends in: the first node whose distance from 0 reaches y
    lo, hi = j0, len(nodes)
    while lo < hi:  # back[] increases while not None
        mid = (lo + hi) // 2
        if back[mid] is not None and back[mid][1] < y:
            lo = mid + 1
        else:
            hi = mid
    i = lo
    t0, y0, v0 = (back[i - 1][0], back[i - 1][1], nodes[i - 1]) if i > j0 else (0.0, 0.0, 0.0)
    end = _reach(v0, y - y0, *lines[i])
    if end is None:
        return None
    return t + t0 + end[0], end[1]


def friction_bounces(side, u, mu, g, p, span, pred=None):
    """Bounces on a rigid stop with continuous friction (kindF = 1), summed: the result of
    _bounce_series (dt, w, impulse, impacts, permanent) or None.

    The flight's acceleration G - Ff(v)/mu (G = side*g > 0 pressing the body onto the stop) is
    linear in v within each band of friction_bands: each flight is solved exactly band by band
    (_flight), with no event location. Up to BOUNCE_EXACT bounces per prediction (pred.flights)
    are followed one by one (beyond: EventStorm); three regimes end them early:
    - flights below the rounding of the time or of the stop's position (an apex s^2/(2*G) below
      1e-16*l): with ci < 1 the contact is permanent (the further bounces, a series shorter than
      flight/(1 - ci), cannot be resolved);
    - friction below rounding over the rest of the series (slope*s/(mu*G) <= 1e-17*(1 - ci)
      within the first band, where |Ff| <= slope*|v|): the geometric series without friction;
    - the envelope (ci >= ENVELOPE_CI, the speed within the first band where Ff = slope*v and
      sigma = s*slope/(mu*G) <= ENVELOPE_SIGMA): in z = 1/sigma a flight maps z to z + 2/3 +
      O(1/z^2) (the series of the linear damper's return), so the rebounds follow the affine map
      z' = (z + 2/3)/ci in closed form; a flight lasts (s + s_arrival)/G exactly (momentum: the
      linear friction's impulse over a closed flight is slope*0), its sum by Euler-Maclaurin
      (relative error of the speeds and times about 1e-8, from the neglected O(1/z^2)). With
      ci = 1 the bouncing never ends (the speeds decay like 1/k): the envelope carries it to
      span however many bounces that takes.
    Not summed: bounces above the first band that decay slowly (ci >= 0.9999 with friction below
    1e-4 of the pressing force): more than BOUNCE_EXACT of them within one prediction are an
    EventStorm."""
    G = side * g
    if not (G > 0.0 and math.isfinite(G) and mu > 0.0 and math.isfinite(mu)):
        return None
    bands = friction_bands(p)
    nodes = bands[0]
    if len(nodes) < 2:
        return None
    table = _flight_table(bands, mu, G)
    lines = table[1]
    ci, eps = p.restitution, p.eps_dv
    distance = p.l1 + p.l2
    at_stop = abs(p.l1) if side > 0.0 else abs(p.l2)
    j0 = bisect.bisect_right(nodes, 0.0)
    n1 = min(nodes[j0], -nodes[j0 - 1])  # the first band: |v| <= n1, Ff = slope*v
    B1 = lines[j0][1]
    linear = abs(lines[j0][0] - G) <= 1e-15 * G and B1 > 0.0
    t, J, impacts, s = 0.0, 0.0, 0, abs(u)
    if pred is None:
        pred = Prediction()
    while pred.flights < BOUNCE_EXACT:
        if linear and s <= n1:
            if B1 * s <= 1e-17 * G * (1.0 - ci):
                tail = geometric_bounces(side, s, G, G, ci, eps, mu, distance, span - t)
                if tail is None:
                    break
                dt, w, dJ, n, permanent = tail
                return t + dt, w, side * J + dJ, impacts + n, permanent
            if ci >= ENVELOPE_CI and s * B1 <= ENVELOPE_SIGMA * G:
                skip = _friction_envelope(s, B1, G, ci, eps, span - t)
                if skip is not None:
                    dt, s_new, m, permanent = skip
                    t += dt
                    impacts += m
                    # momentum over the cycles (closed flights: no net friction impulse)
                    J += mu * (G * dt + s_new - s)
                    if permanent:
                        return t, 0.0, side * J, impacts, True
                    s = s_new
        flight = _flight(s, table, distance)
        if flight is None:
            break
        if ci < 1.0 and (t + flight[0] / (1.0 - ci) == t or s * s <= 2e-16 * G * at_stop):
            # the rest of the bouncing ends within the rounding of t, or its flights rise less
            # than the rounding of the stop's position: at rest now; the impacts take the
            # rebound's momentum (eps_dv = 0: infinitely many, counted as 1e9)
            rest = math.ceil(math.log(eps / s) / math.log(ci)) if eps > 0.0 and ci > 0.0 else 10**9
            return t, 0.0, side * (J + mu * s), impacts + rest, True
        if t + flight[0] > span or t + flight[0] == t:
            break  # (ci = 1, a flight below the rounding of t: at span)
        t += flight[0]
        impacts += 1
        pred.flights += 1
        arrival = flight[1]
        after = ci * arrival
        if after <= eps:
            J += mu * arrival
            return t, 0.0, side * J, impacts, True
        J += mu * (arrival + after)
        s = after
    if pred.flights >= BOUNCE_EXACT:
        raise EventStorm(
            f"EndStop prediction did not finish: more than {BOUNCE_EXACT} bounces on a rigid stop "
            f"with continuous friction (ci = {ci}, eps_dv = {eps}, pressed at {G:g} m/s2) that are "
            f"not summed: above the friction's first band (|dv| > {n1:g} m/s) or with ci < "
            f"{ENVELOPE_CI} they are followed one by one"
        )
    if impacts == 0:
        return None
    return t, -side * s, side * J, impacts, False


def _friction_envelope(s, B1, G, ci, eps, span):
    """m > 0 whole bounce cycles of friction_bounces' envelope from the rebound speed s (all within
    the first friction band): (duration, rebound speed after them, m, permanent) or None. Ends
    before span, and before the rebound reaches eps_dv; permanent when the speeds fall below the
    smallest float first."""
    a = 2.0 / 3.0
    vscale = G / B1  # s = vscale/z
    z0 = vscale / s
    lam = -math.log(ci)  # ci^j = exp(-lam*j)
    one_minus_ci = 1.0 - ci

    def grow(m):  # (1/ci^m - 1)/(1 - ci), m at ci = 1
        return math.expm1(lam * m) / one_minus_ci if one_minus_ci > 0.0 else m

    def shrink(m):  # (1 - ci^m)/(1 - ci), m at ci = 1
        return -math.expm1(-lam * m) / one_minus_ci if one_minus_ci > 0.0 else m

    def z(m):  # z_m = (z_{m-1} + a)/ci
        return math.exp(lam * m) * z0 + a * grow(m) if lam * m < 700.0 else math.inf

    rate = lam / one_minus_ci if one_minus_ci > 0.0 else 1.0  # -ln(ci)/(1 - ci)

    def speeds(m):
        """sum_{j<m} s_j by Euler-Maclaurin on h(j) = 1/z_j, up to the h' terms."""
        zm = z(m)
        integral = math.log1p(a * shrink(m) / z0) / (a * rate)
        h0, hm = 1.0 / z0, (1.0 / zm if zm < math.inf else 0.0)
        d0 = -(lam * z0 + a * rate) * h0 * h0  # h'(j) = -(lam*z_j + a*rate)/z_j^2
        dm = -(lam * zm + a * rate) * hm * hm if hm > 0.0 else 0.0
        return vscale * (integral + 0.5 * (h0 - hm) + (dm - d0) / 12.0)

    def duration(m):  # sum of (s_j + s_{j+1}/ci)/G
        total = speeds(m)
        zm = z(m)
        sm = vscale / zm if zm < math.inf else 0.0
        return (total + (total - s + sm) / ci) / G

    def largest(ok, hi):
        """The largest m in [0, hi] with ok(m) (ok monotone: true up to some m)."""
        lo = 0.0
        while hi - lo > max(1.0, 1e-12 * hi):
            mid = 0.5 * (lo + hi) if hi < 1e6 else math.sqrt(max(lo, 1.0) * hi)
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        return math.floor(lo)

    limit = 1e300
    if eps > 0.0:
        target = vscale / eps  # the rebound s_j <= eps from z_j >= target
        if target <= z0:
            return None
        limit = largest(lambda m: z(m) < target, limit)  # the exact bounces do the last one
    if duration(limit) <= span:
        m = limit
    else:
        # at least one exact cycle before span
        m = largest(lambda m: duration(m) <= span, limit) - 1
    if not m >= 1:
        return None
    zm = z(m)
    s_new = vscale / zm if zm < math.inf else 0.0
    return duration(m), s_new, int(min(m, 1e18)), s_new == 0.0 or m >= 1e300
