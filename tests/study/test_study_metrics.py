"""The metrics of a study (contactfmu.study.metrics) on hand-made Results, without FMUs or a
cluster: every statistic against a hand-computed value (``mean`` the time average, trapezoidal on
the run's own, non-uniform time points), the Metric wrapper, names, units and identities, the
refused definitions with their messages, the tube metric's verdict. Fast: the mutation runs
(mutation/run.py --study) check the mutants of metrics.py with these tests only."""

import pickle

import numpy as np
import pytest

from contactfmu.cosim import Result
from contactfmu.study import metrics
from contactfmu.study.metrics import (
    KINDS,
    Metric,
    SignalMetric,
    as_metric,
    parse_metric,
    signal,
    tube,
)
from contactfmu.study.runs import StudyError

# an adaptive run's time points: not uniform, not starting at 0, with an event row (t = 1.5 twice)
T = [1.0, 1.1, 1.5, 1.5, 3.0]
S = [1.0, 3.0, -5.0, -6.0, 4.0]  # mass.s
V = [-2.0, -1.0, -7.0, -7.0, -3.0]  # mass.v: negative throughout
# trapezoidal time average of S over [1, 3]:
#   0.1*(1 + 3)/2 + 0.4*(3 - 5)/2 + 0*(...) + 1.5*(-6 + 4)/2 = 0.2 - 0.4 - 1.5 = -1.7; / 2 = -0.85
# (the plain sample mean is -0.6)
# of V: 0.1*(-3)/2 + 0.4*(-8)/2 + 1.5*(-10)/2 = -0.15 - 1.6 - 7.5 = -9.25; / 2 = -4.625
EXPECTED = {
    "final": (4.0, -3.0),
    "initial": (1.0, -2.0),
    "max": (4.0, -1.0),
    "min": (-6.0, -7.0),
    "absmax": (6.0, 7.0),
    "ptp": (10.0, 6.0),
    "mean": (-0.85, -4.625),
}


def result(t=T, s=S, v=V):
    return Result(["time", "mass.s", "mass.v"], np.column_stack([t, s, v]))


def test_the_kinds_are_those_documented():
    assert list(KINDS) == ["final", "initial", "max", "min", "absmax", "ptp", "mean"]
    assert KINDS["mean"][1] == "time average"  # docs/studies.md: "mean (time average)"


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_every_statistic_against_a_hand_computed_value(kind):
    r = result()
    for name, expected in zip(("mass.s", "mass.v"), EXPECTED[kind]):
        m = signal(kind, name)
        assert float(m(r)) == pytest.approx(expected, rel=1e-13, abs=1e-15), (kind, name)
        assert KINDS[kind][0](r.time, r[name]) == m(r)


def test_mean_with_an_event_row_at_the_start():
    """t = 0, 0, 2 with y = 1, 3, 3 (a jump at the start time): the time average is
    (0*(1 + 3)/2 + 2*(3 + 3)/2)/2 = 3, not the first value."""
    assert signal("mean", "mass.s")(result([0.0, 0.0, 2.0], [1.0, 3.0, 3.0], [0.0] * 3)) == 3.0


def test_mean_weights_by_time_not_by_sample():
    """Dense samples over a short interval do not outweigh a long one: y = 10 on 0 .. 0.1 s
    (100 samples) and 0 on 0.2 .. 10 s (2 samples): the time average is
    (0.1*10 + 0.1*(10 + 0)/2)/10 = 0.15; the sample mean would be 9.8."""
    t = np.concatenate([np.linspace(0.0, 0.1, 100), [0.2, 10.0]])
    y = np.concatenate([np.full(100, 10.0), [0.0, 0.0]])
    assert signal("mean", "mass.s")(result(t, y, y)) == pytest.approx(0.15, rel=1e-12)


def test_mean_of_one_instant_or_a_zero_span_is_the_first_value():
    mean = KINDS["mean"][0]
    assert mean(np.array([2.0]), np.array([7.0])) == 7.0
    assert mean(np.array([2.0, 2.0]), np.array([7.0, 9.0])) == 7.0
    assert mean(np.array([2.0, 2.0, 2.0]), np.array([-1.0, 9.0, 5.0])) == -1.0
    assert mean(np.array([0.0, 5.0]), np.array([1.0, 2.0])) == pytest.approx(1.5)
    assert mean(np.array([0.0, 1.0, 4.0]), np.array([0.0, 2.0, 2.0])) == pytest.approx(7 / 4)


