"""Partitioned adaptive steps (scheme="multirate"): the FMUs away from where the motion needs small
steps keep the long ones.

:class:`MultirateAlgorithm` takes the adaptive algorithm's steps (cosim.algorithms.adaptive, tuned by
the same :class:`~.adaptive.Adaptive`) with one change. Where a step is explicit and estimated by
the force extrapolation, the estimate is made per body. An attempt of size H by every FMU in which
only some bodies are above the tolerance, a body's own discrete outputs changed, or an element
changed whose change, estimated as a jump, is above the tolerance for a body it acts on, is not
repeated by every FMU: those bodies are *active*. Their *region* (the active bodies and their
neighbours, the bodies that share an element with one; every element acting on those; the signal
sources feeding those elements) is undone to t and integrated again over [t, t + H] by an
adaptive algorithm of its own (its own steps, events, error estimate and implicit coupling). A body
outside the region that one of its elements acts on (a boundary body) moves, as the region sees
it, along the cubic through its position and velocity at t and at t + H of the long step
(:class:`BoundaryBody`), which integrates the forces the region's elements put on it.

The exchange at t + H with every FMU then estimates every body outside the region again: with the
forces at the step's end, as the force extrapolation does, and a boundary body also with the
integral of the region's forces against what the long step gave it (its impulse and the impulse's
moment), and with what its error does to the region through the elements between them (an element
of stiffness c and damping d gives a region body of inertia m a velocity error (c*ds + d*dv)*H/m).
A body above the tolerance becomes active and the region is integrated again. The next long step
follows the error of the bodies outside the region.

Where the long step would be implicit, a bisection is under way, an element integrates its contact
itself, an input is driven, or more than half the bodies are active, the step is the adaptive
algorithm's own (every FMU). Every recording time ends a long step (Adaptive.dense is False):
the regions' own steps are not recorded. Every attempt of a region is recorded with the FMUs it
took (StepRecord.fmus).
"""

from dataclasses import replace
from types import SimpleNamespace

from .adaptive import AdaptiveAlgorithm, StepRecord
from .base import Run


class BoundaryBody:
    """A body outside a region as the region sees it: an FMU stand-in whose position, velocity and
    acceleration outputs follow the cubic through (s0, v0) at t0 and (s1, v1) at t0 + h, at the time
    its steps reached (fmi2DoStep advances it; fmi2GetFMUstate and fmi2SetFMUstate keep and restore
    that time). It declares no inertia: it is moved, not estimated."""

    def __init__(self, inst, kinds):
        self.name = inst.name
        self.path = inst.path
        self.kinds = kinds  # {value reference: "s" | "v" | "a"}
        self.md = SimpleNamespace(outputs=[], modelVariables=[], defaultExperiment=None)
        self.variables = {}
        self.derivatives = self.interpolates = False
        self.log = []
        self.now = self.t0 = self.h = 0.0
        self.s0 = self.v0 = self.s1 = self.v1 = 0.0
        self.saved, self.next = {}, 1
        self.force, self.rate = {}, {}  # the forces the region's elements put on it, by input
        self.impulse = self.moment = 0.0  # their integral over the span, and of (t - t0)*F
        self.slave = SimpleNamespace(
            component=None,
            early_return=False,
            _functions={
                "fmi2GetReal": self._get,
                "fmi2SetReal": self._set,
                "fmi2SetRealInputDerivatives": self._set_rate,
                "fmi2DoStep": self._step,
                "fmi2GetFMUstate": self._save,
                "fmi2SetFMUstate": self._restore,
                "fmi2FreeFMUstate": self._free,
            },
        )

    def span(self, t0, h, s0, v0, s1, v1):
        """The motion over [t0, t0 + h], from t0."""
        self.t0, self.h, self.s0, self.v0, self.s1, self.v1 = t0, h, s0, v0, s1, v1
        self.now, self.impulse, self.moment = t0, 0.0, 0.0

    def motion(self, t):
        """(s, v, a) at t: the cubic Hermite interpolant."""
        h = self.h
        if h <= 0.0:
            return self.s1, self.v1, 0.0
        x = (t - self.t0) / h
        s0, s1, hv0, hv1 = self.s0, self.s1, h * self.v0, h * self.v1
        s = (
            (2 * x**3 - 3 * x**2 + 1) * s0
            + (x**3 - 2 * x**2 + x) * hv0
            + (-2 * x**3 + 3 * x**2) * s1
            + (x**3 - x**2) * hv1
        )
        v = (
            (6 * x**2 - 6 * x) * s0
            + (3 * x**2 - 4 * x + 1) * hv0
            + (6 * x - 6 * x**2) * s1
            + (3 * x**2 - 2 * x) * hv1
        ) / h
        a = ((12 * x - 6) * s0 + (6 * x - 4) * hv0 + (6 - 12 * x) * s1 + (6 * x - 2) * hv1) / h**2
        return s, v, a

    def discrete_outputs(self):
        return []

    def fail(self, what, exc, t=None):  # (never: its calls do not fail)
        raise RuntimeError(f"{self.name} (boundary): {what}: {exc}")

    def _get(self, component, vrs, n, buf):
        values = dict(zip("sva", self.motion(self.now)))
        for i in range(n):
            buf[i] = values[self.kinds[vrs[i]]]
        return 0

    def _set(self, component, vrs, n, buf):
        for i in range(n):
            self.force[vrs[i]] = buf[i]
        return 0

    def _set_rate(self, component, vrs, n, order, buf):
        for i in range(n):
            self.rate[vrs[i]] = buf[i]
        return 0

    def _step(self, component, t, h, no_prior):
        # the forces over the step, F + (tau - t)*dF/dt, integrated exactly
        f, r, a = sum(self.force.values()), sum(self.rate.values()), t - self.t0
        self.impulse += f * h + r * h * h / 2.0
        self.moment += a * (f * h + r * h * h / 2.0) + f * h * h / 2.0 + r * h**3 / 3.0
        self.now = t + h
        return 0

    def _save(self, component, ref):
        ref._obj.value = self.next
        self.saved[self.next] = (
            self.now,
            self.impulse,
            self.moment,
            dict(self.force),
            dict(self.rate),
        )
        self.next += 1
        return 0

    def _restore(self, component, state):
        now, impulse, moment, force, rate = self.saved[state.value]
        self.now, self.impulse, self.moment = now, impulse, moment
        self.force, self.rate = dict(force), dict(rate)
        return 0

    def _free(self, component, ref):
        self.saved.pop(ref._obj.value, None)
        return 0


