"""The generic FMI slave base class (contactfmu.fmi.slave.Slave) driven in-process through its
FMI methods by small probe slaves, against what its documentation promises: the variable table
and the start values, parameter checks when initialization ends (the message names the
parameter, its value and the valid range), refused calls (the exact text, nothing changed, the
instance usable), failures (non-finite outputs or arithmetic errors: one message naming the
outputs, inputs, parameters, cause and remedy; the outputs restored; error state), doStep's
argument checks and events, the getters and setters (batches, derivatives, value references of
another type), and FMU states (round trips, refusals of foreign, corrupted or unusable states).

In-process, the FMU's C status shim (logged error -> fmi2Error) is not in play: a refused or
failed call is recognised by the error message it logs (pythonfmu's log_queue). Inside a built
FMU the package is renamed, where mutmut selects no mutant: these tests are among the ones the
mutation runs (mutation/run.py --fmi) see.
"""

import json
import math
import re
import statistics
import sys
from pathlib import Path

import pytest
from pythonfmu.enums import Fmi2Status

from contactfmu.fmi import state as state_codec
from contactfmu.fmi.fmu_state import CapturedState
from contactfmu.fmi.shim import DERIVATIVE_VR as DV
from contactfmu.fmi.slave import TIME_TOLERANCE, Slave
from contactfmu.fmi.variables import inp, out, parameter

# ---- probe slaves ------------------------------------------------------------------------------


def _root(w):
    return math.sqrt(w)  # a math domain error for w < 0 (ROOT_LINE)


ROOT_LINE = next(
    n
    for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
    if "return math.sqrt(w)" in line
)


class Probe(Slave):
    """y = k*u (feed-through, with der(y) = k*der(u)), r = sqrt(w); doStep integrates y into x,
    keeps the largest |u| in peak, counts the steps and records whether u > 0 in on."""

    INPUT_DERIVATIVES = True
    RECORDED_READ = ("y", ("y", "r"))  # a get of y or r records y as read
    VARIABLES = [
        out("y", "N", "k*u", depends=("u",), derivative=True),  # vr 0
        parameter("k", 2.0, "N/m", "a gain", min=0.0, max=10.0, min_exclusive=True),  # vr 1
        parameter("n", 3, "1", "a count", min=1, max=5),  # vr 2
        parameter("flag", False, "1", "a switch"),  # vr 3
        inp("u", 0.5, "m", "an input"),  # vr 4
        inp("w", 0.0, "m", "another input"),  # vr 5
        inp("i", 0, "1", "an Integer input"),  # vr 6
        inp("b", False, "1", "a Boolean input"),  # vr 7
        out("r", "1", "sqrt(w)", depends=("w",)),  # vr 8
        out("x", "N.s", "the integral of y", start=0.25),  # vr 9 (initial exact)
        out("peak", "m", "the largest |u| at a step's start"),  # vr 10
        out("count", "1", "steps taken", kind="Integer"),  # vr 11
        out("on", "1", "u > 0 at the last step's start", kind="Boolean"),  # vr 12
    ]
    computes = 0  # compute_outputs calls
    event = None  # the event step() reports (when report_events is set)

    def check(self):
        # divides by k: only called once k passed its range
        return (
            [("n", self.n, "must not be 4")] * (self.n == 4)
            + [("k", self.k, "must not be 7")] * (self.k == 7.0)
            + [("n/k", self.n / self.k, "must be < 10")] * (self.n / self.k >= 10)
        )

    def initialize(self, t0):
        self.t0 = t0
        if self.flag:
            self._error("Probe refuses to start: flag is set")

    def compute_outputs(self):
        self.computes += 1
        self.y = self.k * self.u
        self.der_y = self.k * self.der_u
        self.r = _root(self.w)

    def step(self, t, h):
        self.x += h * self.y
        self.peak = max(self.peak, abs(self.u))
        self.count += 1
        self.on = self.u > 0
        return self.event if self.report_events else None

    def remedy(self, step_size):
        return f"Remedy: smaller inputs (last step {step_size!r} s)."

    def build_parameters(self):
        return [self.k, self.n]


class Faulty(Probe):
    """Raises where the base must catch: in initialize() (flag), compute_outputs() (i = 7; i = 3:
    an arithmetic error of the standard library), step()."""

    def initialize(self, t0):
        if self.flag:
            raise RuntimeError("initialize broke")

    def compute_outputs(self):
        if self.i == 7:
            raise RuntimeError("compute broke")
        if self.i == 3:
            statistics.fmean([])  # a StatisticsError (a ValueError) raised in statistics.py
        super().compute_outputs()

    def step(self, t, h):
        raise RuntimeError("step broke")


class Broken(Probe):
    """An arithmetic error in step() (u < 0), none in compute_outputs()."""

    def step(self, t, h):
        self.x = _root(self.u)


class Plain(Slave):
    """y = u; no input derivatives; step() reads inputs only (STEP_USES_OUTPUTS = False)."""

    STEP_USES_OUTPUTS = False
    VARIABLES = [inp("u", 0.0, "m", "an input"), out("y", "m", "= u", depends=("u",))]
    computes = 0
    last = None

    def compute_outputs(self):
        self.computes += 1
        self.y = self.u

    def step(self, t, h):
        self.last = self.u


class Follower(Slave):
    """y = 2*u, z = -u with input and output derivatives; the input at value reference 0; no step()."""

    INPUT_DERIVATIVES = True
    VARIABLES = [
        inp("u", 0.0, "m", "an input"),
        out("y", "m", "2*u", depends=("u",), derivative=True),
        out("z", "m", "-u", depends=("u",), derivative=True),
    ]
    computes = 0

    def compute_outputs(self):
        self.computes += 1
        self.y, self.z = 2.0 * self.u, -self.u
        self.der_y, self.der_z = 2.0 * self.der_u, -self.der_u


class Source(Slave):
    """No inputs: y = a*t, z = a*(a*t) (two Real outputs); no step(), no remedy()."""

    VARIABLES = [
        parameter("a", 1.0, "m/s", "a slope"),
        out("y", "m", "a*t"),
        out("z", "m", "a*a*t"),
    ]

    def compute_outputs(self):
        self.y = self.a * self.time
        self.z = self.a * (self.a * self.time)


class Counter(Slave):
    """No Real output: count counts the steps."""

    model_name = "StepCounter"
    VARIABLES = [parameter("n0", 0, "1", "the first count"), out("count", "1", "", kind="Integer")]

    def initialize(self, t0):
        self.count = self.n0

    def step(self, t, h):
        self.count += 1


VR = {v.name: v.vr for v in Probe.variable_table()}


def new(cls=Probe):
    return cls(instance_name="p", resources="/tmp", visible=False, logger=None)


def started(cls=Probe, t0=0.0, **params):
    """An instance in initialization mode with these parameters set (by one call per type)."""
    s = new(cls)
    s.setup_experiment(t0)
    s.enter_initialization_mode()
    table = {v.name: v for v in cls.variable_table()}
    for kind, setter in (
        ("Real", s.set_real),
        ("Integer", s.set_integer),
        ("Boolean", s.set_boolean),
    ):
        names = [n for n in params if table[n].type == kind]
        if names:
            setter([table[n].vr for n in names], [params[n] for n in names])
    return s


def initialized(cls=Probe, t0=0.0, **params):
    s = started(cls, t0, **params)
    s.exit_initialization_mode()
    assert errors(s) == []
    return s


def errors(s):
    return [m.msg for m in s.log_queue if m.status == Fmi2Status.error]


def probe_state(s):
    """The FMU state's model variables (no base infrastructure: names without a leading _)."""
    return {k: v for k, v in s._get_fmu_state()["values"].items() if not k.startswith("_")}


# ---- the variable table, start values --------------------------------------------------------


def test_the_table_numbers_the_variables_in_declaration_order_and_is_built_once():
    table = Probe.variable_table()
    assert [(v.vr, v.name) for v in table] == list(enumerate(v.name for v in Probe.VARIABLES))
    assert Probe.variable_table() is table and new().variable_table() is table


def test_a_subclass_has_its_own_table():
    class Longer(Plain):
        VARIABLES = [*Plain.VARIABLES, out("z", "m", "another")]

    assert [v.name for v in Plain.variable_table()] == ["u", "y"]
    assert [(v.vr, v.name) for v in Longer.variable_table()] == [(0, "u"), (1, "y"), (2, "z")]
    assert [v.name for v in Plain.variable_table()] == ["u", "y"]
    s = new(Longer)
    s.set_real([0], [3.0])
    assert s.get_real([1, 2]) == [3.0, 0.0] and errors(s) == []


