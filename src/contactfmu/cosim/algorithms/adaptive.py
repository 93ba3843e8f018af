"""Variable communication steps under an error tolerance, with rollback (scheme="adaptive"), tuned by
one :class:`Adaptive`.

``do_step(t, limit)`` (cosim.algorithms.base) takes one accepted communication step from t, never
past ``limit`` (the end of the run: the output times are interpolated between the communication
points, base.Algorithm.dense), and returns its end. Every FMU's state is saved at t with
fmi2GetFMUstate, once for the step; an attempt that is not good enough is undone with
fmi2SetFMUstate and repeated with a smaller step.

An attempt of size H from t:

1. the coupling: where an element with interface outputs (``interface.c`` = df/ds_rel,
   ``interface.d`` = df/dv_rel) is too stiff for H against the bodies it joins
   (H*max(d/mu, sqrt(c/mu)) > 1, mu their reduced mass as the bodies declare it), the step is
   linearly implicit: the composite coupling of implicit.ImplicitCoupling, a trapezoidal half step
   and a three-point backward Euler half step (second order, L-stable), or, where a coupled body
   takes no force derivative, backward Euler on the interface (first order); otherwise the
   Gauss-Seidel exchange with first derivatives (forces linear over the step: second order);
2. events: the discrete outputs of every FMU (its Integer and Boolean outputs: contact, stop and
   friction states, modes) are compared before and after the step. A change of an element's
   outputs inside an explicit step estimated by the force extrapolation (item 3) is estimated:
   the deviation dF of the forces at the step's end is taken as a jump at its start, the worst
   place for it, and the step is kept if dv = dF*H/m and ds = dF*H^2/(2m) are within the
   tolerance (a contact closing or opening, a kink or a jump of a law, makes an error no larger).
   Otherwise (a body's own change: a stop, a stick-slip change; ``Adaptive(events="locate")``; an
   implicit step; step doubling) a change inside a step longer than ``event_window`` rejects it,
   and the change is bracketed by bisection until it lies in a step of at most ``event_window``
   or, where it is estimated, in a step whose estimate meets the tolerance: no change is stepped
   across unseen;
3. the error, on the motion of every inertial flange (its s and v outputs), weighted by
   atol + rtol*|y| as an ODE solver does, with the local tolerances of :attr:`Adaptive.local`
   (rtol and atol scaled by (rtol/1e-4)^(1/2), so that the error of a run falls in proportion to
   rtol); above 1 the attempt is rejected:
   * the force extrapolation (:class:`ForceExtrapolation`; an explicit step where every moving
     body declares its inertia, conventions.INERTIA, and takes nothing but the exchanged forces):
     a body that integrates its input exactly is off only by the force it was given over the step,
     F(t) + t*dF/dt (F(t) with a zero-order hold), against the force it meets at the step's end,
     read by the exchange there anyway: with dF = F(t+H) - F(t) - H*dF/dt and a deviation growing
     as tau^2 (tau with a zero-order hold), dv = dF*H/(3m) and ds = dF*H^2/(12m) (dF*H/(2m),
     dF*H^2/(6m)); no attempt is repeated, the step itself is kept (measured on the MSL examples:
     4/3 of the step doubling's |y_H/2 - y_H| in the median, the local error of the full step);
   * elsewhere (the implicit couplings, a body without a declared inertia that moves, an input of a
     body driven or set by a signal; or ``Adaptive(estimate="doubling")``) step doubling: the
     attempt is repeated as two steps of H/2; the two results give |y_H/2 - y_H|/(2^p - 1)
     (p = 2; 1 for backward Euler), and the two half steps are kept when accepted (the more
     accurate result). The measurement at the end of the full step, which is undone, and the one
     at the middle of an implicit step, whose second half makes its own exchange there, make the
     motion exchange alone (coupling.Exchange.motion) where the ModelStructure says that the
     discrete outputs depend on nothing but the motion inputs it sets;
   where there is no motion to estimate (every body's contact integrated by its element) the
   recording times bound the steps instead;
4. the next step: H*min(4, max(0.2, 0.9*err^(-1/(p + 1)))), at most ``hmax``. Where implicit
   attempts are rejected by their error twice with none accepted between (the motion of a stiff
   element must be resolved: the implicit step is no cheaper), the steps stay explicit, at most
   1/max(d/mu, sqrt(c/mu)) long, until the error of one allows the largest growth (4).

Every attempt, accepted or rejected, is kept as a :class:`StepRecord` for plots and benchmarks.
"""

