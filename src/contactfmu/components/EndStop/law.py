"""EndStop: SimulationX Mechanics.Translation.EndStop (SimulationX documentation
of Mechanics.Translation.EndStop, version 4.1).

Connectors ctr1, ctr2; dx = ctr1.x - ctr2.x, dv = ctr1.v - ctr2.v. Stop 1 is in contact for
dx >= l1, stop 2 for dx <= -l2. The internal force Fi = Fstop + Ff is > 0 at stop 1 and < 0 at
stop 2; it acts on the bodies like the force of a spring with elongation dx: -Fi on ctr1's body,
+Fi on ctr2's body (so the bodies' relative motion obeys d(dv)/dt = g - Fi/mu, mu the reduced mass
and g the relative acceleration from everything else).

Elastic End Stop (mode 2), states `stop`:
    0  free: Fstop = 0; dx >= l1 -> 1, dx <= -l2 -> 2
    1  at stop 1: Fs = k1*(dx - l1), Fd = b1*dv, Fstop = Fs + Fd; leaves when Fstop <= 0:
       -> 11 if still dx > l1, else -> 0 (no drag force is ever transmitted)
    11 detaching from stop 1: as free; dx < l1 -> 0; dv > 0 again (driven into the stop) -> 1
    2, 21: the same for stop 2 (Fs = k2*(dx + l2), Fd = b2*dv, Fstop < 0; leaves when Fstop >= 0)
    3  both sides at stop (l1 + l2 < 0): each side acts as its spring-damper with its preload while
       geometrically engaged (dx >= l1 resp. dx <= -l2); 3 while both are, 1 or 2 while one is.
Rigid End Stop (mode 1):
    0  free; reaching a stop is an impact with momentum conservation and restitution:
       dv' = -ci*dv; if |dv'| <= eps_dv the contact is permanent: dv' = 0, state 1 or 2
    1  rigid connection at stop 1 (dv = 0): Fi is what the surroundings need (mu*g); leaves
       (-> 0) when Fi <= -eps_Fi; 2: the same with Fi >= eps_Fi
    3  both sides (l1 + l2 < 0): rigid connection, Fi of either sign.
Friction in the backlash (friction = true), in parallel to the stop (Fi = Fstop + Ff), with
states sf: 0 stuck, 1 sliding with dv > 0, -1 sliding with dv < 0 (the Rigid Friction chapter is
not publicly available; this reading is documented in the FMU):
    kindF 1, continuous transition: Ff(dv) = Fst*T(dv/dvL) for |dv| <= dvL (T an odd smooth
       step from -1 to 1, Gevrey or tanh shape), sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL))
       beyond: rises from 0 to the static level Fst at the limit velocity, then decays to Fsl.
    kindF 2, stick-slip: sliding Ff = Fsl*sign(dv); stuck (dv = 0) while |mu*g| <= Fst, Ff =
       mu*g; breaks away beyond Fst, and sliding starts at the break-away instant.
"""
import bisect
import functools
import itertools
import math

from ...mechanics.contact_motion import (
    EventStorm,
    Piece,
    bound_work,
    first_crossing,
    phi1,
    phi2,
    work,
)

RIGID, ELASTIC = 1, 2
PLASTIC, ELASTIC_IMPACT, BY_COEFFICIENT = 1, 2, 3
CONTINUOUS, STICK_SLIP = 1, 2
GEVREY, TANH = 1, 2
FREE, STOP1, STOP2, DETACH1, DETACH2, BOTH = 0, 1, 2, 11, 21, 3
MAX_SEGMENTS = 10000
RATTLE_EXACT = 20000     # legs of a rigid rattle between the two stops followed one by one before its envelope
RATTLE_STEP = 0.02       # largest relative change of the rattle's energy per envelope skip


class Parameters:
    """Parameters of the element (names as documented) plus the co-simulation inertias m1, m2."""

    def __init__(self, l1=0.01, l2=0.01, mode=ELASTIC, kind=BY_COEFFICIENT, ci=0.8, k1=1e6, k2=1e6, b1=100.0,
                 b2=100.0, friction=False, kindF=CONTINUOUS, Fst=10.0, Fsl=8.0, dvL=1e-3, eps_Fi=1e-6,
                 eps_dv=1e-4, dFfrel=1e-3, eps_dvsl=1e-6, eps_dI=1e-8, kindTrans=GEVREY, eps_sigma=1.0,
                 eps_tau=0.1):
        self.l1, self.l2, self.mode, self.kind, self.ci = l1, l2, mode, kind, ci
        self.k1, self.k2, self.b1, self.b2 = k1, k2, b1, b2
        self.friction, self.kindF, self.Fst, self.Fsl, self.dvL = friction, kindF, Fst, Fsl, dvL
        self.eps_Fi, self.eps_dv, self.dFfrel, self.eps_dvsl, self.eps_dI = eps_Fi, eps_dv, dFfrel, eps_dvsl, eps_dI
        self.kindTrans, self.eps_sigma, self.eps_tau = kindTrans, eps_sigma, eps_tau

    @property
    def restitution(self):
        """ci of the kind of impact: plastic 0, elastic 1, else the given coefficient."""
        return {PLASTIC: 0.0, ELASTIC_IMPACT: 1.0}.get(self.kind, self.ci)

    @property
    def preloaded(self):
        return self.l1 + self.l2 < 0.0


