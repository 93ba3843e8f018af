"""The runs of a study: a full-factorial grid, samples (Monte Carlo, Latin hypercube, Sobol, Halton),
or an explicit list.

A run is a set of values by name: ``"instance.variable"`` sets a parameter or start value of an FMU
instance of the model (``"spring.c"``, ``"mass.s_start"``), a name without a dot one of the options
of ``System.simulate`` (``"step"``, ``"rtol"``, ``"stop_time"``, ...). Each run has an id, a hash
of its values, by which a resumed study recognizes the runs already in its output file.
"""

import hashlib
import itertools
import json
import math
import numbers

import numpy as np

# System.simulate's options a run may set (by a name without a dot)
OPTIONS = ("stop_time", "step", "start_time", "output_interval", "scheme", "rtol", "atol")
METHODS = ("random", "lhs", "sobol", "halton")  # samples(): Monte Carlo and scipy.stats.qmc
METHOD_NAMES = {
    "random": "Monte Carlo",
    "lhs": "Latin hypercube",
    "sobol": "Sobol",
    "halton": "Halton",
}


class StudyError(ValueError):
    """A study that cannot run as given (unknown parameter, bad range, ...): the message names the
    bad name or value and what is valid."""


def is_option(name):
    """True for a simulate() option (a name without a dot), False for an "instance.variable"."""
    return "." not in name


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise StudyError(
            f"run value name {name!r}: expected 'instance.variable' (a parameter or start value) "
            f"or one of the simulate() options {', '.join(OPTIONS)}"
        )
    if is_option(name) and name not in OPTIONS:
        raise StudyError(
            f"{name!r} is neither 'instance.variable' (a parameter or start value) nor a "
            f"simulate() option; the options are: {', '.join(OPTIONS)}"
        )
    if not is_option(name) and (name.startswith(".") or name.endswith(".")):
        raise StudyError(f"{name!r}: expected 'instance.variable', e.g. 'spring.c'")


def _value(name, value):
    """A run value as stored: a float (bools and integers too), or a string for the option scheme."""
    if name == "scheme":
        if not isinstance(value, str):
            raise StudyError(
                f"scheme = {value!r}: the scheme is a name (gauss-seidel, jacobi, implicit, adaptive)"
            )
        return value
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if not isinstance(value, numbers.Real):
        raise StudyError(f"{name} = {value!r}: a run value must be a number")
    x = float(value)
    if not math.isfinite(x):
        raise StudyError(f"{name} = {value!r}: a run value must be finite")
    return x


