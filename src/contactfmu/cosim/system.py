"""The co-simulation master: FMU instances on fmpy's FMU2Slave, connected by their flanges.

Coupling scheme (fixed communication step h, t_n = t0 + n*h):

1. at t_n, outputs are exchanged in causal order, each step reading what the previous one set:
   a. motion: every inertial flange (outputs s, v, a; input f) hands s (+ rod offset) and v to
      the compliant flanges on its node;
   b. signals (e.g. sine.y -> force.f), in the order they were connected;
   c. forces: the compliant elements' force outputs (direct feed-through, so they already see
      the motion of a.) are summed per node into the inertial flange's force input;
   d. accelerations: the inertial flange's a (which depends directly on the forces of c.)
      goes to the compliant flanges' a inputs;
   e. first derivatives (``interpolate_inputs=True``, the default): where the source FMU
      provides output derivatives (maxOutputDerivativeOrder >= 1) and the receiving FMU can
      interpolate inputs (canInterpolateInputs), the time derivative at t_n of every exchanged
      force (summed per node) and signal is passed with fmi2SetRealInputDerivatives. For a
      linear spring-damper df/dt = c*v_rel + d*a_rel is exact at t_n, so the force on a mass
      varies linearly over the step instead of being held (first-order instead of zero-order
      hold, no extrapolation from past points);
2. results are recorded at t_n;
3. every FMU does one step [t_n, t_n + h]; inputs are held, or linear where derivatives were set.

Inertial FMUs integrate exactly under a held or linear force; because the forces are evaluated
with the motion of the same communication point, no algebraic loop arises (compliant forces
depend on s and v only, their derivatives also on a).

The schemes are algorithm objects (cosim.algorithms.GaussSeidel for "gauss-seidel" and
"implicit", cosim.algorithms.Jacobi, cosim.adaptive.AdaptiveAlgorithm without a step); the exchange
plan is made of named records (MotionLink, SignalLink, ForceLink, AccelLink); what the master needs
from an FMU is declared by its variables as cosim.conventions writes down.

``scheme="jacobi"`` runs libcosim's fixed-step algorithm instead (OSP ``FixedStepAlgorithm``, as in
libcosim's fixed_step_algorithm.cpp and slave_simulator.cpp), for comparisons with libcosim and
other plain masters: initialization mode with N = (number of FMUs) sweeps of "read every
connected output, then copy all values"; then at each step every FMU steps, every output is read
right after its step (an output that depends directly on inputs still reflects the previous
inputs), and all connections are copied at once. Values only (no derivatives); the forces of a
node are summed, which equals connecting them to the numbered inputs .f, .f2 .. .f4 one by one.
"""
import math
import os
import shutil
import sys
import tempfile
import time as _time
from collections import defaultdict
from ctypes import byref
from typing import NamedTuple

import numpy as np

from . import conventions
from .algorithms import DrivenInputs, GaussSeidel, Implicit, Jacobi, Recorder
from .exchange import Exchange
from .fastcalls import Reader
from .results import Result

SCHEMES = ("gauss-seidel", "jacobi", "implicit", "adaptive")


_LOGS = {}          # FMI instance name -> list of (status, message) of the running system
_CALLBACKS = []
_EXTRACTED = {}     # (FMU path, mtime, size) -> its unzip directory, for the life of the process
_EXTRACT_ROOT = []  # the folder of those directories (created on first use)


def _unzipped(path):
    """The FMU's unzip directory, extracted once per process and FMU file version. pythonfmu's
    library can never be unloaded (GNU-unique symbols), so every fresh extraction would load
    another copy of it (about 300 kB, kept until the process ends); an unchanged FMU reuses
    the copy already loaded. The directories are removed when the process exits."""
    from fmpy import extract

    st = os.stat(path)
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key not in _EXTRACTED:
        if not _EXTRACT_ROOT:
            import atexit

            _EXTRACT_ROOT.append(tempfile.mkdtemp(prefix="contactfmu_"))
            atexit.register(shutil.rmtree, _EXTRACT_ROOT[0], True)
        _EXTRACTED[key] = extract(path, unzipdir=os.path.join(_EXTRACT_ROOT[0], str(len(_EXTRACTED))))
    return _EXTRACTED[key]


