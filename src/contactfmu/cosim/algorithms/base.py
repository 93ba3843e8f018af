"""The interface every co-simulation algorithm of the master implements (as libcosim's ``algorithm``),
what the execution hands an algorithm, and the FMUs' step calls the algorithms share.

An algorithm is made from its parameter object (fixed.FixedStep, adaptive.Adaptive) and then driven by
the execution (cosim.execution) through four calls, in this order:

``setup(system, start, stop, output_interval)``
    before the FMUs are instantiated: checks the experiment against the algorithm's parameters
    (CosimError) and returns the times the observers record at, the last one where the run ends
    (None: after every step, until stop);
``initialize(run)``
    in the FMUs' initialization mode (their declarations can be read): binds to the running
    instances (``run``: :class:`Run`) and makes the initial exchange;
``start(t0)``
    after initialization mode: every output is current at t0 (the observers read them next);
``do_step(t, limit)``
    one communication step from t, chosen by the algorithm, never past ``limit`` (the next
    recording time, or the end of the run for a ``dense`` algorithm); every output is current at
    its end, which it returns.

``dense``: True for an algorithm whose steps need not end on the recording times (the adaptive
one): the execution then lets it step up to the end and the recorder interpolates the recording
times from the communication points (observers.Recorder); False: every recording time ends a step.

``observed``: {(instance name, vr): (buffer, index)} where the algorithm leaves outputs the
observers asked for (``run.observed``) as it read them anyway, current at the communication point
its last ``start`` or ``do_step`` reached; the observers read the others themselves ({}: all).

``records``: every attempted step (adaptive.StepRecord) of the run, or None for an algorithm that
does not keep them. The manipulators (``run.manipulate``) are applied by the algorithm wherever it sets
inputs, as libcosim applies its manipulators' modifiers when the algorithm sets them.
"""

from ctypes import c_double, c_int
from typing import Callable, NamedTuple

from ..fastcalls import bound, check

_TRUE = c_int(1)  # noSetFMUStatePriorToCurrentPoint


class Run(NamedTuple):
    """What an algorithm binds to in initialization mode: the system (its instances), the exchange
    plan (System.plan), the manipulators, ``manipulate(t)``: set the driven inputs to their values
    at t, and the outputs the observers read at every communication point: [(instance, vr,
    type)]."""

    system: object
    plan: object
    manipulate: Callable
    observed: tuple = ()


class Algorithm:
    """The interface (module docstring); ``derivatives``: whether the exchange plan passes first
    derivatives where both sides support them; ``early_return``: whether the FMUs that can (FMI
    3.0) may end a step early at an event (DoSteps then raises EarlyReturn)."""

    derivatives = True
    dense = False
    records = None
    observed = {}
    early_return = False

    def setup(self, system, start, stop, output_interval):
        raise NotImplementedError

    def initialize(self, run):
        raise NotImplementedError

    def start(self, t0):
        raise NotImplementedError

    def do_step(self, t, limit):
        raise NotImplementedError


class EarlyReturn(Exception):
    """FMUs ended a step early at an event (FMI 3.0 early return); `time`: the earliest end,
    `names`: the instances that ended there."""

    def __init__(self, time, names):
        super().__init__(f"{', '.join(names)} returned early from the step at t = {time!r} s")
        self.time, self.names = time, names


class DoSteps:
    """fmi2DoStep of every instance, bound once (fastcalls.bound: fmpy's ctypes function without
    its wrapper and argument conversion; the times passed as C doubles made once per call for all
    instances: a sixth less time per fmi2DoStep than through fmpy's wrapper): ``(t, h)``. A function that is not a
    ctypes one (an FMI 3.0 adapter, a counting wrapper) is called as it is, with Python floats.
    An FMU allowed to return early (cosim.fmi3.Fmi3Slave.early_return) that did: EarlyReturn with
    the earliest such end, once every instance has stepped."""

    def __init__(self, instances):
        self.steps = []
        for inst in instances:
            do_step, component, count = bound(inst, "fmi2DoStep")
            self.steps.append((inst, do_step, component, count is not int))
        self.early = [i for i in instances if getattr(i.slave, "early_return", False)]

    def __len__(self):
        return len(self.steps)

    def others(self, names):
        """The step calls of the instances not named."""
        return DoSteps([inst for inst, *_ in self.steps if inst.name not in names])

    def __call__(self, t, h):
        at, size = c_double(t), c_double(h)
        for inst, do_step, component, bare in self.steps:
            if bare:
                status = do_step(component, at, size, _TRUE)
            else:
                status = do_step(component, t, h, 1)
            if status > 1:
                check(inst, f"fmi2DoStep (step {h:.6g} s)", status, t)
        if self.early:
            ends = [(i.slave.last_step[2], i.name) for i in self.early if i.slave.last_step[1]]
            if ends:
                time = min(ends)[0]
                raise EarlyReturn(time, [name for end, name in ends if end == time])
