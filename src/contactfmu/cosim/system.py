"""The co-simulation master's system: FMU instances on fmpy's FMU2Slave, connected by their flanges
(the topology, the exchange plan, the instances' life cycle); System.simulate runs it
(cosim.execution with an algorithm of cosim.algorithms).

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

The schemes are algorithm objects behind one interface (cosim.algorithms: GaussSeidel, Implicit and
Jacobi with a fixed step, AdaptiveAlgorithm without one), run by one loop (cosim.execution); the
exchange plan is made of named records (MotionLink, SignalLink, ForceLink, AccelLink); what the
master needs from an FMU is declared by its variables as cosim.conventions writes down.

``scheme="jacobi"`` runs libcosim's fixed-step algorithm instead (OSP ``FixedStepAlgorithm``, as in
libcosim's fixed_step_algorithm.cpp and slave_simulator.cpp), for comparisons with libcosim and
other plain masters: initialization mode with N = (number of FMUs) sweeps of "read every
connected output, then copy all values"; then at each step every FMU steps, every output is read
right after its step (an output that depends directly on inputs still reflects the previous
inputs), and all connections are copied at once. Values only (no derivatives); the forces of a
node are summed, which equals connecting them to the numbered inputs .f, .f2 .. .f4 one by one.
"""

import math
from collections import defaultdict
from dataclasses import replace
from typing import NamedTuple

