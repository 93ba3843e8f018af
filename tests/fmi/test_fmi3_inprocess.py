"""The FMI 3.0 face of a slave (fmi/fmi3.py, Fmi3Slave) driven in-process, without pythonfmu3's
library: the log records it queues (status, the category the status implies, the message),
doStep's status (fmi3OK, fmi3Discard, fmi3Error when the step logged an error), the independent
variable time read with fmi3GetFloat64 at the value reference after the table's, the Int32 and
Float64 calls answered by the FMI 2.0 methods, fmi3UpdateDiscreteStates (no event), and the
status shim's channel (shim.CONTROL_VR): the importer's permissions set as Booleans, the step's
early return and event read back as Booleans."""

import pytest

from contactfmu.fmi import fmi3
from contactfmu.fmi.shim import (
    CONTROL_VR,
    EARLY_RETURN_ALLOWED,
    EVENT_IN_STEP,
    EVENT_MODE_USED,
    RETURNED_EARLY,
)
from contactfmu.fmi.slave import Slave
from contactfmu.fmi.variables import inp, out, parameter


class Probe(Slave):
    """y = n * u; x integrates u over each step."""

    VARIABLES = [
        parameter("n", 3, "1", "a gain"),  # vr 0
        inp("u", 0.0, "m", "input"),  # vr 1
        out("y", "m", "output", depends=("u",)),  # vr 2
        out("x", "m", "integral", start=0.0),  # vr 3; time: vr 4
    ]

    def compute_outputs(self):
        self.y = self.n * self.u

    def step(self, t, h):
        self.x += h * self.u


class Probe3(fmi3.Fmi3Slave, Probe):
    pass


def _initialized(**params):
    s = Probe3(instance_name="p", resources="/tmp")
    s.setup_experiment(0.0)
    s.enter_initialization_mode()
    for vr, value in params.items():
        s.set_int32([int(vr[1:])], [value])
    s.exit_initialization_mode()
    return s


@pytest.mark.parametrize(
    "status, category",
    [
        (fmi3.OK, "logAll"),
        (fmi3.WARNING, "logStatusWarning"),
        (fmi3.DISCARD, "logStatusDiscard"),
        (fmi3.ERROR, "logStatusError"),
        (fmi3.FATAL, "logStatusError"),
    ],
)
def test_a_message_is_queued_with_the_category_its_status_implies(status, category):
    s = Probe3(instance_name="p", resources="/tmp")
    s.log("hello", status)
    (record,) = s.log_queue
    assert (record.status, record.category, record.msg, record.debug) == (
        status,
        category,
        "hello",
        False,
    )
    assert type(record.status) is int


def test_a_named_category_and_debug_are_kept_and_ok_is_the_default_status():
    s = Probe3(instance_name="p", resources="/tmp")
    s.log("a", category="logStatusFatal", debug=True)
    s.log("b")
    first, second = s.log_queue
    assert (first.status, first.category, first.debug) == (fmi3.OK, "logStatusFatal", True)
    assert (second.status, second.category, second.msg, second.debug) == (
        fmi3.OK,
        "logAll",
        "b",
        False,
    )
    assert (fmi3.OK, fmi3.WARNING, fmi3.DISCARD, fmi3.ERROR, fmi3.FATAL) == (0, 1, 2, 3, 4)


def test_a_step_returns_ok_and_advances():
    s = _initialized(r0=2)
    s.set_float64([1], [4.0])
    result = s.do_step(0.0, 0.5)
    assert (result.status, result.terminateSimulation) == (fmi3.OK, False)
    assert s.get_float64([2, 3]) == [8.0, 2.0]
    assert s.get_int32([0]) == [2]


def test_a_refused_step_returns_error_but_an_earlier_error_does_not_count():
    s = Probe3(instance_name="p", resources="/tmp")  # not initialized: doStep is refused
    assert s.do_step(0.0, 0.1).status == fmi3.ERROR
    assert s.log_queue[-1].status == fmi3.ERROR and "doStep refused" in s.log_queue[-1].msg
    s = _initialized()
    s.log("an earlier error", fmi3.ERROR)  # logged before this step: the step is fine
    assert s.do_step(0.0, 0.1).status == fmi3.OK


def test_a_step_that_fails_without_an_error_message_is_discarded():
    class Quiet:
        log_queue = []

        def do_step(self, current_time, step_size):
            self.log_queue.append(
                fmi3.LogRecord(fmi3.WARNING, "logStatusWarning", "only a warning")
            )
            return False

    class Q(fmi3.Fmi3Slave, Quiet):
        pass

    assert Q().do_step(0.0, 1.0).status == fmi3.DISCARD
    # a record made without debug is no debug message
    assert fmi3.LogRecord(fmi3.WARNING, "logStatusWarning", "m").debug is False


def test_time_is_read_at_the_value_reference_after_the_table():
    s = _initialized()
    s.set_float64([1], [1.0])
    s.do_step(0.0, 0.25)
    assert s.get_float64([4]) == [0.25]
    assert s.get_float64([2, 4, 3]) == [3.0, 0.25, 0.25]  # time among the others, in place
    assert s.get_float64([3, 2]) == [0.25, 3.0]


def test_update_discrete_states_reports_no_event():
    d = _initialized().update_discrete_states()
    assert (
        d.discreteStatesNeedUpdate,
        d.terminateSimulation,
        d.nominalContinuousStatesChanged,
        d.valuesOfContinuousStatesChanged,
        d.nextEventTimeDefined,
        d.nextEventTime,
    ) == (False, False, False, False, False, 0.0)