# ---- friction -----------------------------------------------------------------------------------

def smooth_step(z, p):
    """Transition from 0 (z <= 0) to 1 (z >= 1). Gevrey: 0.5*(1 + tanh(eps_sigma*(z - 0.5)/(z*(1 - z))))
    is exactly 0 and 1 at the ends; tanh: 0.5*(1 + tanh((z - 0.5)/eps_tau)) only close to them."""
    if p.kindTrans == TANH:
        return 0.5 * (1.0 + math.tanh((z - 0.5) / p.eps_tau))
    if z <= 0.0:
        return 0.0
    if z >= 1.0:
        return 1.0
    return 0.5 * (1.0 + math.tanh(p.eps_sigma * (z - 0.5) / (z * (1.0 - z))))


def continuous_friction(dv, p):
    """Ff of the continuous transition model (kindF = 1); odd in dv."""
    u = abs(dv) / p.dvL
    if u <= 1.0:
        level = p.Fst * (2.0 * smooth_step(0.5 * (u + 1.0), p) - 1.0)
    else:
        level = p.Fsl + (p.Fst - p.Fsl) * math.exp(1.0 - u)
    return math.copysign(level, dv) if dv != 0.0 else 0.0


# ---- elastic contact law ------------------------------------------------------------------------

def elastic_forces(stop, dx, dv, p):
    """(Fs, Fd) of the elastic end stop in state `stop`."""
    fs = fd = 0.0
    if stop in (STOP1, BOTH) and dx >= p.l1:
        fs += p.k1 * (dx - p.l1)
        fd += p.b1 * dv
    if stop in (STOP2, BOTH) and dx <= -p.l2:
        fs += p.k2 * (dx + p.l2)
        fd += p.b2 * dv
    return fs, fd


def both_state(dx, p):
    """State code of a preloaded element (l1 + l2 < 0) from the engaged sides."""
    one, two = dx >= p.l1, dx <= -p.l2
    return BOTH if one and two else STOP1 if one else STOP2 if two else FREE


def elastic_transition(stop, dx, dv, p):
    """The state after the documented transitions at the motion (dx, dv), applied until none fires
    (the sampled version of what predict() locates in time)."""
    if p.preloaded:
        return both_state(dx, p)
    seen = {stop}
    for _ in range(4):
        fs, fd = elastic_forces(stop, dx, dv, p)
        new = stop
        if stop == FREE:
            new = STOP1 if dx >= p.l1 else STOP2 if dx <= -p.l2 else FREE
        elif stop == STOP1 and fs + fd <= 0.0:
            new = DETACH1 if dx > p.l1 else FREE
        elif stop == STOP2 and fs + fd >= 0.0:
            new = DETACH2 if dx < -p.l2 else FREE
        elif stop == DETACH1:
            new = FREE if dx < p.l1 else STOP1 if dv > 0.0 else DETACH1
        elif stop == DETACH2:
            new = FREE if dx > -p.l2 else STOP2 if dv < 0.0 else DETACH2
        if new == stop:
            return stop
        if new in seen:
            # free <-> stop at the contact point with Fstop <= 0 (dx = l1, dv <= 0): the contact
            # would transmit no force or a drag, so the element is free
            return FREE
        seen.add(new)
        stop = new
    return stop


# ---- prediction of the relative motion (closed form, events located) ----------------------------

class Prediction:
    """Result of predict(): states at the requested times, plus what happened."""

    def __init__(self):
        self.states = []       # (dx, dv, stop, sf) at the requested times
        self.onset = None      # first time the element transmits a force (0: at once; None: never)
        self.impulse = 0.0     # sum of the impact impulses of Fi (N.s), up to the last time
        self.impacts = 0
        self.changes = 0
        self.flights = 0       # bounces with continuous friction solved one by one (_friction_bounces)


def continuous_friction_slope(dv, p):
    """dFf/d(dv) of the continuous model (central difference; used only for its damping part)."""
    step = 1e-6 * p.dvL
    return (continuous_friction(dv + step, p) - continuous_friction(dv - step, p)) / (2.0 * step)


BAND_TOL = 1e-4     # largest deviation of the interpolated continuous friction from the law, / max(Fst, Fsl)
BAND_DEPTH = 16     # finest band: 2**-16 of the transition (or of the decaying tail)


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
    p = Parameters(friction=True, kindF=CONTINUOUS, Fst=Fst, Fsl=Fsl, dvL=dvL, kindTrans=kindTrans,
                   eps_sigma=eps_sigma, eps_tau=eps_tau)
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
    if excess > 1e-12 * scale:   # the tail, up to where it is Fsl to 1e-12 (the outer bands are constant)
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


