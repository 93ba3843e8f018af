"""The monolithic reference solution of a generated system (systems.Spec): all bodies in one ODE,
every law written out again here from the components' documentation, solved tightly with every
kink, jump and state change of every law located as an event.

Independent of the FMUs' physics: this module imports nothing from contactfmu.components,
.mechanics or .fmi (tests/test_reference_independence.py checks it).

Each law is solved region by region: between two events every law is one smooth formula (its
region, or discrete state, held), and each region has guards, functions of the motion that stay
> 0 while the region holds. After every accepted step of the integrator the guards are evaluated;
where one went negative its root is found on the step's dense output, the earliest root ends the
segment, the states are decided just after it, and the integrator starts again there. The laws,
with s_rel = deflection of the link (s_rel = x_b - x_a - rest), v_rel its rate, f = flange_b.f
(the body at flange_b receives -f, the body at flange_a +f):

* Spring (MSL): f = c*(s_rel - s_rel0); Damper: f = d*v_rel; SpringDamper: the sum.
* ElastoGap (MSL 4.1): contact while s_rel < s_rel0; there f_c = -c*|s_rel - s_rel0|^n
  (f_ref = c*s_ref, s_ref = 1 m), f_d2 = d*v_rel, f_d = min(max(f_d2, f_c), -f_c), f = f_c + f_d;
  open: f = 0. Regions: open, contact with f_d = f_d2, f_d clamped to f_c, f_d clamped to -f_c.
* TranslationalHardstop (MapleSim): f = c*(s_rel - b/2) + d*v_rel for s_rel > b/2,
  c*(s_rel + b/2) + d*v_rel for s_rel < -b/2, 0 in between (the force jumps by d*v_rel).
* EndStop, elastic (SimulationX; dx = s_rel, dv = v_rel, Fi = f): states free (0), at stop 1 (1:
  Fi = k1*(dx - l1) + b1*dv, left when Fi <= 0, to detaching (11) if dx > l1 still, else free),
  detaching from stop 1 (11: Fi = 0; free when dx < l1, at stop 1 again when dv > 0), and the same
  for stop 2 (2, 21: Fi = k2*(dx + l2) + b2*dv <= 0, at dx <= -l2); free: at stop 1 when
  dx >= l1, at stop 2 when dx <= -l2.
* its friction in the backlash (friction = true, continuous transition, kindF = 1), in parallel:
  Fi = Fstop + Ff, Ff = Fst*T(dv/dvL) within |dv| <= dvL (T the Gevrey or, with adv, the tanh
  transition mapped to -1 .. 1), sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)) beyond; the
  stop's states follow Fstop.
* EndStop, rigid (mode 1): impacts with restitution ci, permanent contact as a holonomic
  constraint, separation at eps_Fi (rigid.py).
* Mass (MSL): m*a = the sum of the forces on it.
* MassWithStopAndFriction (MSL 4.1, L = 0): sliding forward/backward, m*a = F - (F_prop*v +-
  (F_Coulomb + F_Stribeck*exp(-fexp*|v|))), until v = 0 or a stop (s = smax moving forward,
  s = smin backward: s kept there, v := 0); stuck (v = 0, a = 0) while the force F on it stays
  within f0_max = 1.001*(F_Coulomb + F_Stribeck), breaks away beyond it (not into the stop it
  touches).
* the drive (MSL Sine into Force): amplitude*sin(2*pi*freq*t + phase) + offset, towards +s.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import LSODA, Radau
from scipy.optimize import brentq

from .rigid import HELD, RigidEndStop, hold, impacts

# ---- the link laws: force in a region, the region's guards, the region after an event ----------


class Linear:
    """Spring, Damper, SpringDamper: f = c*(s_rel - s_rel0) + d*v_rel, one region."""

    def __init__(self, c=0.0, d=0.0, s_rel0=0.0):
        self.c, self.d, self.s_rel0 = c, d, s_rel0

    def force(self, s, v, state):
        return self.c * (s - self.s_rel0) + self.d * v

    def guards(self, s, v, state):
        return ()

    def state(self, s, v, prev):
        return 0


class ElastoGap:
    OPEN, FREE_DAMPER, LOW, HIGH = 0, 1, 2, 3

    def __init__(self, c, d, s_rel0=0.0, n=1.0):
        self.c, self.d, self.s_rel0, self.n = c, d, s_rel0, n

    def _fc(self, s):
        # -c*|s - s_rel0|^n in contact (s < s_rel0), continued smoothly (odd) beyond it
        u = s - self.s_rel0
        return math.copysign(self.c * abs(u) ** self.n, u)

    def force(self, s, v, state):
        if state == self.OPEN:
            return 0.0
        fc = self._fc(s)
        if state == self.FREE_DAMPER:
            return fc + self.d * v
        return 2.0 * fc if state == self.LOW else 0.0

    def guards(self, s, v, state):
        if state == self.OPEN:
            return (s - self.s_rel0,)
        fc, fd2 = self._fc(s), self.d * v
        contact = self.s_rel0 - s
        if state == self.FREE_DAMPER:
            return (contact, fd2 - fc, -fc - fd2)
        if state == self.LOW:
            return (contact, fc - fd2)
        return (contact, fd2 + fc)

    def state(self, s, v, prev):
        if not s < self.s_rel0:
            return self.OPEN
        fc, fd2 = self._fc(s), self.d * v
        if fd2 < fc:
            return self.LOW
        if fd2 > -fc:
            return self.HIGH
        return self.FREE_DAMPER


class Hardstop:
    INSIDE, ABOVE, BELOW = 0, 1, -1

    def __init__(self, c, d, b):
        self.c, self.d, self.half = c, d, 0.5 * b

    def force(self, s, v, state):
        if state == self.INSIDE:
            return 0.0
        return self.c * (s - state * self.half) + self.d * v

    def guards(self, s, v, state):
        if state == self.INSIDE:
            return (self.half - s, s + self.half)
        return (state * s - self.half,)

    def state(self, s, v, prev):
        if s > self.half:
            return self.ABOVE
        if s < -self.half:
            return self.BELOW
        return self.INSIDE


class ElasticEndStop:
    FREE, STOP1, STOP2, DETACH1, DETACH2 = 0, 1, 2, 11, 21

    def __init__(self, l1, l2, k1, k2, b1, b2, mode=2):
        self.l1, self.l2, self.k1, self.k2, self.b1, self.b2 = l1, l2, k1, k2, b1, b2

    def force(self, s, v, state):
        if state == self.STOP1:
            return self.k1 * (s - self.l1) + self.b1 * v
        if state == self.STOP2:
            return self.k2 * (s + self.l2) + self.b2 * v
        return 0.0

    def guards(self, s, v, state):
        if state == self.FREE:
            return (self.l1 - s, s + self.l2)
        if state == self.STOP1:
            return (self.force(s, v, state),)
        if state == self.STOP2:
            return (-self.force(s, v, state),)
        if state == self.DETACH1:
            return (s - self.l1, -v)
        return (-self.l2 - s, v)

    def state(self, s, v, prev):
        for _ in range(3):  # a transition may enable the next one at the same instant
            now = self._next(s, v, prev)
            if now == prev:
                return now
            prev = now
        return prev

    def _next(self, s, v, state):
        if state == self.FREE:
            return self.STOP1 if s >= self.l1 else self.STOP2 if s <= -self.l2 else self.FREE
        if state == self.STOP1:
            if self.force(s, v, state) > 0.0:
                return state
            return self.DETACH1 if s > self.l1 else self.FREE
        if state == self.STOP2:
            if self.force(s, v, state) < 0.0:
                return state
            return self.DETACH2 if s < -self.l2 else self.FREE
        if state == self.DETACH1:
            return self.FREE if s < self.l1 else self.STOP1 if v > 0.0 else state
        return self.FREE if s > -self.l2 else self.STOP2 if v < 0.0 else state


class Friction:
    """SimulationX EndStop's friction in the backlash, continuous transition (kindF = 1), in
    parallel to the stop: Ff = Fst*T(dv/dvL) for |dv| <= dvL, T the transition mapped to -1 .. 1
    (z = (dv/dvL + 1)/2; kindTrans 1, Gevrey: 0.5*(1 + tanh(eps_sigma*(z - 0.5)/(z*(1 - z)))); 2,
    tanh: 0.5*(1 + tanh((z - 0.5)/eps_tau))), beyond sign(dv)*(Fsl + (Fst - Fsl)*exp(1 - |dv|/dvL)).
    Regions: dv below -dvL (-1), within (0), above dvL (1)."""

    def __init__(self, Fst, Fsl, dvL, kindTrans=1, eps_sigma=1.0, eps_tau=0.1):
        self.Fst, self.Fsl, self.dvL = Fst, Fsl, dvL
        self.kind, self.eps_sigma, self.eps_tau = kindTrans, eps_sigma, eps_tau

    def force(self, v, band):
        if band == 0:
            z = (v / self.dvL + 1.0) / 2.0
            if self.kind == 2:
                t01 = 0.5 * (1.0 + math.tanh((z - 0.5) / self.eps_tau))
            elif z <= 0.0 or z >= 1.0:
                t01 = 0.0 if z <= 0.0 else 1.0
            else:
                t01 = 0.5 * (1.0 + math.tanh(self.eps_sigma * (z - 0.5) / (z * (1.0 - z))))
            return self.Fst * (2.0 * t01 - 1.0)
        tail = self.Fsl + (self.Fst - self.Fsl) * math.exp(1.0 - abs(v) / self.dvL)
        return math.copysign(tail, v)

    def guards(self, v, band):
        if band == 0:
            return (self.dvL - v, v + self.dvL)
        return (band * v - self.dvL,)

    def band(self, v):
        return 1 if v > self.dvL else -1 if v < -self.dvL else 0


class EndStopWithFriction:
    """The elastic EndStop with friction in parallel: Fi = Fstop + Ff; the stop's states follow its
    own force Fstop (ElasticEndStop), the friction its regions (Friction). State: (stop state,
    friction region)."""

    def __init__(self, stop, friction):
        self.stop, self.friction = stop, friction

    def force(self, s, v, state):
        return self.stop.force(s, v, state[0]) + self.friction.force(v, state[1])

    def guards(self, s, v, state):
        return self.stop.guards(s, v, state[0]) + self.friction.guards(v, state[1])

    def state(self, s, v, prev):
        stop = prev[0] if isinstance(prev, tuple) else prev
        return (self.stop.state(s, v, stop), self.friction.band(v))


def link_law(link):
    """The law of a systems.Link."""
    p = link.params
    if link.kind == "Spring":
        return Linear(c=p["c"], s_rel0=p.get("s_rel0", 0.0))
    if link.kind == "Damper":
        return Linear(d=p["d"])
    if link.kind == "SpringDamper":
        return Linear(c=p["c"], d=p["d"], s_rel0=p.get("s_rel0", 0.0))
    if link.kind in ("ElastoGap", "ElastoGapHertz"):
        return ElastoGap(p["c"], p["d"], p.get("s_rel0", 0.0), p.get("n", 1.0))
    if link.kind == "TranslationalHardstop":
        return Hardstop(p["c"], p["d"], p["b"])
    if link.kind in ("EndStop", "EndStopRigid") and p.get("mode", 2) == 1:
        return RigidEndStop.of(link.name, p)
    if link.kind in ("EndStop", "EndStopFriction"):
        if p.get("mode", 2) != 2:
            raise ValueError(f"{link.name}: the reference knows the elastic EndStop only (mode 2)")
        stop = ElasticEndStop(**{k: p[k] for k in ("l1", "l2", "k1", "k2", "b1", "b2") if k in p})
        if not p.get("friction", False):
            return stop
        if p.get("kindF", 1) != 1:
            raise ValueError(f"{link.name}: the reference knows the continuous friction only")
        # the transition's shape and coefficients are advanced settings: their defaults (Gevrey,
        # eps_sigma = 1) unless adv
        names = ("kindTrans", "eps_sigma", "eps_tau") if p.get("adv", False) else ()
        shape = {k: p[k] for k in names if k in p}
        return EndStopWithFriction(stop, Friction(p["Fst"], p["Fsl"], p["dvL"], **shape))
    raise ValueError(f"{link.name}: no reference law for {link.kind!r}")


# ---- the bodies ---------------------------------------------------------------------------------


class Mass:
    def __init__(self, m):
        self.m = m

    def accel(self, s, v, f, state):
        return f / self.m

    def guards(self, s, v, f, state):
        return ()

    def state(self, s, v, f, prev):
        return 0


class StopAndFriction:
    """MassWithStopAndFriction with L = 0 (module docstring)."""

    BACKWARD, STUCK, FORWARD = -1, 0, 1

    def __init__(self, m, F_prop, F_Coulomb, F_Stribeck, fexp, smin, smax):
        self.m, self.F_prop, self.F_Coulomb = m, F_prop, F_Coulomb
        self.F_Stribeck, self.fexp = F_Stribeck, fexp
        self.lo, self.hi = smin, smax
        self.f0_max = 1.001 * (F_Coulomb + F_Stribeck)

    def accel(self, s, v, f, state):
        if state == self.STUCK:
            return 0.0
        # the smooth continuation of exp(-fexp*|v|) through v = 0 (the guard ends the region there)
        friction = self.F_prop * v + state * (
            self.F_Coulomb + self.F_Stribeck * math.exp(-self.fexp * state * v)
        )
        return (f - friction) / self.m

    def guards(self, s, v, f, state):
        if state == self.FORWARD:
            return (v, self.hi - s)
        if state == self.BACKWARD:
            return (-v, s - self.lo)
        return (
            self.f0_max - f if s < self.hi else 1.0,
            f + self.f0_max if s > self.lo else 1.0,
        )

    def state(self, s, v, f, prev):
        """The state just after an event, from `prev` and the motion continued past it (a new state
        starts at v = 0: reinit)."""
        if prev == self.FORWARD and s >= self.hi or prev == self.BACKWARD and s <= self.lo:
            s = min(max(s, self.lo), self.hi)  # the stop reached: at rest there
        elif prev != self.STUCK and v * prev > 0.0:
            return prev  # still sliding
        if f > self.f0_max and s < self.hi:
            return self.FORWARD
        if f < -self.f0_max and s > self.lo:
            return self.BACKWARD
        return self.STUCK

    def reinit(self, s):
        """(s, v) of the body when its state changes: at rest (reinit(v, 0)), kept within its stops
        (reinit(s) at a stop)."""
        return min(max(s, self.lo), self.hi), 0.0


def body_law(body):
    if body.kind == "Mass":
        return Mass(body.m)
    if body.kind == "MassWithStopAndFriction":
        return StopAndFriction(body.m, **body.params)
    raise ValueError(f"{body.name}: no reference law for {body.kind!r}")


# ---- the network --------------------------------------------------------------------------------


@dataclass
class Solution:
    """The reference on its own time points: ``t``, ``signals`` {"body.s": array, "body.v": array,
    "link.f": array (flange_b.f)}, ``events`` [(time, what)], the integrator's ``steps``."""

    t: np.ndarray
    signals: dict
    events: list
    steps: int

    def at(self, t_eval):
        """The signals on `t_eval` (linear between the reference's dense points)."""
        return {k: np.interp(t_eval, self.t, v) for k, v in self.signals.items()}


