"""The generic FMI 2.0 co-simulation slave every contactfmu FMU derives from.

A slave declares its FMI variables as a table (``VARIABLES``) of :class:`Var` rows made with
:func:`parameter`, :func:`inp` and :func:`out`; the base turns the table into

* a complete FMI 2.0 model description (``to_xml``): units, descriptions, start values,
  min/max, the variability of every Integer/Boolean variable, a DefaultExperiment, and a
  ModelStructure with output dependencies and InitialUnknowns, which pythonfmu leaves out;
* fast getters and setters by value reference (a variable ``a.b`` lives in the attribute ``a_b``);
* parameter checks when initialization ends: a value outside the declared range, or refused
  by the slave's ``check()``, ends initialization with fmi2Error and a logged message that
  names the parameter, its value and the valid range. FMI has no exclusive minimum: a parameter
  declared ``min_exclusive`` says "must be > min" in its description and the message gives the
  range as (min, inf);
* parameters are checked before anything uses them: while they are invalid, outputs are not
  computed (a getter during initialization returns them unchanged instead of dividing by an invalid
  parameter), and fmi2ExitInitializationMode reports them;
* outputs must be finite: every Real output and published derivative when initialization ends
  and after each doStep, and every Real value a getter delivers (computed from the inputs just
  set, for feed-through). A non-finite one, or an arithmetic error (OverflowError,
  ZeroDivisionError, math domain error) while computing them, fails that call with one logged
  message naming the outputs, the present inputs (the parameters too for a slave without inputs
  or before initialization ends), the cause and the slave's ``remedy()`` hint, not a traceback;
  the outputs are restored to their (finite) values after the last successful doStep. So the
  element that produced the value is the one that fails, not the neighbour it would reach. The
  cost on the hot path is one math.isfinite over the sum of the values at hand;
* first-order input and output derivatives (FMI canInterpolateInputs and
  maxOutputDerivativeOrder = 1): an input's derivative is kept in ``der_<attr>`` and reset to
  zero whenever its value is set; an output declared with ``derivative=True`` publishes
  ``der_<attr>``, computed by ``compute_outputs``;
* doStep checks its arguments: currentCommunicationPoint must be the FMU's time (the start time,
  or the end of its last step, within a few ulps: 1e-12*max(1, |t|), for masters that
  accumulate t += h) and the step size finite and > 0;
* FMU state get/set/serialize that captures every attribute the slave set (parameters, inputs,
  outputs, internal state, the physics objects it holds, rebuilt from their class), so a state
  restores a fully working instance bit-identically, also into an instance that is only
  instantiated or initialized with other parameters. A state carries its model and build; one
  of another FMU (or garbage bytes) is refused with a message and the instance left as it was.
  Serialized, a state carries a SHA-256 checksum of its content: bytes altered or truncated
  after fmi2SerializeFMUstate are refused by fmi2DeSerializeFMUstate the same way.

Errors and statuses. No Python exception ever reaches pythonfmu: pythonfmu turns it into
fmi2Fatal, drops the message and destroys the instance. Every entry point here catches and logs
instead, and the FMU's C status shim returns fmi2Error for any FMI call during which the slave
logged an error message (it counts them), else pythonfmu's status. Two kinds of errors:

* a refused call (``_refuse``): a value reference unknown or of another type, a parameter set
  after initialization, an output set, a NaN/inf value (all values of that set call are refused,
  the previous ones kept), a doStep with invalid arguments, an unusable FMU state. The call
  returns fmi2Error, it changed nothing, and the instance stays usable;
* a failure (``_error``) that leaves the instance inconsistent: outputs that came out
  non-finite (or could not be computed) in a getter or a doStep (they are restored, so they no
  longer match the inputs or the state), a failed initialization, an internal error. The
  instance is then in error state: doStep is refused until fmi2SetFMUstate (to an earlier
  state) or fmi2Reset; getters still deliver the values.

Generic: names no component and no physical domain (the translational vocabulary is in
components/translational.py). Only the Python standard library and pythonfmu are imported: this
file runs inside the FMU.
"""

import math
import operator
import os
import traceback

from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Status

from .fmu_state import FmuStates
from .model_description import model_description
from .shim import DERIVATIVE_VR
from .values import Values
from .variables import Var