def _band(bands, stop, x, w, mu, g, p):
    """(F0, slope, guards) of the friction band the motion (x, w) is in (at a node: the band it
    moves into, by the sign of its acceleration there): Ff = F0 + slope*dv within it, left when
    dv crosses one of its ends (event "band")."""
    nodes, values = bands
    j = bisect.bisect_right(nodes, w)
    if j > 0 and w == nodes[j - 1]:
        acc = mu * g - _stop_force(stop, x, w, p) - values[j - 1]
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


def transmits(stop, p):
    """Does the element transmit a force in this state (a contact, or friction)?"""
    return p.friction or stop in (STOP1, STOP2, BOTH)


def predict(dx, dv, stop, sf, mu, g, times, p):
    """The element's relative motion from (dx, dv) in state (stop, sf) under the held relative
    acceleration g, for the reduced mass mu, at the ascending times. Closed form per state
    (contact_motion.Piece), transitions located (contact_motion.first_crossing). Continuous
    friction (kindF = 1) enters as its continuous piecewise linear interpolant (friction_bands):
    within each velocity band a linear damper, solved exactly however stiff (a 1 g mass on the
    friction's slope of 2e4 N.s/m near dv = 0 has a time constant of 5e-8 s), the crossing of a
    band's end located like any other transition; a motion that settles at the friction's
    equilibrium velocity approaches it within its band without further events."""
    pred = Prediction()
    if not math.isfinite(dx + dv + g):
        # the relative motion or the other forces overflowed (inputs near the largest float): no
        # motion to predict; non-finite results, which the FMU reports as such (fmi2Error)
        pred.states = [(math.nan, math.nan, stop, sf) for _ in times]
        pred.onset = 0.0
        return pred
    t, k = 0.0, 0
    x, w = dx, dv
    continuous = p.friction and p.kindF == CONTINUOUS
    bands = friction_bands(p) if continuous else None
    stop, sf = _settle(stop, sf, x, w, mu, g, p)
    start = work()
    for _ in range(MAX_SEGMENTS):
        bound_work(start, f"EndStop prediction over {times[-1]} s")
        if pred.onset is None and transmits(stop, p):
            pred.onset = t
        fric0, damp, band_guards = 0.0, 0.0, ()
        if continuous and not (p.mode == RIGID and stop != FREE):
            fric0, damp, band_guards = _band(bands, stop, x, w, mu, g, p)
        if not math.isfinite(_stop_force(stop, x, w, p)):
            # the stop's force overflows (a position near the largest float against a stiff stop):
            # no motion to predict, every crossing would be one; non-finite results from here on,
            # as for non-finite inputs above (not an EventStorm after 1e6 motion evaluations)
            pred.states += [(math.nan, math.nan, stop, sf)] * (len(times) - k)
            if pred.onset is None:
                pred.onset = t
            return pred
        piece, guards = _piece(stop, sf, x, w, mu, g - fric0 / mu, damp, p)
        best = None
        for alpha, beta, level, inside, event in itertools.chain(guards, band_guards):
            tc = first_crossing(piece, alpha, beta, level, inside, times[-1] - t)
            if tc is not None and (best is None or tc < best[0]):
                best = (tc, event)
        while k < len(times) and (best is None or times[k] - t <= best[0]):
            xs, ws = piece.state(times[k] - t)
            pred.states.append((xs, ws, stop, sf))
            k += 1
        if best is None:
            return pred
        tc, event = best
        x, w = piece.state(tc)
        t += tc
        pred.changes += 1
        stop, sf, x, w = _event(event, stop, sf, x, w, mu, p, pred, t)
        if event in ("hit1", "hit2") and stop == FREE and k < len(times):
            side = STOP1 if event == "hit1" else STOP2
            series = _bounce_series(event, w, mu, g, p, times[k] - t, pred)
            summed = (series[0], side, *series[1:]) if series is not None else _rattle(side, w, mu, g, p, times[k] - t)
            if summed is not None:                 # bounces on one stop or a rattle between both, summed
                dt, side, w, impulse, impacts, permanent = summed   # (up to the next output time)
                t += dt
                x = p.l1 if side == STOP1 else -p.l2
                pred.impulse += impulse
                pred.impacts += impacts
                pred.changes += impacts
                if permanent:
                    stop, w = side, 0.0
        stop, sf = _settle(stop, sf, x, w, mu, g, p)
    raise EventStorm(f"EndStop prediction did not finish: more than {MAX_SEGMENTS} state changes within "
                       f"{times[-1]} s (eps_dv = {p.eps_dv} too small for a bouncing contact?)")


