"""Relative motion of two bodies joined by a piecewise linear contact, solved in closed form.

A compliant contact element between two bodies of masses m_a and m_b sees their relative
coordinate x = s_b - s_a (velocity w). With the reduced mass mu = m_a*m_b/(m_a + m_b) (a fixed
body has infinite mass: mu = the other mass) and a relative acceleration g caused by all other
forces, taken constant over a short horizon, each contact region is a linear oscillator

    mu*x'' = mu*g - c*(x - xe) - d*x'        (c, d >= 0; c = d = 0: free flight)

which :class:`Piece` solves exactly, including the extremely stiff and overdamped cases
(c = d = 1e10 against 1 kg: time constants 1e-10 s and 1 s) where any explicit integrator fails.
:func:`first_crossing` locates the first time a linear function alpha*x + beta*w of the motion
leaves a region: it splits the horizon at the turning points of that function (known in closed
form), so the function is monotone on each part and the search cannot miss a crossing.

:func:`deadbeat_acceleration` is the coupling rule used by the contact FMUs: the constant
relative acceleration over the next communication step after which a held acceleration over the
step that follows brings the bodies exactly to a target state two steps ahead.

Standard library only: this module runs inside the FMUs.
"""

import itertools
import math
import struct


class EventStorm(ArithmeticError):
    """A prediction met more contact or state changes than it simulates one by one, in a motion
    that none of its closed-form summations covers: the step's outputs cannot be computed (the FMU
    reports it as fmi2Error naming the inputs, like an overflow), not an internal error."""


def phi1(z):
    """(1 - exp(-z))/z, 1 at z = 0: the velocity of a linear damper's motion is w0 + (g - k*w0)*t*phi1(k*t)."""
    return -math.expm1(-z) / z if z != 0.0 else 1.0


def phi2(z):
    """(z - 1 + exp(-z))/z^2 = sum_n (-z)^n/(n + 2)!, 1/2 at z = 0: the displacement of a linear
    damper's motion is w0*t*phi1(k*t) + g*t^2*phi2(k*t) (no cancellation however small k*t)."""
    if abs(z) < 0.5:
        total, term = 0.0, 0.5
        for n in range(16):
            total += term
            term *= -z / (n + 3)
        return total
    return (z + math.expm1(-z)) / (z * z)


