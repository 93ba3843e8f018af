"""The master's FMI 3.0 face (cosim/fmi3.py: Fmi3Slave, normalize) with a stand-in for fmpy's
FMU3Slave and its library: the calls the face makes for the FMI 2.0 calls of the master and their
arguments (module docstring: the value count passed twice, Boolean through a buffer of one-byte
fmi3Boolean, fmi3DoStep's flags kept in ``last_step``, setupExperiment kept for
fmi3EnterInitializationMode, each instance's messages to its own log as (status, message)), the
statuses returned as they are (fmi3Status has the numbers of fmi2Status). The same calls on the
real FMI 3.0 FMUs: tests/cosim/test_fmi3_master.py."""

import ctypes
from ctypes import c_double, c_int, c_uint
from types import SimpleNamespace

import fmpy.fmi3
import pytest

from contactfmu.cosim.fmi3 import TYPES, Fmi3Slave, normalize


class Dll:
    """fmpy's ctypes functions of an FMI 3.0 library: each records its call and returns the
    status set in ``status`` (fmi3Warning unless told)."""

    def __init__(self, calls):
        self.calls, self.status = calls, 1
        self.step = (False, False, False, 0.0)  # the flags fmi3DoStep writes
        self.fmi3GetFMUState, self.fmi3SetFMUState, self.fmi3FreeFMUState = (
            object(),
            object(),
            object(),
        )

    def _record(self, name, *args):
        self.calls.append((name, *args))
        return self.status

    def fmi3GetFloat64(self, c, vr, n, values, n_values):
        for i in range(n_values):
            values[i] = 10.0 + i
        return self._record("fmi3GetFloat64", c, vr, n, values, n_values)

    def fmi3SetFloat64(self, c, vr, n, values, n_values):
        return self._record("fmi3SetFloat64", c, vr, n, values, n_values)

    def fmi3GetInt32(self, c, vr, n, values, n_values):
        for i in range(n_values):
            values[i] = 20 + i
        return self._record("fmi3GetInt32", c, vr, n, values, n_values)

    def fmi3SetInt32(self, c, vr, n, values, n_values):
        return self._record("fmi3SetInt32", c, vr, n, values, n_values)

    def fmi3GetBoolean(self, c, vr, n, values, n_values):
        for i in range(n_values):
            values[i] = i % 2 == 0
        return self._record("fmi3GetBoolean", c, vr, n, ctypes.sizeof(values) // n, n_values)

    def fmi3SetBoolean(self, c, vr, n, values, n_values):
        # the values as the library reads them: the buffer's bytes, one per value
        data = list(bytes(values))
        return self._record("fmi3SetBoolean", c, vr, n, data, n_values)

    def fmi3DoStep(self, c, t, h, no_set_prior, event, terminate, early, last):
        self.calls.append(("fmi3DoStep", c, t, h, no_set_prior))
        event._obj.value, terminate._obj.value, early._obj.value, last._obj.value = self.step
        return self.status


class FMU3Slave:
    """fmpy's FMU3Slave: records what it was made with and the calls it is given."""

    def __init__(self, **kwargs):
        self.made = kwargs
        self.calls = []
        self.dll = Dll(self.calls)
        self.component = "instance 7"
        self.step = (False, False, False, 0.0)

    def instantiate(self, **kwargs):
        self.calls.append(("instantiate", kwargs))
        self.logMessage = kwargs.get("logMessage")

    def enterInitializationMode(self, **kwargs):
        self.calls.append(("enterInitializationMode", kwargs))

    def exitInitializationMode(self):
        self.calls.append(("exitInitializationMode",))

    def doStep(self, t, h, noSetFMUStatePriorToCurrentPoint=True):
        self.calls.append(("doStep", t, h, noSetFMUStatePriorToCurrentPoint))
        return self.step

    def getFloat64(self, vr):
        self.calls.append(("getFloat64", vr))
        return [1.5] * len(vr)

    def setFloat64(self, vr, values):
        self.calls.append(("setFloat64", vr, values))

    def getInt32(self, vr):
        self.calls.append(("getInt32", vr))
        return [3] * len(vr)

    def setInt32(self, vr, values):
        self.calls.append(("setInt32", vr, values))

    def getBoolean(self, vr):
        self.calls.append(("getBoolean", vr))
        return [True] * len(vr)

    def setBoolean(self, vr, values):
        self.calls.append(("setBoolean", vr, values))

    def terminate(self):
        self.calls.append(("terminate",))

    def freeInstance(self):
        self.calls.append(("freeInstance",))


@pytest.fixture
def face(monkeypatch):
    """An Fmi3Slave 'gap' (early return allowed) over the stand-in FMU3Slave, and its log."""
    monkeypatch.setattr(fmpy.fmi3, "FMU3Slave", FMU3Slave)
    log = []
    slave = Fmi3Slave("{guid}", "/unzipped", "ElastoGap", "gap", log, True)
    return slave, log


def test_the_face_makes_the_fmu3slave_of_the_instance(face):
    slave, log = face
    assert slave.fmu.made == dict(
        guid="{guid}", unzipDirectory="/unzipped", modelIdentifier="ElastoGap", instanceName="gap"
    )
    assert slave.log is log and slave.early_return is True
    # no step yet: no event, no early return, no time reached
    assert slave.last_step == (False, False, None)
    assert slave.fmu.calls == []


def test_instantiate_passes_the_logging_flag_and_the_early_return_permission(face, monkeypatch):
    slave, _ = face
    slave.instantiate()  # FMU2Slave's default: no debug logging
    (name, kwargs), *rest = slave.fmu.calls
    assert (name, rest) == ("instantiate", [])
    assert not kwargs["loggingOn"]  # as fmpy reads it: fmi3Boolean(loggingOn)
    assert kwargs["earlyReturnAllowed"] is True
    assert set(kwargs) == {"loggingOn", "earlyReturnAllowed", "logMessage"}
    assert slave.component == "instance 7"
    quiet = Fmi3Slave("{guid}", "/unzipped", "ElastoGap", "gap", [], False)
    quiet.instantiate(callbacks=object(), loggingOn=True)
    assert quiet.fmu.calls[0][1]["loggingOn"] is True
    assert quiet.fmu.calls[0][1]["earlyReturnAllowed"] is False


def test_the_fmus_messages_go_to_the_instances_log_as_status_and_text(face):
    slave, log = face
    slave.instantiate(loggingOn=False)
    message = slave.fmu.calls[0][1]["logMessage"]
    message(None, 3, b"logStatusError", b"gap: contact lost at s_rel = 0.1 m")
    message(None, 1, b"logStatusWarning", "\u00e9t\u00e9 ".encode() + b"\xff\xfe")
    message(None, 0, b"logAll", None)  # no text
    message(None, 0, b"logAll", b"")
    assert log == [
        (3, "gap: contact lost at s_rel = 0.1 m"),
        (1, "\u00e9t\u00e9 \ufffd\ufffd"),  # invalid UTF-8 replaced, not an exception
        (0, ""),
        (0, ""),
    ]


def test_each_fmi2_function_is_its_fmi3_function_with_the_value_count_twice(face):
    slave, _ = face
    slave.instantiate()
    f, c, calls = slave._functions, slave.component, slave.fmu.calls
    del calls[:]
    vr = (c_uint * 3)(4, 9, 2)
    reals = (c_double * 3)(1.5, -2.0, 0.25)
    ints = (c_int * 3)(7, -1, 0)
    for name, values, fmi3 in (
        ("fmi2SetReal", reals, "fmi3SetFloat64"),
        ("fmi2GetReal", reals, "fmi3GetFloat64"),
        ("fmi2SetInteger", ints, "fmi3SetInt32"),
        ("fmi2GetInteger", ints, "fmi3GetInt32"),
    ):
        assert f[name](c, vr, 3, values) == 1, name  # the fmi3 status as the fmi2 one
        assert calls.pop() == (fmi3, c, vr, 3, values, 3)
    assert list(reals) == [10.0, 11.0, 12.0] and list(ints) == [20, 21, 22]
    slave.fmu.dll.status = 3  # fmi3Error: fmi2Error
    assert f["fmi2SetInteger"](c, vr, 3, ints) == 3
    assert calls == [("fmi3SetInt32", c, vr, 3, ints, 3)]
    assert (f["fmi2GetFMUstate"], f["fmi2SetFMUstate"], f["fmi2FreeFMUstate"]) == (
        slave.fmu.dll.fmi3GetFMUState,
        slave.fmu.dll.fmi3SetFMUState,
        slave.fmu.dll.fmi3FreeFMUState,
    )


def test_booleans_go_through_a_buffer_of_one_byte_fmi3_booleans(face):
    slave, _ = face
    slave.instantiate()
    f, c, calls = slave._functions, slave.component, slave.fmu.calls
    del calls[:]
    vr = (c_uint * 3)(4, 9, 2)
    # fmi2Boolean is an int: any non-zero value is true
    assert f["fmi2SetBoolean"](c, vr, 3, (c_int * 3)(1, 0, 5)) == 1
    assert calls.pop() == ("fmi3SetBoolean", c, vr, 3, [1, 0, 1], 3)
    out = (c_int * 3)(7, 7, 7)
    assert f["fmi2GetBoolean"](c, vr, 3, out) == 1
    assert calls.pop() == ("fmi3GetBoolean", c, vr, 3, 1, 3)  # one byte a value
    assert list(out) == [1, 0, 1]
    slave.fmu.dll.status = 2  # fmi3Discard: fmi2Discard
    assert f["fmi2SetBoolean"](c, vr, 1, (c_int * 1)(0)) == 2
    assert calls == [("fmi3SetBoolean", c, vr, 1, [0], 1)]


def test_fmi2_do_step_keeps_the_flags_of_fmi3_do_step(face):
    slave, _ = face
    slave.instantiate()
    do_step, c, dll = slave._functions["fmi2DoStep"], slave.component, slave.fmu.dll
    del slave.fmu.calls[:]
    # eventHandlingNeeded, terminateSimulation, earlyReturn, lastSuccessfulTime
    dll.step = (False, False, True, 0.3125)
    assert do_step(c, 0.25, 0.5, 1) == 1
    assert slave.fmu.calls == [("fmi3DoStep", c, 0.25, 0.5, 1)]
    assert slave.last_step == (False, True, 0.3125)
    dll.step, dll.status = (True, True, False, 0.75), 0
    assert do_step(c, 0.3125, 0.4375, 0) == 0
    assert slave.fmu.calls[-1] == ("fmi3DoStep", c, 0.3125, 0.4375, 0)
    assert slave.last_step == (True, False, 0.75)


def test_setup_experiment_is_kept_for_enter_initialization_mode(face):
    slave, _ = face
    slave.setupExperiment(startTime=2.0, stopTime=5.0, tolerance=1e-6)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    slave.setupExperiment()  # FMU2Slave's defaults: from 0, no stop time
    slave.enterInitializationMode()
    slave.setupExperiment(startTime=0.0, stopTime=1.0)
    slave.enterInitializationMode()
    assert slave.fmu.calls == [
        ("enterInitializationMode", dict(startTime=2.0, stopTime=5.0)),
        ("exitInitializationMode",),
        ("enterInitializationMode", dict(startTime=0.0, stopTime=None)),
        ("enterInitializationMode", dict(startTime=0.0, stopTime=1.0)),
    ]


def test_without_setup_experiment_the_fmu_starts_at_zero_without_stop_time(face):
    slave, _ = face
    slave.enterInitializationMode()
    assert slave.fmu.calls == [("enterInitializationMode", dict(startTime=0.0, stopTime=None))]


def test_the_fmu2slave_value_calls_are_the_fmu3slave_ones(face):
    slave, _ = face
    assert slave.getReal([3, 1]) == [1.5, 1.5]
    slave.setReal([3], [2.5])
    assert slave.getInteger([4]) == [3]
    slave.setInteger([4, 5], [1, 2])
    assert slave.getBoolean([6]) == [True]
    slave.setBoolean([6, 7], [True, False])
    assert slave.fmu.calls == [
        ("getFloat64", [3, 1]),
        ("setFloat64", [3], [2.5]),
        ("getInt32", [4]),
        ("setInt32", [4, 5], [1, 2]),
        ("getBoolean", [6]),
        ("setBoolean", [6, 7], [True, False]),
    ]


def test_do_step_passes_its_arguments_and_keeps_the_flags(face):
    slave, _ = face
    slave.fmu.step = (False, False, True, 0.375)  # (event, terminate, early, last)
    assert slave.doStep(0.25, 0.5) is None
    assert slave.last_step == (False, True, 0.375)
    slave.fmu.step = (True, False, False, 1.0)
    slave.doStep(0.375, 0.625, noSetFMUStatePriorToCurrentPoint=False)
    assert slave.last_step == (True, False, 1.0)
    # FMU2Slave.doStep's default: no state before the communication point is restored
    assert slave.fmu.calls == [("doStep", 0.25, 0.5, True), ("doStep", 0.375, 0.625, False)]
    slave.terminate()
    slave.freeInstance()
    assert slave.fmu.calls[2:] == [("terminate",), ("freeInstance",)]


def test_normalize_names_the_fmi3_types_as_fmi2_does():
    names = ["Float64", "Int32", "Boolean", "Enumeration", "Float32"]
    md = SimpleNamespace(modelVariables=[SimpleNamespace(type=t) for t in names])
    normalize(md)
    assert [v.type for v in md.modelVariables] == [
        "Real",
        "Integer",
        "Boolean",
        "Enumeration",
        "Float32",
    ]
    assert TYPES == {"Float64": "Real", "Int32": "Integer"}
