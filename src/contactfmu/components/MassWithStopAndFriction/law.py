"""MassWithStopAndFriction: MSL Translational.Components.MassWithStopAndFriction (v4.1.0),
"sliding mass with hard stop and Stribeck friction" (MSL 4.1 documentation and code of the component).

A rigid mass m of length L (centre s) under an external force F(t) (the sum of the forces of
the connected elements on the body) with Stribeck friction against the ground and hard stops
for the centre at lo = smin + L/2 and hi = smax - L/2:

    f0 = F_Coulomb + F_Stribeck,  f0_max = 1.001*f0 (MSL code; the documentation says f0)
    Forward  (v > 0): m*a = F - (F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*|v|))
    Backward (v < 0): m*a = F - (F_prop*v - F_Coulomb - F_Stribeck*exp(-fexp*|v|))
    Stuck    (v = 0): a = 0, friction f = sa = F (whatever holds the mass); breakaway forward when
                      F > f0_max and s < hi, backward when F < -f0_max and s > lo; sliding then
                      starts with f0 (startForward/startBackward: F_Stribeck without exp, = f0 at v = 0)
    Free     (f0 <= 0 and F_prop <= 0, strictly between the stops): m*a = F, f = 0
    stop impact (s reaches lo or hi while moving towards it): s clamped, v := 0 (inelastic),
                      then Stuck: any force pushing into the stop is held (f = sa = F).

Events inside a step are located by the integrator (v through 0, s reaching a stop, F(t)
through +-f0_max while stuck), in the mode sequence of MSL: Stuck -> startForward -> Forward,
Forward -> (v = 0) Stuck -> breakaway re-checked at the same instant, stop -> Stuck.
F(t) = F0 + dF*(t - t_n) over a step (held force when dF = 0).
"""

import math
import struct

from ...mechanics.ode import Event, StepBudgetExceeded, integrate  # noqa: F401 (StepBudgetExceeded: raised by step())

UNKNOWN, FREE, FORWARD, STUCK, BACKWARD = 3, 2, 1, 0, -1
STEP_BUDGET = 20000  # integrator steps per communication step (a safety net: a smooth friction ODE needs tens)
# sliding is quasi-static when the velocity's time constant m/F_prop is below QUASI_STATIC times the
# step (and F_prop >= 2*fexp*F_Stribeck, so the friction rises with |v|): no integrator step could
# resolve the relaxation (F_prop/m = 1e300: 1e-300 s), v follows the balance F = f(v) (see quasi_static)
QUASI_STATIC = 1e-5
_GAUSS = (  # 5-point Gauss-Legendre nodes on [0, 1] and weights
    (0.04691007703066800, 0.11846344252809454),
    (0.23076534494715845, 0.23931433524968324),
    (0.5, 0.28444444444444444),
    (0.76923465505284155, 0.23931433524968324),
    (0.95308992296933200, 0.11846344252809454),
)


class Parameters:
    """The body's parameters and the derived constants lo, hi (stop limits of the centre), f0,
    f0_max (computed once: they are read several times in every step)."""

    def __init__(
        self,
        m=1.0,
        L=0.0,
        smax=25.0,
        smin=-25.0,
        F_prop=1.0,
        F_Coulomb=5.0,
        F_Stribeck=10.0,
        fexp=2.0,
        v_small=1e-3,
    ):
        self.m, self.L, self.smax, self.smin = m, L, smax, smin
        self.F_prop, self.F_Coulomb, self.F_Stribeck, self.fexp, self.v_small = (
            F_prop,
            F_Coulomb,
            F_Stribeck,
            fexp,
            v_small,
        )
        self.lo = smin + 0.5 * L
        self.hi = smax - 0.5 * L
        self.f0 = F_Coulomb + F_Stribeck
        self.f0_max = 1.001 * self.f0

    def has_no_friction(self):
        return self.f0 <= 0.0 and self.F_prop <= 0.0


def sliding_friction(p, v, forward):
    """Stribeck friction force while sliding (positive opposes forward motion)."""
    if forward:
        return p.F_prop * v + p.F_Coulomb + p.F_Stribeck * math.exp(-p.fexp * abs(v))
    return p.F_prop * v - p.F_Coulomb - p.F_Stribeck * math.exp(-p.fexp * abs(v))