class Piece:
    """mu*x'' = mu*g - c*(x - xe) - d*x' from (x0, w0) at t = 0."""

    __slots__ = (
        "x0",
        "w0",
        "g",
        "c",
        "d",
        "xe",
        "mu",
        "kind",
        "xp",
        "s2",
        "w02",
        "r1",
        "r2",
        "dr",
        "om",
        "k",
        "winf",
        "growing",
    )

    def __init__(self, x0, w0, mu, g, c=0.0, d=0.0, xe=0.0):
        self.x0, self.w0, self.mu, self.g, self.c, self.d, self.xe = x0, w0, mu, g, c, d, xe
        self.growing = d < 0.0
        if c > 0.0:
            self.xp = xe + mu * g / c  # equilibrium under the held acceleration g
            self.s2 = d / mu  # 2*sigma
            self.w02 = c / mu  # omega0^2
            sigma = 0.5 * self.s2
            disc = sigma * sigma - self.w02
            if disc > 0.0:  # overdamped: r1 fast, r2 slow (stable forms)
                root = math.sqrt(disc)
                self.kind = "over"
                self.r1 = -sigma - root
                self.r2 = self.w02 / self.r1
                self.dr = -2.0 * root  # r1 - r2
            elif disc < 0.0:
                self.kind = "under"
                self.om = math.sqrt(-disc)
            else:
                self.kind = "critical"
        elif d != 0.0:  # (d < 0: a falling friction characteristic's band)
            self.kind = "damper"
            self.k = d / mu
            self.winf = g / self.k
        else:
            self.kind = "free"

    # -- fundamental solution of y'' + 2*sigma*y' + omega0^2*y = 0 with y(0) = 0, y'(0) = 1 --
    def _phi1(self, t):
        """(phi1, phi1')."""
        if self.kind == "over":
            e2 = math.exp(self.r2 * t)
            z = self.dr * t
            ratio = math.expm1(z) / self.dr if z != 0.0 else t
            return e2 * ratio, self.r2 * e2 * ratio + math.exp(self.r1 * t)
        sigma = 0.5 * self.s2
        decay = math.exp(-sigma * t)
        if self.kind == "under":
            sn, cs = math.sin(self.om * t), math.cos(self.om * t)
            return decay * sn / self.om, decay * (cs - sigma * sn / self.om)
        return t * decay, decay * (1.0 - sigma * t)

    def state(self, t):
        """(x, w) at time t; (nan, nan) where a growing solution (negative damping, d < 0) overflows
        (its terms may then cancel to any value: nan is outside every region, see first_crossing)."""
        if not self.growing:
            return self._state(t)
        try:
            x, w = self._state(t)
        except OverflowError:
            return math.nan, math.nan
        if math.isinf(x) or math.isinf(w):
            return math.nan, math.nan
        return x, w

    def _state(self, t):
        kind = self.kind
        if kind == "free":
            return self.x0 + t * (self.w0 + 0.5 * self.g * t), self.w0 + self.g * t
        if kind == "damper":
            # w = winf + dw*exp(-k t) written as w0 + dw*expm1(-k t): no cancellation of winf when
            # |winf| >> |w| (a falling friction band under a huge force: winf = 16 m/s at w = -6.8e-5
            # m/s rounded w(0+) across a band end 1e-15 m/s away, and the motion chattered there)
            # and x = x0 + w0*t*phi1(k t) + g*t^2*phi2(k t): no cancellation of winf*t against the
            # exponential's integral (which lost 1e-4 of the displacement in a band of slope 1e-3)
            dw = self.w0 - self.winf
            e = math.expm1(-self.k * t)
            kt = self.k * t
            return self.x0 + t * (self.w0 * phi1(kt) + self.g * t * phi2(kt)), self.w0 + dw * e
        p1, dp1 = self._phi1(t)
        p0 = dp1 + self.s2 * p1
        y0 = self.x0 - self.xp
        return self.xp + y0 * p0 + self.w0 * p1, -self.w02 * y0 * p1 + self.w0 * dp1

    def acceleration(self, x, w):
        return self.g - (self.c * (x - self.xe) + self.d * w) / self.mu

    def turning_points(self, alpha, beta, horizon):
        """Times in (0, horizon) where d/dt(alpha*x + beta*w) = 0, ascending."""
        a0 = self.acceleration(self.x0, self.w0)
        j0 = -(self.c * self.w0 + self.d * a0) / self.mu  # da/dt
        f1 = alpha * self.w0 + beta * a0  # first derivative at 0
        f2 = alpha * a0 + beta * j0  # second derivative at 0
        kind, times = self.kind, []
        if kind == "free":
            if f2 != 0.0:
                times.append(-f1 / f2)
        elif kind == "damper":
            # f' = alpha*winf + (alpha - beta*k)*(w0 - winf)*exp(-k t)
            den = (alpha - beta * self.k) * (self.w0 - self.winf)
            if den != 0.0:
                ratio = -alpha * self.winf / den
                if ratio > 0.0:  # (k < 0: a growing exponential, ratio > 1)
                    times.append(-math.log(ratio) / self.k)
        elif kind == "over":
            # f' = P exp(r1 t) + Q exp(r2 t)
            big_p = (f2 - self.r2 * f1) / self.dr
            big_q = f1 - big_p
            if big_p != 0.0 and -big_q / big_p > 0.0:
                times.append(math.log(-big_q / big_p) / self.dr)
        elif kind == "critical":
            # f' = (C + D t) exp(-sigma t)
            big_d = f2 + 0.5 * self.s2 * f1
            if big_d != 0.0:
                times.append(-f1 / big_d)
        else:
            # f' = exp(-sigma t)*(C cos(om t) + D sin(om t))
            big_d = (f2 + 0.5 * self.s2 * f1) / self.om
            theta = math.atan2(-f1, big_d) % math.pi
            period = math.pi / self.om
            return _periodic(theta / self.om, period, horizon)
        return [t for t in times if 0.0 < t < horizon]


def _periodic(first, period, horizon):
    """first, first + period, ... in (0, horizon), lazily: a fast oscillation has millions of
    turning points over a long horizon, and a crossing is usually found within the first few."""
    k = 0
    while True:
        t = first + k * period
        if not t < horizon:
            return
        if t > 0.0:
            yield t
        k += 1


def _bits(t):
    return struct.unpack("<q", struct.pack("<d", t))[0]


def _float(i):
    return struct.unpack("<d", struct.pack("<q", i))[0]


def first_crossing(piece, alpha, beta, level, inside, horizon):
    """First time in (0, horizon] at which inside*(alpha*x + beta*w - level) < 0, i.e. the motion
    leaves the region where that expression is >= 0 (inside = +1) or <= 0 (inside = -1); None if it
    stays. The returned time is the earliest computed instant strictly outside (the crossing to
    to within one float)."""
    found = earliest_crossing(piece, [(alpha, beta, level, inside)], horizon)
    return None if found is None else found[0]


def _signed(piece, alpha, beta, level, inside):
    """f(t) = inside*(alpha*x + beta*w - level) of the motion at t: the region is f >= 0, so the
    motion is outside where not f(t) >= 0 (nan, a motion that overflowed, counts as outside)."""

    def f(t):
        _work[0] += 1
        x, w = piece.state(t)
        return inside * ((alpha * x if alpha else 0.0) + (beta * w if beta else 0.0) - level)

    return f


def _bracket(piece, f, alpha, beta, horizon):
    """(lo, hi, f(hi)): the part of (0, horizon] between two turning points of alpha*x + beta*w
    (monotone there) in which the motion first leaves the region (f(lo) >= 0, not f(hi) >= 0);
    None if it stays. A fast oscillation over a long horizon has more turning points than
    MAX_WORK: EventStorm after that many (the prediction's budget, see bound_work)."""
    lo, start = 0.0, budget_start()
    for hi in itertools.chain(piece.turning_points(alpha, beta, horizon), (horizon,)):
        bound_work(start, f"contact prediction over {horizon} s")
        fhi = f(hi)
        if not fhi >= 0.0:
            return lo, hi, fhi
        lo = hi
    return None


