"""The coupling of the FMUs at a communication point, bound to the running instances: the exchange
and the implicit coupling, built and run here.

:class:`Exchange`, built once per run from System.plan() (which instances and value references are
linked), writes the exchange in the Gauss-Seidel order of the System docstring, or libcosim's Jacobi
order (all reads, then all writes), as a fastcalls.Program: compiled once into one batched get or
set call per instance and FMI function wherever the order lets them meet (one fmi2GetReal and one
fmi2SetReal per instance for Jacobi; in Gauss-Seidel order a body is read before and after its
forces are set, an element set before and after its forces are read). With an
:class:`ImplicitCoupling` (made by :func:`implicit_coupling`: scheme="implicit" and the adaptive
algorithm's stiff steps) it replaces the forces of the linearizable compliant elements by their
linearly implicit values before they are summed into the bodies.
"""

from typing import NamedTuple

from fmpy.fmi2 import fmi2Real, fmi2ValueReference

from .. import conventions
from .fastcalls import Program, Reader, bound, check

# False: one FMI call per value, in the listed order (the reference the batched exchange is
# tested against, bit for bit)
BATCHED = True


def _read(program, pairs, kind="Real", derivative=False):
    """Reads of [(instance, vr)] (one per instance, each vr once) and where each value lands:
    {(name, vr): Slot}."""
    groups = {}
    for inst, vr in pairs:
        vrs = groups.setdefault(inst.name, (inst, []))[1]
        if vr not in vrs:
            vrs.append(vr)
    where = {}
    for inst, vrs in groups.values():
        for vr, slot in zip(vrs, program.read(inst, vrs, kind, derivative)):
            where[(inst.name, vr)] = slot
    return where


def _write(program, slots, kind="Real", derivative=False):
    """Writes of [(instance, vr, terms, offset)] (one per instance)."""
    groups = {}
    for inst, vr, terms, offset in slots:
        group = groups.setdefault(inst.name, (inst, [], []))
        group[1].append(vr)
        group[2].append((terms, offset))
    for inst, vrs, values in groups.values():
        program.write(inst, vrs, values, kind, derivative)


class _Lead:
    """A signal's value extrapolated to the end of the step, x + h*dx/dt (Exchange, lead=True)."""

    __slots__ = ("value", "rate", "h")

    def __init__(self, value, rate):
        self.value, self.rate, self.h = value, rate, 0.0

    def __call__(self, t):
        value, rate = self.value, self.rate
        value.buf[value.i] += self.h * rate.buf[rate.i]