_isfinite = math.isfinite
_copysign = math.copysign
_INF = math.inf
TIME_TOLERANCE = 1e-12  # relative: currentCommunicationPoint may differ from the FMU's time t by
#                         TIME_TOLERANCE*max(1, |t|) (masters that accumulate t += h)
# arithmetic failures of the physics reported as a message of the call, not as a traceback
NUMERIC_ERRORS = (ArithmeticError, ValueError)


def _tuple_getter(names):
    """obj -> tuple of the named attributes (attrgetter of one name returns the bare value)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _including(*parts):
    """Class decorator: the attributes of the classes `parts` (the slave's getters and setters,
    its FMU states) defined on the class itself, not inherited. pythonfmu 0.7.0 leaks the repr of
    every class of a slave's MRO at each instantiation (tests/fmi/test_memory.py): the concerns
    live in modules of their own without lengthening the MRO."""

    def include(cls):
        for part in parts:
            for name, value in vars(part).items():
                if not (name.startswith("__") and name.endswith("__")) and name not in vars(cls):
                    setattr(cls, name, value)
        return cls

    return include


@_including(Values, FmuStates)
class Slave(Fmi2Slave):
    """Base class: subclasses set VARIABLES, description, default_experiment and implement
    ``step(t, h)``; optionally ``check()`` (extra parameter rules), ``initialize(t0)`` and
    ``compute_outputs()`` (outputs from the current inputs and state; called lazily when an
    output is read after inputs changed, so feed-through outputs are current before doStep;
    never with invalid parameters) and ``remedy(step_size)`` (what the user can do when an
    output came out non-finite)."""

    VARIABLES = ()
    description = ""
    author = "contactfmu"
    version = "0.1.0"
    license = "BSD-3-Clause"
    model_name = None  # defaults to the class name; also the FMU file name and modelIdentifier
    # True: uses first derivatives of its Real inputs (canInterpolateInputs)
    INPUT_DERIVATIVES = False
    STEP_USES_OUTPUTS = True  # False: step() reads inputs and state only, so doStep need not bring
    #                            the outputs up to date first (one compute_outputs per step saved)
    HAS_EVENTS = False  # True: step() reports events (see step); FMI 3.0: may return early at them
    RECORDED_READ = None  # (attribute, outputs): a get of one of the outputs (attribute names)
    #                            records the attribute's value as the importer read it (self._delivered)
    #                            for the next doStep only: a read never outlives the step after it

    log_categories = {
        "logStatusWarning": "Messages with status fmi2Warning",
        "logStatusDiscard": "Messages with status fmi2Discard",
        "logStatusError": "Messages with status fmi2Error",
        "logStatusFatal": "Messages with status fmi2Fatal",
        "logAll": "All messages",
    }

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.modelName = self.model_name or type(self).__name__
        for attr in ("description", "author", "version", "license", "default_experiment"):
            setattr(self, attr, getattr(type(self), attr, None))  # Fmi2Slave sets them to None
        table = self.variable_table()
        # events (FMI 3.0 early return and event mode; fmi3.Fmi3Slave sets them from the importer's
        # permissions): report_events asks step() for the time of the first event in the step,
        # stop_at_events to end the step there; after a doStep, step_event is that time (None: none)
        # and returned_early whether the step ended there, before its requested end
        self.report_events = self.stop_at_events = self.returned_early = False
        self.step_event = None
        self._infra = set(self.__dict__) | {"_infra"}
        # all model values live in plain attributes; everything set from here on is state
        for var in table:
            setattr(
                self,
                var.attr,
                var.start
                if var.start is not None
                else {"Real": 0.0, "Integer": 0, "Boolean": False}[var.type],
            )
        for var in table:
            if var.derivative or (
                self.INPUT_DERIVATIVES and var.causality == "input" and var.type == "Real"
            ):
                setattr(self, "der_" + var.attr, 0.0)
        self.time = 0.0
        self._good = self._checked_values(self)  # outputs that passed the finiteness check last
        self._step_size = None  # of the last doStep (for remedy hints)
        self._failed = ""  # the failure that put the instance in error state ("" = none)
        self._stale = True  # inputs changed since compute_outputs
        self._fresh = True  # inputs set since the last doStep (Gauss-Seidel); False: they are one step old (Jacobi)
        # RECORDED_READ's value as the importer last read it since the last doStep, else None
        self._delivered = None
        self._initialized = False

    # ---- variable table --------------------------------------------------------------------

    @classmethod
    def variable_table(cls):
        cached = cls.__dict__.get("_cached_table")
        if cached is not None:
            return cached
        table = list(cls.VARIABLES)
        names = set()
        for vr, var in enumerate(table):
            if var.name in names:
                raise ValueError(f"{cls.__name__}: variable {var.name} declared twice")
            names.add(var.name)
            var.vr = vr
        cls._cached_table = table
        cls._by_vr = {v.vr: v for v in table}
        cls._params = [v for v in table if v.causality == "parameter"]
        cls._outputs = [v for v in table if v.causality == "output"]
        real_outputs = [v for v in table if v.causality == "output" and v.type == "Real"]
        # Real outputs and published derivatives: (attribute, FMI name), checked to be finite
        cls._checked = [(v.attr, v.name) for v in real_outputs] + [
            ("der_" + v.attr, f"der({v.name})") for v in real_outputs if v.derivative
        ]
        cls._real_inputs = [
            (v.attr, v.name) for v in table if v.causality == "input" and v.type == "Real"
        ]
        # value reference -> attribute a getter reads (published output derivatives at vr + DERIVATIVE_VR)
        cls._get_attrs = {
            kind: {v.vr: v.attr for v in table if v.type == kind}
            for kind in ("Real", "Integer", "Boolean")
        }
        cls._get_attrs["Real"].update(
            {v.vr + DERIVATIVE_VR: "der_" + v.attr for v in real_outputs if v.derivative}
        )
        cls._fast_get = {}  # (kind, vrs) -> attrgetter of those variables, or False (full path)
        # kind -> (before, after initialization) -> vrs -> (attributes set, input derivatives reset), or
        # False (a value reference is refused: _set_checked says why)
        cls._set_plans = {kind: ({}, {}) for kind in ("Real", "Integer", "Boolean")}
        cls._step_uses_outputs = cls.STEP_USES_OUTPUTS and cls.step is not Slave.step
        # the value references whose read is recorded (RECORDED_READ)
        recorded = cls.RECORDED_READ[1] if cls.RECORDED_READ else ()
        cls._held_vrs = frozenset(
            v.vr for v in table if v.causality == "output" and v.attr in recorded
        )
        cls._held_reads = {}  # (kind, vrs) -> whether a get of them is recorded
        cls._checked_values = staticmethod(_tuple_getter([attr for attr, _ in cls._checked]))
        return table

    @classmethod
    def terminals(cls):
        """The slave's terminals (fmi.terminals.Terminal), written to terminalsAndIcons.xml;
        none by default."""
        return ()

    # ---- hooks -----------------------------------------------------------------------------

    def check(self):
        """Extra parameter rules: return a list of (name, value, rule) for invalid values."""
        return []

    def initialize(self, t0):
        """Called when initialization ends, after the parameters passed their checks."""

    def compute_outputs(self):
        """Update the outputs that depend directly on inputs (feed-through)."""

    def step(self, t, h):
        """Advance the internal state over [t, t + h]; stateless elements need nothing here.

        A slave with events (a contact closing or opening, an impact, a stick/slip change): when
        report_events is set, return the time of the first event after t + event_resolution(t)
        within the step (None: none), and when stop_at_events is set too, end the step there
        (the state and outputs of that instant, the event taken). Never an event at t itself: a
        step that ended at an event starts with it taken."""

    @staticmethod
    def event_resolution(t):
        """Events closer than this to a step's start are taken within the step, not returned
        early at: a Zeno sequence (a bounce series) ends in finitely many early returns."""
        return 1e-9 * max(1.0, abs(t))

    def stops_at(self, t, h, event):
        """Whether the step [t, t + h] ends at the event at time `event` (None: no event)."""
        return self.stop_at_events and event is not None and event < t + h

    def remedy(self, step_size):
        """Hint appended to the message of a non-finite output: what the user can change (e.g.
        a hint of the component's own). step_size: of the last doStep, or None."""
        return ""

    def build_parameters(self):
        """The parameters as one physics object (None: the slave has none); see parameters()."""
        return None

    def parameters(self):
        """build_parameters(), built once when initialization ends (parameters are fixed from
        then on; they are read several times per step), anew before (a host may still set them)."""
        if self._initialized:
            return self._p
        return self.build_parameters()

    # ---- errors ----------------------------------------------------------------------------

    def _refuse(self, message):
        """A refused call: it returns fmi2Error (the status shim counts the error messages logged
        during a call), it changed nothing, and the instance stays usable."""
        self.log(message, Fmi2Status.error, "logStatusError")

    def _error(self, message):
        """A failure that leaves the instance inconsistent: fmi2Error of this call, and the
        instance is in error state (doStep refused) until fmi2Reset or fmi2SetFMUstate."""
        if not self._failed:
            self._failed = message
        self._refuse(message)

    def _crash(self, where):
        self._error(
            f"{self.modelName} ({self.instance_name}): internal error in {where}: "
            + traceback.format_exc(limit=4).strip().replace("\n", " | ")
        )

    def _outputs_failed(self, call, exc=None):
        """The outputs for the present inputs are not finite, or computing them raised ``exc``
        (an arithmetic error): log one message naming them, the inputs (the parameters too for a
        slave without inputs or before initialization ends), the cause and the slave's remedy,
        restore the outputs that last passed the check, put the instance in error state (its
        outputs no longer match its inputs) and return True. False if all are finite (a batch of
        finite values can still sum to infinity). Before initialization ends (a getter in
        initialization mode) the call is only refused: the parameters and inputs may still
        change, and fmi2ExitInitializationMode computes the outputs anew."""
        if exc is None:
            bad = [
                (name, x)
                for (attr, name), x in zip(self._checked, self._checked_values(self))
                if not _isfinite(x)
            ]
            if not bad:
                return False
            what = f"non-finite output{'s' if len(bad) > 1 else ''} " + ", ".join(
                f"{n} = {x!r}" for n, x in bad
            )
        else:
            what = "the outputs cannot be computed"
        for (attr, _), x in zip(self._checked, self._good):
            setattr(self, attr, x)
        initializing = call == "fmi2ExitInitializationMode"
        running = self._initialized or initializing
        self._stale = not running
        message = f"{self.modelName}: {what} at t = {self.time!r} s ({call})"
        if exc is not None:
            message += ": " + _describe(exc)
        if self._real_inputs:
            message += ", from the inputs " + ", ".join(
                f"{name} = {getattr(self, attr)!r}" for attr, name in self._real_inputs
            )
        if self._params and (not self._real_inputs or not self._initialized or initializing):
            message += (
                (" and" if self._real_inputs else ",")
                + " with the parameters "
                + ", ".join(
                    f"{v.name} = {getattr(self, v.attr)!r}{v.unit_text()}" for v in self._params
                )
            )
        if initializing:
            message += "; initialization failed."
        else:
            message += (
                "; the outputs keep their values from the last successful fmi2DoStep (the start values "
                "before it)."
            )
        try:
            hint = self.remedy(self._step_size)
        except Exception:
            hint = ""
        (self._error if running else self._refuse)(message + (" " + hint if hint else ""))
        return True

    # ---- FMI entry points ------------------------------------------------------------------

    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        try:
            if self._initialized:
                self._refuse(
                    f"fmi2SetupExperiment refused: {self.modelName} is initialized (time {self.time!r} s "
                    f"kept; fmi2Reset first)"
                )
            elif not _isfinite(start_time):
                self._refuse(
                    f"fmi2SetupExperiment refused: startTime = {start_time!r} s is not finite (time "
                    f"{self.time!r} s kept)"
                )
            else:
                self.time = float(start_time)
        except Exception:
            self._crash("fmi2SetupExperiment")

    def enter_initialization_mode(self):
        pass

    def _invalid_parameters(self):
        """[(var, value, rule)] of the parameters outside their declared range, else those the
        slave's check() refuses (check() may rely on the ranges)."""
        bad = []
        for var in self._params:
            value = getattr(self, var.attr)
            if var.type == "Real" and not math.isfinite(value):
                bad.append((var, value, "must be a finite number"))
            elif var.min is not None and (
                value < var.min or (var.min_exclusive and value == var.min)
            ):
                bad.append((var, value, f"valid range {var.valid_range()}"))
            elif var.max is not None and value > var.max:
                bad.append((var, value, f"valid range {var.valid_range()}"))
        if not bad:
            by_name = {v.name: v for v in self._params}
            for name, value, rule in self.check():
                bad.append(
                    (by_name.get(name) or Var(name, "Real", "", "", None, None, ""), value, rule)
                )
        return bad

    def exit_initialization_mode(self):
        call = "fmi2ExitInitializationMode"
        try:
            if self._failed or self._initialized:
                self._refuse(
                    f"{call} refused: "
                    + (
                        f"the instance is in error state ({self._failed})"
                        if self._failed
                        else f"{self.modelName} is initialized already"
                    )
                )
                return
            bad = self._invalid_parameters()
            for var, value, rule in bad:
                self._error(f"Invalid parameter {var.name} = {value!r}{var.unit_text()}: {rule}")
            if bad:
                return
            self._p = self.build_parameters()
            self.initialize(self.time)
            if self._failed:  # initialize() refused the start (e.g. a start outside the stops)
                return
            self._initialized = True
            if not self._finish(call):
                self._initialized = False
        except NUMERIC_ERRORS as exc:
            self._outputs_failed(call, exc)
            self._initialized = False
        except Exception:
            self._initialized = False
            self._crash(call)

    def _compute(self, call):
        """compute_outputs() for the present inputs (feed-through), unless a parameter is invalid
        before initialization ends: then the outputs keep their values (nothing divides by an invalid
        parameter) and fmi2ExitInitializationMode reports the parameter. An arithmetic error is a
        failure of the call (False returned, see _outputs_failed)."""
        if self._initialized or not self._invalid_parameters():
            try:
                self.compute_outputs()
            except NUMERIC_ERRORS as exc:
                self._outputs_failed(call, exc)
                return False
            self._stale = False
        return True

    def _finish(self, call):
        """The outputs at the end of initialization or of a step: computed, every one finite,
        else a failure naming them (False)."""
        self.compute_outputs()
        self._stale = False
        values = self._checked_values(self)
        if _isfinite(sum(values)) or not self._outputs_failed(call):
            self._good = values
            return True
        return False

    def do_step(self, current_time, step_size):
        try:
            t = self.time
            end = current_time + step_size
            if (
                self._failed
                or not self._initialized
                or not (step_size > 0.0 and end < _INF)
                or (
                    current_time != t
                    and not abs(current_time - t) <= TIME_TOLERANCE * max(1.0, abs(t))
                )
            ):
                self._refuse("doStep refused: " + self._step_refusal(current_time, step_size))
                return False
            self._step_size = step_size
            if self._stale and self._step_uses_outputs and not self._compute("fmi2DoStep"):
                return False
            event = self.step(current_time, step_size)
            self.step_event = event
            self.returned_early = event is not None and self.stops_at(
                current_time, step_size, event
            )
            self.time = event if self.returned_early else end
            self._fresh = False  # the inputs held now describe the step's start
            self._delivered = None  # the step has taken the value read before it
            self.compute_outputs()  # _finish, inlined on the hot path
            self._stale = False
            values = self._checked_values(self)
            if _isfinite(sum(values)) or not self._outputs_failed("fmi2DoStep"):
                self._good = values
                return True
            return False
        except NUMERIC_ERRORS as exc:
            self._outputs_failed("fmi2DoStep", exc)
            return False
        except Exception:
            self._crash("fmi2DoStep")
            return False

    def _step_refusal(self, current_time, step_size):
        """Why doStep(current_time, step_size) is refused."""
        t = self.time
        tolerance = TIME_TOLERANCE * max(1.0, abs(t))
        if self._failed:
            return (
                f"the instance is in error state ({self._failed}); fmi2SetFMUstate (to an earlier state) or "
                f"fmi2Reset recover it"
            )
        if not self._initialized:
            return f"{self.modelName} is not initialized (fmi2ExitInitializationMode has not succeeded)"
        if not (step_size > 0.0 and _isfinite(step_size)):
            return f"invalid communication step size {step_size!r} s: it must be finite and > 0"
        if not abs(current_time - t) <= tolerance:
            return (
                f"currentCommunicationPoint = {current_time!r} s is not the time of {self.modelName}, "
                f"{t!r} s (the start time or the end of its last step; tolerance {tolerance:.3g} s); a master "
                f"continues from there, or restores an earlier state with fmi2SetFMUstate first"
            )
        return f"the end of the step, {current_time!r} + {step_size!r} s, is not a finite time"

    def terminate(self):
        pass

    # ---- model description -----------------------------------------------------------------

    def to_xml(self, model_options=None):
        return model_description(self)


def _describe(exc):
    """'OverflowError: math range error (in law.py:42, force)': an error and where it arose."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = (
        f" (in {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}, {frames[-1].name})"
        if frames
        else ""
    )
    return f"{type(exc).__name__}: {exc}{where}"