def test_a_variable_declared_twice_is_refused():
    class Twice(Slave):
        VARIABLES = [inp("u", 0.0, "m", "a"), out("v", "m", "b"), inp("u", 1.0, "m", "c")]

    with pytest.raises(ValueError) as exc:
        Twice.variable_table()
    assert str(exc.value) == "Twice: variable u declared twice"


def test_every_variable_starts_at_its_start_value_or_zero_false():
    s = new()
    assert s.get_real([VR["k"], VR["u"], VR["w"], VR["x"], VR["peak"], VR["r"]]) == [
        2.0,
        0.5,
        0.0,
        0.25,
        0.0,
        0.0,
    ]
    assert s.get_integer([VR["n"], VR["i"], VR["count"]]) == [3, 0, 0]
    assert s.get_boolean([VR["flag"], VR["b"], VR["on"]]) == [False, False, False]
    assert [type(x) for x in s.get_integer([VR["n"], VR["count"]])] == [int, int]
    assert [type(x) for x in s.get_boolean([VR["flag"], VR["on"]])] == [bool, bool]
    assert errors(s) == []


def test_start_values_give_the_outputs_before_anything_is_set():
    """Outputs are computed from the start values at the first read (u starts at 0.5)."""
    s = new()
    assert s.get_real([VR["y"]]) == [1.0] and s.computes == 1


def test_only_real_inputs_and_declared_outputs_have_derivatives():
    s = new()
    assert probe_state(s) == {
        "y": 0.0,
        "k": 2.0,
        "n": 3,
        "flag": False,
        "u": 0.5,
        "w": 0.0,
        "i": 0,
        "b": False,
        "r": 0.0,
        "x": 0.25,
        "peak": 0.0,
        "count": 0,
        "on": False,
        "der_y": 0.0,
        "der_u": 0.0,
        "der_w": 0.0,
        "time": 0.0,
    }
    assert probe_state(new(Plain)) == {"u": 0.0, "y": 0.0, "time": 0.0}


def test_only_setting_an_input_resets_a_derivative():
    s = started()
    expected = probe_state(s)
    s.set_real([VR["k"], VR["x"]], [3.0, 1.0])
    s.set_real([VR["k"], VR["x"]], [3.0, 1.0])
    s.set_integer([VR["n"], VR["i"]], [2, 5])
    s.set_boolean([VR["flag"], VR["b"]], [False, True])
    s.set_integer([VR["i"]], [5])
    expected.update(k=3.0, x=1.0, n=2, i=5, b=True)
    assert probe_state(s) == expected and errors(s) == []
    plain = started(Plain)
    plain.set_real([0], [2.0])
    plain.set_real([0], [2.0])
    assert probe_state(plain) == {"u": 2.0, "y": 0.0, "time": 0.0} and errors(plain) == []


def test_a_fresh_instance_has_no_events_and_no_read_recorded():
    s = new()
    assert (s.report_events, s.stop_at_events, s.returned_early) == (False, False, False)
    assert s.step_event is None and s._delivered is None
    assert s.modelName == "Probe" and new(Counter).modelName == "StepCounter"


# ---- setupExperiment -------------------------------------------------------------------------


def test_setup_experiment_sets_the_start_time():
    s = started(t0=2.5)
    s.exit_initialization_mode()
    assert s.t0 == 2.5 and s.do_step(2.5, 0.5) and s.time == 3.0 and errors(s) == []


@pytest.mark.parametrize("t0", [math.inf, -math.inf, math.nan])
def test_a_non_finite_start_time_is_refused(t0):
    s = new()
    s.setup_experiment(1.0)
    s.setup_experiment(t0)
    assert errors(s) == [
        f"fmi2SetupExperiment refused: startTime = {t0!r} s is not finite (time 1.0 s kept)"
    ]
    assert s.time == 1.0
    s.exit_initialization_mode()
    assert s.do_step(1.0, 0.5) and len(errors(s)) == 1


def test_setup_experiment_after_initialization_is_refused():
    s = initialized(t0=1.0)
    s.setup_experiment(0.0)
    assert errors(s) == [
        "fmi2SetupExperiment refused: Probe is initialized (time 1.0 s kept; fmi2Reset first)"
    ]
    assert s.do_step(1.0, 0.5) and len(errors(s)) == 1


def test_an_exception_in_setup_experiment_is_an_internal_error():
    s = new()
    s.setup_experiment("soon")
    (message,) = errors(s)
    assert message.startswith(
        "Probe (p): internal error in fmi2SetupExperiment: Traceback (most recent call last): | "
    )
    assert "\n" not in message and message.endswith("TypeError: must be real number, not str")
    assert s.time == 0.0


# ---- parameter checks when initialization ends -----------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"k": 0.0}, "Invalid parameter k = 0.0 N/m: valid range (0.0, 10.0]"),
        ({"k": -1.0}, "Invalid parameter k = -1.0 N/m: valid range (0.0, 10.0]"),
        ({"k": 10.5}, "Invalid parameter k = 10.5 N/m: valid range (0.0, 10.0]"),
        ({"n": 0}, "Invalid parameter n = 0: valid range [1, 5]"),
        ({"n": 6}, "Invalid parameter n = 6: valid range [1, 5]"),
        ({"n": 4}, "Invalid parameter n = 4: must not be 4"),  # check()
        ({"k": 7.0}, "Invalid parameter k = 7.0 N/m: must not be 7"),  # check(), with its unit
        ({"n": 5, "k": 0.5}, "Invalid parameter n/k = 10.0: must be < 10"),  # check(): no variable
    ],
)
def test_an_invalid_parameter_fails_initialization_naming_it(params, message):
    s = started(**params)
    s.exit_initialization_mode()
    assert errors(s) == [message]
    assert not s._initialized and not hasattr(s, "t0")  # initialize() not called
    assert s.do_step(0.0, 0.1) is False
    assert errors(s)[-1] == (
        f"doStep refused: the instance is in error state ({message}); fmi2SetFMUstate (to an "
        f"earlier state) or fmi2Reset recover it"
    )
    s.exit_initialization_mode()
    assert errors(s)[-1] == (
        f"fmi2ExitInitializationMode refused: the instance is in error state ({message})"
    )


class Unbounded(Probe):
    """k starts at inf (a set call cannot give a parameter a non-finite value)."""

    VARIABLES = [
        Probe.VARIABLES[0],
        parameter("k", math.inf, "N/m", "a gain", min=0.0, max=10.0, min_exclusive=True),
        *Probe.VARIABLES[2:],
    ]


def test_a_non_finite_real_parameter_fails_initialization():
    s = started(Unbounded)
    s.set_real([VR["k"]], [math.nan])
    s.exit_initialization_mode()
    assert errors(s) == [
        "fmi2SetReal refused: non-finite value nan for parameter k; previous value inf kept",
        "Invalid parameter k = inf N/m: must be a finite number",
    ]
    s = started()
    state = s._get_fmu_state()
    state["values"]["k"] = state_codec.encode(-math.inf, "contactfmu")
    s._set_fmu_state(state)
    s.exit_initialization_mode()
    assert errors(s) == ["Invalid parameter k = -inf N/m: must be a finite number"]
    assert s.do_step(0.0, 0.1) is False


def test_every_parameter_out_of_range_is_named_and_the_first_is_the_error_state():
    s = started(k=11.0, n=9)
    s.exit_initialization_mode()
    first = "Invalid parameter k = 11.0 N/m: valid range (0.0, 10.0]"
    assert errors(s) == [first, "Invalid parameter n = 9: valid range [1, 5]"]
    s.do_step(0.0, 0.1)
    assert f"error state ({first});" in errors(s)[-1]


def test_check_runs_only_when_the_ranges_hold():
    class Checked(Probe):
        def check(self):
            raise AssertionError("check() called")

    s = started(Checked, k=0.0)
    s.exit_initialization_mode()
    assert errors(s) == ["Invalid parameter k = 0.0 N/m: valid range (0.0, 10.0]"]


def test_the_boundaries_of_the_ranges_are_valid():
    for params in ({"k": 10.0, "n": 5}, {"k": 0.2, "n": 1}):
        s = initialized(**params)
        assert s._initialized and s.get_real([VR["k"]]) == [params["k"]]


def test_initialization_ends_once():
    s = initialized()
    s.exit_initialization_mode()
    assert errors(s) == ["fmi2ExitInitializationMode refused: Probe is initialized already"]
    assert s.do_step(0.0, 0.1)