def _bounce_series(event, u, mu, g, p, span, pred=None):
    """Bounces of a rigid stop under constant accelerations, summed in closed form.

    Just after an impact at stop 1 (event hit1) the motion leaves with the rebound velocity u
    (< 0; stop 2 mirrored). If the flight decelerates it at a constant a_away > 0 and, from the
    apex on, accelerates it back at a constant a_back > 0 without reaching the other stop (no
    friction; or stick-slip friction sliding out and back, |mu*g| > Fst so it does not stick at the
    apex), each bounce repeats the previous one scaled: rebound speeds |u|*r^k with r =
    ci*sqrt(a_back/a_away), cycle times |u|*r^k*tau, tau = 1/a_away + 1/sqrt(a_away*a_back). The
    geometric series ends at finite time: the n-th impact's rebound |u|*r^n <= eps_dv makes the
    contact permanent (eps_dv = 0: the accumulation point |u|*tau/(1 - r)). Elastic impacts
    (r = 1) repeat the same bounce: whole periods are skipped. With continuous friction (kindF = 1)
    the flight's acceleration depends on the speed: those bounces are _friction_bounces.

    Returns None if the bounces are not such a series, or not one cycle ends within span (the
    time to the next output: the caller simulates the bounce in progress); else (dt, w, impulse,
    impacts, permanent) after the complete cycles within span: their duration, the rebound
    velocity then (0 when the contact became permanent), the sum of their impulses and count."""
    # continuous friction below rounding of the pressing force (max(Fst, Fsl) <= 1e-17*mu*|g|,
    # e.g. a body pressed by 1e297 N): the bounces are those without friction
    negligible = p.friction and p.kindF != STICK_SLIP and max(abs(p.Fst), abs(p.Fsl)) <= 1e-17 * mu * abs(g)
    if p.mode != RIGID or p.preloaded or u == 0.0:
        return None
    side = 1.0 if event == "hit1" else -1.0      # direction into the stop
    if side * u >= 0.0:
        return None
    if p.friction and p.kindF != STICK_SLIP and not negligible:
        return _friction_bounces(side, u, mu, g, p, span, pred)
    a_away = a_back = side * g
    if p.friction and not negligible:
        if abs(mu * g) <= p.Fst or p.Fsl < 0.0:
            return None                          # sticks at the apex: an ordinary event ends the bouncing
        a_away += p.Fsl / mu
        a_back -= p.Fsl / mu
    return _geometric_bounces(side, abs(u), a_away, a_back, p.restitution, p.eps_dv, mu, p.l1 + p.l2, span)


def _geometric_bounces(side, speed, a_away, a_back, ci, eps_dv, mu, distance, span):
    """The geometric bounce series of _bounce_series from the rebound speed `speed` > 0 (see there)."""
    if not (0.0 < a_away < math.inf and 0.0 < a_back < math.inf):
        return None
    if speed * (speed / a_away) >= 2.0 * distance:
        return None                              # the apex reaches the other stop
    ratio = math.sqrt(a_back / a_away)
    r = ci * ratio
    tau = 1.0 / a_away + 1.0 / (math.sqrt(a_away) * math.sqrt(a_back))
    u = -side * speed
    if r == 1.0:
        # elastic impacts (ci = 1) without friction: every bounce repeats the last one; the whole
        # periods within span are skipped
        m = math.floor(span / (speed * tau))
        if not m >= 1:
            return None
        return m * speed * tau, u, side * mu * (1.0 + ci) * speed * m, m, False
    if not r < 1.0:
        return None
    # n: impacts until the rebound is within eps_dv (permanent contact); inf for eps_dv = 0
    if r == 0.0:
        n = 1.0
    elif eps_dv > 0.0:
        n = max(1.0, math.ceil(math.log(eps_dv / speed) / math.log(r))) if speed > eps_dv else 1.0
    else:
        n = math.inf
    # m: complete cycles within span; cycles(m) = speed*tau*(1 - r^m)/(1 - r)
    limit = speed * tau / (1.0 - r)
    if span >= limit:
        m = math.inf
    else:
        q = 1.0 - span / limit                  # r^m >= q
        m = math.floor(math.log(q) / math.log(r)) if r > 0.0 else 1.0
        while m > 0 and speed * tau * (1.0 - r ** m) / (1.0 - r) > span:
            m -= 1                               # rounding of the logarithms
    m = min(m, n)
    if m < 1:
        return None
    permanent = m >= n
    rm = 0.0 if m == math.inf else r ** m
    dt = speed * tau * (1.0 - rm) / (1.0 - r)
    impacts = m if m != math.inf else 1e9        # eps_dv = 0: infinitely many; counted as a large number
    impulse = side * mu * (1.0 + ci) * ratio * speed * (1.0 - rm) / (1.0 - r)
    if permanent and n != math.inf:
        impulse -= side * mu * ci * ratio * speed * r ** (n - 1)   # the last impact is plastic
    w = 0.0 if permanent else -side * speed * rm
    return dt, w, impulse, int(impacts), permanent


