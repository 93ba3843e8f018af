"""The fixed-step algorithms, tuned by one :class:`FixedStep`: the communication points t_n = t0 + n*h
(the last one at the stop time), the exchange at each point in the order of the scheme, then every FMU
steps to the next point.

- :class:`GaussSeidel` (scheme "gauss-seidel"): at every point the driven inputs, then the exchange in
  causal order with first derivatives (cosim.system docstring), then every FMU steps;
- :class:`Implicit` (scheme "implicit"): the Gauss-Seidel order with values held, the forces of the
  compliant elements with interface outputs made linearly implicit (cosim.implicit.ImplicitCoupling);
- :class:`Jacobi` (scheme "jacobi", libcosim's fixed-step algorithm): N sweeps of read-then-copy in
  initialization mode; then at each point every output is read (right after the steps), all inputs
  are set, the driven inputs too, and every FMU steps.

A fixed-step algorithm takes no tolerance: one given is refused (cosim.algorithms.select).
"""

import math
from dataclasses import dataclass

from ..coupling import Exchange
from ..errors import CosimError
from ..implicit import implicit_coupling
from .base import Algorithm, DoSteps


@dataclass(frozen=True)
class FixedStep:
    """The tuning of a fixed-step algorithm: its communication step [s] (> 0, at most the span)."""

    step: float

    def __post_init__(self):
        if not (self.step > 0 and math.isfinite(self.step)):
            raise CosimError(f"communication step {self.step!r} s must be > 0")


class FixedStepAlgorithm(Algorithm):
    """The communication points and the step loop of every fixed-step scheme. A scheme says how it
    exchanges in initialization mode (``initial_exchange(t0, h)``) and at a point (``exchange_at(t, h)``,
    h the step that follows), and how it steps (``advance(t, h)``)."""

    derivatives = False

    def __init__(self, params):
        self.params = params

    def point(self, n):
        """The communication point t_n (the stop time at most)."""
        return min(self.t0 + n * self.params.step, self.stop)

    def setup(self, system, start, stop, output_interval):
        step = self.params.step
        if step > (stop - start) * (1 + 1e-12):
            raise CosimError(
                f"communication step {step!r} s is longer than the simulated span "
                f"{stop - start!r} s ({start!r} to {stop!r} s): give a step of at "
                f"most the span"
            )
        self.t0, self.stop = start, stop
        n_steps = int(math.ceil((stop - start) / step - 1e-9))
        every = 1 if output_interval is None else max(1, int(round(output_interval / step)))
        return [self.point(n) for n in range(every, n_steps, every)] + [self.point(n_steps)]

    def initialize(self, run):
        self.manipulate = run.manipulate
        self.exchange = self.make_exchange(run)
        self.do_steps = DoSteps(run.system.instances.values())
        self.n = 0
        self.initial_exchange(self.t0, self.params.step)

    def make_exchange(self, run):
        return Exchange(run.plan)

    def start(self, t0):
        self.exchange_at(t0, self.point(1) - t0)

    def do_step(self, t, limit):
        """The step to the next communication point (the recording times are among them: never past
        limit); then the exchange there."""
        t_next = self.point(self.n + 1)
        self.advance(t, t_next - t)
        self.n += 1
        self.exchange_at(t_next, self.point(self.n + 1) - t_next)
        return t_next


class GaussSeidel(FixedStepAlgorithm):
    """scheme "gauss-seidel" (module docstring)."""

    derivatives = True

    def initial_exchange(self, t0, h):
        self.exchange.gauss_seidel(t0, h)

    def exchange_at(self, t, h):
        self.manipulate(t)
        self.exchange.gauss_seidel(t, h)

    def advance(self, t, h):
        self.do_steps(t, h)


class Implicit(GaussSeidel):
    """scheme "implicit" (module docstring): values held, an exchange with an ImplicitCoupling."""

    derivatives = False

    def make_exchange(self, run):
        return Exchange(run.plan, implicit_coupling(run.system, run.plan))


class Jacobi(FixedStepAlgorithm):
    """scheme "jacobi", libcosim's fixed-step algorithm (module docstring)."""

    def initial_exchange(self, t0, h):
        for _ in range(len(self.do_steps)):
            self.exchange.read(t0)
            self.exchange.write(t0)

    def exchange_at(self, t, h):
        self.exchange.read(t)

    def advance(self, t, h):
        self.exchange.write(t)
        self.manipulate(t)
        self.do_steps(t, h)