def _locate(f, lo, hi, fhi):
    """The earliest float in (lo, hi] at which not f >= 0, f being monotone on [lo, hi] with
    f(lo) >= 0 and not f(hi) >= 0: the float that halving the binary representation of the times
    reaches, in fewer evaluations. Each probe keeps that bracket, so any probe order ends on the
    same float:
    - false position with the Anderson-Bjorck weighting of an end retained twice;
    - f(lo) = 0 exactly (the rounding plateau at the boundary): probes 1, 2, 4, ... floats past lo
      until one is outside;
    - a halving, in time and every third one in bits (a crossing at 1e-200 s in a horizon of 1 s
      is reached in at most 3*64 of them), where false position is not defined (nan) or has not
      halved the bracket, in time or in bits, over three probes."""
    flo = f(lo)
    ilo, ihi = _bits(lo), _bits(hi)
    retained, halvings, stride = 0, 0, 1
    marks = [(ihi - ilo, hi - lo)] * 3  # the bracket three probes ago
    while ihi - ilo > 1:
        bits, width = ihi - ilo, hi - lo
        stalled = bits > marks[0][0] // 2 and width > 0.5 * marks[0][1]
        it = None
        if flo == 0.0 and lo > 0.0 and stride:
            it = ilo + stride
            stride *= 2
        elif not stalled and flo > fhi and math.isfinite(flo - fhi):
            t = lo + width * (flo / (flo - fhi))
            it = _bits(t) if t > 0.0 else None
        if it is None or not ilo < it < ihi:
            halvings += 1
            it = _bits(lo + 0.5 * width) if halvings % 3 else (ilo + ihi) // 2
            if not ilo < it < ihi:
                it = (ilo + ihi) // 2
            marks = [(bits, width)] * 3
        else:
            marks = marks[1:] + [(bits, width)]
        t = _float(it)
        ft = f(t)
        if ft >= 0.0:
            if retained == 1:  # Anderson-Bjorck: scale the far end's value
                ratio = 1.0 - ft / flo if flo > 0.0 else 0.0
                fhi *= ratio if ratio > 0.0 else 0.5
            ilo, lo, flo, retained = it, t, ft, 1
        else:
            if retained == -1 and math.isfinite(ft) and fhi < 0.0:
                ratio = 1.0 - ft / fhi
                flo *= ratio if ratio > 0.0 else 0.5
            ihi, hi, fhi, retained = it, t, ft, -1
            if flo == 0.0:
                stride = 0  # past the plateau's end: halvings from here
    return _float(ihi)


def earliest_crossing(piece, guards, horizon):
    """(time, index) of the guard (alpha, beta, level, inside, ...: further entries, such as the
    event a caller names it by, are ignored) whose region the motion leaves first
    (first_crossing of each; a tie goes to the earlier guard); None if it leaves none.

    Only the guard whose bracket ends first is located (_locate); another is located only if the
    motion is already outside it at that crossing (its function is monotone over its bracket:
    outside at tc exactly when its own crossing is at or before tc), one evaluation otherwise. An
    elastic contact under continuous friction crosses a friction band at every segment: this
    locates one crossing per segment, not one per guard."""
    brackets = []
    for index, (alpha, beta, level, inside, *_) in enumerate(guards):
        f = _signed(piece, alpha, beta, level, inside)
        bracket = _bracket(piece, f, alpha, beta, horizon)
        if bracket is not None:
            lo, hi, fhi = bracket
            brackets.append((hi, index, lo, fhi, f))
    if not brackets:
        return None
    brackets.sort(key=lambda b: (b[0], b[1]))
    hi, index, lo, fhi, f = brackets[0]
    best = (_locate(f, lo, hi, fhi), index)
    for _, index, lo, _, f in brackets[1:]:
        tc = best[0]
        if lo < tc:
            ftc = f(tc)
            if not ftc >= 0.0:
                best = min(best, (_locate(f, lo, tc, ftc), index))
    return best


def first_change(changed, start, ends):
    """The earliest float time after `start` at which changed(t) is true, changed(start) being
    false: the ends of the stretches (ascending, the last one the horizon) are tried in turn and
    the change is located (_locate) in the first stretch whose end shows it; None if none does.
    Exact where changed() is monotone within each stretch (a count of changes, or a region of a
    motion monotone between the ends)."""
    lo = start
    for hi in ends:
        if hi > lo and changed(hi):
            return _locate(lambda t: -1.0 if changed(t) else 1.0, lo, hi, -1.0)
        lo = max(lo, hi)
    return None


def reduced_mass(m_a, m_b):
    """Reduced mass of two bodies; 0 stands for a fixed body (infinite mass). None if both are fixed."""
    inv = (1.0 / m_a if m_a > 0.0 else 0.0) + (1.0 / m_b if m_b > 0.0 else 0.0)
    return 1.0 / inv if inv > 0.0 else None


def stiffness_number(mu, h, c, d):
    """h times the fastest rate of a contact mu*x'' + d*x' + c*x (> 1: a step cannot resolve it)."""
    return h * max(d / mu, (c / mu) ** 0.5)


