"""The master's fixed-step co-simulation algorithms, one object per scheme (as libcosim's
algorithms): ``initialize(t0, h)`` inside the FMUs' initialization mode, then per communication
point ``exchange(t, h)`` (the values at t: what a recorder then reads) and ``step(t, h)`` (every FMU
advances to t + h). The adaptive algorithm is cosim.adaptive.AdaptiveAlgorithm. Driven inputs are a
manipulator (:class:`DrivenInputs`) that each scheme applies where it sets inputs; recording is an
observer (:class:`Recorder`) the System calls between exchange and step (fixed) or after each
accepted step (adaptive)."""
import math

from .fastcalls import check


class DrivenInputs:
    """The manipulator of the inputs driven by functions of time (System.simulate(inputs=...)):
    ``drive(t)`` sets each of them to its function's value at t (finite, or the run stops with a
    CosimError naming it)."""

    def __init__(self, system, plan):
        self.system = system
        self.plan = plan           # [(instance, value reference, function, "inst.var")]

    def __call__(self, t):
        for inst, vr, fn, ref in self.plan:
            value = float(fn(t))
            if not math.isfinite(value):
                from .system import CosimError

                raise CosimError(f"inputs[{ref!r}] gave {value!r} at t = {t:.9g} s")
            self.system._call(inst, "fmi2SetReal", lambda: inst.slave.setReal([vr], [value]), t)


class Recorder:
    """The observer that records the outputs: ``observe(t)`` appends the row [t, outputs...] read
    from the FMUs (``read``: a function of t, System._record_calls); ``rows`` holds them."""

    def __init__(self, read):
        self.read = read
        self.rows = []

    def observe(self, t):
        self.rows.append(self.read(t))


class DoSteps:
    """fmi2DoStep of every instance, bound once (fmpy's ctypes function, no wrapper): ``(t, h)``."""

    def __init__(self, instances):
        self.steps = [(inst, inst.slave._functions["fmi2DoStep"], inst.slave.component) for inst in instances]

    def __len__(self):
        return len(self.steps)

    def __call__(self, t, h):
        for inst, do_step, component in self.steps:
            status = do_step(component, t, h, 1)
            if status > 1:
                check(inst, "fmi2DoStep", status, t)


class _FixedStep:
    def __init__(self, system, exchange, drive):
        self.system, self.exchange_, self.drive = system, exchange, drive
        self._do_steps = DoSteps(system.instances.values())


class GaussSeidel(_FixedStep):
    """scheme "gauss-seidel": at every communication point the driven inputs, then the exchange in
    causal order (cosim.system docstring), then every FMU steps."""

    def initialize(self, t0, h):
        self.exchange_.gauss_seidel(t0, h)

    def exchange(self, t, h):
        self.drive(t)
        self.exchange_.gauss_seidel(t, h)

    def step(self, t, h):
        self._do_steps(t, h)


class Implicit(GaussSeidel):
    """scheme "implicit": the Gauss-Seidel order with values held, the forces of the compliant
    elements with interface outputs made linearly implicit (its exchange has an ImplicitCoupling)."""

    def __init__(self, system, exchange, drive):
        if exchange.implicit is None:
            raise ValueError("the implicit scheme needs an exchange with an ImplicitCoupling")
        super().__init__(system, exchange, drive)


class Jacobi(_FixedStep):
    """libcosim's fixed-step algorithm: N sweeps of read-then-copy in initialization mode; then at each
    point every output is read (right after the steps), all inputs are set, every FMU steps."""

    def initialize(self, t0, h):
        for _ in range(len(self._do_steps)):
            self.exchange_.read(t0)
            self.exchange_.write(t0)

    def exchange(self, t, h):
        self.exchange_.read(t)

    def step(self, t, h):
        self.exchange_.write(t)
        self.drive(t)
        self._do_steps(t, h)
