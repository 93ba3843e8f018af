"""The fixed-step algorithms (cosim/algorithms/fixed.py), the step calls they share
(algorithms/base.py: DoSteps) and the choice of an algorithm from System.simulate's keywords
(algorithms/__init__.py: select), with stand-ins for the exchange and the FMUs: the communication
points t_n = t0 + n*h (the last one at the stop time), the recording times, and the order of the
calls each scheme makes (module docstring of fixed.py); the runs with FMUs are in test_gauss_seidel.py,
test_jacobi.py, test_implicit.py and test_execution.py."""

import importlib
from ctypes import CFUNCTYPE, c_double, c_int, c_void_p
from types import SimpleNamespace

import pytest

from contactfmu.cosim import CosimError
from contactfmu.cosim.algorithms import (
    Adaptive,
    AdaptiveAlgorithm,
    FixedStep,
    GaussSeidel,
    Implicit,
    Jacobi,
    Run,
    select,
)
from contactfmu.cosim.algorithms.base import Algorithm, DoSteps

fixed = importlib.import_module("contactfmu.cosim.algorithms.fixed")
base = importlib.import_module("contactfmu.cosim.algorithms.base")


def test_the_step_must_be_finite_and_positive():
    assert FixedStep(1e-3).step == 1e-3
    for bad in (0.0, -1e-3, float("inf"), float("nan")):
        with pytest.raises(CosimError) as e:
            FixedStep(bad)
        assert str(e.value) == f"communication step {bad!r} s must be > 0"


@pytest.mark.parametrize(
    "start, stop, step, interval, times",
    [
        (0.0, 1.0, 0.25, None, [0.25, 0.5, 0.75, 1.0]),  # every point recorded
        (0.0, 1.0, 0.25, 0.5, [0.5, 1.0]),  # every second point
        (0.0, 1.0, 0.25, 0.3, [0.25, 0.5, 0.75, 1.0]),  # round(0.3 / 0.25) = 1
        (0.0, 1.0, 0.25, 0.1, [0.25, 0.5, 0.75, 1.0]),  # at least every point
        (0.0, 1.0, 0.3, None, [0.3, 0.6, 0.9, 1.0]),  # the last step ends at the stop time
        (0.0, 1.0, 0.3, 0.6, [0.6, 1.0]),  # and the stop time is always recorded
        (2.0, 3.0, 0.5, None, [2.5, 3.0]),
        (0.0, 1.0, 1.0, None, [1.0]),  # one step over the span
        (0.0, 0.3, 0.1, None, [0.1, 0.2, 0.3]),  # 3*0.1 is 0.30000000000000004: the stop time
    ],
)
def test_the_recording_times_are_communication_points(start, stop, step, interval, times):
    algorithm = GaussSeidel(FixedStep(step))
    got = algorithm.setup(None, start, stop, interval)
    assert got == pytest.approx(times, abs=1e-15)
    assert got[-1] == stop
    assert (algorithm.t0, algorithm.stop) == (start, stop)
    assert algorithm.point(0) == start and algorithm.point(10**6) == stop
    assert algorithm.point(1) == min(start + step, stop)


def test_a_step_within_rounding_of_the_span_is_one_step():
    algorithm = Jacobi(FixedStep(0.1 * (1 + 1e-13)))
    assert algorithm.setup(None, 0.0, 0.1, None) == [0.1]
    # 0.7/0.1 is 6.999999999999999: still 7 steps
    assert len(GaussSeidel(FixedStep(0.1)).setup(None, 0.0, 0.7, None)) == 7


def test_a_step_longer_than_the_span_is_refused():
    with pytest.raises(CosimError) as e:
        GaussSeidel(FixedStep(2.0)).setup(None, 1.0, 2.5, None)
    assert str(e.value) == (
        "communication step 2.0 s is longer than the simulated span 1.5 s (1.0 to 2.5 s): give a "
        "step of at most the span"
    )
    with pytest.raises(CosimError):
        GaussSeidel(FixedStep(1.0 * (1 + 1e-11))).setup(None, 0.0, 1.0, None)
    # the rounding allowed: up to the span times (1 + 1e-12), that step included
    assert GaussSeidel(FixedStep(2.0 * (1 + 1e-12))).setup(None, 0.0, 2.0, None) == [2.0]


class Log:
    """The calls of the stand-ins, in order."""

    def __init__(self):
        self.calls = []

    def __call__(self, *call):
        self.calls.append(call)