import bisect
import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple, Optional

from ..coupling import Exchange
from ..errors import CosimError, ToleranceWarning
from ..fastcalls import Reader, States
from ..implicit import implicit_coupling
from .base import Algorithm, DoSteps, EarlyReturn
from .extrapolation import ForceExtrapolation


@dataclass(frozen=True)
class Adaptive:
    """The tuning of the adaptive algorithm: the tolerance on the bodies' motion (rtol, atol: finite,
    > 0; the error of a run is proportional to rtol, :attr:`local`), the first step h0 (default:
    the smallest DefaultExperiment stepSize of the FMUs, at most span/100), the largest step hmax
    (default span/50; at most the span), the smallest step hmin (default 1e-14*max(1, |stop|)),
    the event window, the step within which a discrete change is located (default 1e-9*span);
    times in s. dense (default True): the recording times are interpolated between the steps
    (base.Algorithm.dense); False: every recording time ends a step (read there, not
    interpolated; hmax defaults to the output interval then). estimate: "auto" (default: the
    force extrapolation where it applies, step doubling elsewhere; module docstring, item 3) or
    "doubling" (step doubling always). events: "estimate" (default: a discrete change inside an
    explicit step estimated by the force extrapolation is kept when the error it can make, its
    forces' deviation taken as a jump at the step's start, is within the tolerance; located
    otherwise) or "locate" (every change located within the event window)."""

    rtol: float = 1e-4
    atol: float = 1e-6
    h0: Optional[float] = None
    hmax: Optional[float] = None
    hmin: Optional[float] = None
    event_window: Optional[float] = None
    dense: bool = True
    estimate: str = "auto"
    events: str = "estimate"

    ESTIMATES = ("auto", "doubling")
    EVENTS = ("estimate", "locate")

    ANCHOR = 1e-4  # the rtol at which the local tolerance is rtol itself (the default)
    ORDER = 2  # the order of the master's steps (explicit with first derivatives, composite)

    @property
    def local(self):
        """(rtol, atol) of each step's local error: the tolerances scaled by
        (rtol/ANCHOR)^(1/ORDER), so that the error of a run, which a method of order p with a
        local error h^(p + 1) per step leaves as tol^(p/(p + 1)), falls in proportion to rtol
        (tolerance proportionality); at the default rtol they are rtol and atol themselves."""
        k = (self.rtol / self.ANCHOR) ** (1.0 / self.ORDER)
        return self.rtol * k, self.atol * k

    def __post_init__(self):
        if self.events not in self.EVENTS:
            raise CosimError(f"events = {self.events!r}: must be one of {', '.join(self.EVENTS)}")
        if self.estimate not in self.ESTIMATES:
            raise CosimError(
                f"estimate = {self.estimate!r}: must be one of {', '.join(self.ESTIMATES)}"
            )
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise CosimError(f"{name} = {value!r}: the tolerance must be finite and > 0")
        if self.hmax is not None and not (self.hmax > 0 and math.isfinite(self.hmax)):
            raise CosimError(f"hmax = {self.hmax!r} s must be finite and > 0")
        for name in ("hmin", "event_window"):
            value = getattr(self, name)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise CosimError(f"{name} = {value!r} s must be finite and >= 0")


