"""The FMI 3.0 face of a slave: ``Fmi3Slave``, mixed in before a slave class (fmi.slave.Slave),
answers the calls of pythonfmu3's native library (0.3.4) with the slave's own FMI 2.0 methods,
so that one variable table and one physics serve both standards.

pythonfmu3's library finds the slave class in the entry script by a line ``class X(...Fmi3Slave...):``
and calls, on its instance: ``enter_initialization_mode`` (it does not pass the start time: the
status shim sets the Float64 CONTROL_VR to it first, which is ``setup_experiment(startTime)``
here), ``exit_initialization_mode``, ``do_step(t, h)`` (reads ``.status`` of the result),
``terminate``, ``get_/set_float64``, ``_int32``, ``_boolean``, ``_get_fmu_state``,
``_set_fmu_state``, the class's ``_fmu_state_to_bytes`` / ``_fmu_state_from_bytes``, and
``_get_log_queue``, whose messages must carry ``status``, ``category``, ``msg`` and ``debug``, and
``update_discrete_states`` (fmi3UpdateDiscreteStates).
fmi3Reset makes a new instance. A Python exception is fmi3Fatal; a getter or setter of
pythonfmu3's library can return nothing but fmi3OK or fmi3Fatal, so a refused set or get is logged
as an error, and the FMI 3.0 status shim (fmi3_status_shim.c) makes the call return fmi3Error.

Generic: names no component and no physical domain. Only the standard library is imported."""

from .model_description3 import in_fmi3_words, model_description, time_vr
from .shim import CONTROL_VR, EARLY_RETURN_ALLOWED, EVENT_IN_STEP, EVENT_MODE_USED, RETURNED_EARLY

OK, WARNING, DISCARD, ERROR, FATAL = range(5)  # fmi3Status (the same numbers as fmi2Status)


class LogRecord:
    """One message for pythonfmu3's library."""

    __slots__ = ("status", "category", "msg", "debug")

    def __init__(self, status, category, msg, debug=False):
        self.status, self.category, self.msg, self.debug = int(status), category, msg, debug


class StepResult:
    """What pythonfmu3's library reads from do_step: the status (and terminateSimulation)."""

    __slots__ = ("status", "terminateSimulation")

    def __init__(self, status):
        self.status, self.terminateSimulation = status, False


class DiscreteStates:
    """What pythonfmu3's library reads from update_discrete_states (field by field, leaving the
    host's variable unwritten where a field is missing): no further update, no event ahead."""

    discreteStatesNeedUpdate = False
    terminateSimulation = False
    nominalContinuousStatesChanged = False
    valuesOfContinuousStatesChanged = False
    nextEventTimeDefined = False
    nextEventTime = 0.0


class Fmi3Slave:
    """Mixin: ``class Model(Fmi3Slave, <the slave class>)``."""

    def log(self, msg, status=OK, category=None, debug=False):
        """Queue the message for pythonfmu3's library, the FMI 2.0 function and status names the
        slave writes replaced by FMI 3.0's (fmi2SetReal: fmi3SetFloat64, fmi2DoStep: fmi3DoStep)."""
        if category is None:
            category = {WARNING: "logStatusWarning", DISCARD: "logStatusDiscard"}.get(
                int(status), "logStatusError" if int(status) >= ERROR else "logAll"
            )
        self.log_queue.append(LogRecord(status, category, in_fmi3_words(msg), debug))

    def to_xml(self, model_options=None):
        return model_description(self)

    @classmethod
    def _fmu_state_to_bytes(cls, state):
        """The slave's bytes; those of a state that cannot be used (a NUL byte and the reason the
        status shim logs) with the reason in FMI 3.0's words."""
        data = super()._fmu_state_to_bytes(state)
        if data[:1] == b"\0":
            return b"\0" + in_fmi3_words(data[1:].decode("utf-8", "replace")).encode("utf-8")
        return data

    def do_step(self, current_time, step_size):
        queued = len(self.log_queue)
        done = super().do_step(current_time, step_size)
        if any(m.status >= ERROR for m in self.log_queue[queued:]):
            return StepResult(ERROR)
        return StepResult(OK if done else DISCARD)

    def update_discrete_states(self):
        """fmi3UpdateDiscreteStates: the event that ended the step is taken already (the state at
        an early return is the one just after it), so nothing is left to update."""
        return DiscreteStates()

    def get_float64(self, vrs):
        t = time_vr(self.variable_table())
        if t in vrs or CONTROL_VR in vrs:
            return [self.time if vr in (t, CONTROL_VR) else self.get_real([vr])[0] for vr in vrs]
        return self.get_real(vrs)

    # the status shim's channel (shim.CONTROL_VR): the importer's permissions in, the step's
    # end out
    def get_boolean(self, vrs):
        if vrs and vrs[0] >= CONTROL_VR:
            flags = {
                RETURNED_EARLY: self.returned_early,
                EVENT_IN_STEP: self.step_event is not None,
            }
            return [flags.get(vr - CONTROL_VR, False) for vr in vrs]
        return super().get_boolean(vrs)

    def set_boolean(self, vrs, values):
        if vrs and vrs[0] >= CONTROL_VR:
            allowed = dict(zip((vr - CONTROL_VR for vr in vrs), values))
            self.stop_at_events = bool(allowed.get(EARLY_RETURN_ALLOWED, False))
            self.report_events = self.stop_at_events or bool(allowed.get(EVENT_MODE_USED, False))
            return None
        return super().set_boolean(vrs, values)

    def set_float64(self, vrs, values):
        if vrs and vrs[0] >= CONTROL_VR:
            # the status shim's channel: fmi3EnterInitializationMode's startTime
            return self.setup_experiment(values[0])
        return self.set_real(vrs, values)

    def get_int32(self, vrs):
        return self.get_integer(vrs)

    def set_int32(self, vrs, values):
        return self.set_integer(vrs, values)
