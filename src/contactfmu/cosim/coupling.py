"""The exchange of the FMUs at a communication point, bound to the running instances, built and
run here (the implicit coupling it can carry: implicit.py).

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

from .fastcalls import Program

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