class Exchange:
    """Exchange of one communication point. ``gauss_seidel(t, h)`` sets every connected input from
    the present outputs in causal order; ``read(t)`` / ``write(t)`` split it for Jacobi;
    ``motion(t)`` makes its first part alone (every compliant flange given its node's motion).

    lead=True (the adaptive master's implicit exchange, with an ImplicitCoupling): the backward
    Euler step evaluates every force at the end of the step, so the signals that have a first
    derivative are set to their value extrapolated to the end, x + h*dx/dt, and held (the
    coupled forces are held at their end values too: stiffly accurate, a body held by a stiff
    element follows a slowly varying load without lag). Force derivatives are not passed.

    composite=True (the adaptive master's implicit steps when every coupled body takes a force
    derivative): the ImplicitCoupling sets each coupled body's force, value and derivative,
    through a correction term in the slot of the body's first force input (ImplicitCoupling,
    stages 1 and 2); the coupled elements' own force derivatives are not passed, nor their
    acceleration inputs set (what those derivatives are of: an implicit exchange sets the
    accelerations of the elements whose force derivatives it reads, none with lead).

    batched (default: the module's BATCHED): the exchange's calls gathered per instance and FMI
    function (fastcalls.Program); False: one call per value. reads: [(instance, vr)] read with the
    forces (c.), where ``force_at`` says (the adaptive algorithm's interface stiffness and
    damping). observe: [(instance, vr, the input vrs it depends on or None)] outputs wanted at the
    end of the exchange where a read made anyway can take them (``observed_at``: (buffer, index)
    of those; fastcalls.Program.join)."""

    def __init__(
        self, plan, implicit=None, lead=False, composite=False, batched=None, reads=(), observe=()
    ):
        self.batched = BATCHED if batched is None else batched
        self.plan = plan
        motion, forces, accel = plan.motion, plan.forces, plan.accel
        if lead:
            forces = [f._replace(with_derivative=False) for f in forces]
        p = Program(self.batched)
        self.h = 0.0
        # a. motion
        here = _read(p, [(m.source, vr) for m in motion for vr in (m.s, m.v)])
        _write(p, self._motion_slots(here))
        self.motion_at = here
        # b. signals, in the order they were connected
        self.leading = []
        for link in plan.signals:
            ia, va, ib, vb = link.source, link.output, link.target, link.input
            kind, vr = va.type, va.valueReference
            (value,) = p.read(ia, [vr], kind)
            if link.with_derivative and lead:
                (rate,) = p.read(ia, [vr], derivative=True)
                self.leading.append(_Lead(value, rate))
                p.call(self.leading[-1])
            p.write(ib, [vb.valueReference], [([value], 0.0 if kind == "Real" else 0)], kind)
            if link.with_derivative and not lead:
                (rate,) = p.read(ia, [vr], derivative=True)
                p.write(ib, [vb.valueReference], [([rate], 0.0)], derivative=True)
        # c. forces (and what the implicit coupling reads with them)
        extra = (implicit.reads() if implicit else []) + list(reads)
        self.force_at = fat = _read(p, [source for f in forces for source in f.sources] + extra)
        # the composite coupling (composite=True) prescribes each coupled body's force, value and
        # derivative: a correction term in the slot of the body's first force input; the coupled
        # elements' own derivatives are not passed
        self.composite = implicit is not None and composite
        coupled = implicit.forces() if self.composite else set()
        self.correction, self.correction_rate = {}, {}  # body name: [value]
        value_term, rate_term = {}, {}  # (body name, vr of its input): [(buffer, 0)]
        for f in forces:
            name = f.body.name
            if self.composite and name in implicit.bodies and name not in self.correction:
                self.correction[name] = [0.0]
                value_term[(name, f.f)] = [(self.correction[name], 0)]
                if f.with_derivative:
                    self.correction_rate[name] = [0.0]
                    rate_term[(name, f.f)] = [(self.correction_rate[name], 0)]
        present = [(f.body, f.f, [fat[(ti.name, tf)] for ti, tf in f.sources], 0.0) for f in forces]
        force_slots = [
            (body, vr, terms + value_term.get((body.name, vr), []), 0.0)
            for body, vr, terms, _ in present
        ]
        if implicit is not None and not self.composite:
            p.call(self._couple)
            self._restore(p, implicit)
        # the force derivatives read (e.): not the coupled elements' where they are not passed
        # (composite), nobody's with lead (no derivative is passed)
        derived = [f for f in forces if f.with_derivative]
        rated = [s for f in derived for s in f.sources if (s[0].name, s[1]) not in coupled]
        if implicit is not None:
            # an element's acceleration inputs are what its force derivative is of (df/dt =
            # K*v_rel + D*a_rel): an implicit exchange sets them where it reads that derivative
            # only; the other elements keep the last ones set, as after a motion exchange
            takes = {inst.name for inst, _ in rated}
            accel = [a for a in accel if a.target.name in takes]
        if self.composite:
            # first the present forces of the bodies whose accelerations are read (the
            # correction, still that of the last exchange, comes with the coupling)
            read = {a.source.name for a in accel}
            present = [write for write in present if write[0].name in read]
        _write(p, present)
        # d. accelerations
        here = _read(p, [(a.source, a.a) for a in accel])
        _write(p, self._accel_slots(here, accel))
        # e. first derivatives of the forces
        self.der_at = here = _read(p, rated, derivative=True)
        if self.composite:
            # the rates of the other forces (with the present accelerations) are known now: the
            # coupling sets the coupled bodies' forces over the step
            p.call(self._couple)
            self._restore(p, implicit)
            _write(p, force_slots)
        _write(
            p,
            [
                (
                    f.body,
                    f.f,
                    [here[(ti.name, tf)] for ti, tf in f.sources if (ti.name, tf) not in coupled]
                    + rate_term.get((f.body.name, f.f), []),
                    0.0,
                )
                for f in derived
            ],
            derivative=True,
        )
        # outputs observed at the end of the exchange, read with a read made anyway where no input
        # they depend on is set after it (Program.join)
        joined = {(inst.name, vr): p.join(inst, vr, depends) for inst, vr, depends in observe}
        self.calls = p.compile()
        self.observed_at = {k: (s.buf, s.i) for k, s in joined.items() if s is not None}
        # the motion alone (a.): what a measurement that is undone needs (motion())
        m = Program(self.batched)
        self.light_at = _read(m, [(link.source, vr) for link in motion for vr in (link.s, link.v)])
        _write(m, self._motion_slots(self.light_at))
        self.motion_calls = m.compile()
        # where the values landed, (buffer, index), for the implicit coupling
        for name in ("motion_at", "force_at", "der_at", "light_at"):
            setattr(self, name, {k: (s.buf, s.i) for k, s in getattr(self, name).items()})
        self.jacobi = None  # (reads, writes), compiled on first use
        self.implicit = implicit.bind(self) if implicit else None

    def _motion_slots(self, here):
        return [
            slot
            for m in self.plan.motion
            for slot in (
                (m.target, m.target_s, [here[(m.source.name, m.s)]], m.offset),
                (m.target, m.target_v, [here[(m.source.name, m.v)]], 0.0),
            )
        ]

    @staticmethod
    def _accel_slots(here, accel):
        return [(a.target, a.target_a, [here[(a.source.name, a.a)]], 0.0) for a in accel]

    def _restore(self, p, implicit):
        """The motion inputs of the elements the coupling probed set back to the present motion
        (the values of the motion exchange: s + rod offset, and v itself: -0.0 + v is v)."""
        here = self.motion_at
        for inst, links in implicit.restores():
            vrs, values = [], []
            for m in links:
                vrs += [m.target_s, m.target_v]
                values += [
                    ([here[(m.source.name, m.s)]], m.offset),
                    ([here[(m.source.name, m.v)]], -0.0),
                ]
            p.write(inst, vrs, values)

    def _couple(self, t):
        self.implicit(t, self.h)

    def gauss_seidel(self, t, h):
        self.h = h
        for lead in self.leading:
            lead.h = h
        for call in self.calls:
            call(t)

    def motion(self, t):
        """Part a. alone: every compliant flange given the motion of its node (read into
        ``light_at``), nothing else set."""
        for call in self.motion_calls:
            call(t)

    def _jacobi(self):
        """libcosim's order: every connected output read (values only), then every input set."""
        plan = self.plan
        reads, writes = Program(self.batched), Program(self.batched)
        motion = _read(reads, [(m.source, vr) for m in plan.motion for vr in (m.s, m.v)])
        signals = []
        for link in plan.signals:
            kind = link.output.type
            (value,) = reads.read(link.source, [link.output.valueReference], kind)
            signals.append((link, value))
        force = _read(reads, [source for f in plan.forces for source in f.sources])
        accel = _read(reads, [(a.source, a.a) for a in plan.accel])
        read_calls = reads.compile()  # the Slots the writes sum are bound now
        _write(writes, self._motion_slots(motion))
        for link, value in signals:
            kind = link.output.type
            writes.write(
                link.target,
                [link.input.valueReference],
                [([value], 0.0 if kind == "Real" else 0)],
                kind,
            )
        _write(
            writes,
            [
                (f.body, f.f, [force[(ti.name, tf)] for ti, tf in f.sources], 0.0)
                for f in plan.forces
            ],
        )
        _write(writes, self._accel_slots(accel, plan.accel))
        self.jacobi = (read_calls, writes.compile())

    def read(self, t):
        """Jacobi, first half: read every connected output (values only)."""
        if self.jacobi is None:
            self._jacobi()
        for call in self.jacobi[0]:
            call(t)

    def write(self, t):
        """Jacobi, second half: set every connected input from what read() got."""
        if self.jacobi is None:
            self._jacobi()
        for call in self.jacobi[1]:
            call(t)


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

    def _solve(self, g, c):
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
        return _solve(a, rhs) if n else []

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
        y = self._solve(g, c)
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
            y = self._solve(g, c)
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


def _solve(a, b):
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
