"""The implicit coupling of the stiff compliant elements, bound to the running instances:
:func:`implicit_coupling` makes an :class:`ImplicitCoupling` from System.plan() (scheme="implicit"
and the adaptive algorithm's stiff steps); the exchange (coupling.Exchange) runs it where it
replaces the forces of the linearizable compliant elements by their linearly implicit values
before they are summed into the bodies.
"""

from typing import NamedTuple

from fmpy.fmi2 import fmi2Real, fmi2ValueReference

from .. import conventions
from .fastcalls import Reader, bound, check


class CoupledEnd(NamedTuple):
    """A flange of an implicitly coupled element: the body there (its key, None if it does not move
    in the prediction) and the link that gives the flange its motion (system.MotionLink: the inertial
    flange of its node, the rod offset and the element's motion inputs)."""

    body: object
    motion: object


class CoupledElement(NamedTuple):
    """A compliant element of the ImplicitCoupling: its instance, the vrs of its forces flange_a.f,
    flange_b.f and interface outputs c, d, its two ends, and whether c, d depend on the inputs."""

    inst: object
    f_a: int
    f_b: int
    c: int
    d: int
    end_a: CoupledEnd
    end_b: CoupledEnd
    nonlinear: bool


class CoupledBody(NamedTuple):
    """A body of the ImplicitCoupling: its instance, its inertia, and the (instance, vr) of every
    force term on it."""

    inst: object
    m: float
    terms: list


class BoundEnd(NamedTuple):
    """A CoupledEnd bound to an exchange: its body's index (-1: none), the (buffer, index) slots of its
    node's s and v as the exchange read them, and the rod offset."""

    body: int
    s: tuple
    v: tuple
    offset: float


class Probe(NamedTuple):
    """The calls that evaluate a nonlinear element at a predicted state: fmi2SetReal of its motion
    inputs (instance, function, component, count of 4 values, value references, buffer; as
    fastcalls.bound gives them) and a Reader of f, K, D."""

    inst: object
    set_real: object
    component: object
    count: object
    vrs: object
    buf: object
    reader: Reader


class BoundElement(NamedTuple):
    """A CoupledElement bound to an exchange: the (buffer, index) slots of its forces flange_a.f,
    flange_b.f and interface outputs c, d, its two BoundEnds and its Probe (None: linear)."""

    f_a: tuple
    f_b: tuple
    c: tuple
    d: tuple
    end_a: BoundEnd
    end_b: BoundEnd
    probe: object


def _value(slot):
    """The value at a (buffer, index) slot."""
    buf, i = slot
    return buf[i]


def declared_inertia(inst):
    """The inertia the instance declares (its Real output conventions.INERTIA, read now: in
    initialization mode, after the parameters are set), or None if it declares none."""
    var = inst.variables.get(conventions.INERTIA)
    if var is None or var.causality != "output" or var.type != "Real":
        return None
    return inst.call("fmi2GetReal", lambda: inst.slave.getReal([var.valueReference]))[0]


def implicit_coupling(system, plan):
    """The ImplicitCoupling of the compliant elements with interface outputs (both flanges on nodes,
    not an element that integrates its contact itself) and the bodies they act on, with the inertia
    they declare (conventions.INERTIA); called in initialization mode, where the FMUs' declarations
    can be read."""
    interface = conventions.INTERFACE
    feed = {(link.target.name, link.target_s): link for link in plan.motion}
    mass = {}
    for link in plan.motion:
        si = link.source
        if si.name not in mass:
            m = declared_inertia(si)
            if m is not None:
                mass[si.name] = m if m > 0.0 else None
    elements, used, integrating = [], set(), system.integrating()
    names = conventions.COMPLIANT_FORCES + interface
    for inst in system.instances.values():
        if not all(n in inst.variables for n in names) or inst.name in integrating:
            continue  # no interface outputs, or an element that integrates its contact itself
        links = [
            feed.get((inst.name, inst.var(inst.port(fl, "s")).valueReference))
            for fl in ("flange_a", "flange_b")
        ]
        if None in links:
            continue
        end_a, end_b = (
            CoupledEnd(link.source.name if mass.get(link.source.name) else None, link)
            for link in links
        )
        used.update(end.body for end in (end_a, end_b) if end.body)
        depends = {u.variable.name: u.dependencies for u in inst.md.outputs}
        nonlinear = any(depends.get(n) for n in interface)
        f_a, f_b, c, d = (inst.var(n).valueReference for n in names)
        elements.append(CoupledElement(inst, f_a, f_b, c, d, end_a, end_b, nonlinear))
    bodies = {}
    for link in plan.forces:
        if link.body.name in used:
            body = bodies.setdefault(
                link.body.name, CoupledBody(link.body, mass[link.body.name], [])
            )
            body.terms.extend(link.sources)
    return ImplicitCoupling(elements, bodies)