class _NoInputs:
    """The manipulators of a region: none (a system with driven inputs is not partitioned)."""

    plan = ()

    def __call__(self, t):
        pass


class Region:
    """The FMUs of a region (``names``), its boundary bodies and the adaptive algorithm over them."""

    def __init__(self, names, boundary, algorithm):
        self.names, self.boundary, self.algorithm = names, boundary, algorithm


class MultirateAlgorithm(AdaptiveAlgorithm):
    """Adaptive steps whose attempts are repeated only by the region that needs it (module
    docstring); tuned by an :class:`~.adaptive.Adaptive`."""

    ACTIVE = 0.5  # more active bodies than this fraction: the step is every FMU's
    REGIONS = 256  # regions kept built at most

    def __init__(self, params):
        # every recording time ends a long step (dense=False): the regions' own steps, inside the
        # long ones, are not recorded, and an output interpolated over a long step would miss them
        super().__init__(replace(params, dense=False))

    def initialize(self, run):
        super().initialize(run)
        plan, est = run.plan, self.extrapolation
        integrating = run.system.integrating()
        self.run = run
        self.partitioned = (
            est is not None
            and not integrating
            and not tuple(run.manipulate.plan)
            and len(est.names) > 1
        )
        self.regions = {}
        # the motion vector's layout: (name, vr) -> index, and which are positions
        self.at = {}
        for r in self.motion:
            for vr in r.vr:
                self.at[(r.inst.name, vr)] = len(self.at)
        s_vrs = {(link.source.name, link.s) for link in plan.motion}
        self.velocities_of = {}  # body name: the indices of its velocities
        for key, i in self.at.items():
            if key not in s_vrs:
                self.velocities_of.setdefault(key[0], []).append(i)
        # who acts on whom: the elements on each node's body, each element's bodies, each
        # element's signal sources
        self.elements = {}
        self.bodies = {}
        for link in plan.motion:
            self.elements.setdefault(link.source.name, set()).add(link.target.name)
            self.bodies.setdefault(link.target.name, set()).add(link.source.name)
        self.sources = {}
        for link in plan.signals:
            self.sources.setdefault(link.target.name, set()).add(link.source.name)
        # where the explicit exchange reads each coupled element's stiffness and damping
        self.stiff_of = {}
        if self.coupling is not None:
            at = self.explicit.force_at
            for element in self.coupling.elements:
                name = element.inst.name
                self.stiff_of[name] = (at[(name, element.c)], at[(name, element.d)])
        # the owner of every discrete output in the discrete state
        self.owners = [r.inst.name for r in self.discrete for _ in r.vr]

    # ---- a region ---------------------------------------------------------------------------

    def _region(self, active):
        """The Region of the active bodies (built once per set)."""
        key = frozenset(active)
        region = self.regions.get(key)
        if region is not None:
            return region
        if len(self.regions) >= self.REGIONS:
            self.regions.clear()  # (each holds an algorithm bound to its FMUs: a bounded number)
        plan = self.run.plan
        members = set(active)
        for body in active:
            for element in self.elements.get(body, ()):
                members.add(element)
                members |= self.sources.get(element, set())
        instances = {
            name: inst for name, inst in self.run.system.instances.items() if name in members
        }
        boundary = {}

        def stand_in(inst):
            if inst.name not in boundary:
                boundary[inst.name] = BoundaryBody(inst, {})
            return boundary[inst.name]

        motion, accel = [], []
        for link in plan.motion:
            if link.target.name not in members:
                continue
            if link.source.name not in members:
                fake = stand_in(link.source)
                fake.kinds.update({link.s: "s", link.v: "v"})
                link = link._replace(source=fake)
            motion.append(link)
        for link in plan.accel:
            if link.target.name not in members:
                continue
            if link.source.name not in members:
                fake = stand_in(link.source)
                fake.kinds[link.a] = "a"
                link = link._replace(source=fake)
            accel.append(link)
        forces = []
        for f in plan.forces:
            if f.body.name in members:
                forces.append(f)
            elif f.body.name in boundary:
                # the forces of the region's elements on a boundary body: integrated by its
                # stand-in, for its error with the region's forces
                inside = [src for src in f.sources if src[0].name in members]
                if inside:
                    forces.append(f._replace(body=boundary[f.body.name], sources=inside))
        signals = [s for s in plan.signals if s.target.name in members]
        subplan = plan._replace(motion=motion, accel=accel, forces=forces, signals=signals)
        instances.update(boundary)
        system = SimpleNamespace(instances=instances, integrating=lambda: set())
        algorithm = AdaptiveAlgorithm(self.params)
        algorithm.prescribed = set(boundary)
        algorithm.setup(system, self.t0, self.t0 + 1.0, None)
        algorithm.initialize(Run(system, subplan, _NoInputs()))
        # what the long step gave each boundary body of the region's elements: their force
        # sources, (value, rate) at the step's start (do_step's snapshot)
        given = {f.body.name: list(f.sources) for f in forces if f.body.name in boundary}
        region = Region(members, boundary, algorithm)
        region.given = given
        self.regions[key] = region
        return region

    def _buffered(self, active, bodies):
        """The active bodies and their neighbours (a body that shares an element with one): a
        region's boundary is one element away from every active body's elements."""
        out = set(active)
        for body in active:
            for element in self.elements.get(body, ()):
                out |= {b for b in self.bodies.get(element, ()) if b in bodies}
        return out

    def _solve(self, region, t, h, y0, y1):
        """Integrate the region over [t, t + h] (its FMUs restored to t), the boundary bodies
        moving from y0 to y1."""
        for name, fake in region.boundary.items():
            s_vr = next(vr for vr, kind in fake.kinds.items() if kind == "s")
            v_vr = next(vr for vr, kind in fake.kinds.items() if kind == "v")
            i, j = self.at[(name, s_vr)], self.at[(name, v_vr)]
            fake.span(t, h, y0[i], y0[j], y1[i], y1[j])
        a = region.algorithm
        a.records, a.unmet, a.bracket, a.event_at = [], None, None, None
        a.explicit_only, a.failures = False, 0
        a.h, a.hmax, a.hmin, a.window = min(self.h, h) * 0.5, h, self.hmin, self.window
        a.start(t)
        tau, end = t, t + h
        while tau < end:
            tau = a.do_step(tau, end)
        n = len(region.names)
        self.records.extend(r._replace(reason=r.reason or "region", fmus=n) for r in a.records)

    def _boundary_errors(self, region, h, y, rtol, atol):
        """Per boundary body that moves, the weighted error of the motion the region was given.
        The body is off by what the long step's own estimate says, and by the forces the region's
        elements put on it: the integral of what it was given (their values and rates at the
        step's start, held linear) against the integral of what they did over the region's steps
        (dv = |dJ|/m, ds = |h*dJ - dK|/m, J the impulse, K its moment about t). What that does to
        the region: an element of stiffness c and damping d between it and a region body of
        inertia m_r gives that body dv_r = (c*ds + d*dv)*h/m_r; the larger of the two weighted
        errors is the boundary body's."""
        out = {}
        est = self.extrapolation
        masses = dict(zip(est.names, (slot[0] for slot in est.slots)))
        own = dict(zip(est.names, est.deviations(h)))
        for name, sources in region.given.items():
            if name not in masses:
                continue  # a wall
            fake = region.boundary[name]
            f0 = sum(self.start_forces[(ti.name, vr)][0] for ti, vr in sources)
            r0 = sum(self.start_forces[(ti.name, vr)][1] for ti, vr in sources)
            dj = fake.impulse - (f0 * h + r0 * h * h / 2.0)
            dk = fake.moment - (f0 * h * h / 2.0 + r0 * h**3 / 3.0)
            m = masses[name]
            ds = abs(h * dj - dk) / m + own[name][0]
            dv = abs(dj) / m + own[name][1]
            worst = 0.0
            for vr, kind in fake.kinds.items():
                if kind in ("s", "v"):
                    i = self.at[(name, vr)]
                    worst = max(worst, (ds if kind == "s" else dv) / (atol + rtol * abs(y[i])))
            # its effect on the region's bodies through the elements between them
            for element in self.elements.get(name, ()):
                if element not in region.names or element not in self.stiff_of:
                    continue
                (cb, ci), (db, di) = self.stiff_of[element]
                force = abs(cb[ci]) * ds + abs(db[di]) * dv
                for other in self.bodies.get(element, ()):
                    if other == name or other not in region.names or other not in masses:
                        continue
                    dv_r = force * h / masses[other]
                    for i in self.velocities_of.get(other, ()):
                        worst = max(worst, dv_r / (atol + rtol * abs(y[i])))
            out[name] = worst
        return out

    # ---- the long step ----------------------------------------------------------------------

    def do_step(self, t, limit):
        if not self.partitioned or self.bracket is not None:
            return super().do_step(t, limit)
        h = min(self.h, self.hmax, limit - t)
        if limit - (t + h) < self.hmin:
            h = limit - t
        self.interface = [(cb[ci], db[di], mu) for (cb, ci), (db, di), mu in self.stiffness]
        if self._stiff(t, h) or h <= self.window:
            return super().do_step(t, limit)
        est = self.extrapolation
        est.start()
        rtol, atol = self.tolerance
        fat, dat = self.explicit.force_at, self.explicit.der_at
        self.start_forces = {
            key: (buf[i], dat[key][0][dat[key][1]] if key in dat else 0.0)
            for key, (buf, i) in fat.items()
        }
        saved, saved_at = self._save(), self.exchanged_at
        try:
            self.calls = 0
            self._advance(t, h, False)
            y1, d1 = self._measure(t + h)
            errors = dict(zip(est.names, est.per_body(h, y1, rtol, atol)))
            active = {b for b, e in errors.items() if e > 1.0}
            if d1 != self.d:
                jumps = dict(zip(est.names, est.per_body(h, y1, rtol, atol, jump=True)))
                for i, (before, after) in enumerate(zip(self.d, d1)):
                    if before == after:
                        continue
                    owner = self.owners[i]
                    if owner in errors:  # a body's own change: located in its region
                        active.add(owner)
                    elif self.across:  # an element's: estimated as a jump on its bodies
                        active |= {b for b in self.bodies.get(owner, ()) if jumps.get(b, 0.0) > 1.0}
                    else:  # (events="locate") located in the region of its bodies
                        active |= {b for b in self.bodies.get(owner, ()) if b in errors}
            if active and len(active) > self.ACTIVE * len(errors):
                self._restore(saved)
                self.exchanged_at = saved_at
                self.records.append(
                    StepRecord(t, h, False, "error", max(errors.values()), False, self.calls)
                )
                return super().do_step(t, limit)
            y0, inside = self.y, set()
            while active:
                inside = self._buffered(active, errors)
                region = self._region(inside)
                self._restore(saved, keep=set(self.run.system.instances) - region.names)
                self._solve(region, t, h, y0, y1)
                y_end, d_end = self._measure(t + h)
                errors = dict(zip(est.names, est.per_body(h, y_end, rtol, atol)))
                for name, e in self._boundary_errors(region, h, y_end, rtol, atol).items():
                    errors[name] = max(errors.get(name, 0.0), e)
                grow = {b for b, e in errors.items() if e > 1.0 and b not in inside}
                if not grow:
                    y1, d1 = y_end, d_end
                    break
                active |= grow
                if len(active) > self.ACTIVE * len(errors):
                    self._restore(saved)
                    self.exchanged_at = saved_at
                    return super().do_step(t, limit)
            outside = [e for b, e in errors.items() if b not in inside]
            err = max(outside, default=0.0)
            self.records.append(StepRecord(t, h, True, "", err, False, self.calls))
            factor = (
                self.GROW
                if err == 0.0
                else min(self.GROW, max(self.SHRINK, self.SAFETY * err ** (-1.0 / 3.0)))
            )
            if h < limit - t or self.h <= h:
                self.h = max(h * factor, self.hmin)
            self.y, self.d = y1, d1
            return t + h
        finally:
            self._free(saved)