from .. import conventions
from . import fmi3
from .algorithms import select
from .algorithms.adaptive import AdaptiveAlgorithm
from .errors import CosimError
from .execution import Execution
from .instances import LOGS, Instance, callbacks, extracted
from .results import estimate_error


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
    """The exchange of a communication point (System.plan), in causal order."""

    motion: list
    signals: list
    forces: list
    accel: list


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
        self.flange_edges = []  # (flange a, flange b, rod length: s_b = s_a + L)
        self.signals = []  # (source "inst.var", target "inst.var")

    # ---- building --------------------------------------------------------------------------

    def add(self, name, fmu, values=None, **kwargs):
        """Add an FMU instance; `values`/kwargs set parameters and start values by variable name."""
        if name in self.instances:
            raise CosimError(f"instance name {name!r} is already used")
        if "." in name:
            raise CosimError(f"instance name {name!r} must not contain '.'")
        self.instances[name] = Instance(name, fmu, {**(values or {}), **kwargs})
        return self.instances[name]

    def resolve(self, ref):
        """(instance, the rest of the name) of "instance.flange" or "instance.variable"."""
        inst, _, rest = ref.partition(".")
        if inst not in self.instances or not rest:
            raise CosimError(
                f"{ref!r}: expected 'instance.flange' or 'instance.variable' with an instance "
                f"of this system ({', '.join(self.instances) or 'none yet'})"
            )
        return self.instances[inst], rest

    def connect(self, a, b, rod=0.0):
        """Connect two flanges (optionally through a rigid massless rod of length `rod`:
        b.s = a.s + rod) or an output signal `a` to an input `b`."""
        ia, na = self.resolve(a)
        ib, nb = self.resolve(b)
        ra, rb = ia.flange_role(na), ib.flange_role(nb)
        if ra is None and rb is None and na in ia.variables and nb in ib.variables:
            va, vb = ia.var(na), ib.var(nb)
            if va.causality != "output" or vb.causality != "input":
                raise CosimError(
                    f"signal connection {a} -> {b} needs an output and an input "
                    f"(got {va.causality} -> {vb.causality})"
                )
            if rod:
                raise CosimError(f"signal connection {a} -> {b} cannot have a rod")
            self.signals.append((a, b))
            return
        for ref, inst, fl, role in ((a, ia, na, ra), (b, ib, nb, rb)):
            if role is None:
                raise CosimError(
                    f"{ref} is not a flange of {inst.name} ({inst.md.modelName}) and "
                    f"not a variable to connect to {b if ref == a else a}"
                )
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
                        raise CosimError(
                            f"rods around {x} -- {y} form a loop with inconsistent lengths"
                        )
            motion = [f for f in pos if self._role(f) == "motion"]
            if len(motion) > 1:
                raise CosimError(
                    f"{' and '.join(motion)} would be rigidly connected: both are inertial elements "
                    f"(their flanges output motion and take the force as input). A compliant element "
                    f"(one that takes the motion of its flanges and outputs the force) is needed "
                    f"between them."
                )
            source = motion[0] if motion else None
            nodes.append(
                (source, {f: p - (pos[source] if source else 0.0) for f, p in pos.items()})
            )
        return nodes

    def _role(self, ref):
        inst, fl = self.resolve(ref)
        return inst.flange_role(fl)

    # ---- running ---------------------------------------------------------------------------

    def instantiate(self, start_time, stop_time, early_return=False):
        """Instantiate every FMU (fmpy's FMU2Slave; an FMI 3.0 FMU behind cosim.fmi3.Fmi3Slave,
        allowed to return early at its events if early_return), set up its experiment, set its
        values."""
        from fmpy.fmi2 import FMU2Slave

        cb = callbacks()
        for inst in self.instances.values():
            inst.unzipdir = extracted(inst.path)
            inst.log = []
            LOGS[inst.name] = inst.log
            if inst.fmi3:
                inst.slave = fmi3.Fmi3Slave(
                    guid=inst.md.guid,
                    unzipDirectory=inst.unzipdir,
                    modelIdentifier=inst.md.coSimulation.modelIdentifier,
                    instanceName=inst.name,
                    log=inst.log,
                    early_return=early_return,
                )
            else:
                inst.slave = FMU2Slave(
                    guid=inst.md.guid,
                    unzipDirectory=inst.unzipdir,
                    modelIdentifier=inst.md.coSimulation.modelIdentifier,
                    instanceName=inst.name,
                )
            inst.call("instantiate", lambda: inst.slave.instantiate(callbacks=cb, loggingOn=False))
            inst.call(
                "setupExperiment",
                lambda: inst.slave.setupExperiment(startTime=start_time, stopTime=stop_time),
            )
            for name, value in inst.values.items():
                self._set_any(inst, name, value)

    def _set_any(self, inst, name, value):
        var = inst.var(name)
        vr = [var.valueReference]
        if var.type == "Real":
            inst.call(f"setting {name} = {value!r}", lambda: inst.slave.setReal(vr, [float(value)]))
        elif var.type in ("Integer", "Enumeration"):
            inst.call(
                f"setting {name} = {value!r}", lambda: inst.slave.setInteger(vr, [int(value)])
            )
        elif var.type == "Boolean":
            inst.call(
                f"setting {name} = {value!r}", lambda: inst.slave.setBoolean(vr, [bool(value)])
            )
        else:
            raise CosimError(f"{inst.name}.{name}: type {var.type} is not supported")

    def node_links(self):
        """Per node: (inertial instance, its flange, [(compliant instance, flange, rod offset)]),
        offsets such that s_compliant = s_inertial + offset. Refuses a node without an inertial
        element, which would have no motion to give."""
        links = []
        for source, members in self._nodes():
            if source is None:
                raise CosimError(
                    f"flanges {', '.join(sorted(members))} are connected only to compliant "
                    f"elements: every node needs one inertial element (Mass, Fixed, ...) "
                    f"that gives its motion"
                )
            si, sf = self.resolve(source)
            links.append(
                (si, sf, [(*self.resolve(t), off) for t, off in members.items() if t != source])
            )
        return links

    @staticmethod
    def passes_acceleration(si, sf, ti, tf):
        """True if the inertial flange's acceleration goes to the compliant flange (both have .a)."""
        return ti.port(tf, "a") in ti.variables and si.port(sf, "a") in si.variables

    def plan(self, derivatives=True):
        """Precompute the exchange of one communication point (value references, offsets);
        derivatives: pass first derivatives where both sides support them (interpolate_inputs)."""
        motion, forces, accel = [], [], []
        for si, sf, targets in self.node_links():
            for ti, tf, off in targets:
                motion.append(
                    MotionLink(
                        si,
                        si.var(si.port(sf, "s")).valueReference,
                        si.var(si.port(sf, "v")).valueReference,
                        ti,
                        ti.var(ti.port(tf, "s")).valueReference,
                        ti.var(ti.port(tf, "v")).valueReference,
                        off,
                    )
                )
                if self.passes_acceleration(si, sf, ti, tf):
                    accel.append(
                        AccelLink(
                            si,
                            si.var(si.port(sf, "a")).valueReference,
                            ti,
                            ti.var(ti.port(tf, "a")).valueReference,
                        )
                    )
            srcs = [(ti, ti.var(ti.port(tf, "f")).valueReference) for ti, tf, _ in targets]
            with_der = (
                derivatives
                and self.interpolate_inputs
                and si.interpolates
                and all(ti.derivatives for ti, _ in srcs)
            )
            forces.append(ForceLink(si, si.var(si.port(sf, "f")).valueReference, srcs, with_der))
        signals = []
        for a, b in self.signals:
            ia, na = self.resolve(a)
            ib, nb = self.resolve(b)
            va, vb = ia.var(na), ib.var(nb)
            if va.type != vb.type:
                raise CosimError(f"signal {a} ({va.type}) -> {b} ({vb.type}): types differ")
            with_der = (
                derivatives
                and self.interpolate_inputs
                and va.type == "Real"
                and ia.derivatives
                and ib.interpolates
            )
            signals.append(SignalLink(ia, va, ib, vb, with_der))
        return Plan(motion, signals, forces, accel)

    def integrating(self):
        """Names of the instances that declare they integrate their contact themselves (Boolean output
        conventions.INTEGRATES true; read in initialization mode)."""
        names = set()
        for inst in self.instances.values():
            var = inst.variables.get(conventions.INTEGRATES)
            if var is not None and var.causality == "output" and var.type == "Boolean":
                if inst.call("fmi2GetBoolean", lambda: inst.slave.getBoolean([var.valueReference]))[
                    0
                ]:
                    names.add(inst.name)
        return names

    def simulate(
        self,
        stop_time,
        step=None,
        start_time=0.0,
        output_interval=None,
        outputs=None,
        progress=None,
        scheme=None,
        inputs=None,
        rtol=None,
        atol=None,
        error_estimate=False,
    ):
        """Run the co-simulation; returns a Result (time + recorded outputs).

        step: fixed communication step [s]; without it (or with scheme="adaptive", where it is the
        first step) the master chooses the steps under the tolerance rtol/atol (default 1e-4/1e-6) on
        the bodies' motion, with rollback, implicit coupling of stiff interfaces and located events
        (cosim.algorithms.adaptive; result.steps lists every attempted step); a tolerance given with
        a fixed-step scheme is refused; output_interval: recording interval (fixed steps: a multiple
        of step, default step; adaptive: the steps end on this grid, default every accepted step);
        outputs: "inst.var" names to record (default: every output); progress: True for a progress
        bar on stderr for runs longer than 2 s, or a callable(t); scheme: "gauss-seidel" (the
        project's scheme, module docstring), "jacobi" (libcosim's fixed-step algorithm), "implicit"
        (Gauss-Seidel order, values held, and the forces of compliant elements with interface outputs
        made linearly implicit: implicit.ImplicitCoupling), "adaptive", "multirate" (the adaptive steps
        repeated only by the FMUs that need them: cosim.algorithms.multirate), or an algorithm object of
        cosim.algorithms (then no step or tolerance beside it); inputs: {"inst.var": f(t)} drives
        unconnected Real inputs, set at every communication point before the exchange (jacobi:
        before the step); error_estimate (adaptive runs): the run is made a second time at a
        tolerance ten times tighter, and result.error_estimate gives, per recorded output, the
        largest error of the result estimated from the difference (results.error_estimate: the
        error is proportional to rtol); the run costs about four times as much."""
        algorithm = select(scheme, step, rtol, atol)
        if error_estimate and not isinstance(algorithm, AdaptiveAlgorithm):
            raise CosimError(
                "error_estimate needs the adaptive master (no step, or scheme='adaptive'): "
                "the estimate compares two tolerances"
            )

        def run(algorithm):
            execution = Execution(
                self, algorithm, inputs=inputs, outputs=outputs, progress=progress
            )
            return execution.run(start_time, stop_time, output_interval)

        result = run(algorithm)
        if error_estimate:
            p = algorithm.params
            fine = run(type(algorithm)(replace(p, rtol=p.rtol / 10.0, atol=p.atol / 10.0)))
            result.error_estimate = estimate_error(result, fine, 10.0)
        return result

    def enter_initialization(self, t):
        for inst in self.instances.values():
            inst.call("fmi2EnterInitializationMode", inst.slave.enterInitializationMode, t)

    def exit_initialization(self, t):
        for inst in self.instances.values():
            inst.call("fmi2ExitInitializationMode", inst.slave.exitInitializationMode, t)

    def terminate(self, t):
        for inst in self.instances.values():
            inst.call("fmi2Terminate", inst.slave.terminate, t)

    def free(self):
        """Free every instance (whatever state it is in)."""
        for inst in self.instances.values():
            if inst.slave is not None:
                try:
                    inst.slave.freeInstance()
                except Exception:
                    pass
                inst.slave = None