def test_final_and_initial_are_the_end_values_not_extremes():
    r = result([0.0, 1.0, 2.0], [5.0, -9.0, 2.0], [-5.0, 9.0, -2.0])
    assert signal("final", "mass.s")(r) == 2.0 and signal("initial", "mass.s")(r) == 5.0
    assert signal("final", "mass.v")(r) == -2.0 and signal("initial", "mass.v")(r) == -5.0


def test_signal_metric_name_signals_unit_and_identity():
    m = signal("absmax", "mass.v")
    assert isinstance(m, SignalMetric) and isinstance(m, Metric)
    assert (m.name, m.kind, m.signal, m.signals, m.unit) == (
        "absmax(mass.v)",
        "absmax",
        "mass.v",
        ["mass.v"],
        "",
    )
    assert m.identity() == {
        "name": "absmax(mass.v)",
        "kind": "absmax",
        "signal": "mass.v",
        "unit": "",
    }
    named = signal("ptp", "mass.s", name="stroke", unit="m")
    assert (named.name, named.unit, named.signals) == ("stroke", "m", ["mass.s"])
    assert named.identity() == {"name": "stroke", "kind": "ptp", "signal": "mass.s", "unit": "m"}
    assert named(result()) == 10.0
    assert repr(named) == "Metric('stroke')"


def test_signal_metric_is_picklable():
    """Sent to dask workers: the statistic survives pickling with its kind and signal."""
    m = pickle.loads(pickle.dumps(signal("min", "mass.v", unit="m/s")))
    assert (m.name, m.kind, m.signal, m.unit) == ("min(mass.v)", "min", "mass.v", "m/s")
    assert m(result()) == -7.0


@pytest.mark.parametrize("kind", ["last", "", "Max", None])
def test_signal_metric_refuses_an_unknown_kind(kind):
    with pytest.raises(
        StudyError,
        match=rf"metric kind {kind!r}: valid are final, initial, max, min, absmax, ptp, mean$",
    ):
        signal(kind, "mass.s")


@pytest.mark.parametrize("name", ["mass", "", 3, None])
def test_signal_metric_refuses_a_signal_without_instance(name):
    with pytest.raises(StudyError) as info:
        signal("max", name)
    assert str(info.value) == (f"metric max:{name}: the signal is 'instance.variable', e.g. mass.s")


def test_metric_wraps_a_function_with_its_signals_and_unit():
    calls = []

    def rebound(r):
        calls.append(r)
        return -r["mass.v"][-1] / r["mass.v"][0]

    m = Metric("rebound", rebound, ("mass.v",), unit="1")
    r = result()
    assert m(r) == -1.5 and calls == [r]
    assert (m.name, m.fn, m.signals, m.unit) == ("rebound", rebound, ["mass.v"], "1")
    assert type(m.signals) is list
    assert m.identity() == {
        "name": "rebound",
        "function": f"{__name__}.test_metric_wraps_a_function_with_its_signals_and_unit.<locals>.rebound",
        "signals": ["mass.v"],
        "unit": "1",
    }
    every = Metric("all", rebound)
    assert every.signals is None and every.unit == ""
    assert repr(every) == "Metric('all')"


class _Callable:
    """A function object without __name__ or __qualname__ (only its class has them)."""

    def __call__(self, r):
        return 1.0


def test_metric_identity_of_a_callable_object_names_its_class():
    m = Metric("c", _Callable())
    assert m.identity()["function"] == f"{__name__}._Callable"
    m = Metric("p", np.ptp)
    assert m.identity()["function"].endswith(".ptp")


def test_metric_identity_of_a_function_without_a_module():
    """A method descriptor (str.upper) has no __module__: the identity still names it, with an
    empty module part (the convention of the study's model identity, study._identity)."""
    assert not hasattr(str.upper, "__module__")
    assert Metric("u", str.upper).identity()["function"] == ".str.upper"


@pytest.mark.parametrize("name", ["", None, 3, b"x"])
def test_metric_refuses_a_name_that_is_not_a_text(name):
    with pytest.raises(StudyError) as info:
        Metric(name, len)
    assert str(info.value) == f"metric name {name!r}: give a non-empty name"


@pytest.mark.parametrize("fn", [None, 3.0, "max:mass.s"])
def test_metric_refuses_a_function_that_is_not_callable(fn):
    with pytest.raises(StudyError) as info:
        Metric("m", fn)
    assert str(info.value) == f"metric 'm': {fn!r} is not a function of a Result"


