"""The master's fixed-step co-simulation algorithms, one object per scheme (as libcosim's
algorithms): ``initialize(t0, h)`` inside the FMUs' initialization mode, then per communication
point ``exchange(t, h)`` (the values at t: what a recorder then reads) and ``step(t, h)`` (every FMU
advances to t + h). The adaptive algorithm is cosim.adaptive.AdaptiveAlgorithm. Driven inputs are a
manipulator (System._drive) applied where each scheme sets inputs; recording is the observer the
System calls between exchange and step."""
from .fastcalls import check


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
    """schemes "gauss-seidel" and "implicit" (the exchange decides which): at every communication
    point the driven inputs, then the exchange in causal order (cosim.system docstring), then every
    FMU steps."""

    def initialize(self, t0, h):
        self.exchange_.gauss_seidel(t0, h)

    def exchange(self, t, h):
        self.system._drive(self.drive, t)
        self.exchange_.gauss_seidel(t, h)

    def step(self, t, h):
        self._do_steps(t, h)


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
        self.system._drive(self.drive, t)
        self._do_steps(t, h)