class StepRecord(NamedTuple):
    """One attempted communication step: start time t, size h, whether it was accepted, why it
    was rejected ("" if accepted; "error", "event"), its error estimate (weighted norm, 1 = the
    local tolerance; nan if not estimated), whether the interface coupling was implicit, and how many
    fmi2DoStep calls each FMU made for it (the step and its two halves for the error estimate;
    two half steps each for the composite implicit coupling)."""

    t: float
    h: float
    accepted: bool
    reason: str
    error: float
    implicit: bool
    calls: int = 0
    fmus: int = 0  # the FMUs that made the calls (0: every FMU; a region's: multirate)


def _motion_decides(plan, outputs, discrete):
    """Whether every discrete output the readers `discrete` read depends on nothing but the motion
    inputs the motion exchange sets (``outputs``: {(instance name, vr): its dependencies})."""
    moved = {}
    for link in plan.motion:
        moved.setdefault(link.target.name, set()).update((link.target_s, link.target_v))
    return all(
        outputs.get((r.inst.name, vr)) is not None
        and {d.valueReference for d in outputs[(r.inst.name, vr)]} <= moved.get(r.inst.name, set())
        for r in discrete
        for vr in r.vr
    )


class AdaptiveAlgorithm(Algorithm):
    """Error-controlled communication steps with rollback (module docstring); dense (Adaptive.dense,
    the default): its steps do not end on the recording times, which are interpolated between its
    communication points."""

    GROW, SHRINK, SAFETY = 4.0, 0.2, 0.9
    explicit_only = False  # implicit attempts keep failing: the steps stay explicit
    failures = 0  # implicit attempts rejected by their error since one was accepted
    early_return = True  # an FMU's event time ends the step there (no search)
    worst_at = 0  # the index in the motion vector of the largest error of the last estimate
    unmet = None  # (t, h, error, "instance.variable") of the first step kept above the tolerance
    body_flags = ()  # the indices of the bodies' discrete outputs among the discrete state
    exchanged_at = event_at = None  # (setup sets them per run)
    extrapolation = None  # the force extrapolation estimate (initialize: where it applies)
    stiffness = ()  # where the explicit exchange reads each coupled element's c, d (initialize)
    prescribed = ()  # names of motion sources whose motion is given, not estimated (multirate)
    interface = ()  # (c, d, reduced mass) of each coupled element at the step's start (do_step)

    def __init__(self, params):
        self.params = params
        self.tolerance = params.local  # (rtol, atol) of a step's local error
        self.dense = params.dense
        self.across = params.events == "estimate"  # a change kept inside a step (item 2)

    def setup(self, system, start, stop, output_interval):
        self.records = []
        self.unmet = None
        self.calls = 0  # fmi2DoStep calls per FMU of the present attempt
        self.bracket = None  # an event lies in (t, bracket] of the present step
        self.explicit_only, self.failures = False, 0
        self.exchanged_at = None  # the FMUs hold the inputs of the explicit exchange at this time
        self.event_at = None  # an FMU returned early at this time (the bracket, exact)
        p, span = self.params, stop - start
        if p.h0 is not None and not (0 < p.h0 <= span and math.isfinite(p.h0)):
            raise CosimError(f"first step {p.h0!r} s must be > 0 and at most the span {span!r} s")
        if output_interval is not None and not (
            0 < output_interval and math.isfinite(output_interval)
        ):
            raise CosimError(f"output_interval {output_interval!r} s must be > 0")
        defaults = [
            inst.md.defaultExperiment.stepSize
            for inst in system.instances.values()
            if inst.md.defaultExperiment is not None and inst.md.defaultExperiment.stepSize
        ]
        self.t0 = start
        self.h = p.h0 or min([float(h) for h in defaults] + [span / 100.0])
        self.hmax = min(p.hmax or (None if p.dense else output_interval) or span / 50.0, span)
        self.window = 1e-9 * span if p.event_window is None else p.event_window
        self.hmin = 1e-14 * max(1.0, abs(stop)) if p.hmin is None else p.hmin
        self.grid = None
        if output_interval is None:
            return None
        n_out = int(math.ceil(span / output_interval - 1e-9))
        self.grid = [min(start + k * output_interval, stop) for k in range(1, n_out + 1)]
        return self.grid

    def initialize(self, run):
        system, plan = run.system, run.plan
        self.manipulate = run.manipulate
        coupling = implicit_coupling(system, plan)
        # the explicit exchange reads the interface stiffness and damping of the elements the
        # implicit one can couple with their forces (no call of their own): whether a step is stiff
        interface = [(e.inst, vr) for e in coupling.elements for vr in (e.c, e.d)]
        outputs = {
            (inst.name, u.variable.valueReference): u.dependencies
            for inst in system.instances.values()
            for u in inst.md.outputs
        }
        # the Real outputs the observers read at every communication point, where the explicit
        # exchange (made at the end of every accepted step) reads them anyway
        observe = []
        for inst, vr, kind in run.observed:
            if kind == "Real":
                deps = outputs.get((inst.name, vr))  # None: every input (not declared)
                observe.append(
                    (inst, vr, deps if deps is None else {d.valueReference for d in deps})
                )
        explicit = Exchange(plan, reads=interface, observe=observe)
        implicit = None
        if coupling.elements:
            # second order: the composite coupling (trapezoidal, then three-point backward
            # Euler), if every coupled body takes a force derivative; else backward Euler
            implicit = Exchange(plan, coupling, composite=True)
            if not coupling.composite_ready():
                coupling = implicit_coupling(system, plan)
                implicit = Exchange(plan, coupling, lead=True)
        explicit.gauss_seidel(self.t0, self.h)
        integrating = system.integrating()
        self.explicit, self.implicit = explicit, implicit or explicit
        self.coupling = coupling if implicit else None
        self.instances = list(system.instances.values())
        self.do_steps = DoSteps(self.instances)
        self.states = States(self.instances)
        # the motion of every inertial flange (error estimate): one reader per instance. A body
        # joined to an element that integrates its contact itself (it holds, over any step, the
        # force that brings the body onto its own exact plan, an impulse spread over the steps
        # around the impact) is left out: its motion at a step's end depends on the step by design.
        own = {link.source.name for link in plan.motion if link.target.name in integrating}
        motion = {}
        for link in plan.motion:
            if link.source.name not in own and link.source.name not in self.prescribed:
                motion.setdefault(link.source.name, (link.source, set()))[1].update(
                    (link.s, link.v)
                )
        self.motion = [Reader(inst, sorted(vrs)) for inst, vrs in motion.values()]
        # the motion as the explicit exchange reads it (full, or part a. alone: light), where the
        # motion outputs depend on no input (a body's states): the same values, no call of their own
        y = [(r.inst.name, vr) for r in self.motion for vr in r.vr]
        self.y_at = None
        if y and all(outputs.get(key) == [] for key in y):
            self.y_at = (
                [explicit.motion_at[key] for key in y],
                [explicit.light_at[key] for key in y],
            )
        self.extrapolation = None
        if self.params.estimate == "auto" and self.motion:
            driven = {inst.name for inst, *_ in run.manipulate.plan}
            estimate = ForceExtrapolation.of(plan, self.motion, driven)
            self.extrapolation = estimate.bind(explicit) if estimate else None
        # the discrete outputs of every FMU (events), but those of an element that integrates its
        # contact itself: it locates its own events inside the steps
        self.discrete = [
            Reader(inst, vrs, kind)
            for inst in self.instances
            if inst.name not in integrating
            for kind, vrs in inst.discrete_outputs()
        ]
        # the discrete outputs of the bodies (an inertial flange's FMU: its stops, its stick-slip),
        # whose changes are located, never estimated: such a change kinks the motion the elements
        # were given as an extrapolation over the step, an error the forces' deviation at the
        # step's end does not bound (a body that sticks decides it from forces made with it)
        sources = {link.source.name for link in plan.motion}
        flags = [r.inst.name in sources for r in self.discrete for _ in r.vr]
        self.body_flags = [i for i, flag in enumerate(flags) if flag]
        # where the observed outputs are after every step: the explicit exchange's reads, the
        # discrete outputs' (both made by the measurement that ends every accepted step)
        wanted = {(inst.name, vr) for inst, vr, _ in run.observed}
        self.observed = dict(explicit.observed_at)
        for reader in self.discrete:
            for i, vr in enumerate(reader.vr):
                if (reader.inst.name, vr) in wanted:
                    self.observed[(reader.inst.name, vr)] = (reader.buf, i)
        # a measurement that is undone (a full step before its halves; the middle of an implicit
        # step) makes only the motion exchange (Exchange.motion) where the discrete outputs depend
        # on nothing else (their ModelStructure): those outputs and the motion are what it reads
        self.light = self.y_at is not None and _motion_decides(plan, outputs, self.discrete)
        # stiffness of the elements the implicit exchange can couple: (where the explicit exchange
        # reads c, where d; reduced mass)
        self.stiffness = []
        self.composite = self.implicit is not explicit and self.implicit.composite
        if self.coupling is not None:
            for element in self.coupling.elements:
                masses = [
                    self.coupling.bodies[end.body].m
                    for end in (element.end_a, element.end_b)
                    if end.body is not None
                ]
                inv = sum(1.0 / m for m in masses if m)
                if inv > 0.0:
                    at = explicit.force_at
                    self.stiffness.append(
                        (
                            at[(element.inst.name, element.c)],
                            at[(element.inst.name, element.d)],
                            1.0 / inv,
                        )
                    )

    # ---- FMU states -------------------------------------------------------------------------

    def _save(self):
        return self.states.save()

    def _restore(self, states, keep=()):
        self.states.restore(states, keep=keep)

    def _free(self, states):
        self.states.free(states)

    # ---- pieces of an attempt ---------------------------------------------------------------

    def _exchange(self, t, h, implicit=False):
        # backward Euler evaluates every force at the step's end: driven inputs too (Exchange lead)
        self.manipulate(t + h if implicit else t)
        (self.implicit if implicit else self.explicit).gauss_seidel(t, h)
        self.exchanged_at = None if implicit else t

    def _advance(self, t, h, implicit):
        self.exchanged_at, current = None, self.exchanged_at
        if implicit and self.composite:
            # two stages of h/2: trapezoidal, then three-point backward Euler (second order, L-stable)
            half = 0.5 * h
            for stage, start in ((1, t), (2, t + half)):
                self.coupling.stage = stage
                self.manipulate(start)
                self.implicit.gauss_seidel(start, half)
                self.calls += 1  # (counted before: a call that returns early is one too)
                self.do_steps(start, half)
            return
        if implicit or current != t:
            # (the explicit exchange at t is the one of the measurement at t, whose inputs the
            # FMUs hold still, restored with the state saved after it: not made again)
            self._exchange(t, h, implicit)
        self.exchanged_at = None
        self.calls += 1  # (counted before: a call that returns early is one too)
        self.do_steps(t, h)

    def _measure(self, t, light=False):
        """(motion, discrete state) at t, after the exchange that makes every output current, or
        (light, where self.light allows it) after the motion exchange alone, for a measurement
        that is undone or followed by an exchange."""
        if light and self.light:
            self.explicit.motion(t)
            self.exchanged_at = None
        else:
            self._exchange(t, 0.0)
        if self.y_at is None:
            y = [x for r in self.motion for x in r(t)]
        else:
            y = [buf[i] for buf, i in self.y_at[1 if light and self.light else 0]]
        d = tuple(x for r in self.discrete for x in r(t))
        return y, d

    def _stiff(self, t, h):
        for c, d, mu in self.interface:
            if h * max(d / mu, math.sqrt(max(c, 0.0) / mu)) > 1.0:
                return True
        return False

    def _explicit_limit(self):
        """The longest step the explicit exchange takes at the interfaces of the step's start."""
        rates = [max(d / mu, math.sqrt(max(c, 0.0) / mu)) for c, d, mu in self.interface]
        worst = max(rates, default=0.0)
        return 1.0 / worst if worst > 0.0 else math.inf

    def _error(self, y_half, y_full, order):
        rtol, atol = self.tolerance
        worst = 0.0
        for i, (a, b) in enumerate(zip(y_half, y_full)):
            e = abs(a - b) / (atol + rtol * max(abs(a), abs(b)))
            if e > worst:
                worst, self.worst_at = e, i
        return worst / (2.0**order - 1.0)

    def _report_unmet(self, t, h, err, implicit):
        """A step kept at the smallest step size above the tolerance: warn once per run, naming the
        time, the step and the output with the largest error (the rest: result.steps, error > 1)."""
        estimate = self.extrapolation if self.extrapolation is not None and not implicit else self
        where = [(r.inst, vr) for r in self.motion for vr in r.vr]
        inst, vr = where[min(estimate.worst_at, len(where) - 1)]
        name = next(
            (v.name for v in inst.md.modelVariables if v.valueReference == vr and v.type == "Real"),
            f"value reference {vr}",
        )
        self.unmet = (t, h, err, f"{inst.name}.{name}")
        warnings.warn(
            f"the adaptive master cannot meet rtol = {self.params.rtol:g} at t = {t:.9g} s: a step "
            f"of {h:.3g} s (hmin) is {err:.3g} times the local tolerance, the largest error in "
            f"{inst.name}.{name}; the step is kept and the run goes on (every such step: "
            "result.steps, error > 1)",
            ToleranceWarning,
            stacklevel=2,
        )

    # ---- the algorithm ----------------------------------------------------------------------

    def start(self, t0):
        self.y, self.d = self._measure(t0)

    def do_step(self, t, limit):
        """One accepted step from t (the system's state), ending at most at limit; its end."""
        regular = not self.motion and self.grid
        if regular:
            # no error estimate (every body's contact is integrated by its element): the steps go
            # from recording time to recording time, the only measure of the resolution the user
            # asks for, all of one size (an element plans the force it holds over a step with the
            # last step's size: steps alternating 0.07 s and 0.03 s on a 0.1 s grid drove a rigid
            # stop's bounce unstable)
            limit = min(
                limit, self.grid[min(bisect.bisect_right(self.grid, t), len(self.grid) - 1)]
            )
        extrapolation = self.extrapolation
        if extrapolation is not None:
            extrapolation.start()  # (the exchange at t, of the last measurement)
        # the elements' interface stiffness and damping at t (the same exchange read them)
        self.interface = [(cb[ci], db[di], mu) for (cb, ci), (db, di), mu in self.stiffness]
        # the state at t, saved once: every attempt from t is undone to it
        saved, saved_at = self._save(), self.exchanged_at

        def rollback():  # the state saved, and with it the inputs of the exchange at saved_at
            self._restore(saved)
            self.exchanged_at = saved_at

        try:
            return self._attempts(t, limit, regular, extrapolation, saved, rollback)
        finally:
            self._free(saved)

    def _attempts(self, t, limit, regular, extrapolation, saved, rollback):
        """Attempts from t (the state `saved`) until one is accepted; its end."""
        while True:
            h = limit - t if regular else min(self.h, self.hmax, limit - t)
            if self.bracket is not None:
                h = min(
                    h,
                    self.bracket - t
                    if self.bracket - t <= self.window or self.bracket == self.event_at
                    else 0.5 * (self.bracket - t),
                )
            if self.explicit_only:
                # implicit steps were too inaccurate: the motion must be resolved, explicitly
                h = min(h, self._explicit_limit())
            if limit - (t + h) < self.hmin:
                h = limit - t  # no sliver left before the limit
            self.calls = 0
            try:
                implicit = self._stiff(t, h)
                order = 2 if (not implicit or self.composite) else 1
                self._advance(t, h, implicit)
                # (undone where the step is estimated by doubling)
                doubling = bool(self.motion) and (implicit or extrapolation is None)
                y_full, d_full = self._measure(t + h, light=doubling)
                err = None
                if d_full != self.d and h > self.window and t + h != self.event_at:
                    # a discrete change inside the step: kept where the force extrapolation
                    # bounds its error within the tolerance (the forces' deviation taken as a
                    # jump at the step's start), else bracketed
                    if (
                        self.across
                        and extrapolation is not None
                        and not implicit
                        and all(d_full[i] == self.d[i] for i in self.body_flags)
                    ):
                        err = extrapolation.error(h, self.y, y_full, *self.tolerance, jump=True)
                    if err is None or not err <= 1.0:
                        self.records.append(
                            StepRecord(t, h, False, "event", math.nan, implicit, self.calls)
                        )
                        self.bracket = t + h
                        rollback()
                        continue
                elif extrapolation is not None and not implicit:
                    err = extrapolation.error(h, self.y, y_full, *self.tolerance)
                if not self.motion:
                    # nothing to estimate an error of (every body's contact is integrated by its element)
                    err, y_half, d_half = 0.0, y_full, d_full
                elif err is not None:
                    # the force extrapolation: the step itself is kept
                    order, y_half, d_half = extrapolation.order, y_full, d_full
                else:
                    rollback()
                    half = 0.5 * h
                    self._advance(t, half, implicit)
                    # (an implicit half step makes its own exchange at t + half)
                    y_mid, d_mid = self._measure(t + half, light=implicit)
                    if d_mid != self.d and half > self.window and self.bracket is None:
                        self.records.append(
                            StepRecord(t, h, False, "event", math.nan, implicit, self.calls)
                        )
                        self.bracket = t + half
                        rollback()
                        continue
                    self._advance(t + half, half, implicit)
                    y_half, d_half = self._measure(t + h)
                    err = self._error(y_half, y_full, order)
                # (at the smallest step, or at it with the sliver before the limit added, the step
                # is kept whatever its error: the run goes on)
                if not err <= 1.0 and h > self.hmin and self.h > self.hmin:
                    self.records.append(StepRecord(t, h, False, "error", err, implicit, self.calls))
                    if implicit:
                        self.failures += 1
                        self.explicit_only = self.failures >= 2
                    self.h = max(  # (never below the smallest step: the run must go on)
                        h
                        * max(
                            self.SHRINK,
                            self.SAFETY * err ** (-1.0 / (order + 1)) if err > 0 else 1.0,
                        ),
                        self.hmin,
                    )
                    rollback()
                    continue
            except EarlyReturn as early:
                # an FMU's event inside the step, at a time it located: step to it exactly
                self.records.append(
                    StepRecord(t, h, False, "event", math.nan, implicit, self.calls)
                )
                if regular and not implicit:
                    # the FMUs that returned early stay at the event; the others, restored with
                    # the inputs of the exchange at t (the last measurement's), step to it. An
                    # element that integrates its contacts (what makes the steps regular) then
                    # plans its next step with the rest of the one asked for, the step that
                    # follows here too (a step taken again up to the event would end at it, and
                    # the next one be planned with that length)
                    h = early.time - t
                    self._restore(saved, keep=early.names)
                    self.do_steps.others(early.names)(t, h)
                    y_half, d_half = self._measure(t + h)
                    err = 0.0
                else:
                    self.bracket = self.event_at = early.time
                    rollback()
                    continue
            self.records.append(StepRecord(t, h, True, "", err, implicit, self.calls))
            if implicit:
                self.failures = 0
            if err > 1.0 and self.unmet is None:
                self._report_unmet(t, h, err, implicit)
            factor = (
                self.GROW
                if err == 0.0
                else min(self.GROW, max(self.SHRINK, self.SAFETY * err ** (-1.0 / (order + 1))))
            )
            if not (self.bracket is not None and t + h < self.bracket) or d_half != self.d:
                # (the bracket's end reached, or the change it bracketed taken in this step)
                self.bracket = self.event_at = None
            if h < limit - t or self.h <= h:
                # (a step cut by the limit keeps the planned size; none below the smallest step)
                self.h = max(h * factor, self.hmin)
            if factor >= self.GROW:
                # after an implicit step rejected by its error, the steps stay explicit until the
                # error of one allows the largest growth: then an implicit one may do again
                self.explicit_only = False
            self.y, self.d = y_half, d_half
            return t + h