# ---- parse_metric, as_metric ------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_parse_metric_reads_kind_and_signal(kind):
    m = parse_metric(f"{kind}:mass.v")
    assert (m.kind, m.signal, m.name) == (kind, "mass.v", f"{kind}(mass.v)")
    assert float(m(result())) == pytest.approx(EXPECTED[kind][1], rel=1e-13)


def test_parse_metric_signal_is_everything_after_the_first_colon():
    """An FMI 2.0 structured name may quote an identifier holding any character, a colon too."""
    m = parse_metric("max:mass.'x:y'")
    assert (m.kind, m.signal, m.name) == ("max", "mass.'x:y'", "max(mass.'x:y')")


@pytest.mark.parametrize(
    "text", ["max", "max mass.s", "last:mass.s", "max:mass", ":mass.s", "max:"]
)
def test_parse_metric_refuses_a_malformed_text(text):
    with pytest.raises(StudyError) as info:
        parse_metric(text)
    assert str(info.value) == (
        f"--metric {text!r}: expected KIND:instance.variable with KIND one of "
        "final, initial, max, min, absmax, ptp, mean (e.g. max:mass.s)"
    )


def test_as_metric_takes_a_metric_a_text_or_a_function():
    m = Metric("x", len)
    assert as_metric(m) is m
    parsed = as_metric("ptp:mass.s")
    assert isinstance(parsed, SignalMetric) and (parsed.kind, parsed.signal) == ("ptp", "mass.s")

    def rebound(r):
        return 2.0

    f = as_metric(rebound)
    assert f.name == "rebound" and f.fn is rebound and f.signals is None and f(result()) == 2.0
    obj = as_metric(_Callable())
    assert obj.name == "metric" and obj(result()) == 1.0


@pytest.mark.parametrize("value", [None, 3, ["max:mass.s"]])
def test_as_metric_refuses_anything_else(value):
    with pytest.raises(StudyError) as info:
        as_metric(value)
    assert str(info.value) == (
        f"metric {value!r}: give a Metric, 'KIND:instance.variable' or a function of a Result"
    )


# ---- tube --------------------------------------------------------------------------------------


def _grid_result(s_offset=0.0, v_offset=0.0, t=None):
    t = np.arange(17) * 0.25 if t is None else t
    return Result(
        ["time", "mass.s", "mass.v"],
        np.column_stack([t, np.ones_like(t) + s_offset, 2 * np.ones_like(t) + v_offset]),
    )


def test_tube_metric_is_one_inside_and_zero_outside_the_tube():
    """Reference mass.s = 1, mass.v = 2 on 0 .. 4 s: dy = tol*1 and tol*2 (cosim.compare)."""
    ref = _grid_result()
    m = tube(ref, ["mass.s", "mass.v"])
    assert (m.name, m.signals, m.unit) == ("tube", ["mass.s", "mass.v"], "1 = passed")
    assert m(_grid_result()) == 1.0
    assert m(_grid_result(s_offset=1.9e-3)) == 1.0  # inside dy = 2e-3
    assert m(_grid_result(s_offset=2.1e-3)) == 0.0
    assert m(_grid_result(v_offset=3.9e-3)) == 1.0  # dy = 4e-3 for mass.v
    assert m(_grid_result(v_offset=4.1e-3)) == 0.0
    assert m(_grid_result(t=np.arange(9) * 0.25)) == 0.0  # ends at 2 s: does not cover 0 .. 4 s


def test_tube_metric_compares_only_its_signals_with_its_tolerance():
    ref = _grid_result()
    s_only = tube(ref, ("mass.s",), tol=0.1, name="s in 10 %")
    assert (s_only.name, s_only.signals) == ("s in 10 %", ["mass.s"])
    assert s_only(_grid_result(s_offset=0.09, v_offset=100.0)) == 1.0
    assert s_only(_grid_result(s_offset=0.11)) == 0.0


def test_tube_metric_refuses_no_signals_or_signals_the_reference_lacks():
    ref = _grid_result()
    with pytest.raises(StudyError, match=r"^tube metric: name the signals to compare$"):
        tube(ref, [])
    with pytest.raises(StudyError) as info:
        tube(ref, ["mass.a", "mass.s", "gap.f"])
    assert str(info.value) == (
        "tube metric: mass.a, gap.f not in the reference (it has mass.s, mass.v)"
    )


def test_module_exports():
    assert metrics.signal is signal and metrics.tube is tube