class Exchange:
    def __init__(self, log, plan, coupling=None):
        self.log, self.plan, self.coupling = log, plan, coupling

    def gauss_seidel(self, t, h):
        self.log("gauss_seidel", t, h)

    def read(self, t):
        self.log("read", t)

    def write(self, t):
        self.log("write", t)


@pytest.fixture
def log(monkeypatch):
    log = Log()
    monkeypatch.setattr(fixed, "Exchange", lambda plan, *coupling: Exchange(log, plan, *coupling))

    class Steps:
        def __init__(self, instances):
            self.n = len(list(instances))

        def __len__(self):
            return self.n

        def __call__(self, t, h):
            log("do_steps", t, h)

    monkeypatch.setattr(fixed, "DoSteps", Steps)
    return log


def _run(log, n=3):
    system = SimpleNamespace(instances={f"i{k}": k for k in range(n)})
    return Run(system, "plan", lambda t: log("manipulate", t))


def test_gauss_seidel_calls(log):
    a = GaussSeidel(FixedStep(0.5))
    assert a.derivatives is True and a.dense is False and a.records is None
    assert a.setup(None, 0.0, 1.0, None) == [0.5, 1.0]
    a.initialize(_run(log))
    assert a.exchange.plan == "plan" and a.exchange.coupling is None
    assert log.calls == [("gauss_seidel", 0.0, 0.5)]  # the initial exchange, no driven inputs
    a.start(0.0)
    assert log.calls[1:] == [("manipulate", 0.0), ("gauss_seidel", 0.0, 0.5)]
    del log.calls[:]
    assert a.do_step(0.0, 0.5) == 0.5
    assert a.do_step(0.5, 1.0) == 1.0
    assert log.calls == [
        ("do_steps", 0.0, 0.5),
        ("manipulate", 0.5),
        ("gauss_seidel", 0.5, 0.5),
        ("do_steps", 0.5, 0.5),
        ("manipulate", 1.0),
        ("gauss_seidel", 1.0, 0.0),  # at the stop time the step that follows is empty
    ]


def test_a_short_last_step_ends_on_the_stop_time(log):
    a = GaussSeidel(FixedStep(0.4))
    assert a.setup(None, 1.0, 2.0, None) == pytest.approx([1.4, 1.8, 2.0])
    a.initialize(_run(log))
    a.start(1.0)
    assert log.calls[-1] == ("gauss_seidel", 1.0, pytest.approx(0.4))  # h: the step that follows
    del log.calls[:]
    ends = [a.do_step(t, None) for t in (1.0, 1.4, 1.8)]
    assert ends == pytest.approx([1.4, 1.8, 2.0]) and ends[-1] == 2.0
    exchanges = [c for c in log.calls if c[0] == "gauss_seidel"]
    assert [c[1] for c in exchanges] == pytest.approx([1.4, 1.8, 2.0])
    assert [c[2] for c in exchanges] == pytest.approx([0.4, 0.2, 0.0])
    steps = [c for c in log.calls if c[0] == "do_steps"]
    assert [c[1] for c in steps] == pytest.approx([1.0, 1.4, 1.8])
    assert [c[2] for c in steps] == pytest.approx([0.4, 0.4, 0.2])


def test_implicit_has_the_gauss_seidel_order_with_values_held_and_a_coupling(log, monkeypatch):
    monkeypatch.setattr(fixed, "implicit_coupling", lambda system, plan: ("coupling", system, plan))
    a = Implicit(FixedStep(0.5))
    assert a.derivatives is False
    a.setup(None, 0.0, 1.0, None)
    run = _run(log)
    a.initialize(run)
    assert a.exchange.plan == "plan" and a.exchange.coupling == ("coupling", run.system, "plan")
    a.start(0.0)
    a.do_step(0.0, 0.5)
    assert log.calls == [
        ("gauss_seidel", 0.0, 0.5),
        ("manipulate", 0.0),
        ("gauss_seidel", 0.0, 0.5),
        ("do_steps", 0.0, 0.5),
        ("manipulate", 0.5),
        ("gauss_seidel", 0.5, 0.5),
    ]


def test_jacobi_calls(log):
    a = Jacobi(FixedStep(0.5))
    assert a.derivatives is False
    a.setup(None, 0.0, 1.0, None)
    a.initialize(_run(log, n=3))
    # N sweeps of read-then-copy in initialization mode (N: the number of FMUs)
    assert log.calls == [("read", 0.0), ("write", 0.0)] * 3
    del log.calls[:]
    a.start(0.0)
    assert log.calls == [("read", 0.0)]  # every output read at the point
    del log.calls[:]
    assert a.do_step(0.0, 1.0) == 0.5
    # all inputs set, the driven inputs too, every FMU steps; then the outputs read at the end
    assert log.calls == [("write", 0.0), ("manipulate", 0.0), ("do_steps", 0.0, 0.5), ("read", 0.5)]


