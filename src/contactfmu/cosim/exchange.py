"""The master's exchange at a communication point, bound to the running FMU instances.

Built once per run from System._plan() (which instances and value references are linked), it
makes one batched get or set call per instance and phase (fastcalls) in the Gauss-Seidel order
of the System docstring, or libcosim's Jacobi order (all reads, then all writes), and for
scheme="implicit" replaces the forces of the linearizable compliant elements by their
linearly implicit values (:class:`ImplicitCoupling`) before they are summed into the bodies.
"""
from typing import NamedTuple

from fmpy.fmi2 import fmi2Real, fmi2ValueReference

from .fastcalls import Reader, Writer, check


def _readers(pairs, kind="Real", derivative=False):
    """Readers for [(instance, vr)] (one per instance) and where each value lands: {(name, vr): (buf, i)}."""
    groups = {}
    for inst, vr in pairs:
        vrs = groups.setdefault(inst.name, (inst, []))[1]
        if vr not in vrs:
            vrs.append(vr)
    readers, where = [], {}
    for inst, vrs in groups.values():
        reader = Reader(inst, vrs, kind, derivative)
        readers.append(reader)
        for i, vr in enumerate(vrs):
            where[(inst.name, vr)] = (reader.buf, i)
    return readers, where


def _writers(slots, kind="Real", derivative=False):
    """Writers for [(instance, vr, terms, offset)] (one per instance)."""
    groups = {}
    for inst, vr, terms, offset in slots:
        group = groups.setdefault(inst.name, (inst, [], []))
        group[1].append(vr)
        group[2].append((terms, offset))
    return [Writer(inst, vrs, values, kind, derivative) for inst, vrs, values in groups.values()]


class _Lead:
    """A signal set to its value extrapolated to the end of the step (Exchange, lead=True)."""

    __slots__ = ("value", "rate", "write", "h")

    def __init__(self, value, rate, write):
        self.value, self.rate, self.write, self.h = value, rate, write, 0.0

    def __call__(self, t):
        self.value(t)
        self.value.buf[0] += self.h * self.rate(t)[0]
        self.write(t)


class Exchange:
    """Exchange of one communication point. ``gauss_seidel(t, h)`` sets every connected input from
    the present outputs in causal order; ``read(t)`` / ``write(t)`` split it for Jacobi.

    lead=True (the adaptive master's implicit exchange, with an ImplicitCoupling): the backward
    Euler step evaluates every force at the end of the step, so the signals that have a first
    derivative are set to their value extrapolated to the end, x + h*dx/dt, and held (the
    coupled forces are held at their end values too: stiffly accurate, a body held by a stiff
    element follows a slowly varying load without lag). Force derivatives are not passed."""

    def __init__(self, plan, implicit=None, lead=False):
        motion, signals, forces, accel = plan
        if lead:
            forces = [f._replace(with_derivative=False) for f in forces]
        self.motion_readers, here = _readers([(si, vr) for si, vs, vv, *_ in motion for vr in (vs, vv)])
        self.motion_writers = _writers(
            [slot for si, vs, vv, ti, ts, tv, off in motion
             for slot in ((ti, ts, [here[(si.name, vs)]], off), (ti, tv, [here[(si.name, vv)]], 0.0))])
        self.motion_at = here
        self.signals, self.leading = [], []
        for ia, va, ib, vb, with_der in signals:
            kind = va.type
            (r,), w = _readers([(ia, va.valueReference)], kind)
            step = [r, *_writers([(ib, vb.valueReference, [w[(ia.name, va.valueReference)]],
                                   0.0 if kind == "Real" else 0)], kind)]
            if with_der and lead:
                (rd,), _ = _readers([(ia, va.valueReference)], derivative=True)
                self.leading.append(_Lead(step[0], rd, step[1]))
                self.signals.append([self.leading[-1]])
                continue
            if with_der:
                (rd,), wd = _readers([(ia, va.valueReference)], derivative=True)
                step += [rd, *_writers([(ib, vb.valueReference, [wd[(ia.name, va.valueReference)]], 0.0)],
                                       derivative=True)]
            self.signals.append(step)
        extra = implicit.reads() if implicit else []
        self.force_readers, here = _readers([(ti, tf) for _, _, srcs, _ in forces for ti, tf in srcs] + extra)
        self.force_writers = _writers([(si, vf, [here[(ti.name, tf)] for ti, tf in srcs], 0.0)
                                       for si, vf, srcs, _ in forces])
        self.force_at = here
        self.accel_readers, here = _readers([(si, va) for si, va, _, _ in accel])
        self.accel_writers = _writers([(ti, ta, [here[(si.name, va)]], 0.0) for si, va, ti, ta in accel])
        derived = [f for f in forces if f[3]]
        self.der_readers, here = _readers([(ti, tf) for _, _, srcs, _ in derived for ti, tf in srcs],
                                          derivative=True)
        self.der_writers = _writers([(si, vf, [here[(ti.name, tf)] for ti, tf in srcs], 0.0)
                                     for si, vf, srcs, _ in derived], derivative=True)
        self.implicit = implicit.bind(self) if implicit else None

    def gauss_seidel(self, t, h):
        for call in self.motion_readers:
            call(t)
        for call in self.motion_writers:
            call(t)
        for lead in self.leading:
            lead.h = h
        for step in self.signals:
            for call in step:
                call(t)
        for call in self.force_readers:
            call(t)
        if self.implicit is not None:
            self.implicit(t, h)
        for call in self.force_writers:
            call(t)
        for call in self.accel_readers:
            call(t)
        for call in self.accel_writers:
            call(t)
        for call in self.der_readers:
            call(t)
        for call in self.der_writers:
            call(t)

    def read(self, t):
        """Jacobi, first half: read every connected output (values only)."""
        for calls in (self.motion_readers, [s[0] for s in self.signals], self.force_readers, self.accel_readers):
            for call in calls:
                call(t)

    def write(self, t):
        """Jacobi, second half: set every connected input from what read() got."""
        for calls in (self.motion_writers, [s[1] for s in self.signals], self.force_writers, self.accel_writers):
            for call in calls:
                call(t)