def planning_step(v_rel, last_v_rel, last_force, mu, last_h, default_h):
    """(h, g) an element plans the next step with: the size of the last step and the bodies' mean
    relative acceleration over it without this element's force (x'' = g - F/mu, F held); before
    any step, default_h and g = 0."""
    if last_h > 0.0:
        return last_h, (v_rel - last_v_rel) / last_h + last_force / mu
    return default_h, 0.0


def deadbeat_acceleration(x0, w0, x2, w2, h):
    """Constant acceleration over [0, h] such that, with a constant acceleration over [h, 2h]
    chosen next, the motion from (x0, w0) reaches (x2, w2) at 2h exactly.

    From x(2h) = x0 + 2h*w0 + 1.5*h^2*a1 + 0.5*h^2*a2 and w(2h) = w0 + h*(a1 + a2)."""
    return (x2 - x0 - 1.5 * h * w0 - 0.5 * h * w2) / (h * h)


def advance_shadow(shadow, h, predict, at_event=False):
    """The shadow one step of length h later, and the prediction that moved it.

    shadow: None or (x, w, free_steps, state): the law's relative motion, the number of steps it
    spent entirely without transmitting a force, and the law's discrete state (None if it has
    none). Returns (shadow, prediction); the shadow is None once it has been free for two steps
    (the bodies have caught up with it and the actual motion is the law's again). at_event: the
    step ended early at an event of the law (its region changes there): not a free step."""
    if shadow is None:
        return None, None
    prediction = predict(shadow[0], shadow[1], shadow[3], (h,))
    x, w, *rest = prediction[0][0]
    free = shadow[2] + 1 if prediction[1] is None and not at_event else 0
    return (None if free >= 2 else (x, w, free, rest[0] if rest else None)), prediction


def couple(x, w, mu, g, h, shadow, predict, stiff, state=None, pushes_only=False):
    """One communication point of the inertia-aware coupling of a contact element.

    x, w: the relative motion of the bodies now (inputs); mu: their reduced mass; g: their
    relative acceleration from all other forces (held over the step); h: the step.
    shadow: None, or (xs, ws, free_steps, state) (see advance_shadow), the law's own motion,
    integrated by the element since it last transmitted a force, which the bodies follow.
    state: the law's discrete state when there is no shadow.
    predict(x0, w0, state0, times) -> ([(x, w[, state]) at times], onset, changes, ...): the law's
    motion under g, the first time it transmits a force (None: never) and the number of changes.

    Returns (F, shadow): the force on the element's second body (x'' = g - F/mu) to hold over the
    step, and the shadow at this point.
    - No shadow and no force within 1.5 steps: F = 0, the element transmits nothing.
    - A force within 1.5 steps starts the shadow at the present motion: the law then runs in
      the element, exactly (closed form), and keeps the contact's history (penetrations of
      1e-10 m that decide whether a stiff stop holds a body or lets it go, or the state of a
      rigid stop), whatever small errors the bodies' sampled motion has.
    - While the shadow is free and about to hit, or the contact is too stiff for the step: F
      brings the bodies to the shadow's state two steps ahead (deadbeat, re-planned each step):
      the impact is spread over the steps around it and nothing is driven through the stop.
    - In a contact the step resolves, and after a release: F gives the bodies the shadow's
      velocity at the end of the step (impulse-consistent), so a rebound leaves with the law's
      velocity.
    - pushes_only (a law whose force is never > 0: it only pushes the bodies apart): where the
      plan above pulls, on this step or on the next one it plans, F is push_only_plan's.
    """
    if shadow is None:
        prediction = predict(x, w, state, (h, 2.0 * h))
        if prediction[1] is None or prediction[1] > 1.5 * h:
            return 0.0, None
        shadow = (x, w, 0, state)
    else:
        prediction = predict(shadow[0], shadow[1], shadow[3], (h, 2.0 * h))
    (x1, w1, *_), (x2, w2, *_) = prediction[0]
    onset = prediction[1]
    deadbeat = stiff or (onset is not None and onset > 0.0)
    if deadbeat:
        a = deadbeat_acceleration(x, w, x2, w2, h)
        noise = _EPS4 * (abs(x2) + abs(x) + 1.5 * h * abs(w) + 0.5 * h * abs(w2)) / (h * h)
    else:
        a = (w1 - w) / h
        noise = _EPS4 * (abs(w1) + abs(w)) / h
    # a force within the rounding of the velocity arithmetic is 0: a free motion (the law
    # transmits nothing) gives exactly 0, not +-1e-13 N (which a law that only pushes must never show)
    force = 0.0 if abs(g - a) <= noise + _EPS4 * abs(g) else mu * (g - a)
    if pushes_only and (force > 0.0 or (deadbeat and _pulls_next(w, w2, g, a, h, noise))):
        return push_only_plan(x, w, mu, g, h, shadow, predict), shadow
    return force, shadow