class Network:
    """The equations of motion of a systems.Spec (module docstring)."""

    def __init__(self, spec):
        self.spec = spec
        self.bodies = list(spec.bodies)
        index = {b.name: i for i, b in enumerate(self.bodies)}
        self.n = len(self.bodies)
        self.body_laws = [body_law(b) for b in self.bodies]
        self.links = list(spec.links)
        self.laws = [link_law(lk) for lk in self.links]
        # per link: (index of a or -1, position of a if a wall), the same for b, rest
        self.ends = [
            (
                index.get(lk.a, -1),
                spec.walls.get(lk.a, 0.0),
                index.get(lk.b, -1),
                spec.walls.get(lk.b, 0.0),
                lk.rest,
            )
            for lk in self.links
        ]
        self.drives = [(index[d.body], d) for d in spec.drives]
        self.inv_mass = [1.0 / b.m for b in self.bodies]
        self.rigid = [k for k, law in enumerate(self.laws) if isinstance(law, RigidEndStop)]
        for k in self.rigid:
            ia, _, ib, _, _ = self.ends[k]
            if any(i >= 0 and not isinstance(self.body_laws[i], Mass) for i in (ia, ib)):
                raise ValueError(
                    f"{self.links[k].name}: the reference knows rigid EndStops between Mass "
                    "bodies and walls only"
                )

    def relative(self, y):
        """(s_rel, v_rel) of every link."""
        out = []
        for ia, xa, ib, xb, rest in self.ends:
            sa, va = (y[ia], y[self.n + ia]) if ia >= 0 else (xa, 0.0)
            sb, vb = (y[ib], y[self.n + ib]) if ib >= 0 else (xb, 0.0)
            out.append((sb - sa - rest, vb - va))
        return out

    def forces(self, t, y, link_states):
        """(f of every link, the net force on every body)."""
        rel = self.relative(y)
        f = [law.force(s, v, st) for law, (s, v), st in zip(self.laws, rel, link_states)]
        net = [0.0] * self.n
        for fk, (ia, _, ib, _, _) in zip(f, self.ends):
            if ia >= 0:
                net[ia] += fk
            if ib >= 0:
                net[ib] -= fk
        for i, d in self.drives:
            net[i] += d.amplitude * math.sin(2.0 * math.pi * d.freq * t + d.phase) + d.offset
        held = [k for k in self.rigid if link_states[k] in HELD]
        if held:  # the rigid contacts' forces that keep them held (only Mass bodies touch them)
            accel = [fi * w for fi, w in zip(net, self.inv_mass)]
            pairs = [(self.ends[k][0], self.ends[k][2]) for k in held]
            for k, fk, (ia, ib) in zip(held, hold(pairs, self.inv_mass, accel), pairs):
                f[k] = float(fk)
                if ia >= 0:
                    net[ia] += f[k]
                if ib >= 0:
                    net[ib] -= f[k]
        return f, net, rel

    def rhs(self, states):
        link_states, body_states = states

        def f(t, y):
            _, net, _ = self.forces(t, y, link_states)
            n = self.n
            dy = np.empty(2 * n)
            dy[:n] = y[n:]
            for i, (law, st) in enumerate(zip(self.body_laws, body_states)):
                dy[n + i] = law.accel(y[i], y[n + i], net[i], st)
                if st == 0 and isinstance(law, StopAndFriction):
                    dy[i] = 0.0
            return dy

        return f

    def guards(self, t, y, states):
        link_states, body_states = states
        f, net, rel = self.forces(t, y, link_states)
        g = []
        for law, (s, v), st, fk in zip(self.laws, rel, link_states, f):
            g.extend(
                law.guards(s, v, st, fk) if isinstance(law, RigidEndStop) else law.guards(s, v, st)
            )
        n = self.n
        for i, (law, st) in enumerate(zip(self.body_laws, body_states)):
            g.extend(law.guards(y[i], y[n + i], net[i], st))
        return np.asarray(g)

    def decide(self, t, y, states):
        """The states just after an event, from the motion y at t, a little past it."""
        link_states, body_states = states
        f, _, rel = self.forces(t, y, link_states)
        links = [
            law.decide(s, v, fk, st) if isinstance(law, RigidEndStop) else law.state(s, v, st)
            for law, (s, v), st, fk in zip(self.laws, rel, link_states, f)
        ]
        _, net, _ = self.forces(t, y, links)
        n = self.n
        bodies = [
            law.state(y[i], y[n + i], net[i], st)
            for i, (law, st) in enumerate(zip(self.body_laws, body_states))
        ]
        return links, bodies

    def impacts(self, y, states):
        """The states after the pending rigid impacts of `states`, the velocities in y changed."""
        links = impacts(self.laws, self.ends, self.inv_mass, y, states[0], self.n)
        return links, states[1]

    def initial(self):
        y = np.array([b.x for b in self.bodies] + [b.v for b in self.bodies], dtype=float)
        links = [law.state(s, v, 0) for law, (s, v) in zip(self.laws, self.relative(y))]
        bodies = [
            0 if isinstance(law, Mass) else (1 if b.v > 0 else -1 if b.v < 0 else 0)
            for law, b in zip(self.body_laws, self.bodies)
        ]
        return self.impacts(y, self.decide(0.0, y, (links, bodies))), y