def test_initialize_may_refuse_the_start():
    s = started(flag=True)
    s.exit_initialization_mode()
    assert errors(s) == ["Probe refuses to start: flag is set"] and not s._initialized
    assert s.do_step(0.0, 0.1) is False and "(Probe refuses to start: flag is set)" in errors(s)[-1]


def test_an_exception_in_initialize_is_an_internal_error():
    s = started(Faulty, flag=True)
    s.exit_initialization_mode()
    (message,) = errors(s)
    assert message.startswith(
        "Faulty (p): internal error in fmi2ExitInitializationMode: Traceback (most recent call last): | "
    )
    assert message.endswith("RuntimeError: initialize broke") and "\n" not in message
    assert not s._initialized and s.do_step(0.0, 0.1) is False


@pytest.mark.parametrize(
    "cls, params, first",
    [
        (Probe, {"k": 10.0, "u": 1e308}, "Probe: non-finite output y = inf"),
        (Probe, {"w": -1.0}, "Probe: the outputs cannot be computed"),
        (Faulty, {"flag": True}, "Faulty (p): internal error in fmi2ExitInitializationMode"),
    ],
)
def test_after_a_failed_initialization_inputs_can_still_be_set(cls, params, first):
    s = started(cls, **params)
    s.exit_initialization_mode()
    assert len(errors(s)) == 1 and errors(s)[0].startswith(first) and not s._initialized
    s.set_real([VR["u"], VR["w"]], [0.25, 4.0])
    s.set_integer([VR["i"]], [2])
    s.set_boolean([VR["b"]], [True])
    assert s.get_real([VR["u"], VR["w"], VR["r"]]) == [0.25, 4.0, 2.0] and len(errors(s)) == 1
    s.set_real([VR["k"]], [1.0])  # still settable: not initialized
    assert s.get_real([VR["y"]]) == [0.25] and len(errors(s)) == 1


def test_parameters_are_built_anew_before_and_once_at_the_end_of_initialization():
    s = started(k=3.0)
    first = s.parameters()
    assert first == [3.0, 3] and s.parameters() is not first
    s.exit_initialization_mode()
    assert s.parameters() == [3.0, 3] and s.parameters() is s.parameters()


def test_non_finite_outputs_fail_initialization():
    s = started(k=10.0, u=1e308)
    s.exit_initialization_mode()
    assert errors(s) == [
        "Probe: non-finite output y = inf at t = 0.0 s (fmi2ExitInitializationMode), from the "
        "inputs u = 1e+308, w = 0.0 and with the parameters k = 10.0 N/m, n = 3, flag = False; "
        "initialization failed. Remedy: smaller inputs (last step None s)."
    ]
    assert not s._initialized and s.get_real([VR["y"]]) == [0.0]  # restored: the start value
    assert s.do_step(0.0, 0.1) is False


def test_an_arithmetic_error_fails_initialization_naming_where_it_arose():
    s = started(w=-1.0)
    s.exit_initialization_mode()
    assert errors(s) == [
        "Probe: the outputs cannot be computed at t = 0.0 s (fmi2ExitInitializationMode): "
        f"ValueError: math domain error (in test_slave_base.py:{ROOT_LINE}, _root), from the "
        "inputs u = 0.5, w = -1.0 and with the parameters k = 2.0 N/m, n = 3, flag = False; "
        "initialization failed. Remedy: smaller inputs (last step None s)."
    ]
    assert not s._initialized and s.do_step(0.0, 0.1) is False


# ---- getters ---------------------------------------------------------------------------------


def test_getters_deliver_values_of_their_type_in_the_order_asked():
    s = initialized(k=3.0, u=2.0)
    assert s.get_real([VR["x"], VR["y"], VR["k"], VR["y"]]) == [0.25, 6.0, 3.0, 6.0]
    assert s.get_real([VR["y"]]) == [6.0] and s.get_real([]) == []
    s.set_integer([VR["i"]], [-4])
    s.set_boolean([VR["b"]], [True])
    assert s.get_integer([VR["i"], VR["n"]]) == [-4, 3] and s.get_boolean([VR["b"]]) == [True]
    assert errors(s) == []


def test_output_derivatives_are_read_at_their_value_reference_plus_the_offset():
    s = initialized(k=3.0)
    s.set_real([VR["u"] + DV], [0.5])
    assert s.get_real([VR["y"] + DV]) == [1.5]
    assert s.get_real([VR["y"], VR["y"] + DV, VR["k"]]) == [1.5, 1.5, 3.0] and errors(s) == []


@pytest.mark.parametrize(
    "getter, vr, default, message",
    [
        ("get_real", 99, 0.0, "fmi2GetReal refused: value reference 99 is not a variable of Probe"),
        (
            "get_real",
            VR["n"],
            0.0,
            "fmi2GetReal refused: n (value reference 2) is an Integer variable of Probe, not a Real one",
        ),
        (
            "get_integer",
            VR["k"],
            0,
            "fmi2GetInteger refused: k (value reference 1) is a Real variable of Probe, not an Integer one",
        ),
        (
            "get_boolean",
            VR["count"],
            False,
            "fmi2GetBoolean refused: count (value reference 11) is an Integer variable of Probe, not a "
            "Boolean one",
        ),
        (
            "get_real",
            VR["x"] + DV,
            0.0,
            "fmi2GetRealOutputDerivatives refused: x has no derivative; available for: y",
        ),
        (
            "get_real",
            77 + DV,
            0.0,
            "fmi2GetRealOutputDerivatives refused: 77 has no derivative; available for: y",
        ),
    ],
)
def test_a_value_reference_of_another_type_is_refused_and_gets_the_default(
    getter, vr, default, message
):
    s = initialized()
    good = {"get_real": VR["k"], "get_integer": VR["n"], "get_boolean": VR["flag"]}[getter]
    expected = {"get_real": 2.0, "get_integer": 3, "get_boolean": False}[getter]
    values = getattr(s, getter)([good, vr, good])
    assert values == [expected, default, expected] and type(values[1]) is type(default)
    assert errors(s) == [message]
    assert getattr(s, getter)([vr]) == [default] and errors(s) == [message, message]
    assert s.do_step(0.0, 0.1)  # a refused call leaves the instance usable


def test_the_derivative_of_an_input_at_the_first_value_reference_is_not_an_output_derivative():
    s = initialized(Follower)
    assert s.get_real([DV]) == [0.0]
    assert errors(s) == [
        "fmi2GetRealOutputDerivatives refused: u has no derivative; available for: y, z"
    ]
    assert s.get_real([1 + DV]) == [0.0] and len(errors(s)) == 1


def test_there_are_no_string_variables():
    s = initialized()
    assert s.get_string([0, 1]) == ["", ""]
    s.set_string([0], ["a"])
    assert errors(s) == [
        "fmi2GetString refused: Probe has no String variables",
        "fmi2SetString refused: Probe has no String variables",
    ]
    assert s.get_real([VR["y"]]) == [1.0]


def test_outputs_are_computed_once_per_change_of_the_inputs():
    s = initialized()
    n = s.computes
    assert s.get_real([VR["y"]]) == [1.0] and s.get_real([VR["y"], VR["x"]]) == [1.0, 0.25]
    assert s.computes == n  # initialization left them current
    s.set_real([VR["u"]], [0.5])  # the same value: still current
    s.set_real([VR["w"]], [0.0])
    assert s.get_real([VR["y"]]) == [1.0] and s.computes == n
    s.set_real([VR["u"]], [-0.0])  # -0.0 is another value
    assert math.copysign(1.0, s.get_real([VR["y"]])[0]) == -1.0 and s.computes == n + 1
    s.set_real([VR["u"]], [-0.0])
    s.get_real([VR["y"]])
    assert s.computes == n + 1
    s.set_real([VR["u"]], [0.0])
    assert math.copysign(1.0, s.get_real([VR["y"]])[0]) == 1.0 and s.computes == n + 2
    s.set_real([VR["u"] + DV], [0.0])  # the derivative it holds
    s.get_real([VR["y"]])
    assert s.computes == n + 2
    s.set_real([VR["u"]], [0.75])
    assert s.get_real([VR["y"]]) == [1.5] and s.computes == n + 3


def test_the_same_inputs_set_after_a_step_are_computed_anew():
    s = initialized()
    s.get_real([VR["y"]])
    assert s.do_step(0.0, 0.1)
    n = s.computes
    s.set_real([VR["u"]], [0.5])
    s.get_real([VR["y"]])
    assert s.computes == n + 1