def _pulls_next(w, w2, g, a, h, noise):
    """Whether the two-step plan (acceleration a over the step, then (w2 - w)/h - a) pulls on its
    second step (F = mu*(g - a2) > 0 beyond the rounding of the velocity arithmetic)."""
    a2 = (w2 - w) / h - a
    return g - a2 > noise + _EPS4 * (abs(w2) + abs(w)) / h + _EPS4 * abs(g)


PLAN_STEPS = 8  # the longest plan (in steps) push_only_plan looks for


def push_only_plan(x, w, mu, g, h, shadow, predict):
    """The force F <= 0 to hold over the step for a law that never pulls, where the two-step plan
    of couple() pulls.

    Forces F_0 .. F_(N-1) held over the next N steps take the bodies from (x, w) to the shadow's
    state (xN, wN) at N*h exactly if and only if
        S = F_0 + ... + F_(N-1)                    = mu*(w + N*h*g - wN)/h
        M = sum (N - k - 1/2)*F_k                  = mu*(x + N*h*w + (N*h)^2*g/2 - xN)/h^2,
    the impulse and its moment about N*h. With every F_k <= 0 this needs S < 0 and the impulse's
    centre t_c = N - M/S (in steps from now) between the middles of the first and last steps,
    1/2 <= t_c <= N - 1/2; the remaining N - 1 steps can then still land the bodies exactly after
    F_0 if and only if (M - S/2)/(N - 1) <= F_0 <= M - (N - 3/2)*S. The two-step plan (N = 2) pulls
    on its first step where t_c > 3/2 (the law's push comes late in the two steps: a contact that
    starts in the second half of the step, its force rising), on its second where t_c < 1/2.

    For the shortest N <= PLAN_STEPS with such a plan, F is the law's mean force over the step on
    the shadow, moved into that range: the bodies land on the law's motion within N steps (each
    step re-plans), and receive the law's impulse. Without one, no force that only pushes brings
    the bodies back onto the law's motion: they are separating faster than it (S > 0 for every
    N: any push adds to that), or their push is overdue (t_c < 1/2: they went into the contact
    during a step that held less than the law's force, and a push on the later steps can match
    either the law's impulse or its moment, not both). F then gives the bodies the shadow's
    velocity at the end of the step if that is a push (the law's impulse: the rebound leaves with
    the law's velocity; the bodies stay off the law's motion by the position they gained), else 0
    (the law's motion catches up with the bodies' as it pushes, or the bodies leave faster than
    the law would send them)."""
    times = tuple(h * k for k in range(1, PLAN_STEPS + 1))
    states = predict(shadow[0], shadow[1], shadow[3], times)[0]
    mean = mu * (g - (states[0][1] - shadow[1]) / h)
    for n in range(2, PLAN_STEPS + 1):
        xn, wn = states[n - 1][:2]
        span = n * h
        total = mu * (w + span * g - wn) / h
        moment = mu * (x + span * (w + 0.5 * span * g) - xn) / (h * h)
        if not total < 0.0:
            continue
        lo, hi = (moment - 0.5 * total) / (n - 1), min(0.0, moment - (n - 1.5) * total)
        if total <= lo <= hi:
            return min(max(mean, lo), hi)
    a = (states[0][1] - w) / h
    noise = _EPS4 * (abs(states[0][1]) + abs(w)) / h + _EPS4 * abs(g)
    return mu * (g - a) if g - a < -noise else 0.0


_EPS4 = 4.0 * 2.0**-52


MAX_SEGMENTS = 10000  # segments simulated one by one (cycle skipping keeps a rattle far below this)
# motion evaluations of the event location (first_crossing) per prediction (or per work_budget):
# a prediction that needs more is an EventStorm. 1e6 of them took 1.08 to 1.40 s of CPU on the
# 2-core machine (EndStop's overflowing elastic contact, 1000 turning points per bracket), beyond
# doStep's bound of 1 s + h; 5e5 took 0.6 s there, but 1.17 to 1.33 s on the loaded machine
# (TranslationalHardstop, c = 7.4e11, a flange at 1e300 m/s: the nightly property profile, seed 2);
# 2e5 keeps a storm below 0.55 s even there
MAX_WORK = 200_000
_work = [0]  # motion evaluations by first_crossing so far (in this process)


def work():
    """Motion evaluations done by first_crossing so far (a deterministic measure of a prediction's
    cost: bound_work() compares it with MAX_WORK)."""
    return _work[0]


_budget = [None]  # work() when the present budget began (work_budget), None: one per prediction


def budget_start():
    """Where a prediction's count of motion evaluations starts: the present budget's start
    (work_budget), else now."""
    return _work[0] if _budget[0] is None else _budget[0]


class work_budget:
    """``with work_budget():`` the predictions inside share one MAX_WORK (the several predictions
    of one communication point: a storm is one EventStorm after MAX_WORK evaluations in all, not
    MAX_WORK per prediction)."""

    def __enter__(self):
        self.outer = _budget[0]
        if self.outer is None:
            _budget[0] = _work[0]

    def __exit__(self, *exc):
        _budget[0] = self.outer


def bound_work(start, what):
    """Raise EventStorm if more than MAX_WORK motion evaluations were spent since work() was start."""
    if _work[0] - start > MAX_WORK:
        raise EventStorm(
            f"{what} did not finish: more than {MAX_WORK} motion evaluations to locate its events"
        )


