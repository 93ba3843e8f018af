"""Variable communication steps under an error tolerance, with rollback (scheme="adaptive").

One algorithm object (as libcosim's algorithms): ``initialize(t0)`` after the system's
initialization, then ``step(t, limit)`` takes one accepted communication step from t, never past
``limit`` (the next output time), and returns its end. Every FMU's state is saved at t with
fmi2GetFMUstate; an attempt that is not good enough is undone with fmi2SetFMUstate and repeated
with a smaller step.

An attempt of size H from t:

1. the coupling: where an element with interface outputs (``interface.c`` = df/ds_rel,
   ``interface.d`` = df/dv_rel) is too stiff for H against the bodies it joins
   (H*max(d/mu, sqrt(c/mu)) > 1, mu their reduced mass as the bodies declare it), the step is
   linearly implicit: the composite coupling of exchange.ImplicitCoupling, a trapezoidal half step
   and a three-point backward Euler half step (second order, L-stable), or, where a coupled body
   takes no force derivative, backward Euler on the interface (first order); otherwise the
   Gauss-Seidel exchange with first derivatives (forces linear over the step: second order);
2. events: the discrete outputs of every FMU (its Integer and Boolean outputs: contact, stop and
   friction states, modes) are compared before and after the step; a change inside a step longer
   than ``event_window`` rejects it, and the change is bracketed by bisection until it lies in a
   step of at most ``event_window``: a contact closing or opening, a stop reached, a stick-slip
   change are located, not stepped across;
3. the error: the attempt is repeated as two steps of H/2 (step doubling); the motion of every
   inertial flange (its s and v outputs) of the two results gives the error estimate
   |y_H/2 - y_H|/(2^p - 1) (p = 2; 1 for backward Euler), weighted by atol + rtol*|y| as an ODE
   solver does; above 1 the attempt is rejected; the two half steps are kept when accepted (the
   more accurate result);
4. the next step: H*min(4, max(0.2, 0.9*err^(-1/(p + 1)))), at most ``hmax``.

Every attempt, accepted or rejected, is kept as a :class:`StepRecord` for plots and benchmarks.
"""
import math
from typing import NamedTuple

from .algorithms import DoSteps
from .conventions import DISCRETE_TYPES
from .fastcalls import Reader


class StepRecord(NamedTuple):
    """One attempted communication step: start time t, size h, whether it was accepted, why it
    was rejected ("" if accepted; "error", "event"), its error estimate (weighted norm, 1 = the
    tolerance; nan if not estimated), whether the interface coupling was implicit, and how many
    fmi2DoStep calls each FMU made for it (the step and its two halves for the error estimate;
    two half steps each for the composite implicit coupling)."""
    t: float
    h: float
    accepted: bool
    reason: str
    error: float
    implicit: bool
    calls: int = 0