def test_the_interface_is_abstract():
    a = Algorithm()
    assert (a.derivatives, a.dense, a.records) == (True, False, None)
    for call, args in (
        (a.setup, (None, 0.0, 1.0, None)),
        (a.initialize, (None,)),
        (a.start, (0.0,)),
        (a.do_step, (0.0, 1.0)),
    ):
        with pytest.raises(NotImplementedError):
            call(*args)


def test_do_steps_calls_every_fmu_and_checks_an_error(monkeypatch):
    calls, checked = [], []

    def instance(name, status):
        def do_step(component, t, h, no_set_prior_state):
            calls.append((name, component, t, h, no_set_prior_state))
            return status

        slave = SimpleNamespace(_functions={"fmi2DoStep": do_step}, component=f"c-{name}")
        return SimpleNamespace(name=name, slave=slave)

    monkeypatch.setattr(
        base, "check", lambda inst, fn, status, t: checked.append((inst.name, fn, status, t))
    )
    steps = DoSteps([instance("a", 0), instance("b", 1), instance("c", 2), instance("d", 3)])
    assert len(steps) == 4
    steps(0.5, 0.25)
    assert calls == [(n, f"c-{n}", 0.5, 0.25, 1) for n in "abcd"]
    # fmi2OK and fmi2Warning pass; fmi2Discard and worse are checked (raised there, the step named)
    assert checked == [
        ("c", "fmi2DoStep (step 0.25 s)", 2, 0.5),
        ("d", "fmi2DoStep (step 0.25 s)", 3, 0.5),
    ]


def test_do_steps_passes_the_times_as_c_doubles_to_a_ctypes_function(monkeypatch):
    """fmpy's ctypes fmi2DoStep, bound without its argument conversion (fastcalls.bound), gets the
    handle, t and h (bit for bit) and noSetFMUStatePriorToCurrentPoint = fmi2True as C values; a
    status worse than fmi2Warning is checked as from any function."""
    calls, checked = [], []

    def do_step(component, t, h, no_set_prior_state):
        calls.append((component, t, h, no_set_prior_state))
        return len(calls) + 1  # fmi2Discard, then fmi2Error

    function = CFUNCTYPE(c_int, c_void_p, c_double, c_double, c_int)(do_step)
    slave = SimpleNamespace(_functions={"fmi2DoStep": function}, component=1234)
    monkeypatch.setattr(
        base, "check", lambda inst, fn, status, t: checked.append((inst.name, fn, status, t))
    )
    steps = DoSteps([SimpleNamespace(name="a", slave=slave)] * 2)
    steps(0.1 + 0.2, 1e-7 / 3)
    assert calls == [(1234, 0.30000000000000004, 1e-7 / 3, 1)] * 2
    assert checked == [
        ("a", "fmi2DoStep (step 3.33333e-08 s)", 2, 0.30000000000000004),
        ("a", "fmi2DoStep (step 3.33333e-08 s)", 3, 0.30000000000000004),
    ]


def test_early_return_names_the_instances_and_the_time():
    e = base.EarlyReturn(0.25, ["stop", "gap"])
    assert (e.time, e.names) == (0.25, ["stop", "gap"])
    assert str(e) == "stop, gap returned early from the step at t = 0.25 s"
    assert str(base.EarlyReturn(0.1 + 0.2, ["mass"])) == (
        "mass returned early from the step at t = 0.30000000000000004 s"  # the time exactly
    )


def _stepper(name, calls, early_return=None, ends=()):
    """An instance whose fmi2DoStep records its call and, allowed to return early (an FMI 3.0
    FMU, Fmi3Slave.early_return), sets last_step from ``ends``: per step the time it returned
    early at, or None for a full step (lastSuccessfulTime t + h). early_return None: an FMI 2.0
    FMU (fmpy's FMU2Slave has no such attribute)."""
    ends = list(ends)
    slave = SimpleNamespace(component=f"c-{name}", last_step=(False, False, None))

    def do_step(component, t, h, no_set_prior_state):
        calls.append((name, component, t, h, no_set_prior_state))
        end = ends.pop(0) if ends else None
        slave.last_step = (False, end is not None, t + h if end is None else end)
        return 0

    slave._functions = {"fmi2DoStep": do_step}
    if early_return is not None:
        slave.early_return = early_return
    return SimpleNamespace(name=name, slave=slave)