def is_quasi_static(p, h):
    """Sliding over a step h is the stiff limit: the velocity's time constant m/F_prop is far
    below the step and the friction rises with |v| (a unique balance velocity)."""
    return (
        p.F_prop > 0.0
        and p.m <= QUASI_STATIC * h * p.F_prop
        and p.F_prop >= 2.0 * p.fexp * p.F_Stribeck
    )


def balance_speed(p, drive):
    """The speed w >= 0 at which sliding friction balances the drive (the force along the
    motion, F forward, -F backward): F_prop*w + F_Coulomb + F_Stribeck*exp(-fexp*w) = drive,
    and the time constant m/f'(w) of the relaxation towards it; w = 0 when the drive does not
    exceed f0 (the body comes to rest). Newton's method on the convex rising friction."""
    target = drive - p.F_Coulomb
    if not target > p.F_Stribeck:
        return 0.0, p.m / (p.F_prop - p.fexp * p.F_Stribeck)
    w = (target - p.F_Stribeck) / p.F_prop
    for _ in range(100):
        e = p.F_Stribeck * math.exp(-p.fexp * w)
        slope = p.F_prop - p.fexp * e
        step = (p.F_prop * w + e - target) / slope
        w_next = max(0.0, w - step)
        if w_next == w or abs(step) <= 4e-16 * w:
            w = w_next
            break
        w = w_next
    return w, p.m / (p.F_prop - p.fexp * p.F_Stribeck * math.exp(-p.fexp * w))


def quasi_static(p, t, t_end, s, v, forward, force):
    """Sliding in the stiff limit (is_quasi_static) from (t, s, v) towards t_end with the force
    force(t') (linear in t'): v relaxes at once to the balance speed (its transient moves the
    body by (v - v_bal)*m/f'), then follows it; the body stops when the drive falls to f0 (stuck)
    or reaches a stop (impact). Returns (t, s, v, event): event None (sliding at t_end),
    "stuck", "right stop" or "left stop" (then v = 0 and s at the stop)."""
    sign = 1.0 if forward else -1.0
    limit = p.hi if forward else p.lo

    def speed(tt):
        return balance_speed(p, sign * force(tt))

    w, tau = speed(t)
    s = s + (v - sign * w) * tau  # the transient, settled within a few m/f' (far below the step)
    if w == 0.0:
        return t, s, 0.0, "stuck"
    t1, event = t_end, None
    dF = force(t_end) - force(t)
    if sign * dF < 0.0 and sign * force(t_end) - p.F_Coulomb <= p.F_Stribeck:
        # the drive falls to f0 within the step: the balance speed reaches 0 there
        t1 = t + (sign * p.f0 - sign * force(t)) / (sign * dF) * (t_end - t)
        t1 = min(max(t1, t), t_end)
        event = "stuck"

    def position(tb):
        dt = tb - t
        return s + sign * sum(wg * speed(t + x * dt)[0] for x, wg in _GAUSS) * dt

    s1 = position(t1)
    if sign * (s1 - limit) >= 0.0:  # a stop within [t, t1]: the first time s reaches it
        # (bisection over the floats' ordering: at most 64 halvings, whatever the scales)
        lo, hi = _ordinal(t), _ordinal(t1)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if sign * (position(_from_ordinal(mid)) - limit) >= 0.0:
                hi = mid
            else:
                lo = mid
        hi = _from_ordinal(hi)
        return hi, limit, 0.0, "right stop" if forward else "left stop"
    if event:
        return t1, s1, 0.0, event
    return t1, s1, sign * speed(t1)[0], None


def _ordinal(x):
    """An integer of the same order as the float x (adjacent floats: adjacent integers)."""
    bits = struct.unpack("<q", struct.pack("<d", x))[0]
    return bits if bits >= 0 else -(bits & 0x7FFFFFFFFFFFFFFF)


def _from_ordinal(i):
    return struct.unpack("<d", struct.pack("<q", i if i >= 0 else (-i) | -0x8000000000000000))[0]