def test_a_fresh_instance_with_its_start_inputs_set_again_computes_them():
    s = new()
    s.set_real([VR["u"], VR["w"]], [0.5, 0.0])
    assert s.get_real([VR["y"]]) == [1.0] and s.computes == 1
    s.set_real([VR["u"]], [0.5])
    assert s.get_real([VR["y"]]) == [1.0] and s.computes == 1


def test_a_read_of_the_recorded_outputs_records_the_value_delivered():
    s = initialized()
    assert s.get_real([VR["x"], VR["peak"]]) == [0.25, 0.0] and s._delivered is None
    s.get_integer([VR["count"]])
    assert s._delivered is None
    assert s.get_real([VR["y"]]) == [1.0] and s._delivered == 1.0
    s.set_real([VR["u"]], [2.0])
    assert s._delivered == 1.0  # not read yet
    s.get_real([VR["x"], VR["r"]])
    assert s._delivered == 4.0
    s.set_real([VR["u"]], [3.0])
    s.get_real([VR["x"]])
    assert s._delivered == 4.0
    s.get_real([VR["x"], VR["y"]])
    assert s._delivered == 6.0
    assert s.do_step(0.0, 0.5) and s._delivered is None  # taken by the step after the read
    s.get_real([VR["x"]])
    assert s._delivered is None


def test_an_output_derivative_that_comes_out_non_finite_fails_the_getter():
    s = initialized()
    s.set_real([VR["u"] + DV], [1e308])
    assert s.get_real([VR["y"] + DV]) == [0.0]  # restored
    assert errors(s) == [
        "Probe: non-finite output der(y) = inf at t = 0.0 s (fmi2GetRealOutputDerivatives), from the "
        "inputs u = 0.5, w = 0.0; the outputs keep their values from the last successful fmi2DoStep "
        "(the start values before it). Remedy: smaller inputs (last step None s)."
    ]


def test_a_non_finite_output_fails_the_getter_and_restores_the_outputs():
    s = initialized()
    assert s.do_step(0.0, 0.1)  # y = 1.0 after this step
    s.set_real([VR["u"]], [1e308])
    assert s.get_real([VR["y"]]) == [1.0]
    message = (
        "Probe: non-finite output y = inf at t = 0.1 s (fmi2GetReal), from the inputs u = 1e+308, "
        "w = 0.0; the outputs keep their values from the last successful fmi2DoStep (the start values "
        "before it). Remedy: smaller inputs (last step 0.1 s)."
    )
    assert errors(s) == [message]
    assert s.get_real([VR["x"], VR["y"]]) == [0.35, 1.0] and len(errors(s)) == 1
    assert s.do_step(0.1, 0.1) is False
    assert errors(s)[-1] == (
        f"doStep refused: the instance is in error state ({message}); fmi2SetFMUstate (to an "
        f"earlier state) or fmi2Reset recover it"
    )


@pytest.mark.parametrize("vrs", [[0, 0 + DV], [0 + DV, 0], [8, 0, 0 + DV]])
def test_several_non_finite_outputs_are_named_in_one_message(vrs):
    s = initialized()
    s.set_real([VR["u"]], [1e308])
    s.set_real([VR["u"] + DV], [-1e308])
    values = s.get_real(vrs)
    assert values == [{0: 1.0, 8: 0.0, DV: 0.0}[vr] for vr in vrs]
    label = "fmi2GetRealOutputDerivatives"
    assert errors(s) == [
        f"Probe: non-finite outputs y = inf, der(y) = -inf at t = 0.0 s ({label}), from the inputs "
        "u = 1e+308, w = 0.0; the outputs keep their values from the last successful fmi2DoStep (the "
        "start values before it). Remedy: smaller inputs (last step None s)."
    ]


def test_finite_values_are_delivered_while_another_output_is_not_finite():
    s = initialized()
    s.set_real([VR["u"]], [1e308])
    assert s.get_real([VR["x"], VR["r"]]) == [0.25, 0.0]
    assert s.get_real([VR["x"]]) == [0.25]
    assert s.get_real([VR["k"], 99]) == [2.0, 0.0]
    assert s.get_integer([VR["count"], 99]) == [0, 0]
    assert errors(s) == [
        "fmi2GetReal refused: value reference 99 is not a variable of Probe",
        "fmi2GetInteger refused: value reference 99 is not a variable of Probe",
    ]
    assert s.get_real([VR["y"], 99]) == [1.0, 0.0]  # now the non-finite one is asked for
    assert errors(s)[2:] == [
        "fmi2GetReal refused: value reference 99 is not a variable of Probe",
        "Probe: non-finite output y = inf at t = 0.0 s (fmi2GetReal), from the inputs u = 1e+308, "
        "w = 0.0; the outputs keep their values from the last successful fmi2DoStep (the start values "
        "before it). Remedy: smaller inputs (last step None s).",
    ]


def test_a_batch_of_finite_values_may_sum_to_infinity():
    s = initialized(k=1.0)
    s.set_real([VR["u"], VR["w"]], [1e308, 1e308])
    assert errors(s) == []
    assert s.get_real([VR["y"], VR["u"]]) == [1e308, 1e308] and errors(s) == []
    assert s.get_real([VR["y"], VR["u"], 99]) == [1e308, 1e308, 0.0]
    assert len(errors(s)) == 1 and "value reference 99" in errors(s)[0]


def test_a_getter_before_initialization_ends_only_refuses_non_finite_outputs():
    s = started(k=10.0, u=1e308)
    assert s.get_real([VR["y"]]) == [0.0]
    assert errors(s) == [
        "Probe: non-finite output y = inf at t = 0.0 s (fmi2GetReal), from the inputs u = 1e+308, "
        "w = 0.0 and with the parameters k = 10.0 N/m, n = 3, flag = False; the outputs keep their "
        "values from the last successful fmi2DoStep (the start values before it). Remedy: smaller "
        "inputs (last step None s)."
    ]
    s.set_real([VR["u"]], [0.5])
    assert s.get_real([VR["y"]]) == [5.0]
    s.set_real([VR["u"]], [1e308])
    assert s.get_real([VR["y"]]) == [0.0] and len(errors(s)) == 2  # the start values
    s.set_real([VR["u"]], [0.25])
    s.exit_initialization_mode()
    assert s._initialized and len(errors(s)) == 2 and s.get_real([VR["y"]]) == [2.5]


def test_a_getter_refused_before_initialization_ends_leaves_the_outputs_to_the_next_read():
    """Before initialization ends, a getter that found non-finite outputs leaves them to be
    computed at the next read (the parameters and inputs may still change): read again, they are
    computed from the same inputs and refused again."""
    s = started(k=10.0, u=1e308)
    s.get_real([VR["y"]])
    n = s.computes
    assert s.get_real([VR["y"]]) == [0.0] and s.computes == n + 1
    assert len(errors(s)) == 2 and errors(s)[0] == errors(s)[1]
    s.set_real([VR["k"]], [1.0])
    assert s.get_real([VR["y"]]) == [1e308] and s.computes == n + 2 and len(errors(s)) == 2


def test_a_getter_does_not_compute_with_invalid_parameters():
    s = started(k=-1.0, u=2.0)
    assert s.get_real([VR["y"], VR["u"]]) == [0.0, 2.0] and s.computes == 0
    assert errors(s) == []
    s.set_real([VR["k"]], [1.5])
    assert s.get_real([VR["y"]]) == [3.0] and s.computes == 1


def test_an_arithmetic_error_in_a_getter_fails_it():
    s = initialized()
    s.set_real([VR["w"]], [-4.0])
    assert s.get_real([VR["r"], VR["y"]]) == [0.0, 1.0]
    assert errors(s) == [
        "Probe: the outputs cannot be computed at t = 0.0 s (fmi2GetReal): ValueError: math domain "
        f"error (in test_slave_base.py:{ROOT_LINE}, _root), from the inputs u = 0.5, w = -4.0; the "
        "outputs keep their values from the last successful fmi2DoStep (the start values before "
        "it). Remedy: smaller inputs (last step None s)."
    ]
    assert (
        s.do_step(0.0, 0.1) is False and "error state (Probe: the outputs cannot" in errors(s)[-1]
    )


def test_an_arithmetic_error_is_located_where_it_arose():
    s = initialized(Faulty)
    s.set_integer([VR["i"]], [3])
    assert s.get_real([VR["y"]]) == [1.0]
    (message,) = errors(s)
    assert re.fullmatch(
        r"Faulty: the outputs cannot be computed at t = 0\.0 s \(fmi2GetReal\): StatisticsError: "
        r"fmean requires at least one data point \(in statistics\.py:\d+, fmean\), from the inputs "
        r"u = 0\.5, w = 0\.0; .*",
        message,
    )