def test_to_xml_is_the_fmi3_model_description():
    root = Probe3(instance_name="p", resources="/tmp").to_xml()
    assert root.get("fmiVersion") == "3.0"
    assert root.find("ModelVariables")[0].attrib["valueReference"] == "4"


def test_float64_without_time_is_the_fmi2_getter_of_the_same_batch():
    """fmi3GetFloat64 of value references other than time's is one fmi2GetReal call of the
    batch: the same values and the same messages, in the same order (a refused value reference,
    then the non-finite output)."""
    three, two = _initialized(r0=3), _initialized(r0=3)
    for s in (three, two):
        s.set_float64([1], [1e308])  # y = 3e308: not finite
    assert three.get_float64([2, 99, 3]) == two.get_real([2, 99, 3]) == [0.0, 0.0, 0.0]
    messages = [m.msg for m in three.log_queue]
    assert messages == [m.msg for m in two.log_queue] and len(messages) == 2
    assert messages[0] == "fmi3GetFloat64 refused: value reference 99 is not a variable of Probe3"
    assert messages[1].startswith("Probe3: non-finite output y = inf at t = 0.0 s (fmi3GetFloat64)")


# ---- the status shim's channel: the importer's permissions in, the step's end out ---------------


class Eventful(Slave):
    """An event at t = 0.25 in every step that contains it; a Boolean input and output."""

    HAS_EVENTS = True
    VARIABLES = [inp("on", False, "1", "a switch"), out("was", "1", "on", kind="Boolean")]

    def compute_outputs(self):
        self.was = self.on

    def step(self, t, h):
        return 0.25 if self.report_events and t < 0.25 < t + h else None


class Eventful3(fmi3.Fmi3Slave, Eventful):
    pass


def _eventful(*permissions):
    """An initialized Eventful3 given these permissions (earlyReturnAllowed, eventModeUsed) as
    the shim gives them after instantiation."""
    s = Eventful3(instance_name="e", resources="/tmp")
    s.set_boolean([CONTROL_VR + EARLY_RETURN_ALLOWED, CONTROL_VR + EVENT_MODE_USED], permissions)
    s.setup_experiment(0.0)
    s.enter_initialization_mode()
    s.exit_initialization_mode()
    return s


@pytest.mark.parametrize(
    "vrs, values, stop, report",
    [
        ([EARLY_RETURN_ALLOWED, EVENT_MODE_USED], [True, False], True, True),
        ([EARLY_RETURN_ALLOWED, EVENT_MODE_USED], [False, True], False, True),
        ([EVENT_MODE_USED, EARLY_RETURN_ALLOWED], [False, True], True, True),
        ([EARLY_RETURN_ALLOWED, EVENT_MODE_USED], [False, False], False, False),
        ([EARLY_RETURN_ALLOWED], [True], True, True),  # a permission not sent is not given
        ([EVENT_MODE_USED], [True], False, True),
        ([EARLY_RETURN_ALLOWED], [False], False, False),
    ],
)
def test_the_permissions_decide_whether_events_are_reported_and_stop_the_step(
    vrs, values, stop, report
):
    s = Eventful3(instance_name="e", resources="/tmp")
    s.set_boolean([CONTROL_VR + EARLY_RETURN_ALLOWED, CONTROL_VR + EVENT_MODE_USED], [True, True])
    s.set_boolean([CONTROL_VR + vr for vr in vrs], values)
    assert (s.stop_at_events, s.report_events) == (stop, report) and s.log_queue == []
    assert type(s.stop_at_events) is bool and type(s.report_events) is bool


@pytest.mark.parametrize(
    "permissions, end, flags",
    [
        ((True, True), 0.25, [True, True]),  # returned early at the event
        ((False, True), 0.5, [False, True]),  # reported, not returned at
        ((False, False), 0.5, [False, False]),
    ],
)
def test_the_step_s_end_is_read_on_the_channel(permissions, end, flags):
    s = _eventful(*permissions)
    assert s.do_step(0.0, 0.5).status == fmi3.OK and s.time == end
    vrs = [CONTROL_VR + RETURNED_EARLY, CONTROL_VR + EVENT_IN_STEP]
    assert s.get_boolean(vrs) == flags
    assert s.get_boolean(vrs[::-1]) == flags[::-1]
    assert s.get_boolean([CONTROL_VR + EARLY_RETURN_ALLOWED, CONTROL_VR + 9]) == [False, False]
    assert s.log_queue == []


def test_the_start_time_comes_on_the_channel_and_floats_below_it_are_the_model_s():
    """fmi3EnterInitializationMode's startTime reaches the slave as the Float64 at CONTROL_VR (the
    status shim sets it before entering initialization mode): its time starts there. A Float64
    below the channel is a model variable."""
    s = Probe3(instance_name="p", resources="/tmp")
    s.set_float64([CONTROL_VR], [2.5])
    assert s.time == 2.5 and s.log_queue == []
    s.set_float64([1], [4.0])  # u
    assert s.time == 2.5 and s.u == 4.0
    s.enter_initialization_mode()
    s.exit_initialization_mode()
    assert s.do_step(2.5, 0.5).status == fmi3.OK and s.time == 3.0 and s.x == 2.0


def test_booleans_below_the_channel_are_the_model_s():
    s = _eventful(True, True)
    s.set_boolean([0], [True])
    assert s.get_boolean([1, 0]) == [True, True] and s.get_boolean([]) == []
    s.set_boolean([1], [False])
    s.get_boolean([7])
    assert [m.msg for m in s.log_queue] == [
        "fmi3SetBoolean refused: was is an output and cannot be set",
        "fmi3GetBoolean refused: value reference 7 is not a variable of Eventful3",
    ]
    assert s.get_boolean([1]) == [True]
