"""The adaptive master's error estimate of an explicit step from the forces its bodies were given
(cosim.algorithms.adaptive, item 3 of its docstring): a body that integrates its input exactly is
off only by the force it was given over the step, F(t) + tau*dF/dt, against the force it meets at
the step's end; per body (multirate) or the largest over all."""

import math

from ..implicit import declared_inertia


class ForceExtrapolation:
    """The error of an explicit step from the forces its bodies were given (module docstring, item
    3): per moving body its inertia m, the (buffer, index) slots where the exchange leaves the
    forces on it and their first derivatives, and the indices of its s and v in the motion vector y;
    the indices of the motion of the flanges without a declared inertia, which must not move (a
    Fixed). ``start()`` takes the forces of the exchange at the step's start, ``error(h, y0, y)``
    the weighted estimate at its end (None: a flange without inertia moved, no estimate)."""

    def __init__(self, bodies, still, order):
        self.bodies = bodies  # [(m, force slots, rate slots, s indices, v indices, hold factors)]
        self.still = still
        self.order = order
        self.start_forces = []

    @classmethod
    def of(cls, plan, readers, driven):
        """The estimate for the exchange plan (the explicit exchange's force and rate slots read by
        the bodies' motion readers ``readers``), or None where it does not apply: a body takes an
        input that is not an exchanged force (a signal, a driven input), or its forces are not all
        passed with their derivatives and some are (mixed holds)."""
        where = {}
        for r in readers:
            for vr in r.vr:
                where[(r.inst.name, vr)] = len(where)
        fed = {link.target.name for link in plan.signals} | set(driven)
        bodies, still, holds, names = [], [], set(), []
        for r in readers:
            inst = r.inst
            links = [m for m in plan.motion if m.source is inst]
            s_at = [where[(inst.name, m.s)] for m in links]
            v_at = [where[(inst.name, m.v)] for m in links]
            m = declared_inertia(inst)
            if not (m is not None and m > 0.0 and math.isfinite(m)):
                still += s_at + v_at
                continue
            if inst.name in fed:
                return None
            forces = [f for f in plan.forces if f.body is inst]
            holds.update(f.with_derivative for f in forces)
            bodies.append((m, forces, s_at, v_at))
            names.append(inst.name)
        if len(holds) > 1:
            return None
        first = holds != {False}  # forces linear over the step (first-order hold)
        # a deviation growing as tau^2 (first-order hold) or tau: its integrals over the step
        factors = (3.0, 12.0) if first else (2.0, 6.0)
        estimate = cls(
            [(m, forces, s_at, v_at, factors) for m, forces, s_at, v_at in bodies],
            still,
            2 if first else 1,
        )
        estimate.names = names  # the bodies' instance names, in order
        return estimate

    def bind(self, exchange):
        """The slots of the explicit exchange's force values and derivatives, per body."""
        fat, dat = exchange.force_at, exchange.der_at
        self.slots = [
            (
                m,
                [fat[(ti.name, tf)] for f in forces for ti, tf in f.sources],
                [dat[(ti.name, tf)] for f in forces if f.with_derivative for ti, tf in f.sources],
                s_at,
                v_at,
                factors,
            )
            for m, forces, s_at, v_at, factors in self.bodies
        ]
        return self

    def start(self):
        """The forces on each body and their rates, as the exchange at the step's start set them."""
        self.start_forces = [
            (sum(b[i] for b, i in values), sum(b[i] for b, i in rates))
            for _, values, rates, _, _, _ in self.slots
        ]

    def deviations(self, h, jump=False):
        """(ds, dv) of each body (in the order of ``names``) over the step of size h, as
        :meth:`error` makes them."""
        out = []
        for (m, values, _, _, _, factors), (f0, rate) in zip(self.slots, self.start_forces):
            kv, ks = (1.0, 2.0) if jump else factors
            df = abs(sum(b[i] for b, i in values) - f0 - rate * h)
            out.append((df * h * h / (ks * m), df * h / (kv * m)))
        return out

    def _weighed(self, h, y, rtol, atol, jump):
        """Per body (in the order of ``names``): its weighted error over the step of size h ending
        at y, and the index in y where it is largest (None: no motion)."""
        out = []
        for (_, _, _, s_at, v_at, _), (ds, dv) in zip(self.slots, self.deviations(h, jump)):
            worst, at = 0.0, None
            for d, indices in ((ds, s_at), (dv, v_at)):
                for i in indices:
                    e = d / (atol + rtol * abs(y[i]))
                    if e > worst:
                        worst, at = e, i
            out.append((worst, at))
        return out

    def per_body(self, h, y, rtol, atol, jump=False):
        """The weighted error of each body (in the order of ``names``) over the step of size h
        ending at y, as :meth:`error` weighs it."""
        return [e for e, _ in self._weighed(h, y, rtol, atol, jump)]

    def error(self, h, y0, y, rtol, atol, jump=False):
        """The weighted error of the step from y0 to y (the exchange at its end made), or None;
        jump: a step across a discrete change, the deviation of the forces taken as a jump at the
        step's start (the worst place for it: dv = dF*h/m, ds = dF*h^2/(2m))."""
        for i in self.still:
            if y[i] != y0[i]:
                return None
        worst = 0.0
        for e, at in self._weighed(h, y, rtol, atol, jump):
            if e > worst:
                worst, self.worst_at = e, at
        return worst