BOUNCE_EXACT = 20000    # bounces with continuous friction followed one by one before their envelope
ENVELOPE_SIGMA = 1e-3   # largest scaled bounce speed s*slope/(mu*G) of the envelope (linear friction)
ENVELOPE_CI = 0.999     # smallest restitution of the envelope (below it the bounces die out quickly)


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
    j0 = bisect.bisect_right(nodes, 0.0)               # the band that holds v = 0+
    away = [None] * len(nodes)
    t = y = 0.0
    for i in range(j0 - 1, -1, -1):                    # nodes[i] <= 0, from the top down
        seg = _segment(nodes[i], min(nodes[i + 1], 0.0) if i + 1 < len(nodes) else 0.0, *lines[i + 1])
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
    j = bisect.bisect_right(nodes, -s)                  # -s lies in band j
    top = min(nodes[j], 0.0) if j < len(nodes) else 0.0
    seg = _segment(-s, top, *lines[j])
    if seg is None:
        return None
    t, y = seg
    if top < 0.0:
        if away[j] is None:
            return None
        t, y = t + away[j][0], y + away[j][1]
    y = -y                                              # distance of the apex from the stop
    if not 0.0 < y < distance:
        return None
    # the band the return ends in: the first node whose distance from 0 reaches y
    lo, hi = j0, len(nodes)
    while lo < hi:                                      # back[] increases while not None
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


def _friction_bounces(side, u, mu, g, p, span, pred=None):
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
    n1 = min(nodes[j0], -nodes[j0 - 1])                  # the first band: |v| <= n1, Ff = slope*v
    B1 = lines[j0][1]
    linear = abs(lines[j0][0] - G) <= 1e-15 * G and B1 > 0.0
    t, J, impacts, s = 0.0, 0.0, 0, abs(u)
    if pred is None:
        pred = Prediction()
    while pred.flights < BOUNCE_EXACT:
        if linear and s <= n1:
            if B1 * s <= 1e-17 * G * (1.0 - ci):
                tail = _geometric_bounces(side, s, G, G, ci, eps, mu, distance, span - t)
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
            rest = math.ceil(math.log(eps / s) / math.log(ci)) if eps > 0.0 and ci > 0.0 else 10 ** 9
            return t, 0.0, side * (J + mu * s), impacts + rest, True
        if t + flight[0] > span or t + flight[0] == t:
            break                                        # (ci = 1, a flight below the rounding of t: at span)
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
        raise EventStorm(f"EndStop prediction did not finish: more than {BOUNCE_EXACT} bounces on a rigid stop "
                         f"with continuous friction (ci = {ci}, eps_dv = {eps}, pressed at {G:g} m/s2) that are "
                         f"not summed: above the friction's first band (|dv| > {n1:g} m/s) or with ci < "
                         f"{ENVELOPE_CI} they are followed one by one")
    if impacts == 0:
        return None
    return t, -side * s, side * J, impacts, False


def _friction_envelope(s, B1, G, ci, eps, span):
    """m > 0 whole bounce cycles of _friction_bounces' envelope from the rebound speed s (all within
    the first friction band): (duration, rebound speed after them, m, permanent) or None. Ends
    before span, and before the rebound reaches eps_dv; permanent when the speeds fall below the
    smallest float first."""
    a = 2.0 / 3.0
    vscale = G / B1                                      # s = vscale/z
    z0 = vscale / s
    lam = -math.log(ci)                                  # ci^j = exp(-lam*j)
    one_minus_ci = 1.0 - ci

    def grow(m):                                         # (1/ci^m - 1)/(1 - ci), m at ci = 1
        return math.expm1(lam * m) / one_minus_ci if one_minus_ci > 0.0 else m

    def shrink(m):                                       # (1 - ci^m)/(1 - ci), m at ci = 1
        return -math.expm1(-lam * m) / one_minus_ci if one_minus_ci > 0.0 else m

    def z(m):                                            # z_m = (z_{m-1} + a)/ci
        return math.exp(lam * m) * z0 + a * grow(m) if lam * m < 700.0 else math.inf

    rate = lam / one_minus_ci if one_minus_ci > 0.0 else 1.0    # -ln(ci)/(1 - ci)

    def speeds(m):
        """sum_{j<m} s_j by Euler-Maclaurin on h(j) = 1/z_j, up to the h' terms."""
        zm = z(m)
        integral = math.log1p(a * shrink(m) / z0) / (a * rate)
        h0, hm = 1.0 / z0, (1.0 / zm if zm < math.inf else 0.0)
        d0 = -(lam * z0 + a * rate) * h0 * h0            # h'(j) = -(lam*z_j + a*rate)/z_j^2
        dm = -(lam * zm + a * rate) * hm * hm if hm > 0.0 else 0.0
        return vscale * (integral + 0.5 * (h0 - hm) + (dm - d0) / 12.0)

    def duration(m):                                     # sum of (s_j + s_{j+1}/ci)/G
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
        target = vscale / eps                            # the rebound s_j <= eps from z_j >= target
        if target <= z0:
            return None
        limit = largest(lambda m: z(m) < target, limit)  # the exact bounces do the last one
    if duration(limit) <= span:
        m = limit
    else:
        m = largest(lambda m: duration(m) <= span, limit) - 1   # at least one exact cycle before span
    if not m >= 1:
        return None
    zm = z(m)
    s_new = vscale / zm if zm < math.inf else 0.0
    return duration(m), s_new, int(min(m, 1e18)), s_new == 0.0 or m >= 1e300