def test_do_steps_raises_the_earliest_early_return_once_every_instance_stepped():
    calls = []
    steps = DoSteps(
        [
            _stepper("mass", calls),  # FMI 2.0
            _stepper("late", calls, True, [0.375]),
            _stepper("stop", calls, True, [0.25]),
            _stepper("full", calls, True, [None]),  # allowed, stepped to t + h
            _stepper("gap", calls, True, [0.25]),
            _stepper("refused", calls, False, [0.125]),  # not allowed: its flags are not read
        ]
    )
    with pytest.raises(base.EarlyReturn) as e:
        steps(0.125, 0.375)
    assert (e.value.time, e.value.names) == (0.25, ["stop", "gap"])
    names = ["mass", "late", "stop", "full", "gap", "refused"]
    assert calls == [(n, f"c-{n}", 0.125, 0.375, 1) for n in names]


def test_do_steps_without_an_early_return_raises_nothing():
    calls = []
    steps = DoSteps([_stepper("stop", calls, True, [None]), _stepper("mass", calls)])
    assert steps(0.5, 0.25) is None  # every lastSuccessfulTime is t + h, none returned early
    assert calls == [("stop", "c-stop", 0.5, 0.25, 1), ("mass", "c-mass", 0.5, 0.25, 1)]


def test_do_steps_others_steps_the_instances_not_named_in_their_order():
    calls = []
    instances = [
        _stepper("a", calls),
        _stepper("b", calls, True, [0.5]),
        _stepper("c", calls, True, [0.75]),
        _stepper("d", calls),
    ]
    steps = DoSteps(instances)
    rest = steps.others({"b", "x"})
    assert isinstance(rest, DoSteps) and len(rest) == 3 and len(steps) == 4
    # the others keep their early returns: c ends its step early
    with pytest.raises(base.EarlyReturn) as e:
        rest(0.0, 1.0)
    assert (e.value.time, e.value.names) == (0.75, ["c"])
    assert calls == [(n, f"c-{n}", 0.0, 1.0, 1) for n in "acd"]
    assert len(steps.others(["a", "b", "c", "d"])) == 0


def test_select_maps_the_keywords_to_an_algorithm():
    a = select(step=1e-3)
    assert type(a) is GaussSeidel and a.params == FixedStep(1e-3)
    assert type(select("jacobi", 0.1)) is Jacobi and type(select("implicit", 0.1)) is Implicit
    adaptive = select()
    assert type(adaptive) is AdaptiveAlgorithm and adaptive.params == Adaptive()
    adaptive = select("adaptive", step=1e-4, rtol=1e-5)
    assert adaptive.params == Adaptive(h0=1e-4, rtol=1e-5)
    assert select(atol=1e-9).params == Adaptive(atol=1e-9)
    given = Jacobi(FixedStep(0.2))
    assert select(given) is given


def test_select_refuses_what_does_not_fit():
    cases = [
        (
            dict(scheme="euler"),
            "scheme 'euler': valid are 'gauss-seidel', 'jacobi', 'implicit', 'adaptive', 'multirate'",
        ),
        (
            dict(scheme="jacobi"),
            "scheme 'jacobi' needs a communication step (step=...); without one the master chooses "
            "the steps (scheme='adaptive')",
        ),
        (
            dict(scheme="gauss-seidel", step=0.1, rtol=1e-4),
            "rtol=0.0001 given with scheme 'gauss-seidel': a fixed-step scheme takes no tolerance; "
            "rtol and atol are for scheme='adaptive' (no step, or the first step)",
        ),
        (
            dict(scheme="implicit", step=0.1, atol=1e-8),
            "atol=1e-08 given with scheme 'implicit': a fixed-step scheme takes no tolerance; rtol "
            "and atol are for scheme='adaptive' (no step, or the first step)",
        ),
        (
            dict(scheme=Jacobi(FixedStep(0.1)), step=0.1, atol=1e-8),
            "step=0.1, atol=1e-08 given beside the algorithm Jacobi: its parameter object holds its "
            "step and tolerances",
        ),
        (
            dict(scheme=Jacobi(FixedStep(0.1)), rtol=1e-3),
            "rtol=0.001 given beside the algorithm Jacobi: its parameter object holds its step and "
            "tolerances",
        ),
    ]
    for kwargs, text in cases:
        with pytest.raises(CosimError) as e:
            select(**kwargs)
        assert str(e.value) == text