def test_an_exception_in_compute_outputs_during_a_getter_is_an_internal_error():
    s = initialized(Faulty)
    s.set_integer([VR["i"]], [7])
    assert s.get_real([VR["y"]]) == [1.0]
    (message,) = errors(s)
    assert message.startswith(
        "Faulty (p): internal error in compute_outputs: Traceback (most recent call last): | "
    )
    assert message.endswith("RuntimeError: compute broke") and "\n" not in message
    assert s.do_step(0.0, 0.1) is False


@pytest.mark.parametrize(
    "call, args, result, where",
    [
        ("get_real", ([0, 1],), [0.0, 0.0], "fmi2GetReal"),
        ("get_integer", ([2],), [0], "fmi2GetInteger"),
        ("get_boolean", ([3, 7, 12],), [False, False, False], "fmi2GetBoolean"),
        ("set_real", ([4], [1.0]), None, "fmi2SetReal"),
        ("set_integer", ([6], [1]), None, "fmi2SetInteger"),
        ("set_boolean", ([7], [True]), None, "fmi2SetBoolean"),
    ],
)
def test_an_exception_in_a_getter_or_setter_is_an_internal_error(call, args, result, where):
    s = initialized()

    def broken(*args):
        raise KeyError("lost")

    s._get = s._set = broken
    assert getattr(s, call)(*args) == result
    (message,) = errors(s)
    assert message.startswith(
        f"Probe (p): internal error in {where}: Traceback (most recent call last): | "
    )
    assert message.endswith("KeyError: 'lost'")


# ---- setters ---------------------------------------------------------------------------------


def test_setters_set_values_of_their_type():
    s = started()
    s.set_real([VR["k"], VR["x"]], [4.0, -1.0])  # x: an output with a start value (initial exact)
    s.set_integer([VR["n"], VR["i"]], [2, 9])
    s.set_boolean([VR["flag"], VR["b"]], [False, True])
    s.exit_initialization_mode()
    assert s.get_real([VR["k"], VR["x"], VR["y"]]) == [4.0, -1.0, 2.0]
    assert s.get_integer([VR["n"], VR["i"]]) == [2, 9] and s.get_boolean([VR["b"]]) == [True]
    assert errors(s) == []


@pytest.mark.parametrize(
    "setter, vrs, values, message",
    [
        ("set_real", [VR["y"]], [1.0], "fmi2SetReal refused: y is an output and cannot be set"),
        (
            "set_real",
            [VR["x"]],
            [1.0],
            "fmi2SetReal refused: x is an output and cannot be set after initialization",
        ),
        (
            "set_real",
            [VR["k"]],
            [3.0],
            "fmi2SetReal refused: parameter k is fixed after initialization (value 2.0 kept)",
        ),
        (
            "set_integer",
            [VR["n"]],
            [2],
            "fmi2SetInteger refused: parameter n is fixed after initialization (value 3 kept)",
        ),
        (
            "set_boolean",
            [VR["flag"]],
            [True],
            "fmi2SetBoolean refused: parameter flag is fixed after initialization (value False kept)",
        ),
        (
            "set_integer",
            [VR["count"]],
            [2],
            "fmi2SetInteger refused: count is an output and cannot be set",
        ),
        (
            "set_real",
            [VR["n"]],
            [2.0],
            "fmi2SetReal refused: n (value reference 2) is an Integer variable of Probe, not a Real one",
        ),
        (
            "set_integer",
            [VR["u"]],
            [2],
            "fmi2SetInteger refused: u (value reference 4) is a Real variable of Probe, not an Integer one",
        ),
        (
            "set_boolean",
            [VR["i"]],
            [True],
            "fmi2SetBoolean refused: i (value reference 6) is an Integer variable of Probe, not a Boolean one",
        ),
        (
            "set_real",
            [99],
            [2.0],
            "fmi2SetReal refused: value reference 99 is not a variable of Probe",
        ),
        (
            "set_real",
            [VR["u"]],
            [math.nan],
            "fmi2SetReal refused: non-finite value nan for input u; previous value 0.5 kept",
        ),
        (
            "set_real",
            [VR["u"] + DV],
            [-math.inf],
            "fmi2SetRealInputDerivatives refused: non-finite value -inf for the derivative of input u; "
            "previous value 0.0 kept",
        ),
        (
            "set_real",
            [VR["y"] + DV],
            [1.0],
            "fmi2SetRealInputDerivatives refused: value reference 0 is not a Real input of Probe that "
            "takes derivatives",
        ),
        (
            "set_real",
            [VR["i"] + DV],
            [1.0],
            "fmi2SetRealInputDerivatives refused: value reference 6 is not a Real input of Probe that "
            "takes derivatives",
        ),
        (
            "set_real",
            [99 + DV],
            [1.0],
            "fmi2SetRealInputDerivatives refused: value reference 99 is not a Real input of Probe that "
            "takes derivatives",
        ),
    ],
)
def test_a_refused_set_changes_nothing(setter, vrs, values, message):
    s = initialized()
    before = s._get_fmu_state()
    for _ in range(2):  # the second time from the cached plan
        getattr(s, setter)(vrs, values)
        assert errors(s)[-1] == message
        assert s._get_fmu_state() == before
    assert len(errors(s)) == 2 and s.do_step(0.0, 0.1) and s.get_real([VR["x"]]) == [0.35]


def test_a_set_of_several_values_sets_all_or_none():
    s = initialized()
    s.set_real([VR["u"], VR["w"], VR["y"]], [3.0, 1.0, 2.0])
    s.set_real([VR["u"], VR["w"]], [math.inf, 4.0])
    s.set_real([VR["w"], VR["u"] + DV], [4.0, math.nan])
    s.set_integer([VR["i"], VR["n"]], [5, 2])
    assert errors(s) == [
        "fmi2SetReal refused: y is an output and cannot be set (none of the 3 values of this call is set)",
        "fmi2SetReal refused: non-finite value inf for input u; previous value 0.5 kept (none of the 2 "
        "values of this call is set)",
        "fmi2SetRealInputDerivatives refused: non-finite value nan for the derivative of input u; "
        "previous value 0.0 kept (none of the 2 values of this call is set)",
        "fmi2SetInteger refused: parameter n is fixed after initialization (value 3 kept) (none of the "
        "2 values of this call is set)",
    ]
    assert s.get_real([VR["u"], VR["w"], VR["y"]]) == [0.5, 0.0, 1.0]
    assert s.get_integer([VR["i"]]) == [0]
    s.set_real([VR["u"], VR["y"], VR["w"]], [math.nan, 1.0, math.inf])  # every refusal is named
    assert errors(s)[4:] == [
        "fmi2SetReal refused: non-finite value nan for input u; previous value 0.5 kept (none of the "
        "3 values of this call is set)",
        "fmi2SetReal refused: y is an output and cannot be set (none of the 3 values of this call is set)",
        "fmi2SetReal refused: non-finite value inf for input w; previous value 0.0 kept (none of the "
        "3 values of this call is set)",
    ]
    s.set_real([VR["u"], VR["w"]], [3.0, 1.0])
    assert s.get_real([VR["y"], VR["r"]]) == [6.0, 1.0] and len(errors(s)) == 7


def test_setting_an_input_holds_it_its_derivative_is_reset():
    s = initialized(k=2.0)
    s.set_real([VR["u"] + DV, VR["w"] + DV], [3.0, 1.0])
    assert s.get_real([VR["y"] + DV]) == [6.0]
    s.set_real([VR["u"]], [1.0])
    assert s.get_real([VR["y"], VR["y"] + DV]) == [2.0, 0.0]
    s.set_real([VR["u"] + DV], [3.0])
    s.set_real([VR["u"], VR["w"]], [1e308, 1e308])  # finite values summing to inf: the checked path
    assert s.get_real([VR["y"] + DV]) == [0.0] and s.der_w == 0.0
    assert s.get_real([VR["u"], VR["w"]]) == [1e308, 1e308]
    assert errors(s)[-1].startswith("Probe: non-finite output y = inf")


def test_input_derivatives_of_a_slave_without_them_are_refused():
    s = initialized(Plain)
    s.set_real([0 + DV], [1.0])
    assert errors(s) == [
        "fmi2SetRealInputDerivatives refused: value reference 0 is not a Real input of Plain that "
        "takes derivatives"
    ]
    s.set_real([0], [2.0])
    assert s.get_real([1]) == [2.0] and len(errors(s)) == 1