def _rattle(side, u, mu, g, p, span):
    """A rigid rattle between the two stops (no stop preload), leg by leg in closed form.

    Just after an impact at stop `side` the motion leaves with velocity u toward the other stop,
    D = l1 + l2 away. Over a leg the acceleration along the travel is constant: a12 = -g - Fsl/mu
    from stop 1 to stop 2, a21 = g - Fsl/mu back (Fsl: sliding friction, 0 without friction;
    continuous friction only on legs fast enough for its excess over Fsl to be below rounding), so a leg leaving at speed s arrives at s' = sqrt(s^2 + 2*a*D) after 2*D/(s + s')
    and rebounds at ci*s' (permanent contact once ci*s' <= eps_dv). The squared speed leaving
    stop `side` is then an affine map per cycle (two legs): E' = ci^4*E + 2*D*ci^2*(ci^2*a_out + a_back).

    The first RATTLE_EXACT legs are followed one by one (exact to rounding). A longer rattle (an
    undamped one, ci = 1, at 863 m/s between stops 2 cm apart: 21,000 impacts a second; near the
    largest float, 1e300 a second) is followed by its envelope (_rattle_envelope); the phase of
    such a storm is an approximation, bounded in time. Legs end at the last impact before span
    (the time to the next output: the caller simulates the leg in progress).

    None if this is not such a rattle or no leg ends within span; else (dt, side, w, impulse,
    impacts, permanent): the time the legs took, the stop the motion is at and its velocity there,
    the sum of the impulses (sign of Fi) and their count, and whether the contact became permanent."""
    distance = p.l1 + p.l2
    if (p.mode != RIGID or not distance > 0.0 or not (math.isfinite(u) and math.isfinite(g))
            or not mu > 0.0):
        return None
    slide = p.Fsl / mu if p.friction else 0.0
    if not (slide >= 0.0 and math.isfinite(slide)):
        return None
    # continuous friction (kindF 1) is the sliding level Fsl to rounding where (Fst - Fsl)*exp(1 - |dv|/dvL)
    # is below 1e-17 of the forces: a leg is followed only while its speed stays above that
    v_sat = 0.0
    if p.friction and p.kindF != STICK_SLIP:
        excess = abs(p.Fst - p.Fsl)
        scale = 1e-17 * max(p.Fsl, mu * abs(g), 1e-300)
        v_sat = p.dvL * (1.0 + math.log(excess / scale)) if excess > scale else p.dvL
    if (u >= 0.0) if side == STOP1 else (u <= 0.0):
        return None                                   # not leaving toward the other stop
    accel = {STOP1: -g - slide, STOP2: g - slide}      # along the travel of the leg leaving that stop
    if not (math.isfinite(accel[STOP1]) and math.isfinite(accel[STOP2])):
        return None
    ci, eps = p.restitution, p.eps_dv
    other = {STOP1: STOP2, STOP2: STOP1}
    sign = {STOP1: 1.0, STOP2: -1.0}                   # sign of the impulse of an impact at that stop

    def leg(at, s):
        """(duration, arrival speed) of the leg leaving `at` at speed s > 0; None if it does not arrive."""
        r = 2.0 * accel[at] * distance / s / s        # (scaled: s^2 overflows beyond 1.3e154 m/s)
        if not 1.0 + r > 0.0:
            return None
        s1 = s * math.sqrt(1.0 + r) if r < 1e16 else math.sqrt(s * s + 2.0 * accel[at] * distance)
        if not math.isfinite(s1) or min(s, s1) < v_sat:
            return None
        dt = (distance / s) * (2.0 / (1.0 + s1 / s))  # = 2*D/(s + s1) without overflowing s + s1
        return (dt, s1) if dt > 0.0 else None         # (a leg shorter than the smallest float: not followed)

    t, impulse, impacts, at, s, legs = 0.0, 0.0, 0, side, abs(u), 0
    while legs < 3 * RATTLE_EXACT:
        if legs >= RATTLE_EXACT and at == side:
            skip = _rattle_envelope(at, s, leg, accel, distance, ci, eps, mu, g, slide, span - t)
            if skip is not None:
                dt, s, dimpulse, cycles = skip
                t += dt
                impulse += dimpulse
                impacts += 2 * cycles
        step = leg(at, s)
        if step is None or t + step[0] > span:
            break
        dt, s1 = step
        legs += 1
        t += dt
        at = other[at]
        impacts += 1
        after = ci * s1
        if after <= eps:
            impulse += sign[at] * mu * s1
            return t, at, 0.0, impulse, impacts, True
        impulse += sign[at] * mu * (s1 + after)
        s = after
    if impacts == 0:
        return None
    return t, at, (-s if at == STOP1 else s), impulse, impacts, False


