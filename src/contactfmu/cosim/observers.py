"""The observers of a run (as libcosim's observers): told by the execution when the system is
initialized, after every step and when the run ends. :class:`Recorder` records the outputs at the
recording times (read there, or interpolated between the communication points of an algorithm
whose steps do not end on them); :class:`ProgressBar` and :class:`ProgressFunction` report the
progress."""

import sys
from collections import defaultdict

import numpy as np
from scipy.interpolate import PchipInterpolator

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


class _Taken:
    """Values an algorithm read anyway (base.Algorithm.observed: (buffer, index) slots), called like
    a Reader, without an FMI call."""

    __slots__ = ("slots",)

    def __init__(self, slots):
        self.slots = slots

    def __call__(self, t):
        return [buf[i] for buf, i in self.slots]


class Recorder(Observer):
    """The outputs, [t, outputs...] per recording time (``table()``): `outputs` ("inst.var" names;
    None: every output of every instance, ``names``) checked at once; ``bind(offered)`` once the FMUs
    are instantiated and the algorithm initialized: the values of each instance and type taken
    where the algorithm reads them anyway (``wanted()``, base.Algorithm.observed), else one get
    call of their own.

    grid (the recording times of an algorithm whose steps do not end on them, base.Algorithm.dense):
    the outputs are read at every communication point and the recording times interpolated from
    them (dense output). Real outputs: by the shape-preserving piecewise cubic (PCHIP,
    Fritsch-Carlson: monotone between points, no overshoot, third order where the signal is smooth)
    through the communication points of each stretch in which no discrete output of any FMU
    (Integer, Boolean: contact, stop and friction states) changed, and by a straight line over a
    step in which one changed (a contact's kink or an impact lies in it, or at its end when the
    algorithm located it). Integer and Boolean outputs: held from the communication point before.
    A recording time that is a communication point is read, not interpolated (``interpolated()``)."""

    def __init__(self, system, outputs, grid=None):
        if outputs is None:
            outputs = [
                f"{i.name}.{v.name}"
                for i in system.instances.values()
                for v in i.md.modelVariables
                if v.causality == "output"
            ]
        self.groups = defaultdict(lambda: defaultdict(list))
        self.real = [False] * len(outputs)
        for col, ref in enumerate(outputs):
            inst, name = system.resolve(ref)
            var = inst.var(name)
            kind = (
                "Real" if var.type == "Real" else "Boolean" if var.type == "Boolean" else "Integer"
            )
            self.groups[inst.name][kind].append((col, var.valueReference))
            self.real[col] = kind == "Real"
        self.system = system
        self.names = list(outputs)
        self.rows = []
        self.grid = None if grid is None else np.asarray(grid, dtype=float)
        self.states = []  # dense output: the discrete outputs of every FMU per communication point

    def _discrete(self):
        """[(instance, vrs, type)] of the discrete outputs of every FMU (dense output), else []."""
        if self.grid is None:
            return []
        return [
            (inst, vrs, kind)
            for inst in self.system.instances.values()
            for kind, vrs in inst.discrete_outputs()
        ]

    def wanted(self):
        """[(instance, vr, type)] read at every communication point: the recorded outputs (and with
        dense output the discrete outputs of every FMU)."""
        instances = self.system.instances
        return [
            (instances[name], vr, kind)
            for name, kinds in self.groups.items()
            for kind, cols in kinds.items()
            for _, vr in cols
        ] + [(inst, vr, kind) for inst, vrs, kind in self._discrete() for vr in vrs]

    def _source(self, inst, vrs, kind, offered):
        """The values of vrs where the algorithm leaves them (all of them), else a Reader."""
        slots = [offered.get((inst.name, vr)) for vr in vrs]
        return _Taken(slots) if all(slots) else Reader(inst, vrs, kind)

    def bind(self, offered=None):
        """offered: {(instance name, vr): (buffer, index)}, where the algorithm leaves values at
        every communication point (base.Algorithm.observed)."""
        offered = offered or {}
        self.calls = []
        for name, kinds in self.groups.items():
            for kind, cols in kinds.items():
                inst = self.system.instances[name]
                self.calls.append(
                    (
                        self._source(inst, [vr for _, vr in cols], kind, offered),
                        [col + 1 for col, _ in cols],
                        kind == "Real",
                    )
                )
        self.width = 1 + sum(len(c[1]) for c in self.calls)
        self.discrete = [
            self._source(inst, vrs, kind, offered) for inst, vrs, kind in self._discrete()
        ]

    def read(self, t):
        """The row [t, outputs...] at t."""
        row = [t] + [0.0] * (self.width - 1)
        for reader, cols, real in self.calls:
            values = reader(t)
            for col, value in zip(cols, values):
                row[col] = value if real else float(value)
        return row

    def initialized(self, t0):
        self.step_complete(t0, True)

    def step_complete(self, t, record):
        if record or self.grid is not None:
            self.rows.append(self.read(t))
        if self.grid is not None:
            self.states.append(tuple(x for reader in self.discrete for x in reader(t)))

    def table(self):
        """The recorded rows [t, outputs...] at the recording times (an array)."""
        points = np.array(self.rows, dtype=float).reshape(len(self.rows), len(self.names) + 1)
        if self.grid is None or len(points) == 0:
            return points
        states = self.states if len(self.states) == len(points) else [()] * len(points)
        # a step below the rounding of t ends where it started: the last point at a time counts
        last = np.append(points[1:, 0] > points[:-1, 0], True)
        points, states = points[last], [x for x, keep in zip(states, last) if keep]
        times, grid = points[:, 0], self.grid[self.grid <= points[-1, 0]]
        table = np.empty((len(grid), points.shape[1]))
        table[:, 0] = grid
        before = np.searchsorted(times, grid, side="right") - 1  # the point at or before
        real = np.flatnonzero(self.real) + 1
        held = np.flatnonzero(~np.array(self.real, dtype=bool)) + 1
        table[:, held] = points[before][:, held]
        if len(real):
            table[:, real] = self._curves(times, points[:, real], states, grid, before)
        exact = times[before] == grid
        table[exact] = points[before[exact]]
        table[exact, 0] = grid[exact]
        self._interpolated = ~exact
        return table

    @staticmethod
    def _curves(times, values, states, grid, before):
        """values (at the communication points `times`, with the discrete `states` there) at the
        grid times, `before`: the index of the point at or before each: PCHIP within each stretch
        of equal states, a straight line over a step between two stretches."""
        starts = [0] + [i for i in range(1, len(times)) if states[i] != states[i - 1]]
        ends = starts[1:] + [len(times)]
        out = np.empty((len(grid), values.shape[1]))
        after = np.minimum(before + 1, len(times) - 1)
        span = times[after] - times[before]
        weight = np.divide(grid - times[before], span, out=np.zeros(len(grid)), where=span > 0)
        out[:] = values[before] + weight[:, None] * (values[after] - values[before])
        for first, stop in zip(starts, ends):
            if stop - first < 3:
                continue  # one or two points: the straight line
            inside = (before >= first) & (before < stop - 1)
            if inside.any():
                curve = PchipInterpolator(times[first:stop], values[first:stop], axis=0)
                out[inside] = curve(grid[inside])
        return out

    def interpolated(self):
        """Per recorded row: was it interpolated between communication points (None: every row
        was read at a communication point)?"""
        return getattr(self, "_interpolated", None) if self.grid is not None else None


class ProgressFunction(Observer):
    """The caller's progress function, called with t after every step."""

    def __init__(self, function):
        self.function = function

    def step_complete(self, t, record):
        self.function(t)


class ProgressBar(Observer):
    """A progress bar over the simulated time on stderr (tqdm), shown once a run has taken more
    than DELAY seconds: the fraction done, the time simulated, and the estimated time to the end."""

    DELAY = 2.0
    FORMAT = "  {percentage:5.1f}%|{bar:30}| {n:.4g} of {total:.4g} s simulated  ETA {remaining}"

    def __init__(self, t0, t1):
        from tqdm import tqdm

        self.t0 = t0
        self.bar = tqdm(
            total=t1 - t0,
            delay=self.DELAY,
            mininterval=0.5,
            file=sys.stderr,
            bar_format=self.FORMAT,
            leave=True,
        )

    def step_complete(self, t, record):
        self.bar.update(t - self.t0 - self.bar.n)

    def finished(self):
        self.bar.close()
