"""The FMI 3.0 face of a slave (fmi/fmi3.py, Fmi3Slave) driven in-process, without pythonfmu3's
library: the log records it queues (status, the category the status implies, the message),
doStep's status (fmi3OK, fmi3Discard, fmi3Error when the step logged an error), the independent
variable time read with fmi3GetFloat64 at the value reference after the table's, the Int32 and
Float64 calls answered by the FMI 2.0 methods, and fmi3UpdateDiscreteStates (no event)."""

import pytest

from contactfmu.fmi import fmi3
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