def test_the_derivative_of_the_input_at_the_first_value_reference_is_set():
    s = initialized(Follower)
    s.set_real([0 + DV], [1.5])
    assert s.get_real([1 + DV]) == [3.0] and errors(s) == []
    s.set_real([0], [1.0])
    assert s.get_real([1, 1 + DV]) == [2.0, 0.0]


def test_integer_and_boolean_values_are_stored_as_int_and_bool():
    s = initialized()
    s.set_integer([VR["i"]], [True])
    s.set_boolean([VR["b"]], [1])
    assert type(s.i) is int and type(s.b) is bool and (s.i, s.b) == (1, True)
    s.set_integer([VR["i"], VR["i"]], [2.0, 3.0])
    assert type(s.i) is int and s.i == 3


# ---- doStep ----------------------------------------------------------------------------------


def test_a_step_advances_the_time_and_the_state():
    s = initialized(u=2.0)
    assert s.do_step(0.0, 0.5) is True
    assert s.time == 0.5 and s.get_real([VR["x"], VR["peak"]]) == [2.25, 2.0]
    assert s.get_integer([VR["count"]]) == [1] and s.get_boolean([VR["on"]]) == [True]
    assert (s.step_event, s.returned_early) == (None, False)
    assert s.do_step(0.5, 0.25) and s.time == 0.75 and s.get_real([VR["x"]]) == [3.25]


def test_a_step_uses_the_outputs_of_the_inputs_set_before_it():
    s = initialized()
    s.set_real([VR["u"]], [3.0])
    n = s.computes
    assert s.do_step(0.0, 0.5) and s.get_real([VR["x"]]) == [0.25 + 0.5 * 6.0]
    assert s.computes == n + 2  # before the step (step() reads y) and after it


def test_a_step_that_reads_inputs_only_computes_the_outputs_once():
    s = initialized(Plain)
    s.set_real([0], [3.0])
    n = s.computes
    assert s.do_step(0.0, 0.5) and s.last == 3.0 and s.computes == n + 1


def test_a_slave_without_step_computes_its_outputs_after_each_step():
    s = initialized(Source, a=2.0)
    assert s.get_real([1, 2]) == [0.0, 0.0]
    assert s.do_step(0.0, 0.5) and s.get_real([1, 2]) == [1.0, 2.0]
    s = initialized(Follower)
    s.set_real([0], [1.0])
    n = s.computes
    assert s.do_step(0.0, 0.5) and s.computes == n + 1 and s.get_real([1]) == [2.0]


@pytest.mark.parametrize("t0", [0.0, 3.0, -7.5, 1000.0])
def test_the_communication_point_may_differ_from_the_time_by_the_tolerance(t0):
    tolerance = TIME_TOLERANCE * max(1.0, abs(t0))
    s = initialized(t0=t0)
    assert s.do_step(t0 + 0.9 * tolerance, 0.5) and s.time == t0 + 0.9 * tolerance + 0.5
    t = s.time
    assert s.do_step(t - 0.9 * tolerance, 0.5) and errors(s) == []
    t = s.time
    assert s.do_step(t + 1.5 * tolerance, 0.5) is False
    assert errors(s) == [
        f"doStep refused: currentCommunicationPoint = {t + 1.5 * tolerance!r} s is not the time of "
        f"Probe, {t!r} s (the start time or the end of its last step; tolerance "
        f"{TIME_TOLERANCE * max(1.0, abs(t)):.3g} s); a master continues from there, or restores an "
        f"earlier state with fmi2SetFMUstate first"
    ]
    assert s.time == t and s.do_step(t, 0.5)


def test_the_tolerance_is_relative_above_one_second():
    s = initialized(t0=1000.0)
    assert s.do_step(1000.0 + 5e-10, 0.5) and errors(s) == []  # 1e-12*1000 = 1e-9
    s = initialized(t0=0.5)
    assert s.do_step(0.5 + 5e-13, 0.5) and errors(s) == []
    assert s.do_step(1.0 + 5e-12, 0.5) is False and "tolerance 1e-12 s" in errors(s)[0]


@pytest.mark.parametrize(
    "t, h, reason",
    [
        (0.0, 0.0, "invalid communication step size 0.0 s: it must be finite and > 0"),
        (0.0, -0.1, "invalid communication step size -0.1 s: it must be finite and > 0"),
        (0.0, math.nan, "invalid communication step size nan s: it must be finite and > 0"),
        (0.0, math.inf, "invalid communication step size inf s: it must be finite and > 0"),
        (
            0.5,
            0.1,
            "currentCommunicationPoint = 0.5 s is not the time of Probe, 0.0 s (the start time or the "
            "end of its last step; tolerance 1e-12 s); a master continues from there, or restores an "
            "earlier state with fmi2SetFMUstate first",
        ),
        (
            math.nan,
            0.1,
            "currentCommunicationPoint = nan s is not the time of Probe, 0.0 s (the start time or the "
            "end of its last step; tolerance 1e-12 s); a master continues from there, or restores an "
            "earlier state with fmi2SetFMUstate first",
        ),
    ],
)
def test_a_step_with_invalid_arguments_is_refused(t, h, reason):
    s = initialized()
    before = s._get_fmu_state()
    assert s.do_step(t, h) is False
    assert errors(s) == ["doStep refused: " + reason]
    assert s._get_fmu_state() == before and s.do_step(0.0, 0.1) and s.time == 0.1


def test_a_step_whose_end_is_not_finite_is_refused():
    s = initialized(t0=1.5e308)
    assert s.do_step(1.5e308, 1e308) is False
    assert errors(s) == [
        "doStep refused: the end of the step, 1.5e+308 + 1e+308 s, is not a finite time"
    ]
    assert s.time == 1.5e308 and s.do_step(1.5e308, 1e292) and s.time > 1.5e308


def test_the_tolerance_itself_is_accepted():
    s = initialized()
    assert TIME_TOLERANCE == 1e-12 and s.do_step(1e-12, 0.5) and s.time == 0.5 + 1e-12
    t0 = 2.0**940 / 1e-12  # 1e-12*t0 is 2**940, a multiple of t0's ulp: t0 + tolerance is exact
    tolerance = TIME_TOLERANCE * t0
    assert tolerance == 2.0**940 and (t0 + tolerance) - t0 == tolerance
    s = initialized(t0=t0)
    assert s.do_step(t0 + tolerance, sys.float_info.max) is False  # refused for its end only
    assert errors(s) == [
        f"doStep refused: the end of the step, {t0 + tolerance!r} + {sys.float_info.max!r} s, is "
        "not a finite time"
    ]
    assert s.do_step(t0 + tolerance, 1e290) and len(errors(s)) == 1


def test_a_step_before_initialization_is_refused():
    s = started()
    assert s.do_step(0.0, 0.1) is False
    assert errors(s) == [
        "doStep refused: Probe is not initialized (fmi2ExitInitializationMode has not succeeded)"
    ]
    s.exit_initialization_mode()
    assert s.do_step(0.0, 0.1) and len(errors(s)) == 1


def test_a_step_whose_outputs_come_out_non_finite_fails_and_restores_them():
    s = initialized(u=2.0)
    assert s.do_step(0.0, 0.5)
    s.set_real([VR["u"]], [1e308])
    s.get_real([VR["x"]])  # not y: no failure yet
    assert errors(s) == []
    assert s.do_step(0.5, 0.5) is False
    assert errors(s) == [
        "Probe: non-finite outputs y = inf, x = inf at t = 1.0 s (fmi2DoStep), from the inputs "
        "u = 1e+308, w = 0.0; the outputs keep their values from the last successful fmi2DoStep (the start values "
        "before it). Remedy: smaller inputs (last step 0.5 s)."
    ]
    assert s.get_real([VR["y"], VR["x"]]) == [4.0, 2.25] and len(errors(s)) == 1


def test_outputs_that_come_out_non_finite_after_a_step_fail_it():
    s = initialized(Source, a=1e200)
    assert s.do_step(0.0, 0.5) is False
    assert errors(s) == [
        "Source: non-finite output z = inf at t = 0.5 s (fmi2DoStep), with the parameters a = 1e+200 "
        "m/s; the outputs keep their values from the last successful fmi2DoStep (the start values "
        "before it)."
    ]
    assert s.get_real([1, 2]) == [0.0, 0.0] and s.do_step(0.5, 0.5) is False


def test_slaves_with_one_real_output_or_none_step():
    s = initialized(Plain)
    s.set_real([0], [1e308])
    assert s.do_step(0.0, 0.5) and s.get_real([1]) == [1e308]
    s = initialized(Counter, n0=4)
    assert s.do_step(0.0, 0.5) and s.get_integer([1]) == [5] and errors(s) == []