def solve(spec, t_eval=None, method="LSODA", rtol=1e-10, atol=1e-12, max_step=None):
    """The reference solution of `spec` over [0, spec.stop_time]: points at the integrator's steps,
    at its events and on `t_eval` (default 2001 points), every event located (module docstring)."""
    net = Network(spec)
    T = spec.stop_time
    states, y = net.initial()
    t = 0.0
    solver_class = {"LSODA": LSODA, "Radau": Radau}[method]
    max_step = max_step or T / 200.0
    grid = np.linspace(0.0, T, 2001) if t_eval is None else np.asarray(t_eval, dtype=float)
    points, events, steps = [(t, y.copy(), states)], [], 0

    def sample(t0, t1, dense, states):  # the points of t_eval inside (t0, t1)
        points.extend((tt, dense(tt), states) for tt in grid[(grid > t0) & (grid < t1)])

    retries = 0  # restarts from one point with the states decided at a step's end
    while t < T:
        solver = solver_class(
            net.rhs(states), t, y, T, rtol=rtol, atol=atol * np.ones_like(y), max_step=max_step
        )
        # a guard on its surface where the segment starts (the event that started it) is armed
        # once it is > 0: only then can its sign change end the segment
        g_prev = net.guards(t, y, states)  # the guards at the last step's end
        armed = g_prev > 0.0
        first, ended = True, False
        while solver.status == "running" and not ended:
            message = solver.step()
            if solver.status == "failed":
                raise RuntimeError(f"reference of {spec.describe()} failed at t = {t}: {message}")
            steps += 1
            t0, t1 = solver.t_old, solver.t
            dense = solver.dense_output()
            g1 = net.guards(t1, solver.y, states)
            stale = ~armed & (g1 < 0.0)
            if first and stale.any() and retries < 2:
                # a state decided just after the event is left at once: decide it again on the
                # motion a step later, and start again from the same point
                states = net.impacts(y, net.decide(t1, solver.y, states))
                retries += 1
                ended = True
                continue
            crossed = np.flatnonzero(armed & (g1 < 0.0))
            armed |= g1 > 0.0
            first = False
            if not crossed.size:
                sample(t0, t1, dense, states)
                points.append((t1, solver.y.copy(), states))
                t, y, retries, g_prev = t1, solver.y.copy(), 0, g1
                continue
            te = t1

            def guard(tt, k):
                # (at t0 the step's own start, which the dense output only approximates)
                return g_prev[k] if tt == t0 else net.guards(tt, dense(tt), states)[k]

            for k in crossed:
                if g_prev[k] <= 0.0:  # on its surface at t0 already
                    te = t0
                    break
                if te == t1 or guard(te, k) < 0.0:  # (else its root lies after te)
                    te = brentq(guard, t0, te, args=(k,), xtol=1e-15, rtol=1e-15)
            sample(t0, te, dense, states)
            ye = dense(te)
            points.append((te, ye, states))
            # the states just after the event, decided on the motion continued past it
            t_after = min(te + max(1e-12, 1e-3 * (t1 - te)), t1)
            new_states = net.decide(t_after, dense(t_after), states)
            if new_states == states and t1 > te:
                # (a guard that left its region, too little past the root there: at the step's end)
                new_states = net.decide(t1, solver.y, states)
            # the bodies' reinits (a stop reached, sticking, breaking away), the rigid impacts
            y = ye.copy()
            for i, (a, b) in enumerate(zip(states[1], new_states[1])):
                if a != b:
                    y[i], y[net.n + i] = net.body_laws[i].reinit(ye[i])
            new_states = net.impacts(y, new_states)
            events.append((te, _changes(net, states, new_states)))
            t, states, retries = te, new_states, 0
            points.append((t, y.copy(), states))
            ended = True
        if not ended and solver.status == "finished":
            break
    points.sort(key=lambda p: p[0])  # (stable: an event's two points keep their order)
    t_arr = np.array([p[0] for p in points])
    y_arr = np.array([p[1] for p in points])
    signals = {}
    for i, b in enumerate(net.bodies):
        signals[f"{b.name}.s"] = y_arr[:, i]
        signals[f"{b.name}.v"] = y_arr[:, net.n + i]
    forces = np.array([net.forces(t, y, st[0])[0] for t, y, st in points])
    for k, lk in enumerate(net.links):
        signals[f"{lk.name}.f"] = forces[:, k] if len(net.links) else np.zeros(len(points))
    return Solution(t_arr, signals, events, steps)


def _changes(net, old, new):
    what = []
    for lk, a, b in zip(net.links, old[0], new[0]):
        if a != b:
            what.append(f"{lk.name} {a}->{b}")
    for body, a, b in zip(net.bodies, old[1], new[1]):
        if a != b:
            what.append(f"{body.name} {a}->{b}")
    return ", ".join(what)