class CoupledEnd(NamedTuple):
    """A flange of an implicitly coupled element: the body there (its key, None if it does not move
    in the prediction), the inertial flange of its node (instance, vr of s, vr of v), the rod offset,
    and the element's motion inputs (vr of s, vr of v)."""
    body: object
    node: tuple
    offset: float
    input_s: int
    input_v: int


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


class ImplicitCoupling:
    """Implicit interface forces (scheme="implicit"): backward Euler on the interface.

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
    inputs, so an ElastoGap or TranslationalHardstop with m_a/m_b set stays explicit). Each
    iteration is one symmetric positive definite linear system

        (M + sum_e c_e*b_e*b_e^T) y = N + sum_e b_e*g_e,

    until the end-state forces agree with the linear model (a piecewise linear law: once its
    regions are right, exactly). First order and A-stable: a contact of any stiffness and damping
    against any mass is stable at any step, but not L-stable (a held end force on a body that
    integrates it exactly is Newmark's gamma = 1, beta = 1/2: the amplification of a contact mode
    tends to 1 as h*omega grows, its velocity reflected rather than damped). A body's inertia is its FMU's Real output
    interface.m (Mass, MassWithStopAndFriction; conventions.INERTIA); bodies without one (Fixed, another tool's FMU) do not move in
    the prediction (y = 0). Elements without the interface outputs, and signals, keep their
    present values (explicit)."""

    MAX_ITERATIONS = 8
    RTOL = 1e-9

    def __init__(self, elements, bodies):
        # elements: [(inst, vr_fa, vr_fb, vr_K, vr_D, flange_a, flange_b, nonlinear)], a flange being
        #   (body key or None, (inertial inst, vr_s, vr_v) of its node, rod offset, vr of input s, input v)
        # bodies: {key: (inst, m, [(inst, vr) of every force input term on it])}
        self.elements = elements
        self.bodies = bodies

    def reads(self):
        return [(e[0], vr) for e in self.elements for vr in e[1:5]]

    def bind(self, exchange):
        fat, mat = exchange.force_at, exchange.motion_at
        keys = list(self.bodies)
        index = {k: i for i, k in enumerate(keys)}
        self.mass = [self.bodies[k][1] for k in keys]
        self.body_terms = [[fat[(ti.name, tf)] for ti, tf in self.bodies[k][2]] for k in keys]
        self.rows = []
        for inst, fa, fb, vk, vd, end_a, end_b, nonlinear in self.elements:
            name = inst.name
            ends = []
            for key, (si, vs, vv), off, _, _ in (end_a, end_b):
                ends.append((index.get(key, -1), mat[(si.name, vs)], mat[(si.name, vv)], off))
            probe = None
            if nonlinear:
                vrs = (fmi2ValueReference * 4)(end_a[3], end_a[4], end_b[3], end_b[4])
                probe = (inst, inst.slave._functions["fmi2SetReal"], inst.slave.component, vrs,
                         (fmi2Real * 4)(), Reader(inst, [fb, vk, vd]))
            self.rows.append((fat[(name, fa)], fat[(name, fb)], fat[(name, vk)], fat[(name, vd)],
                              ends[0], ends[1], probe))
        return self

    def _solve(self, g, c):
        n = len(self.mass)
        a = [[0.0] * n for _ in range(n)]
        rhs = [0.0] * n
        for j in range(n):
            a[j][j] = self.mass[j]
            rhs[j] = self.others[j]
        for (*_, (p, *_), (q, *_), _), ge, ce in zip(self.rows, g, c):
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

    def __call__(self, t, h):
        half = 0.5 * h * h
        g, c, f_now = [], [], []
        for (fa, ia), (fb, ib), (bk, ik), (bd, id_), (_, _, (bva, iva), _), (_, _, (bvb, ivb), _), _ in self.rows:
            k, d, f = bk[ik], bd[id_], fb[ib]
            f_now.append(f)
            c.append(half * k + h * d)
            g.append(f + h * k * (bvb[ivb] - bva[iva]))
        # forces of everything else on each body: its present total minus the implicit elements' share
        self.others = []
        for terms in self.body_terms:
            total = 0.0
            for buf, i in terms:
                total += buf[i]
            self.others.append(-total)
        for row, f in zip(self.rows, f_now):
            p, q = row[4][0], row[5][0]
            if p >= 0:
                self.others[p] -= f
            if q >= 0:
                self.others[q] += f
        y = self._solve(g, c)
        probed = [r for r in self.rows if r[6] is not None]
        for _ in range(self.MAX_ITERATIONS if probed else 0):
            converged = True
            for e, row in enumerate(self.rows):
                if row[6] is None:
                    continue
                dy = self._dy(row, y)
                f, k, d = self._probe(row, y, h, t)
                ce = half * k + h * d
                if abs(f - (g[e] + c[e] * dy)) > self.RTOL * (abs(f) + abs(g[e])) + 1e-300 or ce != c[e]:
                    converged = False
                g[e], c[e] = f - ce * dy, ce
            if converged:
                break
            y = self._solve(g, c)
        for row in probed:
            self._probe(row, None, h, t)  # restore the present inputs
        for e, row in enumerate(self.rows):
            (fa, ia), (fb, ib) = row[0], row[1]
            f = g[e] + c[e] * self._dy(row, y)
            fb[ib] = f
            fa[ia] = -f

    @staticmethod
    def _dy(row, y):
        p, q = row[4][0], row[5][0]
        return (y[q] if q >= 0 else 0.0) - (y[p] if p >= 0 else 0.0)

    @staticmethod
    def _probe(row, y, h, t):
        """Set the element's motion inputs to the end of the step for accelerations y (None: to the
        present motion, as the exchange set it) and read (f, K, D)."""
        inst, setter, component, vrs, buf, reader = row[6]
        k = 0
        for body, (bs, i_s), (bv, i_v), off in (row[4], row[5]):
            s = off
            s += bs[i_s]
            v = bv[i_v]
            if y is not None:
                acc = y[body] if body >= 0 else 0.0
                s += h * (v + 0.5 * h * acc)
                v += h * acc
            buf[k], buf[k + 1] = s, v
            k += 2
        status = setter(component, vrs, 4, buf)
        if status > 1:
            check(inst, "fmi2SetReal", status, t)
        if y is None:
            return None
        values = reader(t)
        return values[0], values[1], values[2]


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