def _callbacks():
    """One fmi2CallbackFunctions for all instances. fmpy's logger proxy (which formats the
    variadic message) keeps a single process-wide callback, so messages are dispatched by the
    instance name the FMU reports."""
    from fmpy.fmi2 import fmi2CallbackFunctions, fmi2CallbackLoggerTYPE
    from fmpy.logging import addLoggerProxy

    if not _CALLBACKS:
        def logger(env, name, status, category, message):
            key = name.decode("utf-8", "replace") if name else ""
            _LOGS.setdefault(key, []).append((status, message.decode("utf-8", "replace")))

        _CALLBACKS.extend([logger, fmi2CallbackLoggerTYPE(logger)])
    # registered anew for every run: another user of fmpy may have taken the proxy's slot since
    cb = fmi2CallbackFunctions()
    cb.logger = _CALLBACKS[1]
    addLoggerProxy(byref(cb))
    _CALLBACKS.append(cb)  # keep it alive (FMUs hold a pointer to it)
    return cb


SIMULATIONX_PORTS = conventions.PORT_ALIASES   # (kept for importers of this name)


class MotionLink(NamedTuple):
    """An inertial flange's position and velocity to a compliant flange (s_target = s + offset)."""
    source: "Instance"
    s: int
    v: int
    target: "Instance"
    target_s: int
    target_v: int
    offset: float


class AccelLink(NamedTuple):
    """An inertial flange's acceleration to a compliant flange."""
    source: "Instance"
    a: int
    target: "Instance"
    target_a: int


class ForceLink(NamedTuple):
    """The forces of the compliant elements on a node, summed into the inertial flange's force input;
    with_derivative: their first derivatives are passed too."""
    body: "Instance"
    f: int
    sources: list
    with_derivative: bool


class SignalLink(NamedTuple):
    """An output signal to an input (e.g. sine.y -> force.f)."""
    source: "Instance"
    output: object
    target: "Instance"
    input: object
    with_derivative: bool


class Plan(NamedTuple):
    """The exchange of a communication point (System._plan), in causal order."""
    motion: list
    signals: list
    forces: list
    accel: list

class CosimError(RuntimeError):
    """An FMU call failed, or the system is not well formed."""


class Instance:
    """One FMU instance of a System."""

    def __init__(self, name, path, values):
        from fmpy import read_model_description

        self.name = name
        self.path = str(path)
        if not os.path.isfile(self.path):
            raise CosimError(f"{name}: FMU file {self.path} not found")
        try:
            self.md = read_model_description(self.path)
        except Exception as exc:
            raise CosimError(f"{name}: {self.path} is not a readable FMU: {exc}") from None
        if self.md.coSimulation is None:
            raise CosimError(f"{name}: {self.path} is not a Co-Simulation FMU")
        self.variables = {v.name: v for v in self.md.modelVariables}
        cs = self.md.coSimulation
        self.derivatives = (cs.maxOutputDerivativeOrder or 0) >= 1
        self.interpolates = bool(cs.canInterpolateInputs)
        self.values = dict(values)
        for key in self.values:
            var = self.var(key)
            if var.causality not in ("parameter", "input") and var.initial not in ("exact", "approx"):
                hint = f"; set {key}_start" if f"{key}_start" in self.variables else ""
                raise CosimError(f"{name}.{key} cannot be set: it is a {var.causality} computed by the FMU "
                                 f"(initial = {var.initial}){hint}")
        self.log = []
        self.slave = None
        self.unzipdir = None

    def var(self, name):
        try:
            return self.variables[name]
        except KeyError:
            raise CosimError(f"{self.name} ({self.md.modelName}) has no variable {name!r}; "
                             f"it has: {', '.join(self.variables)}") from None

    def port(self, flange, what):
        """Name of a flange's position ('s'), velocity ('v'), acceleration ('a') or force ('f')
        variable: MSL names <flange>.s/.v/.a/.f, or SimulationX names <flange>.x/.v/.a/.F."""
        return conventions.port(self.variables, flange, what)

    def flange_role(self, flange):
        """'motion' for an inertial flange (s out, f in), 'force' for a compliant one, or None."""
        s, f = self.variables.get(self.port(flange, "s")), self.variables.get(self.port(flange, "f"))
        if s is None or f is None:
            return None
        if s.causality == "output" and f.causality == "input":
            return "motion"
        if s.causality == "input" and f.causality == "output":
            return "force"
        return None

    def fail(self, what, exc, t=None):
        at = "" if t is None else f" at t = {t:.9g} s"
        log = "\n".join(f"  [{status}] {msg}" for status, msg in self.log[-20:]) or "  (no messages)"
        return CosimError(f"{self.name} ({os.path.basename(self.path)}): {what} failed{at}: {exc}\n"
                          f"FMU log:\n{log}")