def start_checks(p, s, v):
    """MSL's initial assertions; returns an error message or None."""
    lo, hi = p.lo, p.hi
    if not (s > lo or (s == lo and v >= 0.0)):
        return (
            f"Error in initialization of hard stop: (s - L/2) must be >= smin (smin = {p.smin!r} m), "
            f"but s - L/2 = {s - 0.5 * p.L!r} m" + (f" with v = {v!r} m/s < 0" if s == lo else "")
        )
    if not (s < hi or (s == hi and v <= 0.0)):
        return (
            f"Error in initialization of hard stop: (s + L/2) must be <= smax (smax = {p.smax!r} m), "
            f"but s + L/2 = {s + 0.5 * p.L!r} m" + (f" with v = {v!r} m/s > 0" if s == hi else "")
        )
    return None


def stopped_flag(p, s):
    return -1 if s <= p.lo else (1 if s >= p.hi else 0)


def settle(p, s, v, mode, F):
    """The mode after the event iteration at one instant (v = 0 cases decide by the force F).

    Returns (mode, startForward, startBackward): startForward/startBackward are MSL's breakaway
    flags (true during the nanoseconds in which the mass is still at v = 0)."""
    if p.has_no_friction() and p.lo < s < p.hi:
        return FREE, False, False
    if v > 0.0:
        return FORWARD, False, False
    if v < 0.0:
        return BACKWARD, False, False
    if F > p.f0_max and s < p.hi:
        return FORWARD, True, False
    if F < -p.f0_max and s > p.lo:
        return BACKWARD, False, True
    if mode == FORWARD and F > p.f0 and s < p.hi:  # hysteresis f0 < sa <= f0_max while starting
        return FORWARD, True, False
    if mode == BACKWARD and F < -p.f0 and s > p.lo:
        return BACKWARD, False, True
    return STUCK, False, False


def outputs(p, s, v, mode, F):
    """(a, f, sa) for the current state, mode and external force F (MSL equations)."""
    if mode == STUCK:
        return 0.0, F, F  # locked: a = 0, f = sa = F
    if mode == FREE:
        return F / p.m, 0.0, F / p.m
    if v == 0.0:  # startForward/startBackward: no exp term
        f = p.F_prop * v + (p.f0 if mode == FORWARD else -p.f0)
    else:
        f = sliding_friction(p, v, mode == FORWARD)
    a = (F - f) / p.m
    return a, f, a + (p.f0_max if mode == FORWARD else -p.f0_max)


