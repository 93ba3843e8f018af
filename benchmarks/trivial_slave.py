"""A pythonfmu slave that does nothing: six Real inputs, six Real outputs, do_step returns True.
The floor of the FMI wrapper for the per-step cost benchmark (benchmarks/run.py)."""

from pythonfmu import Fmi2Causality, Fmi2Slave, Real

N = 6


class Trivial(Fmi2Slave):
    author = "contactfmu benchmarks"
    description = "Does nothing: the per-step floor of a pythonfmu FMU"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for k in range(N):
            setattr(self, f"u{k}", 0.0)
            self.register_variable(Real(f"u{k}", causality=Fmi2Causality.input))
            setattr(self, f"y{k}", 0.0)
            self.register_variable(Real(f"y{k}", causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        return True