def _rattle_envelope(at, s, leg, accel, distance, ci, eps, mu, g, slide, span):
    """Whole cycles (leg out of `at` and back) of a long rattle, skipped along its speed map:
    (duration, speed leaving `at` after them, their impulse, their count) or None.

    - Fast (|a|*D below 1e-17*s^2 on both legs: the accelerations change a leg's time and speed
      by less than rounding): each cycle is the last one scaled, speed times ci^2, duration
      D*(1 + 1/ci)/s; any number of cycles is a geometric series, summed in closed form.
    - Otherwise: the affine map of E = s^2 (exact), in chunks of as many cycles as change E by at
      most RATTLE_STEP; a chunk's duration by Simpson's rule over its first, middle and last
      cycle (exact for a periodic rattle, E' = E).
    Chunks end at least one cycle before span and before a rebound within eps_dv. The impulse is
    the momentum balance of the relative motion over the cycles: J = mu*(g*dt - (w_end - w_start))
    minus the sliding friction's impulse (Fsl against the motion on each leg)."""
    back = STOP2 if at == STOP1 else STOP1
    direction = -1.0 if at == STOP1 else 1.0          # of the leg out of `at`
    q = ci ** 4
    one_minus_q = (1.0 - ci) * (1.0 + ci) * (1.0 + ci * ci)

    def cycle(speed):
        """(duration, duration of the leg out) of the cycle leaving at speed; None if it does not complete."""
        first = leg(at, speed)
        second = leg(back, ci * first[1]) if first is not None else None
        if second is None:
            return None
        return first[0] + second[0], first[0]

    c0 = cycle(s)
    if c0 is None or not c0[0] > 0.0 or ci == 0.0:
        return None
    amax = max(abs(accel[at]), abs(accel[back]))
    fast = amax * distance <= 1e-17 * s * s if s < 1e150 else amax * distance / s / s <= 1e-17
    if fast:
        r = ci * ci                                    # speed ratio per cycle
        limits = [span / c0[0] - 1.0]
        if r < 1.0:
            # sum_{j<m+1} T0/r^j <= span: r^-(m+1) <= 1 + span*(1/r - 1)/T0
            limits = [math.log1p(span * (1.0 / r - 1.0) / c0[0]) / -math.log(r) - 1.0]
            floor = max(eps, math.sqrt(amax * distance * 1e17))   # stay fast and above eps_dv
            if floor > 0.0:
                limits.append(math.log(floor / s) / math.log(r) - 1.0 if s > floor else 0.0)
        m = math.floor(min(limits))
        if not m >= 1:
            return None
        if r < 1.0:
            dt = c0[0] * math.expm1(-m * math.log(r)) / (1.0 / r - 1.0)
            sm = s * r ** m
        else:
            dt, sm = m * c0[0], s
        t_out = dt * c0[1] / c0[0]                    # every cycle scaled: the same share out
    else:
        e_rel = 2.0 * distance * ci * ci * (ci * ci * accel[at] + accel[back]) / s / s   # p/E0

        def ratio(m):                                  # E_m/E0
            if one_minus_q == 0.0:
                return 1.0 + m * e_rel
            if q == 0.0:
                return e_rel
            return math.exp(m * math.log(q)) - e_rel * math.expm1(m * math.log(q)) / one_minus_q

        # |E_m - E0| = (1 - q^m)*|E0 - E*| (E* = p/(1 - q), the map's fixed point) <= RATTLE_STEP*E0
        gap = abs(1.0 - e_rel / one_minus_q) if one_minus_q > 0.0 else None
        if gap is None:
            m_energy = RATTLE_STEP / abs(e_rel) if e_rel != 0.0 else math.inf
        elif gap == 0.0 or q == 0.0:
            m_energy = math.inf if gap == 0.0 else 0.0
        else:
            m_energy = math.log1p(-min(RATTLE_STEP / gap, 1.0)) / math.log(q) if RATTLE_STEP < gap else math.inf
        m = math.floor(min(m_energy, span / c0[0] - 1.0))
        while m >= 1:
            cm = cycle(s * math.sqrt(ratio(m)))
            if cm is not None and (m + 1) * max(c0[0], cm[0]) <= span and ci * s * math.sqrt(ratio(m)) > eps:
                break
            m = math.floor(m / 2)
        if not m >= 1:
            return None
        ch = cycle(s * math.sqrt(ratio(0.5 * m)))
        if ch is None:
            return None
        dt = m * (c0[0] + 4.0 * ch[0] + cm[0]) / 6.0
        t_out = m * (c0[1] + 4.0 * ch[1] + cm[1]) / 6.0
        sm = s * math.sqrt(ratio(m))
    friction = mu * slide * direction * (t_out - (dt - t_out))
    impulse = mu * (g * dt - direction * (sm - s)) - friction
    return dt, sm, impulse, m


def _rigid_hold(stop, mu, g, p):
    """Does a rigid stop hold with the internal force mu*g? (documented separation thresholds)"""
    fi = mu * g
    if stop == STOP1:
        return fi > -p.eps_Fi
    if stop == STOP2:
        return fi < p.eps_Fi
    return True