def test_a_slave_with_one_real_output_fails_when_it_is_not_finite():
    class Overflowing(Plain):
        def compute_outputs(self):
            self.y = self.u * 1e10

    s = initialized(Overflowing)
    s.set_real([0], [1e300])
    assert s.do_step(0.0, 0.5) is False
    assert errors(s) == [
        "Overflowing: non-finite output y = inf at t = 0.5 s (fmi2DoStep), from the inputs u = 1e+300; "
        "the outputs keep their values from the last successful fmi2DoStep (the start values before it)."
    ]


def test_finite_outputs_whose_sum_overflows_pass_the_check():
    s = initialized(k=1.0)
    s.set_real([VR["u"]], [1e308])
    assert s.get_real([VR["y"]]) == [1e308]
    assert s.do_step(0.0, 1.0) and s.get_real([VR["y"], VR["x"]]) == [1e308, 1e308]
    assert errors(s) == [] and s.do_step(1.0, 1e-300)
    s.set_real([VR["u"]], [-1.0])
    assert s.do_step(1.0 + 1e-300, 1.0) and s.get_real([VR["y"]]) == [-1.0] and errors(s) == []


def test_a_remedy_that_fails_is_left_out():
    class NoRemedy(Probe):
        def remedy(self, step_size):
            raise ValueError("no idea")

    s = initialized(NoRemedy)
    s.set_real([VR["u"]], [1e308])
    assert s.do_step(0.0, 0.5) is False
    assert errors(s) == [
        "NoRemedy: non-finite outputs y = inf, x = inf at t = 0.5 s (fmi2DoStep), from the inputs "
        "u = 1e+308, w = 0.0; the outputs keep their values from the last successful fmi2DoStep (the "
        "start values before it)."
    ]


def test_an_arithmetic_error_in_the_outputs_before_a_step_fails_it_unstepped():
    s = initialized()
    assert s.do_step(0.0, 0.5)
    s.set_real([VR["w"]], [-1.0])
    assert s.do_step(0.5, 0.5) is False
    assert errors(s) == [
        "Probe: the outputs cannot be computed at t = 0.5 s (fmi2DoStep): ValueError: math domain "
        f"error (in test_slave_base.py:{ROOT_LINE}, _root), from the inputs u = 0.5, w = -1.0; the "
        "outputs keep their values from the last successful fmi2DoStep (the start values before "
        "it). Remedy: smaller inputs (last step 0.5 s)."
    ]
    assert s.time == 0.5 and s.get_integer([VR["count"]]) == [1]  # step() not called
    assert s.get_real([VR["x"], VR["r"]]) == [0.75, 0.0]


def test_an_arithmetic_error_in_a_step_fails_it():
    s = initialized(Broken)
    s.set_real([VR["u"]], [4.0])
    assert s.do_step(0.0, 0.5) and s.get_real([VR["x"], VR["y"]]) == [2.0, 8.0]
    s.set_real([VR["u"]], [-1.0])
    assert s.do_step(0.5, 0.5) is False
    assert errors(s) == [
        "Broken: the outputs cannot be computed at t = 0.5 s (fmi2DoStep): ValueError: math domain "
        f"error (in test_slave_base.py:{ROOT_LINE}, _root), from the inputs u = -1.0, w = 0.0; the "
        "outputs keep their values from the last successful fmi2DoStep (the start values before "
        "it). Remedy: smaller inputs (last step 0.5 s)."
    ]
    assert s.time == 0.5 and s.get_real([VR["x"], VR["y"]]) == [2.0, 8.0]
    assert s.do_step(0.5, 0.5) is False and "error state (Broken: the outputs" in errors(s)[-1]


def test_an_exception_in_a_step_is_an_internal_error():
    s = initialized(Faulty)
    assert s.do_step(0.0, 0.5) is False
    (message,) = errors(s)
    assert message.startswith(
        "Faulty (p): internal error in fmi2DoStep: Traceback (most recent call last): | "
    )
    assert message.endswith("RuntimeError: step broke") and s.do_step(0.0, 0.5) is False


def test_an_event_ends_the_step_only_when_asked_to():
    s = initialized()
    s.event = 0.2
    assert s.do_step(0.0, 0.5) and (s.time, s.step_event, s.returned_early) == (0.5, None, False)
    s.report_events = True
    assert s.do_step(0.5, 0.5) and (s.time, s.step_event, s.returned_early) == (1.0, 0.2, False)
    s.stop_at_events = True
    s.event = 1.3
    assert s.do_step(1.0, 0.5) and (s.time, s.step_event, s.returned_early) == (1.3, 1.3, True)
    s.event = 1.8  # at the end of the step: no early return
    assert s.do_step(1.3, 0.5) and (s.time, s.step_event, s.returned_early) == (1.8, 1.8, False)
    s.event = None
    assert s.do_step(1.8, 0.5) and (s.time, s.step_event, s.returned_early) == (2.3, None, False)


def test_stops_at_an_event_within_the_step():
    s = new()
    s.stop_at_events = True
    assert s.stops_at(1.0, 0.5, 1.25) and s.stops_at(1.0, 0.5, 1.0)
    assert not s.stops_at(1.0, 0.5, 1.5) and not s.stops_at(1.0, 0.5, None)
    s.stop_at_events = False
    assert not s.stops_at(1.0, 0.5, 1.25)


@pytest.mark.parametrize("t, resolution", [(0.0, 1e-9), (0.5, 1e-9), (-4.0, 4e-9), (1e3, 1e-6)])
def test_the_event_resolution_is_relative_above_one_second(t, resolution):
    assert Slave.event_resolution(t) == pytest.approx(resolution, rel=1e-15)


# ---- FMU state -------------------------------------------------------------------------------


def test_a_state_restores_the_instance_exactly():
    s = initialized(k=3.0, u=1.0)
    assert s.do_step(0.0, 0.5)
    state, expected = s._get_fmu_state(), probe_state(s)
    assert state["format"] == state_codec.STATE_FORMAT and state["model"] == "Probe"
    assert state["build"] == "contactfmu"
    s.set_real([VR["u"]], [-2.0])
    assert s.do_step(0.5, 0.5) and probe_state(s) != expected
    s._set_fmu_state(state)
    assert probe_state(s) == expected and s.time == 0.5
    assert s.do_step(0.5, 0.5) and s.get_real([VR["x"]]) == [0.25 + 1.5 + 1.5] and errors(s) == []
    # into an instance that is only instantiated: it continues as the one the state came from
    fresh = new()
    fresh._set_fmu_state(Probe._fmu_state_from_bytes(Probe._fmu_state_to_bytes(state)))
    assert probe_state(fresh) == expected and fresh._initialized
    assert fresh.do_step(0.5, 0.5) and fresh.get_real([VR["x"]]) == [3.25] and errors(fresh) == []


def test_a_state_of_plain_values_is_captured_as_it_is_and_restored_without_decoding():
    """fmi2GetFMUstate of a slave whose values are all plain (state.kept) gives a CapturedState
    that shares them; restored, it drops the attributes set since. A slave that holds a list (the
    Probe) gets a plain dict, encoded (state.encode_all), restored through the checks; so does a
    state that went through bytes."""
    s = initialized(Plain, u=1.5)
    assert s.do_step(0.0, 0.5)
    state = s._get_fmu_state()
    expected = dict(state["values"])
    assert type(state) is CapturedState and state["values"]["y"] == 1.5
    assert all(v is s.__dict__[k] for k, v in state["values"].items())
    s.later = 2.0  # set after the state was taken
    s.set_real([0], [-2.0])
    assert s.do_step(0.5, 0.5) and s.get_real([1]) == [-2.0]
    s._set_fmu_state(state)
    assert s._get_fmu_state()["values"] == expected and not hasattr(s, "later")
    assert s.get_real([1]) == [1.5] and s.time == 0.5 and errors(s) == []
    through = Plain._fmu_state_from_bytes(Plain._fmu_state_to_bytes(state))
    assert type(through) is dict and through["values"] == state_codec.jsonable(state["values"])
    s.set_real([0], [-2.0])
    s.later = 3.0
    s._set_fmu_state(through)
    assert s._get_fmu_state()["values"] == expected and errors(s) == []
    assert not hasattr(s, "later")
    probe = initialized(Probe, k=3.0)
    listed = probe._get_fmu_state()
    assert type(listed) is dict and type(listed["values"]["_p"]) is list
    assert listed["values"]["_p"] is not probe._p and listed["values"]["_p"] == probe._p


