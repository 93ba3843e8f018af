"""The observers of a run (as libcosim's observers): told by the execution when the system is
initialized, after every step and when the run ends. :class:`Recorder` records the outputs at the
recording times; :class:`ProgressBar` and :class:`ProgressFunction` report the progress."""

import sys
import time
from collections import defaultdict

from .fastcalls import Reader


class Observer:
    """The interface: ``initialized(t0)`` after initialization, ``step_complete(t, record)`` after every
    step (record: t is a recording time), ``finished()`` when the run ends, also by an error."""

    def initialized(self, t0):
        pass

    def step_complete(self, t, record):
        pass

    def finished(self):
        pass


class Recorder(Observer):
    """The outputs, [t, outputs...] per recording time in ``rows``: `outputs` ("inst.var" names; None:
    every output of every instance, ``names``) checked at once; ``bind()`` once the FMUs are instantiated
    (one get call per instance and type)."""

    def __init__(self, system, outputs):
        if outputs is None:
            outputs = [
                f"{i.name}.{v.name}"
                for i in system.instances.values()
                for v in i.md.modelVariables
                if v.causality == "output"
            ]
        self.groups = defaultdict(lambda: defaultdict(list))
        for col, ref in enumerate(outputs):
            inst, name = system.resolve(ref)
            var = inst.var(name)
            kind = (
                "Real" if var.type == "Real" else "Boolean" if var.type == "Boolean" else "Integer"
            )
            self.groups[inst.name][kind].append((col, var.valueReference))
        self.system = system
        self.names = list(outputs)
        self.rows = []

    def bind(self):
        self.calls = []
        for name, kinds in self.groups.items():
            for kind, cols in kinds.items():
                self.calls.append(
                    (
                        Reader(self.system.instances[name], [vr for _, vr in cols], kind),
                        [col + 1 for col, _ in cols],
                        kind == "Real",
                    )
                )
        self.width = 1 + sum(len(c[1]) for c in self.calls)

    def read(self, t):
        """The row [t, outputs...] at t."""
        row = [t] + [0.0] * (self.width - 1)
        for reader, cols, real in self.calls:
            values = reader(t)
            for col, value in zip(cols, values):
                row[col] = value if real else float(value)
        return row

    def initialized(self, t0):
        self.rows.append(self.read(t0))

    def step_complete(self, t, record):
        if record:
            self.rows.append(self.read(t))


class ProgressFunction(Observer):
    """The caller's progress function, called with t after every step."""

    def __init__(self, function):
        self.function = function

    def step_complete(self, t, record):
        self.function(t)


class ProgressBar(Observer):
    """A text progress bar on stderr, shown once a run has taken more than 2 s."""

    def __init__(self, t0, t1):
        self.t0, self.t1 = t0, t1
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def step_complete(self, t, record):
        now = time.monotonic()
        if now - self.start < 2.0 or now - self.last < 0.5:
            return
        self.last, self.shown = now, True
        frac = (t - self.t0) / (self.t1 - self.t0)
        eta = (now - self.start) * (1 - frac) / max(frac, 1e-9)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r  [{bar:<30}] {100 * frac:5.1f}%  t = {t:.4g} s  ETA {eta:5.1f} s")
        sys.stderr.flush()

    def finished(self):
        if self.shown:
            sys.stderr.write("\n")
