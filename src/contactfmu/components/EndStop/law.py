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
       mu*g; breaks away beyond Fst, and sliding starts at the break-away instant. With Fst < Fsl
       (not documented) a body pushed by Fst < |mu*g| <= Fsl would slide against a friction
       larger than its push and stop again at once: it stays stuck (Filippov's sticking
       condition), up to holding_force(p) = max(Fst, Fsl).

Modules of the element: this one, the documented law (parameters, forces, states and their
transitions); prediction.py, the relative motion under it in closed form; bounces.py, the bounce
series and rattles of a rigid stop summed in closed form; friction.py, continuous friction as
velocity bands and the bounces under it.
"""

import math

RIGID, ELASTIC = 1, 2
PLASTIC, ELASTIC_IMPACT, BY_COEFFICIENT = 1, 2, 3
CONTINUOUS, STICK_SLIP = 1, 2
GEVREY, TANH = 1, 2
FREE, STOP1, STOP2, DETACH1, DETACH2, BOTH = 0, 1, 2, 11, 21, 3


class Parameters:
    """Parameters of the element (names as documented) plus the co-simulation inertias m1, m2."""

    def __init__(
        self,
        l1=0.01,
        l2=0.01,
        mode=ELASTIC,
        kind=BY_COEFFICIENT,
        ci=0.8,
        k1=1e6,
        k2=1e6,
        b1=100.0,
        b2=100.0,
        friction=False,
        kindF=CONTINUOUS,
        Fst=10.0,
        Fsl=8.0,
        dvL=1e-3,
        eps_Fi=1e-6,
        eps_dv=1e-4,
        dFfrel=1e-3,
        eps_dvsl=1e-6,
        eps_dI=1e-8,
        kindTrans=GEVREY,
        eps_sigma=1.0,
        eps_tau=0.1,
    ):
        self.l1, self.l2, self.mode, self.kind, self.ci = l1, l2, mode, kind, ci
        self.k1, self.k2, self.b1, self.b2 = k1, k2, b1, b2
        self.friction, self.kindF, self.Fst, self.Fsl, self.dvL = friction, kindF, Fst, Fsl, dvL
        self.eps_Fi, self.eps_dv, self.dFfrel, self.eps_dvsl, self.eps_dI = (
            eps_Fi,
            eps_dv,
            dFfrel,
            eps_dvsl,
            eps_dI,
        )
        self.kindTrans, self.eps_sigma, self.eps_tau = kindTrans, eps_sigma, eps_tau

    @property
    def restitution(self):
        """ci of the kind of impact: plastic 0, elastic 1, else the given coefficient."""
        return {PLASTIC: 0.0, ELASTIC_IMPACT: 1.0}.get(self.kind, self.ci)

    @property
    def preloaded(self):
        return self.l1 + self.l2 < 0.0


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


def continuous_friction_slope(dv, p):
    """dFf/d(dv) of the continuous model (central difference; used only for its damping part)."""
    step = 1e-6 * p.dvL
    return (continuous_friction(dv + step, p) - continuous_friction(dv - step, p)) / (2.0 * step)


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


def absent(side, p):
    """Is this side (STOP1 or STOP2) of an elastic end stop without stiffness and damping (k = b
    = 0)? It transmits no force in any state, so it is left out: no contact state, no events (in
    its documented states its zero force would release it at once and enter it again, state
    changes without end)."""
    return (p.k1, p.b1) == (0.0, 0.0) if side == STOP1 else (p.k2, p.b2) == (0.0, 0.0)


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
            if dx >= p.l1 and not absent(STOP1, p):
                new = STOP1
            elif dx <= -p.l2 and not absent(STOP2, p):
                new = STOP2
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


def transmits(stop, p):
    """Does the element transmit a force in this state (a contact, or friction)?"""
    return p.friction or stop in (STOP1, STOP2, BOTH)


def _rigid_hold(stop, mu, g, p):
    """Does a rigid stop hold with the internal force mu*g? (documented separation thresholds)"""
    fi = mu * g
    if stop == STOP1:
        return fi > -p.eps_Fi
    if stop == STOP2:
        return fi < p.eps_Fi
    return True


def stop_force(stop, x, w, p):
    if p.mode == RIGID:
        return 0.0
    fs, fd = elastic_forces(stop, x, w, p)
    return fs + fd


def holding_force(p):
    """The largest force stuck stick-slip friction holds: Fst, or Fsl when Fst < Fsl (a sliding
    start against a friction larger than the push ends in zero time)."""
    return max(p.Fst, p.Fsl)


def settle(stop, sf, x, w, mu, g, p):
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
            need = mu * g - stop_force(stop, x, w, p)  # what friction must hold to keep dv = 0
            sf = 0 if abs(need) <= holding_force(p) else (1 if need > 0.0 else -1)
    return stop, sf


def results(stop, sf, x, w, need, p):
    """The documented results (stop, sf, Fs, Fd, Ff, Fstop, Fi) of the motion (x, w) in state (stop,
    sf); need = mu*g, the force a rigid connection carries. Fi = Fstop + Ff; with continuous friction
    sf = sign(dv); a stuck stick-slip friction (sf = 0) carries need - Fs - Fd within +-holding_force(p); a
    rigid stop in contact carries need - Ff."""
    if p.friction and p.kindF == CONTINUOUS:
        sf = (w > 0.0) - (w < 0.0)
    fs, fd = elastic_forces(stop, x, w, p) if p.mode == ELASTIC else (0.0, 0.0)
    ff = 0.0
    if p.friction:
        if p.kindF == CONTINUOUS:
            ff = continuous_friction(w, p)
        elif sf:
            ff = p.Fsl * sf
        elif not (p.mode == RIGID and stop != FREE):
            hold = holding_force(p)
            ff = max(-hold, min(hold, need - fs - fd))
    if p.mode == RIGID:
        fstop = need - ff if stop != FREE else 0.0
    else:
        fstop = fs + fd
    return stop, sf, fs, fd, ff, fstop, fstop + ff


def force_rate(stop, dx, dv, da, p):
    """dFi/dt of the elastic end stop in state `stop` (held) at the motion (dx, dv) with d(dv)/dt = da:
    k*dv + b*da for each engaged side, plus dFf/d(dv)*da of continuous friction."""
    rate = 0.0
    if stop in (STOP1, BOTH) and dx >= p.l1:
        rate += p.k1 * dv + p.b1 * da
    if stop in (STOP2, BOTH) and dx <= -p.l2:
        rate += p.k2 * dv + p.b2 * da
    if p.friction:
        rate += continuous_friction_slope(dv, p) * da
    return rate


class Prediction:
    """Result of prediction.predict(): states at the requested times, plus what happened (defined
    here, beside the states it records, for the bounce summations that count into it as well)."""

    def __init__(self):
        self.states = []  # (dx, dv, stop, sf) at the requested times
        self.onset = None  # first time the element transmits a force (0: at once; None: never)
        self.impulse = 0.0  # sum of the impact impulses of Fi (N.s), up to the last time
        self.impacts = 0
        self.changes = 0
        # documented state changes (contact, release, stick, breakaway, impacts; not the friction's
        # velocity bands): the events an FMU reports
        self.events = 0
        self.flights = 0  # bounces with continuous friction solved one by one (friction_bounces)