def test_a_state_recovers_an_instance_from_error_state():
    s = initialized()
    state = s._get_fmu_state()
    s.set_real([VR["u"]], [1e308])
    assert s.do_step(0.0, 0.5) is False and s.do_step(0.5, 0.5) is False
    s._set_fmu_state(state)
    assert s.do_step(0.0, 0.5) and s.time == 0.5 and len(errors(s)) == 2


def test_a_state_is_sealed_json():
    """Serialized, a state is its JSON, sealed: the state as it is in memory, its tuples of plain
    values (kept as they are there) encoded (state.jsonable)."""
    s = initialized()
    state = s._get_fmu_state()
    assert type(state["values"]["_good"]) is tuple  # (the last good outputs, kept as they are)
    data = Probe._fmu_state_to_bytes(state)
    expected = {**state, "values": state_codec.jsonable(state["values"])}
    assert expected["values"]["_good"] == {"__tuple__": list(state["values"]["_good"])}
    assert json.loads(state_codec.unseal(data).decode("utf-8")) == expected
    assert Probe._fmu_state_from_bytes(data) == expected


def test_a_state_of_another_model_or_build_is_refused_and_changes_nothing():
    s = initialized(k=3.0)
    before = s._get_fmu_state()
    other = new(Plain)._get_fmu_state()
    rebuilt = {**before, "build": "cfmu_Probe_0123"}
    named = new(Counter)._get_fmu_state()
    for state, problem in [
        (other, "a state of Plain, not of Probe"),
        (
            rebuilt,
            "a state of another build of Probe (cfmu_Probe_0123; this FMU: contactfmu)",
        ),
        (named, "a state of StepCounter, not of Probe"),
        ({**before, "format": "other"}, "not an FMU state of a contactfmu FMU"),
        ({**before, "values": [1.0]}, "not an FMU state of a contactfmu FMU"),
        ([before], "not an FMU state of a contactfmu FMU"),
        (None, "not an FMU state of a contactfmu FMU"),
    ]:
        s._set_fmu_state(state)
        assert errors(s)[-1] == (
            f"fmi2SetFMUstate refused: {problem}; the instance is left as it was"
        )
        assert s._get_fmu_state() == before
    assert len(errors(s)) == 7 and s.do_step(0.0, 0.5)
    counter = initialized(Counter)
    counter._set_fmu_state(named)
    assert errors(counter) == []


def test_a_state_that_cannot_be_decoded_or_sets_infrastructure_is_refused():
    s = initialized()
    before = s._get_fmu_state()
    foreign = {**before, "values": {**before["values"], "p": {"__object__": "json:JSONDecoder"}}}
    infra = {**before, "values": {**before["values"], "log_queue": []}}
    number_key = {**before, "values": {**before["values"], 5: 1.0}}
    s._set_fmu_state(foreign)
    assert errors(s)[-1].startswith("fmi2SetFMUstate refused: the state cannot be restored: ")
    assert errors(s)[-1].endswith("; the instance is left as it was")
    for state in (infra, number_key):
        s._set_fmu_state(state)
        assert errors(s)[-1] == (
            "fmi2SetFMUstate refused: the state cannot be restored: it sets attributes that are not "
            "state; the instance is left as it was"
        )
    assert s._get_fmu_state() == before and len(s.log_queue) == 3 and s.do_step(0.0, 0.5)


def test_a_state_that_cannot_be_captured_is_refused_and_its_use_too():
    s = initialized()
    s.helper = lambda: None  # not a state value
    state = s._get_fmu_state()
    (message,) = errors(s)
    assert message.startswith("fmi2GetFMUstate: the state of Probe cannot be captured: ")
    assert state == {"__invalid__": message}
    assert Probe._fmu_state_to_bytes(state) == b"\0" + message.encode("utf-8")
    other = initialized()
    other._set_fmu_state(state)
    assert errors(other) == [f"fmi2SetFMUstate refused: {message}; the instance is left as it was"]


def test_an_unusable_state_serializes_as_nul_and_its_reason():
    assert Probe._fmu_state_to_bytes({"__invalid__": "why \ud800"}) == b"\0why ?"
    assert Probe._fmu_state_to_bytes({"__invalid__": 3}) == b"\x003"
    data = Probe._fmu_state_to_bytes({"format": 1, "values": {1, 2}})
    assert data == (
        b"\0fmi2SerializeFMUstate: the FMU state cannot be serialized: Object of type set is not "
        b"JSON serializable"
    )


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"garbage", None),
        (
            state_codec.seal(b"not json"),
            "not a serialized FMU state of a contactfmu FMU (JSONDecodeError: ",
        ),
        (
            state_codec.seal(b"\xff\xfe"),
            "not a serialized FMU state of a contactfmu FMU (UnicodeDecodeError: ",
        ),
        (state_codec.seal(b"[1, 2]"), "not an FMU state of a contactfmu FMU"),
    ],
)
def test_bytes_that_are_not_a_state_of_this_fmu_are_refused(data, problem):
    state = Probe._fmu_state_from_bytes(data)
    reason = state["__invalid__"]
    if problem is None:  # the checksum's reason
        with pytest.raises(state_codec.Unsealed) as exc:
            state_codec.unseal(data)
        assert reason == f"fmi2DeSerializeFMUstate refused: {exc.value}"
    else:
        assert reason.startswith(f"fmi2DeSerializeFMUstate refused: {problem}")
    assert list(state) == ["__invalid__"]
    s = initialized()
    s._set_fmu_state(state)
    assert errors(s) == [f"fmi2SetFMUstate refused: {reason}; the instance is left as it was"]
    assert Probe._fmu_state_to_bytes(state) == b"\0" + reason.encode("utf-8")


def test_serialized_states_of_another_model_or_altered_are_refused():
    plain = Plain._fmu_state_to_bytes(new(Plain)._get_fmu_state())
    assert Probe._fmu_state_from_bytes(plain) == {
        "__invalid__": "fmi2DeSerializeFMUstate refused: a state of Plain, not of Probe"
    }
    good = Probe._fmu_state_to_bytes(initialized()._get_fmu_state())
    altered = good[:-3] + bytes([good[-3] ^ 1]) + good[-2:]
    reason = Probe._fmu_state_from_bytes(altered)["__invalid__"]
    with pytest.raises(state_codec.Unsealed) as exc:
        state_codec.unseal(altered)
    assert reason == f"fmi2DeSerializeFMUstate refused: {exc.value}"


def test_an_exception_while_setting_a_state_is_an_internal_error():
    s = initialized()
    state = s._get_fmu_state()

    def broken(state):
        raise KeyError("lost")

    s._state_problem = broken
    s._set_fmu_state(state)
    (message,) = errors(s)
    assert message.startswith(
        "Probe (p): internal error in fmi2SetFMUstate: Traceback (most recent call last): | "
    )
    assert message.endswith("KeyError: 'lost'")


# ---- messages ----------------------------------------------------------------------------------


def test_a_refusal_is_an_error_message_of_its_category():
    s = initialized()
    s.set_real([99], [1.0])
    (record,) = s.log_queue
    assert (record.status, record.category) == (Fmi2Status.error, "logStatusError")


def test_a_deserialized_state_is_accepted_whatever_its_legitimate_contents_and_refused_edited():
    """A state whose list grew, whose published rate overflowed to inf and which holds a value
    that appears only after initialization restores into another instance; the same bytes with a
    Real variable made a string, a parameter out of its range or an attribute nan are refused
    with the reason."""
    s = initialized(k=3.0, u=1.0)
    assert s.do_step(0.0, 0.5)
    s.der_y = math.inf  # k*der_u overflowed
    s._p = s._p + [1.5]  # a list that changes its length
    s.later = {"motion": [0.5, (1.0, None)]}  # set after initialization
    state = s._get_fmu_state()
    good = Probe._fmu_state_from_bytes(Probe._fmu_state_to_bytes(state))
    assert "__invalid__" not in good
    fresh = new()
    fresh._set_fmu_state(good)
    assert errors(fresh) == [] and fresh.later == {"motion": [0.5, (1.0, None)]}
    for edit, reason in [
        (("y", "3"), "y = '3' is not of type Real"),
        (("k", 11.0), "k = 11.0"),
        (("later", float("nan")), "later = nan"),
    ]:
        values = state_codec.jsonable({**state["values"], edit[0]: edit[1]})
        edited = Probe._fmu_state_to_bytes({**state, "values": values})
        refused = Probe._fmu_state_from_bytes(edited)
        assert reason in refused.get("__invalid__", ""), (edit, refused)