def _stop_force(stop, x, w, p):
    if p.mode == RIGID:
        return 0.0
    fs, fd = elastic_forces(stop, x, w, p)
    return fs + fd


def _settle(stop, sf, x, w, mu, g, p):
    """Instantaneous transitions at the present state (no time passes)."""
    if p.mode == RIGID:
        if p.preloaded:
            stop = BOTH
        elif stop in (STOP1, STOP2) and not _rigid_hold(stop, mu, g, p):
            stop = FREE
    else:
        stop = elastic_transition(stop, x, w, p)
    if p.friction and p.kindF == STICK_SLIP:
        if p.mode == RIGID and stop != FREE:
            sf = 0
        elif w > 0.0:
            sf = 1
        elif w < 0.0:
            sf = -1
        else:
            need = mu * g - _stop_force(stop, x, w, p)   # what friction must hold to keep dv = 0
            sf = 0 if abs(need) <= p.Fst else (1 if need > 0.0 else -1)
    return stop, sf


def _piece(stop, sf, x, w, mu, g, damp, p):
    """Piece of motion and guards (alpha, beta, level, inside, event) of the state; g includes the
    held part of a continuous friction force, damp its linearized damping."""
    l1, l2 = p.l1, p.l2
    if p.friction and p.kindF == STICK_SLIP:
        if sf == 0:
            return Piece(x, 0.0, mu, 0.0), []                   # stuck: dv = 0 while g is held
        g = g - p.Fsl * sf / mu
    if p.mode == RIGID and stop != FREE:
        return Piece(x, 0.0, mu, 0.0), []                       # rigid connection: dv = 0
    guards = []
    if p.friction and p.kindF == STICK_SLIP:
        guards.append((0.0, 1.0, 0.0, sf, "stick"))             # sliding ends when dv reaches 0
    if p.mode == RIGID:
        return Piece(x, w, mu, g, 0.0, damp), guards + [(1.0, 0.0, l1, -1, "hit1"), (1.0, 0.0, -l2, 1, "hit2")]
    if p.preloaded:                                             # engaged sides by position (l1 < -l2)
        one, two = x >= l1, x <= -l2
        c = (p.k1 if one else 0.0) + (p.k2 if two else 0.0)
        d = (p.b1 if one else 0.0) + (p.b2 if two else 0.0) + damp
        xe = ((p.k1 * l1 if one else 0.0) - (p.k2 * l2 if two else 0.0)) / c if c > 0.0 else 0.0
        guards += [(1.0, 0.0, l1, 1 if one else -1, "region"), (1.0, 0.0, -l2, -1 if two else 1, "region")]
        return Piece(x, w, mu, g, c, d, xe), guards
    if stop == STOP1:                                           # leaves when Fstop = k1*(x - l1) + b1*w < 0
        return Piece(x, w, mu, g, p.k1, p.b1 + damp, l1), guards + [(p.k1, p.b1, p.k1 * l1, 1, "release")]
    if stop == STOP2:                                           # leaves when Fstop = k2*(x + l2) + b2*w > 0
        return Piece(x, w, mu, g, p.k2, p.b2 + damp, -l2), guards + [(p.k2, p.b2, -p.k2 * l2, -1, "release")]
    piece = Piece(x, w, mu, g, 0.0, damp)
    if stop == FREE:
        guards += [(1.0, 0.0, l1, -1, "enter1"), (1.0, 0.0, -l2, 1, "enter2")]
    elif stop == DETACH1:
        guards += [(1.0, 0.0, l1, 1, "passed"), (0.0, 1.0, 0.0, -1, "again")]
    elif stop == DETACH2:
        guards += [(1.0, 0.0, -l2, -1, "passed"), (0.0, 1.0, 0.0, 1, "again")]
    return piece, guards


def _event(event, stop, sf, x, w, mu, p, pred, t):
    """Apply a located event; returns (stop, sf, x, w)."""
    if event in ("hit1", "hit2"):
        side = STOP1 if event == "hit1" else STOP2
        after = -p.restitution * w
        if abs(after) <= p.eps_dv:
            after, stop = 0.0, side
        pred.impulse += mu * (w - after)
        pred.impacts += 1
        if pred.onset is None:
            pred.onset = t
        return stop, sf, (p.l1 if side == STOP1 else -p.l2), after
    if event == "stick":
        return stop, 0, x, 0.0
    if event == "enter1":
        return STOP1, sf, x, w
    if event == "enter2":
        return STOP2, sf, x, w
    if event == "release":
        if stop == STOP1:
            return (DETACH1 if x > p.l1 else FREE), sf, x, w
        return (DETACH2 if x < -p.l2 else FREE), sf, x, w
    if event == "passed":
        return FREE, sf, x, w
    if event == "again":
        return (STOP1 if stop == DETACH1 else STOP2), sf, x, w
    return stop, sf, x, w   # "region" of a preloaded element: _settle recomputes the engaged sides