EXACT_CHANGES = 2000  # contact changes simulated exactly before a rattle under g != 0 is followed by its envelope
ENVELOPE_STEP = 0.02  # largest relative change of the rattle's speed per envelope skip (g != 0)
# a cycle's speed ratio this close to 1 is 1 (an undamped law, measured to rounding)
_UNDAMPED = 1e-12
_SAME = 1e-8  # two cycles agree: their ratio, contact time and flight measure to this relative tolerance


def follow(x, w, mu, g, times, classify, law, exact=False):
    """Motion of a piecewise linear contact law under the held acceleration g, at the ascending
    times: ([(x, w) at each time], onset, changes), onset being the first time the law transmits a
    force (0 if at the start, None if not up to the last time), changes the number of region changes.

    classify(x, w) -> region; law(region) -> (c, d, xe, exits, transmits): the region's linear law
    (F = c*(x - xe) + d*w) and the linear conditions (alpha, beta, level, inside) whose violation
    (first_crossing) ends it; the next region is classify() of the state just past the crossing.

    A rattle (the motion leaving a contact the same way again and again through the same
    sequence of regions) is not simulated bounce by bounce up to the next requested time:
    - g = 0 (no other force): each contact phase is the last one scaled (a linear law about its
      boundary: the same contact time, the exit speed times a fixed ratio) and each free flight
      across the gap takes (distance)/|w|. Once two consecutive cycles show that (ratio, contact
      time and speed*flight time equal to rounding), whole cycles are summed as a geometric series
      (_skip_exact) up to the last complete one before the next requested time: the state after
      them is the measured exit state with the speed scaled, exact to rounding.
    - g != 0: a cycle is no longer the last one scaled; after EXACT_CHANGES changes simulated
      exactly, the rattle is followed by its envelope (_skip_envelope): the cycle map measured over
      two cycles (speed ratio, duration as a power of the speed), extrapolated over as many cycles
      as change the speed by at most ENVELOPE_STEP, then measured again. An approximation (of
      the phase of a storm of thousands of contacts), bounded in time.
    exact=True: event by event throughout (the reference the tests compare the skipping with)."""
    if not math.isfinite(x + w + g):  # overflowed inputs: non-finite results, reported by the FMU
        return [(math.nan, math.nan)] * len(times), 0.0, 0
    out, onset, changes, t, k = [], None, 0, 0.0, 0
    region = classify(x, w)
    history = []  # regions of the segments, in order
    records = []  # exits from contacts: (key, t, x, w, changes, len(history), contact, free)
    contact_time = free_time = 0.0  # summed durations of transmitting / non-transmitting segments
    start = budget_start()
    for _ in range(MAX_SEGMENTS):
        bound_work(start, f"contact prediction over {times[-1]} s")
        c, d, xe, exits, transmits = law(region)
        if transmits and onset is None:
            onset = t
        piece = Piece(x, w, mu, g, c, d, xe)
        crossing = earliest_crossing(piece, exits, times[-1] - t)
        tc = None if crossing is None else crossing[0]
        while k < len(times) and (tc is None or times[k] - t < tc):
            out.append(piece.state(times[k] - t))
            k += 1
        if tc is None:
            return out, onset, changes
        x, w = piece.state(tc)
        if not math.isfinite(x + w):
            # the motion overflowed (a penetration near the largest float): no motion to follow,
            # non-finite results from here on, as for non-finite inputs above (it used to go on
            # through nan segments of 5e-324 s until an EventStorm after MAX_WORK evaluations)
            out += [(math.nan, math.nan)] * (len(times) - k)
            return out, (t if onset is None else onset), changes
        t += tc
        history.append(region)
        if transmits:
            contact_time += tc
        else:
            free_time += tc
        previous, region = region, classify(x, w)
        changes += 1
        if exact or not transmits or law(region)[4]:
            continue
        # left a contact: a point of the cycle map
        records.append(
            ((previous, region, w > 0.0), t, x, w, changes, len(history), contact_time, free_time)
        )
        skip = _cycles(records, history, g, times[k] - t, changes)
        if skip is not None:
            dt, factor, more = skip
            t += dt
            w *= factor
            changes += more
            records = [records[-1][:1] + (t, x, w, changes) + records[-1][5:]]
    raise EventStorm(
        f"contact prediction did not finish: more than {MAX_SEGMENTS} contact changes "
        f"within {times[-1]} s"
    )