class Body:
    """The hybrid state of one MassWithStopAndFriction and its step over [t, t + h]."""

    def __init__(self, p, s=0.0, v=0.0, mode=UNKNOWN, events=None, h_int=None):
        self.p = p
        self.s, self.v = s, v
        self.mode = mode
        # [time, what] of located events, latest last
        self.events = events if events is not None else []
        self.h_int = h_int  # integrator step carried between communication steps
        self.events_after = self.first_event = None  # see step()

    def initialize(self, F):
        """MSL initialization: v > 0 Forward, v < 0 Backward, v = 0 locked, then the event
        iteration at t0+ (breakaway if F already exceeds f0_max)."""
        self.mode, _, _ = settle(self.p, self.s, self.v, UNKNOWN, F)
        return self.mode

    def _log(self, t, what):
        self.events.append([t, what])
        del self.events[:-20]
        if self.first_event is None and self.events_after is not None and t > self.events_after:
            self.first_event = t

    def step(
        self, t, h, F0, dF=0.0, rtol=1e-10, atol=1e-12, events_after=None, stop_at_event=False
    ):
        """Advance over [t, t + h] with F(t') = F0 + dF*(t' - t).

        events_after: a time from which on events are noted: first_event is then the time of
        the first one (a stop impact, sticking, a breakaway; None: none); stop_at_event: the
        step ends there, the event taken."""
        p = self.p
        self.events_after, self.first_event = events_after, None
        t_end = t + h
        t_start = t

        def force(tt):
            return F0 + dF * (tt - t_start)

        s, v, mode = self.s, self.v, self.mode
        guard = 0
        budget = [STEP_BUDGET]  # integrator steps for the whole communication step (bounded time)
        while True:
            before = mode
            mode, start_f, start_b = settle(p, s, v, mode, force(t))
            if before == STUCK and mode in (FORWARD, BACKWARD):
                self._log(t, "breakaway " + ("forward" if mode == FORWARD else "backward"))
            if t >= t_end or (stop_at_event and self.first_event is not None):
                break
            guard += 1
            if guard > 1000:
                raise RuntimeError(f"more than 1000 mode changes in one step at t = {t!r} s")
            if mode == STUCK:
                t_next, what = self._stuck_until(force, t, t_end, s, F0, dF)
                t = t_next
                continue
            forward = mode == FORWARD
            m = p.m
            if mode != FREE and is_quasi_static(p, h):
                t, s, v, what = quasi_static(p, t, t_end, s, v, forward, force)
                if what is not None:
                    mode = STUCK
                    self._log(t, "stuck (v = 0)" if what == "stuck" else what + " impact")
                continue

            if mode == FREE:

                def rhs(tt, y):
                    return [y[1], force(tt) / m]
            else:
                # sliding_friction and force written out (same arithmetic): the integrator calls
                # this 7 times per internal step
                f_prop, f_c, f_s, fexp, exp = p.F_prop, p.F_Coulomb, p.F_Stribeck, p.fexp, math.exp
                if forward:

                    def rhs(tt, y):
                        v = y[1]
                        return [
                            v,
                            (
                                F0
                                + dF * (tt - t_start)
                                - (f_prop * v + f_c + f_s * exp(-fexp * abs(v)))
                            )
                            / m,
                        ]
                else:

                    def rhs(tt, y):
                        v = y[1]
                        return [
                            v,
                            (
                                F0
                                + dF * (tt - t_start)
                                - (f_prop * v - f_c - f_s * exp(-fexp * abs(v)))
                            )
                            / m,
                        ]

            events = []
            if mode != FREE:
                events.append(Event((lambda tt, y: y[1]), -1 if forward else +1, "stuck"))
            if mode == FREE or forward:
                events.append(Event((lambda tt, y: y[0] - p.hi), +1, "right stop"))
            if mode == FREE or not forward:
                events.append(Event((lambda tt, y: y[0] - p.lo), -1, "left stop"))
            t, y, ev, self.h_int = integrate(
                rhs,
                t,
                [s, v],
                t_end,
                events,
                rtol=rtol,
                atol=atol,
                h=self.h_int,
                max_step=h,
                budget=budget,
            )
            s, v = y
            if not math.isfinite(s + v):
                break  # the motion overflowed (forces near the largest float): reported as non-finite outputs
            if not p.lo <= s <= p.hi:
                # a stop passed within one shortest integrator step (a force rate beyond what the
                # time resolution can locate): the stops are hard, the impact happened in that step
                ev = Event(None, 0, "right stop" if s > p.hi else "left stop")
            if ev is None:
                continue
            if ev.name == "stuck":
                v = 0.0
                mode = STUCK
                self._log(t, "stuck (v = 0)")
            elif ev.name in ("right stop", "left stop"):
                s = p.hi if ev.name == "right stop" else p.lo
                v = 0.0
                mode = STUCK
                self._log(t, ev.name + " impact")
        self.s, self.v, self.mode = s, v, mode
        return start_f, start_b

    def _stuck_until(self, force, t, t_end, s, F0, dF):
        """Stuck with a linear force: the time the force reaches a breakaway threshold."""
        p = self.p
        if dF == 0.0:
            return t_end, None
        candidates = []
        for threshold, allowed in (
            (p.f0_max, s < p.hi and dF > 0.0),
            (-p.f0_max, s > p.lo and dF < 0.0),
        ):
            if allowed:  # the force moves toward this threshold
                tau = t + (threshold - force(t)) / dF
                if t <= tau < t_end:  # (at the threshold now: breaks away at once)
                    candidates.append(tau)
        if not candidates:
            return t_end, None
        tau = min(candidates)
        threshold = p.f0_max if dF > 0.0 else -p.f0_max

        def beyond(tt):  # settle's strict breakaway condition
            return force(tt) > threshold if dF > 0.0 else force(tt) < threshold

        # the first time the force is strictly beyond the threshold (a nudge of the time alone moves a
        # slowly rising force by less than its rounding: 1e-4 N/s stays within one ulp of 15 N for
        # 1e-11 s): steps that change the force by at least one ulp, doubled until it is beyond
        nudge = max(math.ulp(tau), math.ulp(threshold) / abs(dF))
        while not beyond(tau) and tau < t_end:
            tau += nudge
            nudge *= 2.0
        return min(t_end, tau), "breakaway threshold"
