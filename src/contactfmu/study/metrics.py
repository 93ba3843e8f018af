"""Metrics of a study: functions of a run's Result, one column of the study's table each.

``Metric(name, fn, signals, unit)`` wraps any function of a Result (the signals it reads are
recorded; without them the run records every output); ``signal("max", "mass.s")`` (command line
``max:mass.s``) is a statistic of one signal; ``tube(reference, signals)`` the verdict of the MSL
tube comparison against a reference result. Besides the metrics every row has the run's wall time
and status.
"""

import numpy as np

from .runs import StudyError


def _final(t, y):
    return y[-1]


def _initial(t, y):
    return y[0]


def _max(t, y):
    return np.max(y)


def _min(t, y):
    return np.min(y)


def _absmax(t, y):
    return np.max(np.abs(y))


def _ptp(t, y):
    return np.ptp(y)


def _mean(t, y):
    """Time average (trapezoidal: samples of an adaptive run are not equidistant)."""
    if len(t) < 2 or t[-1] == t[0]:
        return y[0]
    return np.trapezoid(y, t) / (t[-1] - t[0])


# kind -> (function of (time, signal), what it is)
KINDS = {
    "final": (_final, "value at the stop time"),
    "initial": (_initial, "value at the start time"),
    "max": (_max, "largest value"),
    "min": (_min, "smallest value"),
    "absmax": (_absmax, "largest absolute value"),
    "ptp": (_ptp, "range (max - min)"),
    "mean": (_mean, "time average"),
}


class Metric:
    """A column of the study's table: fn(result) -> number. `signals`: the "instance.variable"
    outputs fn reads (recorded for it; None: record every output); `unit` for tables and plots."""

    def __init__(self, name, fn, signals=None, unit=""):
        if not isinstance(name, str) or not name:
            raise StudyError(f"metric name {name!r}: give a non-empty name")
        if not callable(fn):
            raise StudyError(f"metric {name!r}: {fn!r} is not a function of a Result")
        self.name, self.fn, self.unit = name, fn, unit
        self.signals = None if signals is None else list(signals)

    def __call__(self, result):
        return self.fn(result)

    def identity(self):
        """What identifies the metric in the study's description (name, function, signals)."""
        fn = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        return {
            "name": self.name,
            "function": f"{getattr(self.fn, '__module__', '')}.{fn}",
            "signals": self.signals,
            "unit": self.unit,
        }

    def __repr__(self):
        return f"Metric({self.name!r})"


class _Statistic:
    """KINDS[kind] of the signal `signal` of a Result (a picklable function)."""

    def __init__(self, kind, signal):
        self.kind, self.signal = kind, signal

    def __call__(self, result):
        return KINDS[self.kind][0](result.time, result[self.signal])


class SignalMetric(Metric):
    """A statistic (`kind`, one of KINDS) of one recorded signal."""

    def __init__(self, kind, signal, name=None, unit=""):
        if kind not in KINDS:
            raise StudyError(f"metric kind {kind!r}: valid are {', '.join(KINDS)}")
        if not isinstance(signal, str) or "." not in signal:
            raise StudyError(
                f"metric {kind}:{signal}: the signal is 'instance.variable', e.g. mass.s"
            )
        self.kind, self.signal = kind, signal
        super().__init__(name or f"{kind}({signal})", _Statistic(kind, signal), [signal], unit)

    def identity(self):
        return {"name": self.name, "kind": self.kind, "signal": self.signal, "unit": self.unit}


def signal(kind, name, /, **kwargs):
    """The metric `kind` (final, initial, max, min, absmax, ptp, mean) of the signal `name`;
    `kwargs`: SignalMetric's ``name`` (the column, default "kind(signal)") and ``unit``."""
    return SignalMetric(kind, name, **kwargs)


class _Tube:
    def __init__(self, reference, signals, tol):
        self.reference, self.signals, self.tol = reference, signals, tol

    def __call__(self, result):
        from ..cosim import compare

        return 1.0 if compare(result, self.reference, self.signals, self.tol).passed else 0.0


def tube(reference, signals, tol=2e-3, name="tube"):
    """1.0 if the run's `signals` pass the MSL tube (cosim.compare, tolerance `tol`) around the Result
    `reference`, else 0.0."""
    signals = list(signals)
    if not signals:
        raise StudyError("tube metric: name the signals to compare")
    missing = [s for s in signals if s not in reference]
    if missing:
        raise StudyError(
            f"tube metric: {', '.join(missing)} not in the reference (it has "
            f"{', '.join(reference.names[1:])})"
        )
    return Metric(name, _Tube(reference, signals, tol), signals, unit="1 = passed")


def parse_metric(text):
    """KIND:SIGNAL (command line --metric), e.g. max:mass.s."""
    kind, sep, name = text.partition(":")
    if not sep or kind not in KINDS or "." not in name:
        raise StudyError(
            f"--metric {text!r}: expected KIND:instance.variable with KIND one of "
            f"{', '.join(KINDS)} (e.g. max:mass.s)"
        )
    return SignalMetric(kind, name)


def as_metric(m):
    """A Metric from a Metric, a KIND:SIGNAL text or a function of a Result (named after it)."""
    if isinstance(m, Metric):
        return m
    if isinstance(m, str):
        return parse_metric(m)
    if callable(m):
        return Metric(getattr(m, "__name__", "metric"), m)
    raise StudyError(
        f"metric {m!r}: give a Metric, 'KIND:instance.variable' or a function of a Result"
    )