def _cycles(records, history, g, span, changes):
    """Cycle skipping at the exit from a contact just recorded (records[-1]): None, or (dt, factor,
    changes) of the whole cycles skipped (their duration, the factor on the exit velocity, their
    contact changes), ending at least one cycle before span (the time to the next requested time)."""
    del records[:-16]
    key = records[-1][0]
    same = [r for r in records if r[0] == key][-3:]
    if len(same) < 3:
        return None
    r0, r1, r2 = same
    if history[r0[5] : r1[5]] != history[r1[5] : r2[5]]:
        return None  # not the same sequence of regions
    u0, u1, u2 = abs(r0[3]), abs(r1[3]), abs(r2[3])
    if not (u0 > 0.0 and u1 > 0.0 and u2 > 0.0):
        return None
    cycle_changes = r2[4] - r1[4]
    # per cycle: duration, time in contact, free time (of cycle 0 and cycle 1)
    tau0, tau1 = r1[1] - r0[1], r2[1] - r1[1]
    c0, c1 = r1[6] - r0[6], r2[6] - r1[6]
    f0, f1 = r1[7] - r0[7], r2[7] - r1[7]
    rho0, rho1 = u1 / u0, u2 / u1
    # undamped (d = 0): the speed returns to rounding; exactly periodic
    rho0, rho1 = (
        (1.0 if abs(rho0 - 1.0) <= _UNDAMPED else rho0),
        (1.0 if abs(rho1 - 1.0) <= _UNDAMPED else rho1),
    )
    if g == 0.0:
        if not (_close(rho0, rho1) and _close(c0, c1) and _close(f0 * u0, f1 * u1)):
            return None
        return _skip_exact(u2, rho1, c1, f1 * u1, span, cycle_changes)
    if changes < EXACT_CHANGES:
        return None
    return _skip_envelope(u1, rho0, rho1, tau0, tau1, span, cycle_changes)


def _close(a, b):
    return abs(a - b) <= _SAME * max(abs(a), abs(b))


def _skip_exact(u, rho, contact, q, span, cycle_changes):
    """g = 0: from an exit at speed u, cycle j (j = 0, 1, ...) takes contact + q/(u*rho^j) and
    leaves at u*rho^(j+1). The largest number m of cycles with the duration S(m + 1) <= span."""
    if not 0.0 < rho <= 1.0:
        return None  # (a passive law never gains speed)

    def duration(m):
        if rho == 1.0:
            return m * (contact + q / u)
        return m * contact + q / u * _expm1(-m * math.log(rho)) / _expm1(
            -math.log(rho)
        )  # 1/rho - 1 without cancellation

    m = _largest(lambda m: duration(m + 1) <= span)
    if m < 1:
        return None
    return duration(m), rho**m, m * cycle_changes


def _skip_envelope(u, rho0, rho1, tau0, tau1, span, cycle_changes):
    """g != 0: the envelope of the rattle. From the exit at speed u*rho1 (cycles 0 and 1 measured
    from u/rho0 and u), cycle j leaves at u*rho1^(j+2) and takes tau1*q^(j+1), q = rho1^p with the
    duration's power p of the speed fitted to the two cycles; at most as many cycles as change the
    speed by ENVELOPE_STEP, and S(m + 1) <= span. Undamped (rho = 1, the same duration twice): the
    motion is periodic, and the whole periods up to span are skipped."""
    if not (0.0 < rho1 <= 1.0 and 0.0 < rho0 and tau0 > 0.0 and tau1 > 0.0):
        return None
    if rho1 == 1.0:
        if rho0 != 1.0 or not _close(tau0, tau1):
            return None
        q = 1.0  # undamped: a periodic motion
    else:
        if abs(rho1 - rho0) > 0.1 * abs(1.0 - rho1) or rho0 == 1.0:
            return None  # the ratio drifts: not a smooth envelope yet
        q = rho1 ** (math.log(tau1 / tau0) / math.log(rho0))

    def duration(m):
        if q == 1.0:
            return m * tau1 * q
        return tau1 * q * _expm1(m * math.log(q)) / (q - 1.0)

    m = _largest(lambda m: duration(m + 1) <= span)
    if rho1 != 1.0:
        m = min(m, max(1, int(math.log1p(ENVELOPE_STEP) / abs(math.log(rho1)))))
    if m < 1:
        return None
    return duration(m), rho1**m, m * cycle_changes


def _expm1(z):
    return math.expm1(z) if z < 700.0 else math.inf


def _largest(ok):
    """The largest integer m >= 0 with ok(m) (ok monotone: true up to some m), or 0; capped at 2**62."""
    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi < 2**62 and ok(hi):
        lo, hi = hi, hi * 2
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


