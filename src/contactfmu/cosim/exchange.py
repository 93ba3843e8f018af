"""The master's exchange at a communication point, bound to the running FMU instances.

Built once per run from System._plan() (which instances and value references are linked), it
makes one batched get or set call per instance and phase (fastcalls) in the Gauss-Seidel order
of the System docstring, or libcosim's Jacobi order (all reads, then all writes), and for
scheme="implicit" replaces the forces of the linearizable compliant elements by their
linearly implicit values (:class:`ImplicitCoupling`) before they are summed into the bodies.
"""
from .fastcalls import Reader, Writer

INTERFACE = ("interface.c", "interface.d")  # outputs df/ds_rel and df/dv_rel of a compliant element


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


class Exchange:
    """Exchange of one communication point. ``gauss_seidel(t, h)`` sets every connected input from
    the present outputs in causal order; ``read(t)`` / ``write(t)`` split it for Jacobi."""

    def __init__(self, plan, implicit=None):
        motion, signals, forces, accel = plan
        self.motion_readers, here = _readers([(si, vr) for si, vs, vv, *_ in motion for vr in (vs, vv)])
        self.motion_writers = _writers(
            [slot for si, vs, vv, ti, ts, tv, off in motion
             for slot in ((ti, ts, [here[(si.name, vs)]], off), (ti, tv, [here[(si.name, vv)]], 0.0))])
        self.motion_at = here
        self.signals = []
        for ia, va, ib, vb, with_der in signals:
            kind = "Enumeration" if va.type == "Enumeration" else va.type
            (r,), w = _readers([(ia, va.valueReference)], kind)
            step = [r, *_writers([(ib, vb.valueReference, [w[(ia.name, va.valueReference)]],
                                   0.0 if kind == "Real" else 0)], kind)]
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
        for step in self.signals:
            for call in step:
                call(t)
        for call in self.force_readers:
            call(t)
        if self.implicit is not None:
            self.implicit(h)
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


class ImplicitCoupling:
    """Linearly implicit interface forces (scheme="implicit").

    A compliant element e that outputs its interface stiffness K = df/ds_rel and damping
    D = df/dv_rel ("interface.c", "interface.d") between bodies p (flange_a) and q (flange_b) is
    given, over the step [t, t+h], the force it will have at the end of the step,

        f_e' = f_e + K*(h*w + h^2/2*(y_q - y_p)) + D*h*(y_q - y_p),    w = v_q - v_p,

    where y are the bodies' accelerations over the step, themselves caused by the held forces:
    m_j*y_j = F_j + sum_e b_ej*(f_e' - f_e) with F_j the present force on body j and b_e = +1 at
    p, -1 at q. That is one symmetric positive definite linear system per step,

        (M + sum_e c_e*b_e*b_e^T) y = F + sum_e b_e*h*K_e*w_e,    c_e = h^2/2*K_e + h*D_e,

    (a backward-Euler treatment of the interface: L-stable, so a contact of any stiffness and
    damping against any mass is stable at any step; first order accurate). A body's inertia is
    its FMU's Real parameter m (Mass, MassWithStopAndFriction); bodies without one (Fixed, or
    another tool's FMU) do not move in the prediction (y = 0). Elements without the interface
    outputs, and signals, keep their present values (explicit)."""

    def __init__(self, elements, bodies):
        # elements: [(inst, vr_fa, vr_fb, vr_K, vr_D, (vinst, vr_v) of flange_a's body, ... of flange_b's,
        #             body key of flange_a or None, body key of flange_b or None)]
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
        # force on body j now: minus the sum of its force inputs, each a sum of element outputs
        self.body_terms = [[fat[(ti.name, tf)] for ti, tf in self.bodies[k][2]] for k in keys]
        self.rows = []
        for inst, fa, fb, vk, vd, va, vb, pa, pb in self.elements:
            name = inst.name
            self.rows.append((fat[(name, fa)], fat[(name, fb)], fat[(name, vk)], fat[(name, vd)],
                              mat[(va[0].name, va[1])], mat[(vb[0].name, vb[1])],
                              index.get(pa, -1), index.get(pb, -1)))
        return self

    def __call__(self, h):
        n = len(self.mass)
        a = [[0.0] * n for _ in range(n)]
        rhs = [0.0] * n
        for j in range(n):
            a[j][j] = self.mass[j]
            total = 0.0
            for buf, i in self.body_terms[j]:
                total += buf[i]
            rhs[j] = -total
        half = 0.5 * h * h
        coeffs = []
        for (fa, ia), (fb, ib), (bk, ik), (bd, id_), (bva, iva), (bvb, ivb), p, q in self.rows:
            k, d = bk[ik], bd[id_]
            c = half * k + h * d
            hkw = h * k * (bvb[ivb] - bva[iva])
            coeffs.append((c, hkw))
            if p >= 0:
                rhs[p] += hkw
                a[p][p] += c
            if q >= 0:
                rhs[q] -= hkw
                a[q][q] += c
            if p >= 0 and q >= 0:
                a[p][q] -= c
                a[q][p] -= c
        y = _solve(a, rhs)
        for ((fa, ia), (fb, ib), *_, p, q), (c, hkw) in zip(self.rows, coeffs):
            f = fb[ib] + hkw - c * ((y[q] if q >= 0 else 0.0) - (y[p] if p >= 0 else 0.0))
            fb[ib] = f
            fa[ia] = -f


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