def run_id(values):
    """Hash of a run's values (names sorted, numbers as their shortest exact repr): 16 hex digits."""
    text = json.dumps(
        sorted((k, v if isinstance(v, str) else repr(float(v))) for k, v in values.items())
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Run:
    """One run: `values` by name (parameters "instance.variable" and simulate() options)."""

    __slots__ = ("values", "run_id")

    def __init__(self, values):
        for name in values:
            _check_name(name)
        self.values = {name: _value(name, v) for name, v in values.items()}
        self.run_id = run_id(self.values)

    @property
    def params(self):
        """The parameters and start values {"instance.variable": value}."""
        return {k: v for k, v in self.values.items() if not is_option(k)}

    @property
    def options(self):
        """The simulate() options of this run {"step": ..., ...}."""
        return {k: v for k, v in self.values.items() if is_option(k)}

    def __repr__(self):
        return f"Run({self.values!r})"

    def __getstate__(self):
        return self.values, self.run_id

    def __setstate__(self, state):
        self.values, self.run_id = state


class Runs(list):
    """The runs of a study (a list of Run), with how they were made: ``kind`` "grid" (``axes``: name ->
    values, the first axis outermost), "samples" (``ranges``: name -> (lo, hi, log), ``method``,
    ``seed``) or "list"."""

    def __init__(self, runs, kind="list", axes=None, ranges=None, method=None, seed=None):
        super().__init__(runs)
        self.kind, self.axes, self.ranges, self.method, self.seed = kind, axes, ranges, method, seed
        seen = {}
        for k, r in enumerate(self):
            if r.run_id in seen:
                raise StudyError(
                    f"runs {seen[r.run_id]} and {k} are the same run ({r.values}): each run must "
                    f"differ from every other in at least one value"
                )
            seen[r.run_id] = k

    @property
    def names(self):
        """Every value name of the runs, in first-seen order."""
        return list(dict.fromkeys(n for r in self for n in r.values))

    def describe(self):
        """How the runs were made, as JSON-ready data."""
        out = {"kind": self.kind, "count": len(self)}
        if self.axes is not None:
            out["axes"] = {k: list(v) for k, v in self.axes.items()}
        if self.ranges is not None:
            out["ranges"] = {k: list(v) for k, v in self.ranges.items()}
            out["method"], out["seed"] = self.method, self.seed
        return out


def _with_options(values, options):
    extra = options(dict(values)) if callable(options) else dict(options or {})
    clash = sorted(set(extra) & set(values))
    if clash:
        raise StudyError(
            f"options {', '.join(clash)} are also varied by the runs: give each name once"
        )
    return {**values, **extra}


def grid(axes, options=None):
    """Full-factorial grid: every combination of `axes` {name: values} (the first name varies slowest).
    `options`: values every run gets too (e.g. {"step": 1e-4}), or a function of a run's values
    returning them (e.g. a stop time that depends on the stiffness)."""
    if not axes:
        raise StudyError("grid: give at least one axis {name: [values]}")
    clean = {}
    for name, values in axes.items():
        _check_name(name)
        values = [values] if isinstance(values, (str, numbers.Real)) else list(values)
        if not values:
            raise StudyError(f"grid axis {name!r} has no values")
        clean[name] = [_value(name, v) for v in values]
        if len(set(map(repr, clean[name]))) != len(clean[name]):
            raise StudyError(f"grid axis {name!r} repeats a value: {values}")
    runs = [
        Run(_with_options(dict(zip(clean, combo)), options))
        for combo in itertools.product(*clean.values())
    ]
    return Runs(runs, "grid", axes=clean)


def _range(name, spec):
    """(lo, hi, log) of a sampling range (lo, hi) or (lo, hi, "log")."""
    spec = tuple(spec)
    log = len(spec) == 3 and spec[2] in ("log", True)
    if len(spec) not in (2, 3) or (
        len(spec) == 3 and spec[2] not in ("log", "linear", True, False)
    ):
        raise StudyError(f"range of {name!r}: {spec!r}; give (lo, hi) or (lo, hi, 'log')")
    lo, hi = (_value(name, x) for x in spec[:2])
    if not lo < hi:
        raise StudyError(f"range of {name!r}: lo = {lo!r} must be below hi = {hi!r}")
    if log and not lo > 0:
        raise StudyError(f"range of {name!r}: a logarithmic range needs lo > 0, got {lo!r}")
    return lo, hi, log


def unit_samples(n, d, method="random", seed=0):
    """n points in [0, 1)^d: numpy's generator (Monte Carlo) or a scipy.stats.qmc engine, seeded."""
    from scipy.stats import qmc

    if method not in METHODS:
        raise StudyError(f"sampling method {method!r}: valid are {', '.join(METHODS)}")
    if not (isinstance(n, numbers.Integral) and n >= 1):
        raise StudyError(f"number of samples {n!r}: must be an integer >= 1")
    rng = np.random.default_rng(seed)
    if method == "random":
        return rng.random((n, d))
    engine = {"lhs": qmc.LatinHypercube, "sobol": qmc.Sobol, "halton": qmc.Halton}[method]
    try:
        sampler = engine(d, rng=rng)  # scipy >= 1.15
    except TypeError:
        sampler = engine(d, seed=rng)  # older scipy
    if method == "sobol" and n & (n - 1) == 0:
        return sampler.random_base2(int(math.log2(n)))
    return sampler.random(n)


def samples(n, ranges, method="random", seed=0, options=None):
    """n runs sampled in `ranges` {name: (lo, hi)} ((lo, hi, "log"): uniform in log): method "random"
    (Monte Carlo, numpy), "lhs" (Latin hypercube), "sobol" or "halton" (scipy.stats.qmc), with `seed`.
    `options` as for grid()."""
    if not ranges:
        raise StudyError("samples: give at least one range {name: (lo, hi)}")
    for name in ranges:
        _check_name(name)
    clean = {name: _range(name, spec) for name, spec in ranges.items()}
    u = unit_samples(n, len(clean), method, seed)
    columns = []
    for k, (lo, hi, log) in enumerate(clean.values()):
        columns.append(
            np.exp(np.log(lo) + u[:, k] * (np.log(hi) - np.log(lo)))
            if log
            else lo + u[:, k] * (hi - lo)
        )
    runs = [
        Run(_with_options({name: float(col[i]) for name, col in zip(clean, columns)}, options))
        for i in range(n)
    ]
    return Runs(runs, "samples", ranges=clean, method=method, seed=seed)


def explicit(values, options=None):
    """Runs from a list of {name: value} (one dict per run). `options` as for grid()."""
    runs = list(values)
    if not runs:
        raise StudyError("the list of runs is empty")
    for k, v in enumerate(runs):
        if not isinstance(v, dict):
            raise StudyError(f"run {k}: {v!r} is not a dict {{name: value}}")
    return Runs([Run(_with_options(v, options)) for v in runs], "list")


def as_runs(runs):
    """Runs from Runs, a list of Run or a list of dicts."""
    if isinstance(runs, Runs):
        return runs
    runs = list(runs)
    if runs and all(isinstance(r, Run) for r in runs):
        return Runs(runs, "list")
    return explicit(runs)


# ---- command line specifications ---------------------------------------------------------------


def _number(text, spec):
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        raise StudyError(f"{spec!r}: {text!r} is not a finite number")
    return x


def _split_spec(spec, what):
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise StudyError(f"{what} {spec!r}: expected NAME=VALUES, e.g. spring.c=1e3:1e5:9")
    _check_name(name)
    return name, rest


def parse_grid(spec):
    """--grid NAME=VALUES: lo:hi:n (n values evenly spaced), lo:hi:n:log (geometric, lo > 0) or
    a,b,c (a list); returns (name, values)."""
    name, rest = _split_spec(spec, "--grid")
    if name == "scheme":
        return name, rest.split(",")
    if ":" in rest:
        parts = rest.split(":")
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] not in ("log", "lin")):
            raise StudyError(f"--grid {spec!r}: expected lo:hi:n, lo:hi:n:log or a,b,c")
        lo, hi = _number(parts[0], spec), _number(parts[1], spec)
        try:
            n = int(parts[2])
        except ValueError:
            n = 0
        if n < 1 or (n == 1 and lo != hi):
            raise StudyError(
                f"--grid {spec!r}: the number of values {parts[2]!r} must be an integer >= 2 "
                f"(1 if lo = hi)"
            )
        if len(parts) == 4 and parts[3] == "log":
            if not (lo > 0 and hi > 0):
                raise StudyError(f"--grid {spec!r}: a geometric (log) grid needs lo, hi > 0")
            return name, [float(x) for x in np.geomspace(lo, hi, n)]
        return name, [float(x) for x in np.linspace(lo, hi, n)]
    return name, [_number(x, spec) for x in rest.split(",")]


def parse_range(spec):
    """--param NAME=lo:hi or NAME=lo:hi:log; returns (name, (lo, hi, log))."""
    name, rest = _split_spec(spec, "--param")
    parts = rest.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("log", "lin")):
        raise StudyError(f"--param {spec!r}: expected NAME=lo:hi or NAME=lo:hi:log")
    lo, hi = _number(parts[0], spec), _number(parts[1], spec)
    return name, _range(name, (lo, hi, len(parts) == 3 and parts[2] == "log"))