class System:
    """A co-simulation of connected FMU instances.

    >>> sys = System()
    >>> sys.add("mass", "fmus/Mass.fmu", m=1.0, s_start=0.1)
    >>> sys.add("spring", "fmus/Spring.fmu", c=100.0)
    >>> sys.add("wall", "fmus/Fixed.fmu")
    >>> sys.connect("wall.flange", "spring.flange_a")
    >>> sys.connect("spring.flange_b", "mass.flange_a")
    >>> result = sys.simulate(stop_time=1.0, step=1e-3)
    """

    def __init__(self, interpolate_inputs=True):
        self.interpolate_inputs = interpolate_inputs
        self.instances = {}
        self.flange_edges = []   # (flange a, flange b, rod length: s_b = s_a + L)
        self.signals = []        # (source "inst.var", target "inst.var")

    # ---- building --------------------------------------------------------------------------

    def add(self, name, fmu, values=None, **kwargs):
        """Add an FMU instance; `values`/kwargs set parameters and start values by variable name."""
        if name in self.instances:
            raise CosimError(f"instance name {name!r} is already used")
        if "." in name:
            raise CosimError(f"instance name {name!r} must not contain '.'")
        self.instances[name] = Instance(name, fmu, {**(values or {}), **kwargs})
        return self.instances[name]

    def _split(self, ref):
        inst, _, rest = ref.partition(".")
        if inst not in self.instances or not rest:
            raise CosimError(f"{ref!r}: expected 'instance.flange' or 'instance.variable' with an instance "
                             f"of this system ({', '.join(self.instances) or 'none yet'})")
        return self.instances[inst], rest

    def connect(self, a, b, rod=0.0):
        """Connect two flanges (optionally through a rigid massless rod of length `rod`:
        b.s = a.s + rod) or an output signal `a` to an input `b`."""
        ia, na = self._split(a)
        ib, nb = self._split(b)
        ra, rb = ia.flange_role(na), ib.flange_role(nb)
        if ra is None and rb is None and na in ia.variables and nb in ib.variables:
            va, vb = ia.var(na), ib.var(nb)
            if va.causality != "output" or vb.causality != "input":
                raise CosimError(f"signal connection {a} -> {b} needs an output and an input "
                                 f"(got {va.causality} -> {vb.causality})")
            if rod:
                raise CosimError(f"signal connection {a} -> {b} cannot have a rod")
            self.signals.append((a, b))
            return
        for ref, inst, fl, role in ((a, ia, na, ra), (b, ib, nb, rb)):
            if role is None:
                raise CosimError(f"{ref} is not a flange of {inst.name} ({inst.md.modelName}) and "
                                 f"not a variable to connect to {b if ref == a else a}")
        if not math.isfinite(rod):
            raise CosimError(f"rod length {rod!r} of {a} -- {b} must be finite")
        self.flange_edges.append((a, b, float(rod)))
        try:
            self._nodes()
        except CosimError:
            self.flange_edges.pop()
            raise

    def _nodes(self):
        """Connected flanges grouped in nodes: [(source flange, {flange: offset from source})]."""
        adj = defaultdict(list)
        for a, b, L in self.flange_edges:
            adj[a].append((b, L))
            adj[b].append((a, -L))
        seen, nodes = set(), []
        for start in list(adj):
            if start in seen:
                continue
            pos, stack = {start: 0.0}, [start]
            seen.add(start)
            while stack:
                x = stack.pop()
                for y, L in adj[x]:
                    if y not in pos:
                        pos[y] = pos[x] + L
                        seen.add(y)
                        stack.append(y)
                    elif abs(pos[y] - pos[x] - L) > 1e-12 * (1 + abs(L)):
                        raise CosimError(f"rods around {x} -- {y} form a loop with inconsistent lengths")
            motion = [f for f in pos if self._role(f) == "motion"]
            if len(motion) > 1:
                raise CosimError(
                    f"{' and '.join(motion)} would be rigidly connected: both are inertial elements "
                    f"(Mass, Fixed, MassWithStopAndFriction), which output motion. A compliant element "
                    f"(Spring, SpringDamper, Damper, ElastoGap, ...) is needed between them.")
            source = motion[0] if motion else None
            nodes.append((source, {f: p - (pos[source] if source else 0.0) for f, p in pos.items()}))
        return nodes

    def _role(self, ref):
        inst, fl = self._split(ref)
        return inst.flange_role(fl)

    # ---- running ---------------------------------------------------------------------------

    def _instantiate(self, start_time, stop_time):
        from fmpy.fmi2 import FMU2Slave

        cb = _callbacks()
        for inst in self.instances.values():
            inst.unzipdir = _unzipped(inst.path)
            inst.log = []
            _LOGS[inst.name] = inst.log
            inst.slave = FMU2Slave(guid=inst.md.guid, unzipDirectory=inst.unzipdir,
                                   modelIdentifier=inst.md.coSimulation.modelIdentifier,
                                   instanceName=inst.name)
            self._call(inst, "instantiate", lambda: inst.slave.instantiate(callbacks=cb, loggingOn=False))
            self._call(inst, "setupExperiment",
                       lambda: inst.slave.setupExperiment(startTime=start_time, stopTime=stop_time))
            for name, value in inst.values.items():
                self._set_any(inst, name, value)

    def _set_any(self, inst, name, value):
        var = inst.var(name)
        vr = [var.valueReference]
        if var.type == "Real":
            self._call(inst, f"setting {name} = {value!r}", lambda: inst.slave.setReal(vr, [float(value)]))
        elif var.type in ("Integer", "Enumeration"):
            self._call(inst, f"setting {name} = {value!r}", lambda: inst.slave.setInteger(vr, [int(value)]))
        elif var.type == "Boolean":
            self._call(inst, f"setting {name} = {value!r}", lambda: inst.slave.setBoolean(vr, [bool(value)]))
        else:
            raise CosimError(f"{inst.name}.{name}: type {var.type} is not supported")

    @staticmethod
    def _call(inst, what, fn, t=None):
        try:
            return fn()
        except Exception as exc:
            raise inst.fail(what, exc, t) from None

    def node_links(self):
        """Per node: (inertial instance, its flange, [(compliant instance, flange, rod offset)]),
        offsets such that s_compliant = s_inertial + offset. Refuses a node without an inertial
        element, which would have no motion to give."""
        links = []
        for source, members in self._nodes():
            if source is None:
                raise CosimError(f"flanges {', '.join(sorted(members))} are connected only to compliant "
                                 f"elements: every node needs one inertial element (Mass, Fixed, ...) "
                                 f"that gives its motion")
            si, sf = self._split(source)
            links.append((si, sf, [(*self._split(t), off) for t, off in members.items() if t != source]))
        return links

    @staticmethod
    def passes_acceleration(si, sf, ti, tf):
        """True if the inertial flange's acceleration goes to the compliant flange (both have .a)."""
        return ti.port(tf, "a") in ti.variables and si.port(sf, "a") in si.variables

    def _plan(self, derivatives=True):
        """Precompute the exchange of one communication point (value references, offsets);
        derivatives: pass first derivatives where both sides support them (interpolate_inputs)."""
        motion, forces, accel = [], [], []
        for si, sf, targets in self.node_links():
            for ti, tf, off in targets:
                motion.append(MotionLink(si, si.var(si.port(sf, "s")).valueReference,
                                         si.var(si.port(sf, "v")).valueReference, ti,
                                         ti.var(ti.port(tf, "s")).valueReference,
                                         ti.var(ti.port(tf, "v")).valueReference, off))
                if self.passes_acceleration(si, sf, ti, tf):
                    accel.append(AccelLink(si, si.var(si.port(sf, "a")).valueReference, ti,
                                           ti.var(ti.port(tf, "a")).valueReference))
            srcs = [(ti, ti.var(ti.port(tf, "f")).valueReference) for ti, tf, _ in targets]
            with_der = derivatives and self.interpolate_inputs and si.interpolates and all(ti.derivatives for ti, _ in srcs)
            forces.append(ForceLink(si, si.var(si.port(sf, "f")).valueReference, srcs, with_der))
        signals = []
        for a, b in self.signals:
            ia, na = self._split(a)
            ib, nb = self._split(b)
            va, vb = ia.var(na), ib.var(nb)
            if va.type != vb.type:
                raise CosimError(f"signal {a} ({va.type}) -> {b} ({vb.type}): types differ")
            with_der = derivatives and self.interpolate_inputs and va.type == "Real" and ia.derivatives and ib.interpolates
            signals.append(SignalLink(ia, va, ib, vb, with_der))
        return Plan(motion, signals, forces, accel)

    def _integrating(self):
        """Names of the instances that declare they integrate their contact themselves (Boolean output
        conventions.INTEGRATES true; read in initialization mode)."""
        names = set()
        for inst in self.instances.values():
            var = inst.variables.get(conventions.INTEGRATES)
            if var is not None and var.causality == "output" and var.type == "Boolean":
                if self._call(inst, "fmi2GetBoolean", lambda: inst.slave.getBoolean([var.valueReference]))[0]:
                    names.add(inst.name)
        return names

    def _implicit(self, plan):
        """The ImplicitCoupling of scheme="implicit": the compliant elements with interface outputs
        (both flanges on nodes) and the bodies they act on, with the inertia they declare
        (conventions.INERTIA, read in initialization mode)."""
        from .exchange import CoupledBody, CoupledElement, CoupledEnd, ImplicitCoupling

        INTERFACE = conventions.INTERFACE
        motion, _, forces, _ = plan
        feed = {(ti.name, ts): (si, vs, vv, off, ts, tv) for si, vs, vv, ti, ts, tv, off in motion}
        mass = {}
        for si, *_ in motion:
            var = si.variables.get(conventions.INERTIA)
            if si.name not in mass and var is not None and var.causality == "output" and var.type == "Real":
                m = self._call(si, "fmi2GetReal", lambda: si.slave.getReal([var.valueReference]))[0]
                mass[si.name] = m if m > 0.0 else None
        elements, used, integrating = [], set(), self._integrating()
        for inst in self.instances.values():
            names = conventions.COMPLIANT_FORCES + INTERFACE
            if not all(n in inst.variables for n in names) or inst.name in integrating:
                continue  # no interface outputs, or an element that integrates its contact itself
            ends = [feed.get((inst.name, inst.var(inst.port(fl, "s")).valueReference)) for fl in ("flange_a", "flange_b")]
            if None in ends:
                continue
            ends = [CoupledEnd(si.name if mass.get(si.name) else None, (si, vs, vv), off, ts, tv)
                    for si, vs, vv, off, ts, tv in ends]
            used.update(e.body for e in ends if e.body)
            depends = {u.variable.name: u.dependencies for u in inst.md.outputs}
            nonlinear = any(depends.get(n) for n in INTERFACE)
            elements.append(CoupledElement(inst, *(inst.var(n).valueReference for n in names), *ends, nonlinear))
        bodies = {}
        for si, vf, srcs, _ in forces:
            if si.name in used:
                bodies.setdefault(si.name, CoupledBody(si, mass[si.name], [])).terms.extend(srcs)
        return ImplicitCoupling(elements, bodies)

    def _recorder(self, outputs):
        """Columns to record: `outputs` ("inst.var" names) or every output of every instance."""
        if outputs is None:
            outputs = [f"{i.name}.{v.name}" for i in self.instances.values() for v in i.md.modelVariables
                       if v.causality == "output"]
        groups = defaultdict(lambda: defaultdict(list))
        for col, ref in enumerate(outputs):
            inst, name = self._split(ref)
            var = inst.var(name)
            kind = "Real" if var.type == "Real" else "Boolean" if var.type == "Boolean" else "Integer"
            groups[inst.name][kind].append((col, var.valueReference))
        return list(outputs), groups

    def _record_calls(self, groups):
        """A function of t returning the row [t, outputs...] (one get call per instance and type)."""
        calls = []
        for name, kinds in groups.items():
            for kind, cols in kinds.items():
                calls.append((Reader(self.instances[name], [vr for _, vr in cols], kind),
                              [col + 1 for col, _ in cols], kind == "Real"))
        width = 1 + sum(len(c[1]) for c in calls)

        def record(t):
            row = [t] + [0.0] * (width - 1)
            for reader, cols, real in calls:
                values = reader(t)
                for col, value in zip(cols, values):
                    row[col] = value if real else float(value)
            return row

        return record

    def _connected_inputs(self, plan):
        """{(instance name, value reference): what sets it} for every input the exchange sets."""
        motion, signals, forces, accel = plan
        fed = {}
        for si, _, _, ti, ts, tv, _ in motion:
            fed[(ti.name, ts)] = fed[(ti.name, tv)] = f"the motion of {si.name}"
        for si, _, ti, ta in accel:
            fed[(ti.name, ta)] = f"the motion of {si.name}"
        for si, vf, srcs, _ in forces:
            fed[(si.name, vf)] = "the forces of " + ", ".join(ti.name for ti, _ in srcs)
        for ia, va, ib, vb, _ in signals:
            fed[(ib.name, vb.valueReference)] = f"{ia.name}.{va.name}"
        return fed

    def _input_plan(self, inputs, plan):
        connected = self._connected_inputs(plan)
        result = []
        for ref, fn in (inputs or {}).items():
            inst, name = self._split(ref)
            var = inst.var(name)
            if var.causality != "input" or var.type != "Real":
                raise CosimError(f"inputs[{ref!r}]: {ref} is a {var.type} {var.causality}; only Real inputs "
                                 f"can be driven")
            source = connected.get((inst.name, var.valueReference))
            if source is not None:
                raise CosimError(f"inputs[{ref!r}]: {ref} is already connected (set from {source}); only "
                                 f"unconnected inputs can be driven")
            if not callable(fn):
                raise CosimError(f"inputs[{ref!r}] must be a function of time, got {type(fn).__name__}")
            result.append((inst, var.valueReference, fn, ref))
        return result


    def simulate(self, stop_time, step=None, start_time=0.0, output_interval=None, outputs=None, progress=None,
                 scheme=None, inputs=None, rtol=1e-4, atol=1e-6):
        """Run the co-simulation; returns a Result (time + recorded outputs).

        step: fixed communication step [s]; without it (or with scheme="adaptive", where it is the
        first step) the master chooses the steps under the tolerance rtol/atol on the bodies'
        motion, with rollback, implicit coupling of stiff interfaces and located events
        (cosim.adaptive; result.steps lists every attempted step); output_interval: recording
        interval (fixed steps: a multiple of step, default step; adaptive: the steps end on this
        grid, default every accepted step); outputs: "inst.var" names to record (default: every output);
        progress: True for a progress bar on stderr for runs longer than 2 s, or a callable(t);
        scheme: "gauss-seidel" (the project's scheme, module docstring), "jacobi" (libcosim's
        fixed-step algorithm) or "implicit" (Gauss-Seidel order, values held, and the forces of
        compliant elements with interface outputs made linearly implicit: exchange.ImplicitCoupling); inputs: {"inst.var": f(t)} drives unconnected Real inputs, set at
        every communication point before the exchange (jacobi: before the step)."""
        if scheme is None:
            scheme = "adaptive" if step is None else "gauss-seidel"
        if scheme not in SCHEMES:
            raise CosimError(f"scheme {scheme!r}: valid are {', '.join(map(repr, SCHEMES))}")
        if scheme == "adaptive":
            return self._simulate_adaptive(stop_time, step, start_time, output_interval, outputs, progress, inputs,
                                           rtol, atol)
        if step is None:
            raise CosimError(f"scheme {scheme!r} needs a communication step (step=...); without one the "
                             f"master chooses the steps (scheme='adaptive')")
        if not (step > 0 and math.isfinite(step)):
            raise CosimError(f"communication step {step!r} s must be > 0")
        if not stop_time > start_time:
            raise CosimError(f"stop_time {stop_time!r} must be greater than start_time {start_time!r}")
        if step > (stop_time - start_time) * (1 + 1e-12):
            raise CosimError(f"communication step {step!r} s is longer than the simulated span "
                             f"{stop_time - start_time!r} s ({start_time!r} to {stop_time!r} s): give a step of at "
                             f"most the span")
        n_steps = int(math.ceil((stop_time - start_time) / step - 1e-9))
        every = 1 if output_interval is None else max(1, int(round(output_interval / step)))
        plan = self._plan(derivatives=scheme == "gauss-seidel")
        drive = DrivenInputs(self, self._input_plan(inputs, plan))
        names, groups = self._recorder(outputs)
        bar = _Progress(start_time, stop_time) if progress is True else None
        try:
            self._instantiate(start_time, stop_time)
            recorder = Recorder(self._record_calls(groups))

            def setup():   # in initialization mode: the FMUs' declarations can be read
                exchange = Exchange(plan, self._implicit(plan) if scheme == "implicit" else None)
                scheme_class = {"jacobi": Jacobi, "implicit": Implicit}.get(scheme, GaussSeidel)
                algorithm = scheme_class(self, exchange, drive)
                algorithm.initialize(start_time, step)
                return algorithm

            algorithm = self._initialize(drive, start_time, setup)
            t = start_time
            for n in range(n_steps + 1):
                t_next = min(start_time + (n + 1) * step, stop_time)
                h = t_next - t
                algorithm.exchange(t, h)
                if n % every == 0 or n == n_steps:
                    recorder.observe(t)
                if n == n_steps:
                    break
                algorithm.step(t, h)
                t = t_next
                _report(bar, progress, t)
            self._terminate(t)
        finally:
            if bar:
                bar.close()
            self._free()
        return Result(["time"] + names, np.array(recorder.rows, dtype=float))

    def _simulate_adaptive(self, stop_time, step, start_time, output_interval, outputs, progress, inputs, rtol, atol):
        from .adaptive import AdaptiveAlgorithm

        if not stop_time > start_time:
            raise CosimError(f"stop_time {stop_time!r} must be greater than start_time {start_time!r}")
        span = stop_time - start_time
        for name, value in (("rtol", rtol), ("atol", atol)):
            if not (value > 0 and math.isfinite(value)):
                raise CosimError(f"{name} = {value!r}: the tolerance must be finite and > 0")
        if step is not None and not (0 < step <= span and math.isfinite(step)):
            raise CosimError(f"first step {step!r} s must be > 0 and at most the span {span!r} s")
        if output_interval is not None and not (0 < output_interval and math.isfinite(output_interval)):
            raise CosimError(f"output_interval {output_interval!r} s must be > 0")
        defaults = [inst.md.defaultExperiment.stepSize for inst in self.instances.values()
                    if inst.md.defaultExperiment is not None and inst.md.defaultExperiment.stepSize]
        h0 = step or min([float(h) for h in defaults] + [span / 100.0])
        hmax = min(output_interval or span / 50.0, span)
        plan = self._plan(derivatives=True)
        drive = DrivenInputs(self, self._input_plan(inputs, plan))
        names, groups = self._recorder(outputs)
        bar = _Progress(start_time, stop_time) if progress is True else None
        grid = None
        if output_interval is not None:
            n_out = int(math.ceil(span / output_interval - 1e-9))
            grid = [min(start_time + k * output_interval, stop_time) for k in range(1, n_out + 1)]
        try:
            self._instantiate(start_time, stop_time)
            recorder = Recorder(self._record_calls(groups))

            def setup():   # in initialization mode: the FMUs' declarations can be read
                explicit = Exchange(plan)
                coupling = self._implicit(plan)
                implicit = None
                if coupling.elements:
                    # second order: the composite coupling (trapezoidal, then three-point backward
                    # Euler), if every coupled body takes a force derivative; else backward Euler
                    implicit = Exchange(plan, coupling, composite=True)
                    if not coupling.composite_ready():
                        coupling = self._implicit(plan)
                        implicit = Exchange(plan, coupling, lead=True)
                explicit.gauss_seidel(start_time, h0)
                return AdaptiveAlgorithm(self, plan, explicit, implicit or explicit, coupling if implicit else None,
                                         drive, rtol, atol, h0, hmax, event_window=1e-9 * span,
                                         hmin=1e-14 * max(1.0, abs(stop_time)), integrating=self._integrating())

            algorithm = self._initialize(drive, start_time, setup)
            algorithm.initialize(start_time)
            recorder.observe(start_time)
            t, k = start_time, 0
            while t < stop_time:
                limit = grid[k] if grid else stop_time
                t = algorithm.step(t, limit)
                if grid is None or t >= limit:
                    recorder.observe(t)
                    if grid:
                        k += 1
                _report(bar, progress, t)
            self._terminate(t)
        finally:
            if bar:
                bar.close()
            self._free()
        result = Result(["time"] + names, np.array(recorder.rows, dtype=float))
        result.steps = algorithm.records
        return result

    def _initialize(self, drive, start_time, setup):
        """Initialization mode of every instance around setup() (which sets up the scheme and makes
        its initial exchange); returns what setup returns."""
        drive(start_time)
        for inst in self.instances.values():
            self._call(inst, "fmi2EnterInitializationMode", inst.slave.enterInitializationMode, start_time)
        made = setup()
        for inst in self.instances.values():
            self._call(inst, "fmi2ExitInitializationMode", inst.slave.exitInitializationMode, start_time)
        return made

    def _terminate(self, t):
        for inst in self.instances.values():
            self._call(inst, "fmi2Terminate", inst.slave.terminate, t)

    def _free(self):
        for inst in self.instances.values():
            if inst.slave is not None:
                try:
                    inst.slave.freeInstance()
                except Exception:
                    pass
                inst.slave = None


def _report(bar, progress, t):
    """Progress after a step: the bar, or the caller's function."""
    if bar:
        bar.update(t)
    elif progress:
        progress(t)


class _Progress:
    """A text progress bar on stderr, shown once a run has taken more than 2 s."""

    def __init__(self, t0, t1):
        self.t0, self.t1 = t0, t1
        self.start = _time.monotonic()
        self.last = 0.0
        self.shown = False

    def update(self, t):
        now = _time.monotonic()
        if now - self.start < 2.0 or now - self.last < 0.5:
            return
        self.last, self.shown = now, True
        frac = (t - self.t0) / (self.t1 - self.t0)
        eta = (now - self.start) * (1 - frac) / max(frac, 1e-9)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r  [{bar:<30}] {100 * frac:5.1f}%  t = {t:.4g} s  ETA {eta:5.1f} s")
        sys.stderr.flush()

    def close(self):
        if self.shown:
            sys.stderr.write("\n")