class AdaptiveAlgorithm:
    """Error-controlled communication steps with rollback (module docstring)."""

    GROW, SHRINK, SAFETY = 4.0, 0.2, 0.9

    def __init__(self, system, plan, explicit, implicit, coupling, drive, rtol, atol, h0, hmax, event_window, hmin,
                 integrating=frozenset()):
        self.system, self.explicit, self.implicit = system, explicit, implicit
        self.drive = drive
        self.rtol, self.atol = rtol, atol
        self.h, self.hmax, self.window, self.hmin = h0, hmax, event_window, hmin
        self.instances = list(system.instances.values())
        self._do_steps = DoSteps(self.instances)
        self.records = []
        self.calls = 0                # fmi2DoStep calls per FMU of the present attempt
        self.bracket = None           # an event lies in (t, bracket] of the present step
        # the motion of every inertial flange (error estimate): one reader per instance. A body
        # joined to an element that integrates its contact itself (it holds, over any step, the
        # force that brings the body onto its own exact plan, an impulse spread over the steps
        # around the impact) is left out: its motion at a step's end depends on the step by design.
        own = {link.source.name for link in plan.motion if link.target.name in integrating}
        motion = {}
        for si, vs, vv, *_ in plan.motion:
            if si.name not in own:
                motion.setdefault(si.name, (si, set()))[1].update((vs, vv))
        self.motion = [Reader(inst, sorted(vrs)) for inst, vrs in motion.values()]
        # the discrete outputs of every FMU (events), but those of an element that integrates its
        # contact itself: it locates its own events inside the steps
        self.discrete = []
        for inst in self.instances:
            if inst.name in integrating:
                continue
            for kind in DISCRETE_TYPES:
                vrs = [v.valueReference for v in inst.md.modelVariables
                       if v.causality == "output" and v.type == kind]
                if vrs:
                    self.discrete.append(Reader(inst, vrs, kind))
        # stiffness of the elements the implicit exchange can couple: (reader of c, d; reduced mass)
        self.stiffness = []
        self.coupling = coupling
        self.composite = implicit is not explicit and implicit.composite
        if coupling is not None:
            for element in coupling.elements:
                masses = [coupling.bodies[end.body].m for end in (element.end_a, element.end_b) if end.body is not None]
                inv = sum(1.0 / m for m in masses if m)
                if inv > 0.0:
                    self.stiffness.append((Reader(element.inst, [element.c, element.d]), 1.0 / inv))

    # ---- FMU states -------------------------------------------------------------------------

    def _save(self):
        return [(inst, self.system._call(inst, "fmi2GetFMUstate", inst.slave.getFMUState)) for inst in self.instances]

    def _restore(self, states):
        for inst, state in states:
            self.system._call(inst, "fmi2SetFMUstate", lambda: inst.slave.setFMUState(state))

    def _free(self, states):
        for inst, state in states:
            self.system._call(inst, "fmi2FreeFMUstate", lambda: inst.slave.freeFMUState(state))

    # ---- pieces of an attempt ---------------------------------------------------------------

    def _exchange(self, t, h, implicit=False):
        # backward Euler evaluates every force at the step's end: driven inputs too (Exchange lead)
        self.drive(t + h if implicit else t)
        (self.implicit if implicit else self.explicit).gauss_seidel(t, h)

    def _advance(self, t, h, implicit):
        if implicit and self.composite:
            # two stages of h/2: trapezoidal, then three-point backward Euler (second order, L-stable)
            half = 0.5 * h
            for stage, start in ((1, t), (2, t + half)):
                self.coupling.stage = stage
                self.drive(start)
                self.implicit.gauss_seidel(start, half)
                self._do_steps(start, half)
            self.calls += 2
            return
        self._exchange(t, h, implicit)
        self._do_steps(t, h)
        self.calls += 1

    def _measure(self, t):
        """(motion, discrete state) at t, after the exchange that makes every output current."""
        self._exchange(t, 0.0)
        y = [x for r in self.motion for x in r(t)]
        d = tuple(x for r in self.discrete for x in r(t))
        return y, d

    def _stiff(self, t, h):
        for reader, mu in self.stiffness:
            c, d = reader(t)
            if h * max(d / mu, math.sqrt(max(c, 0.0) / mu)) > 1.0:
                return True
        return False

    def _error(self, y_half, y_full, order):
        worst = 0.0
        for a, b in zip(y_half, y_full):
            scale = self.atol + self.rtol * max(abs(a), abs(b))
            worst = max(worst, abs(a - b) / scale)
        return worst / (2.0 ** order - 1.0)

    # ---- the algorithm ----------------------------------------------------------------------

    def initialize(self, t0):
        self.y, self.d = self._measure(t0)

    def step(self, t, limit):
        """One accepted step from t (the system's state), ending at most at limit; its end."""
        while True:
            h = min(self.h, self.hmax, limit - t)
            if self.bracket is not None:
                h = min(h, self.bracket - t if self.bracket - t <= self.window else 0.5 * (self.bracket - t))
            if limit - (t + h) < self.hmin:
                h = limit - t                          # no sliver left before the limit
            saved = self._save()
            self.calls = 0
            try:
                implicit = self._stiff(t, h)
                order = 2 if (not implicit or self.composite) else 1
                self._advance(t, h, implicit)
                y_full, d_full = self._measure(t + h)
                if d_full != self.d and h > self.window:
                    # a discrete change inside the step: bracket it
                    self.records.append(StepRecord(t, h, False, "event", math.nan, implicit, self.calls))
                    self.bracket = t + h
                    self._restore(saved)
                    continue
                if not self.motion:
                    # nothing to estimate an error of (every body's contact is integrated by its element)
                    err, y_half, d_half = 0.0, y_full, d_full
                else:
                    self._restore(saved)
                    half = 0.5 * h
                    self._advance(t, half, implicit)
                    y_mid, d_mid = self._measure(t + half)
                    if d_mid != self.d and half > self.window and self.bracket is None:
                        self.records.append(StepRecord(t, h, False, "event", math.nan, implicit, self.calls))
                        self.bracket = t + half
                        self._restore(saved)
                        continue
                    self._advance(t + half, half, implicit)
                    y_half, d_half = self._measure(t + h)
                    err = self._error(y_half, y_full, order)
                    if not err <= 1.0 and h > self.hmin:
                        self.records.append(StepRecord(t, h, False, "error", err, implicit, self.calls))
                        self.h = h * max(self.SHRINK, self.SAFETY * err ** (-1.0 / (order + 1)) if err > 0 else 1.0)
                        self._restore(saved)
                        continue
            finally:
                self._free(saved)
            self.records.append(StepRecord(t, h, True, "", err, implicit, self.calls))
            factor = self.GROW if err == 0.0 else min(self.GROW, max(self.SHRINK, self.SAFETY * err ** (-1.0 / (order + 1))))
            if not (self.bracket is not None and t + h < self.bracket):
                self.bracket = None
            if h < limit - t or self.h <= h:
                self.h = h * factor                    # (a step cut by the limit keeps the planned size)
            self.y, self.d = y_half, d_half
            return t + h