class ImplicitCoupling:
    """Implicit interface forces: backward Euler on the interface (scheme="implicit", and the
    adaptive master's fallback), or the composite second-order coupling of the adaptive master.

    A compliant element e that outputs its interface stiffness K = df/ds_rel and damping
    D = df/dv_rel ("interface.c", "interface.d") between bodies p (flange_a) and q (flange_b) is
    given, over the step [t, t+h], the force it has at the end of the step, f_e(t+h), for the
    motion the held forces cause: body j moves with the acceleration y_j over the step,
    m_j*y_j = N_j + sum_e b_ej*f_e(t+h) (N_j: the forces of everything else, held; b_e = +1 at p,
    -1 at q: the body at flange_b receives -f, the one at flange_a +f), so an element's relative
    motion at t+h is x + h*w + h^2/2*dy_e, w + h*dy_e with dy_e = y_q - y_p = -b_e.y.

    Newton's method solves it: f_e(t+h) ~ g_e + c_e*dy_e, c_e = h^2/2*K_e + h*D_e, first from the
    present values (g_e = f_e + h*K_e*w_e), then, for elements whose K or D depend on the inputs
    (declared in their ModelStructure), from the element itself evaluated at the predicted end
    state (inputs set, outputs read, inputs restored: the element must output the law of its
    inputs, so an element that declares interface.integrates stays explicit). Each
    iteration is one symmetric positive definite linear system

        (M + sum_e c_e*b_e*b_e^T) y = N + sum_e b_e*g_e,

    until the end-state forces agree with the linear model (a piecewise linear law: once its
    regions are right, exactly). First order and A-stable: a contact of any stiffness and damping
    against any mass is stable at any step, but not L-stable (a held end force on a body that
    integrates it exactly is Newmark's gamma = 1, beta = 1/2: the amplification of a contact mode
    tends to 1 as h*omega grows, its velocity reflected rather than damped). A body's inertia is
    its FMU's Real output interface.m (Mass, MassWithStopAndFriction; conventions.INERTIA); bodies
    without one (Fixed, another tool's FMU) do not move in the prediction (y = 0). Elements without the
    interface outputs, and signals, keep their present values (explicit).

    The composite coupling (Bathe's method: TR-BDF2 with the step halved; ``stage`` 1 and 2, the
    algorithm calls the exchange at t and t + H/2 with h = H/2): stage 1 is the trapezoidal rule
    (Newmark's average acceleration): every force on a coupled body is held at its mean over the
    half step, (f(t) + f(t+h))/2 for the coupled elements, value + h/2*rate for the others, so a
    body that integrates the held force exactly moves as the rule says; stage 2 is the three-point
    backward Euler formula v2 = (s0 - 4*s1 + 3*s2)/H, a2 = (v0 - 4*v1 + 3*v2)/H with
    m*a2 = N(t+H) + sum_e b_e*f_e(t+H), solved the same way (c_e = H^2/9*K_e + H/3*D_e), and each
    body is given the force, value and derivative, that takes it exactly from (s1, v1) to
    (s2, v2) over h. Second order, L-stable (amplification 0.08 per step at h*omega = 100), self-
    starting (no state carried between steps), and the same equations of motion at stage 2 as
    backward Euler's: a body held by a stiff element follows a slowly varying load."""

    MAX_ITERATIONS = 8
    RTOL = 1e-9

    def __init__(self, elements, bodies):
        # elements: [CoupledElement], bodies: {key: CoupledBody}
        self.elements = elements
        self.bodies = bodies
        self.stage = 0  # composite coupling (Exchange lead=False): 1 trapezoidal, 2 three-point backward Euler

    def reads(self):
        return [(e.inst, vr) for e in self.elements for vr in (e.f_a, e.f_b, e.c, e.d)]

    def restores(self):
        """[(instance, motion links of flange_a and flange_b)] of the elements the coupling
        evaluates at predicted states (nonlinear): the exchange sets their motion inputs back to
        the present motion after the coupling, as it set them before."""
        return [(e.inst, (e.end_a.motion, e.end_b.motion)) for e in self.elements if e.nonlinear]

    def forces(self):
        """The (instance name, vr) of the coupled elements' forces."""
        return {(e.inst.name, vr) for e in self.elements for vr in (e.f_a, e.f_b)}

    def bind(self, exchange):
        fat, mat, dat = exchange.force_at, exchange.motion_at, exchange.der_at
        keys = list(self.bodies)
        index = {k: i for i, k in enumerate(keys)}
        self.mass = [self.bodies[k].m for k in keys]
        self.body_terms = [[fat[(ti.name, tf)] for ti, tf in self.bodies[k].terms] for k in keys]
        # the rates of the other forces on each body (passed with the composite coupling's stages)
        coupled = self.forces()
        self.body_rates = [
            [
                dat[(ti.name, tf)]
                for ti, tf in self.bodies[k].terms
                if exchange.composite and (ti.name, tf) in dat and (ti.name, tf) not in coupled
            ]
            for k in keys
        ]
        self.correction = [exchange.correction.get(k) for k in keys]
        self.correction_rate = [exchange.correction_rate.get(k) for k in keys]
        self.rows = []
        motion_of = {}  # body index: (s buffer, i), (v buffer, i) of its inertial flange
        for element in self.elements:
            inst = element.inst
            name = inst.name
            ends = []
            for end in (element.end_a, element.end_b):
                link = end.motion
                j = index.get(end.body, -1)
                s, v = mat[(link.source.name, link.s)], mat[(link.source.name, link.v)]
                ends.append(BoundEnd(j, s, v, link.offset))
                if j >= 0:
                    motion_of.setdefault(j, (s, v))
            probe = None
            if element.nonlinear:
                a, b = element.end_a.motion, element.end_b.motion
                vrs = (fmi2ValueReference * 4)(a.target_s, a.target_v, b.target_s, b.target_v)
                set_real, component, count = bound(inst, "fmi2SetReal")
                probe = Probe(
                    inst,
                    set_real,
                    component,
                    count(4),
                    vrs,
                    (fmi2Real * 4)(),
                    Reader(inst, [element.f_b, element.c, element.d]),
                )
            self.rows.append(
                BoundElement(
                    fat[(name, element.f_a)],
                    fat[(name, element.f_b)],
                    fat[(name, element.c)],
                    fat[(name, element.d)],
                    ends[0],
                    ends[1],
                    probe,
                )
            )
        self.body_motion = [motion_of.get(j) for j in range(len(keys))]
        self.start = None  # motion of every end and body at the start of the composite step
        return self

    def composite_ready(self):
        """Whether every coupled body takes a force derivative (the composite stages need it)."""
        return all(r is not None for r in self.correction_rate)

    def solve(self, g, c):
        n = len(self.mass)
        a = [[0.0] * n for _ in range(n)]
        rhs = [0.0] * n
        for j in range(n):
            a[j][j] = self.mass[j]
            rhs[j] = self.others[j]
        for row, ge, ce in zip(self.rows, g, c):
            p, q = row.end_a.body, row.end_b.body
            if p >= 0:
                rhs[p] += ge
                a[p][p] += ce
            if q >= 0:
                rhs[q] -= ge
                a[q][q] += ce
            if p >= 0 and q >= 0:
                a[p][q] -= ce
                a[q][p] -= ce
        return solve(a, rhs) if n else []

    # ---- the schemes: the motion of an end over the step, linear in its body's acceleration y ----
    #  ds = alpha_s + beta_s*y, dv = alpha_v + beta_v*y; the force in the equations of motion is
    #  f + theta*(f_end - f), f_end the element's force at the end of the step.

    def _scheme(self, h):
        """(theta, beta_s, beta_v, alpha(end index, row end) -> (alpha_s, alpha_v))."""
        if self.stage in (0, 1):  # backward Euler: forces held at the end values; trapezoidal:
            # held at their mean (Newmark's average acceleration)
            theta = 1.0 if self.stage == 0 else 0.5
            return theta, 0.5 * h * h, h, lambda k, end: (h * _value(end.v), 0.0)
        H = 2.0 * h  # three-point backward Euler over the composite step [t0, t0 + H]
        start = self.start

        def alpha(k, end):
            s0, v0 = start[k]
            s1, v1 = _value(end.s), _value(end.v)
            return (H * (4.0 * v1 - v0) / 3.0 - s0 + s1) / 3.0, (v1 - v0) / 3.0

        return 1.0, H * H / 9.0, H / 3.0, alpha

    def __call__(self, t, h):
        # the rate of the other forces' acceleration of each body (composite stages; else zero)
        self.raw_rate = [
            _total(terms) for terms in self.body_rates
        ]  # d/dt of the other input terms
        self.rate = [-r / m for r, m in zip(self.raw_rate, self.mass)]
        if self.stage == 1:  # remember where the composite step starts
            self.start = [
                (_value(end.s), _value(end.v))
                for row in self.rows
                for end in (row.end_a, row.end_b)
            ]
            self.start_body = [(bs[i_s], bv[i_v]) for (bs, i_s), (bv, i_v) in self.body_motion]
        theta, beta_s, beta_v, alpha = self._scheme(h)
        self.alphas = []
        g, c, f_now = [], [], []
        k = 0
        for row in self.rows:
            kk, d, f = _value(row.c), _value(row.d), _value(row.f_b)
            (asa, ava), (asb, avb) = alpha(k, row.end_a), alpha(k + 1, row.end_b)
            k += 2
            self.alphas.append(((asa, ava), (asb, avb)))
            f_now.append(f)
            c.append(theta * (kk * beta_s + d * beta_v))
            g.append(f + theta * (kk * (asb - asa) + d * (avb - ava)))
        # forces of everything else on each body: its present total minus the coupled elements' share
        self.total = [_total(terms) for terms in self.body_terms]  # every input term, as set
        self.others = [-total for total in self.total]
        for row, f in zip(self.rows, f_now):
            p, q = row.end_a.body, row.end_b.body
            if p >= 0:
                self.others[p] -= f
            if q >= 0:
                self.others[q] += f
        if self.stage:  # the others at the middle (trapezoidal) or the end of the step
            for j, m in enumerate(self.mass):
                self.others[j] += (0.5 if self.stage == 1 else 1.0) * h * m * self.rate[j]
        y = self.solve(g, c)
        probed = [r for r in self.rows if r.probe is not None]
        for _ in range(self.MAX_ITERATIONS if probed else 0):
            converged = True
            for e, row in enumerate(self.rows):
                if row.probe is None:
                    continue
                dy = self._dy(row, y)
                f, kk, d = self._probe(e, row, y, beta_s, beta_v, t)
                f = f_now[e] + theta * (f - f_now[e])
                ce = theta * (kk * beta_s + d * beta_v)
                if (
                    abs(f - (g[e] + c[e] * dy)) > self.RTOL * (abs(f) + abs(g[e])) + 1e-300
                    or ce != c[e]
                ):
                    converged = False
                g[e], c[e] = f - ce * dy, ce
            if converged:
                break
            y = self.solve(g, c)
        if self.stage == 2:
            self._prescribe(y, 2.0 * h, h)
            return
        for e, row in enumerate(self.rows):
            (fa, ia), (fb, ib) = row.f_a, row.f_b
            f = g[e] + c[e] * self._dy(row, y)
            fb[ib] = f
            fa[ia] = -f
        if self.stage == 1:  # the others held at their mean too: no ramp of their own
            for corr, corr_rate, raw in zip(self.correction, self.correction_rate, self.raw_rate):
                corr[0] = 0.5 * h * raw
                corr_rate[0] = -raw

    def _prescribe(self, y, H, h):
        """The second stage: each body gets the force (value and derivative) that brings it, over
        h, from its present motion to the three-point backward Euler end state for acceleration y."""
        for j, m in enumerate(self.mass):
            s0, v0 = self.start_body[j]
            (bs, i_s), (bv, i_v) = self.body_motion[j]
            s1, v1 = bs[i_s], bv[i_v]
            v2 = (H * y[j] - v0 + 4.0 * v1) / 3.0
            s2 = (H * v2 - s0 + 4.0 * s1) / 3.0
            mean = (v2 - v1) / h  # mean acceleration over the stage
            second = (s2 - s1 - h * v1) / (h * h)  # position: h^2*(p0/3 + p1/6)
            p0 = 6.0 * second - 2.0 * mean
            p1 = 4.0 * mean - 6.0 * second
            self.correction[j][0] = -m * p0 - self.total[j]
            self.correction_rate[j][0] = -m * (p1 - p0) / h - self.raw_rate[j]

    @staticmethod
    def _dy(row, y):
        p, q = row.end_a.body, row.end_b.body
        return (y[q] if q >= 0 else 0.0) - (y[p] if p >= 0 else 0.0)

    def _probe(self, e, row, y, beta_s, beta_v, t):
        """Set the element's motion inputs to the end of the step for accelerations y and read
        (f, K, D); the exchange sets the present motion again after the coupling (restores())."""
        probe = row.probe
        buf = probe.buf
        k = 0
        for n, end in enumerate((row.end_a, row.end_b)):
            s = end.offset
            s += _value(end.s)
            v = _value(end.v)
            acc = y[end.body] if end.body >= 0 else 0.0
            a_s, a_v = self.alphas[e][n]
            s += a_s + beta_s * acc
            v += a_v + beta_v * acc
            buf[k], buf[k + 1] = s, v
            k += 2
        status = probe.set_real(probe.component, probe.vrs, probe.count, buf)
        if status > 1:
            check(probe.inst, "fmi2SetReal", status, t)
        values = probe.reader(t)
        return values[0], values[1], values[2]


def _total(terms):
    """The sum of [(buffer, index)] entries."""
    total = 0.0
    for buf, i in terms:
        total += buf[i]
    return total


def solve(a, b):
    """Solution of the small symmetric positive definite system a*x = b (Gaussian elimination
    without pivoting, which is stable for such matrices); a and b are overwritten."""
    n = len(b)
    for k in range(n):
        pivot = a[k][k]
        row_k = a[k]
        for i in range(k + 1, n):
            factor = a[i][k] / pivot
            if factor != 0.0:
                row_i = a[i]
                for j in range(k, n):
                    row_i[j] -= factor * row_k[j]
                b[i] -= factor * b[k]
    x = [0.0] * n
    for k in range(n - 1, -1, -1):
        total = b[k]
        row_k = a[k]
        for j in range(k + 1, n):
            total -= row_k[j] * x[j]
        x[k] = total / row_k[k]
    return x
