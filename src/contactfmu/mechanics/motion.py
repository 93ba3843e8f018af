"""Relative motion of two bodies joined by a piecewise linear contact, solved in closed form, and
the location of its crossings.

A compliant contact element between two bodies of masses m_a and m_b sees their relative
coordinate x = s_b - s_a (velocity w). With the reduced mass mu = m_a*m_b/(m_a + m_b) (a fixed
body has infinite mass: mu = the other mass) and a relative acceleration g caused by all other
forces, taken constant over a short horizon, each contact region is a linear oscillator

    mu*x'' = mu*g - c*(x - xe) - d*x'        (c, d >= 0; c = d = 0: free flight)

which :class:`Piece` solves exactly, including the extremely stiff and overdamped cases
(c = d = 1e10 against 1 kg: time constants 1e-10 s and 1 s) where any explicit integrator fails.
:func:`first_crossing` locates the first time a linear function alpha*x + beta*w of the motion
leaves a region: it splits the horizon at the turning points of that function (known in closed
form), so the function is monotone on each part and the search cannot miss a crossing. Every
evaluation of a motion counts against a work budget (:func:`bound_work`): a prediction that needs
more than MAX_WORK of them is an :class:`EventStorm`.

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