class Coupler:
    """The element-side state of the inertia-aware coupling (see couple): the last step's size,
    the bodies' relative velocity at its start and the force they received over it (for
    planning_step), the law's shadow motion, and the bodies' relative motion at the end of the
    last step as the element models it.

    Any master. A Gauss-Seidel master (set inputs, read outputs, step) hands the element the
    bodies' motion of the present point before it reads the force; a Jacobi master (step, read
    outputs, set inputs: libcosim, ecos, an SSP run) reads the force right after the step, while
    the element still holds the inputs of the step's start. The element therefore plans from
    motion(): the inputs if they were set since the last step, else its own model of the bodies
    over that step (their motion at its start, moved by the force they received and the other
    forces' acceleration, held). And it commits the force the bodies actually received, the one
    the master read since the last step (else the one last computed), not one computed later for
    inputs set afterwards. Both masters then see the same forces: exact where the held
    accelerations are.

    predict(x, w, g, state, times) -> ([(x, w[, state])], onset, changes, ...); stiff(h) -> bool.

    A law with a discrete state that outlives its shadow (a friction's stick or slip, a stop's
    detaching phase) sets `state` to its initial state: force() then settles it at the present
    motion (its state at time 0 of a prediction) or takes the shadow's, plans with it and holds
    the result until commit(). After force(), `moved` is the prediction that moved the shadow to
    the present point (None: no shadow) and `pending_state` the law's state there. starts_late =
    False: commit() never starts a shadow for a contact the plan did not see (a law that decides
    the onset of contact by its state alone). pushes_only = True: a law whose force is never > 0
    (it only pushes the bodies apart); the held force is then never > 0 either (couple)."""

    pushes_only = False  # (also for a state saved before the attribute existed)
    plan_next = resume_h = 0.0

    def __init__(self, mu, default_h):
        self.mu, self.default_h = mu, default_h
        self.last_h = self.last_v = self.last_f = 0.0
        self.shadow = self.pending = None
        self.force_now = self.x_now = self.v_now = self.g_now = 0.0
        self.expected = None
        self.state = self.pending_state = self.moved = None
        self.starts_late = True
        self.plan_next = 0.0  # see commit()
        self.resume_h = 0.0  # the step an importer asked for before it returned early (events)

    def motion(self, x, w, fresh):
        """The bodies' relative motion now: (x, w), the inputs, if they were set since the last step
        (fresh), else the element's model of it at the end of the last step."""
        if fresh or self.expected is None:
            return x, w
        return self.expected

    def force(self, x, w, predict, stiff):
        """The force (on the element at its second flange) to hold over the next step, for the
        bodies' relative motion (x, w) now (see motion); its predictions share one MAX_WORK."""
        with work_budget():
            return self._force(x, w, predict, stiff)

    def _force(self, x, w, predict, stiff):
        mu = self.mu
        h, g = planning_step(w, self.last_v, self.last_f, mu, self.last_h, self.default_h)

        def law(x0, w0, state, times):
            return predict(x0, w0, g, state, times)

        at_event = self.plan_next > 0.0  # the last step ended early at the law's event
        elapsed = law
        if at_event:
            g_event = self.g_now

            def elapsed(x0, w0, state, times):  # as the event was located
                return predict(x0, w0, g_event, state, times)

        shadow, self.moved = advance_shadow(
            tuple(self.shadow) if self.shadow is not None else None, h, elapsed, at_event
        )
        state = self.state
        if state is not None:
            # the shadow's state after the step, else the held state settled at the present motion
            state = (self.moved if self.moved is not None else law(x, w, state, (0.0,)))[0][0][2]
        h = self.plan_next or h  # the step to plan for (see commit)
        force, shadow = couple(x, w, mu, g, h, shadow, law, stiff(h), state, self.pushes_only)
        self.pending = list(shadow) if shadow is not None else None
        self.pending_state = shadow[3] if shadow is not None else state
        self.force_now, self.x_now, self.v_now, self.g_now = force, x, w, g
        return force

    def commit(self, h, predict, x=None, w=None, delivered=None, plan_next=None):
        """The step [t, t + h] was taken: the bodies' relative motion at t was (x, w) (motion();
        default: the one the force was last computed for) and they received the force delivered
        over it (the value the master read since the last step; default: the force last computed).

        A step longer than the one planned with (the first step is planned with the
        DefaultExperiment step size, since the FMU learns a step's length only when it is taken)
        may hold a contact the plan did not see: then the shadow starts at the step's start, as
        if the contact had been seen. plan_next: the step to plan the next one with, where this
        one ended early at an event (default: h, as for any step)."""
        if x is None:
            x, w = self.x_now, self.v_now
        if delivered is None:
            delivered = self.force_now
        if plan_next and self.pending is None:
            # ended early at the law's event on the bodies' free motion: the law's motion starts
            # at the step's start, so that it has taken the event at the step's end
            self.pending = [self.x_now, self.v_now, 0, self.pending_state]
        elif self.starts_late and self.pending is None and self.force_now == 0.0:
            onset = predict(self.x_now, self.v_now, self.g_now, None, (h,))[1]
            if onset is not None and onset <= h:
                self.pending = [self.x_now, self.v_now, 0, None]
        g = planning_step(w, self.last_v, self.last_f, self.mu, self.last_h, self.default_h)[1]
        self.expected = held_motion(x, w, g - delivered / self.mu, h)
        self.last_h, self.last_v, self.last_f = h, w, delivered
        self.plan_next = plan_next or 0.0
        self.shadow, self.state = self.pending, self.pending_state

    def first_event(self, count, start, h):
        """The time in (start, h] of the law's first event (contact, release, a stop's or a
        friction's state change, an impact) after `start` along the motion it follows over the
        next step: the shadow's, else the bodies' free motion, under the planned acceleration;
        None if none. count(x, w, g, state, t): the law's number of events from (x, w) up to t."""
        x, w = self.pending[:2] if self.pending is not None else (self.x_now, self.v_now)
        state, g = self.pending_state, self.g_now

        def changes(t):
            return count(x, w, g, state, t) if t > 0.0 else 0

        before = changes(start)
        return first_change(lambda t: changes(t) > before, start, (h,))


def held_motion(x, w, a, h):
    """(x, w) after h under the held acceleration a, from (x, w)."""
    return x + h * (w + 0.5 * h * a), w + h * a
