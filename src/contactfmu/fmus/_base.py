"""Slave base shared by every contactfmu FMU.

A slave declares its FMI variables as a table (``VARIABLES``) of :class:`Var` rows made with
:func:`parameter`, :func:`inp` and :func:`out`; the base turns the table into

* a complete FMI 2.0 model description (``to_xml``): units, descriptions, start values,
  min/max, the variability of every Integer/Boolean variable, a DefaultExperiment, and a
  ModelStructure with output dependencies and InitialUnknowns, which pythonfmu leaves out;
* fast getters and setters by value reference (attribute ``flange_a.s`` -> ``flange_a_s``);
* parameter checks when initialization ends: a value outside the declared range, or refused
  by the slave's ``check()``, ends initialization with fmi2Error and a logged message that
  names the parameter, its value and the valid range;
* parameters are checked before anything uses them: while they are invalid, outputs are not
  computed (a getter during initialization returns them unchanged instead of dividing by a zero
  mass), and fmi2ExitInitializationMode reports them;
* non-finite inputs are refused with a logged message naming the variable (the previous value
  is kept, the FMU's status shim returns fmi2Error to the host);
* outputs must be finite: every Real output and published derivative after each doStep, and
  every Real value a getter delivers (computed from the inputs just set, for feed-through). A
  non-finite one makes that call return fmi2Error with a logged message naming the outputs, their
  values, the present inputs and the slave's ``remedy()`` hint; the outputs are restored to their
  (finite) values after the last successful doStep and the instance is in error state. So the element that produced the value is
  the one that fails, not the neighbour it would reach. The cost on the hot path is one
  math.isfinite over the sum of the values at hand;
* first-order input and output derivatives (FMI canInterpolateInputs and
  maxOutputDerivativeOrder = 1): an input's derivative is kept in ``der_<attr>`` and reset to
  zero whenever its value is set; an output declared with ``derivative=True`` publishes
  ``der_<attr>``, computed by ``compute_outputs``;
* FMU state get/set/serialize that captures all internal state (every plain-data attribute of
  the slave and of the physics objects it holds), not only the registered variables.

No Python exception ever reaches pythonfmu: pythonfmu turns it into fmi2Fatal, drops the
message and destroys the instance. Every entry point here catches, logs and reports the error
through the pending status (value reference ``STATUS_VR``) that the FMU's C status shim reads
after fmi2ExitInitializationMode, fmi2DoStep and fmi2SetFMUstate; a getter that logged an error
returns fmi2Error too (the shim counts the error messages logged during the call).

Only the Python standard library and pythonfmu are imported: this file runs inside the FMU.
"""
import copy
import json
import math
import operator
import traceback
import uuid
from xml.etree.ElementTree import Element, SubElement

from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Status

_isfinite = math.isfinite
STATUS_VR = 1073741823  # reserved value reference read by the status shim; not a model variable
DERIVATIVE_VR = 536870912  # vr + DERIVATIVE_VR: first derivative of variable vr (shim maps
#                            fmi2SetRealInputDerivatives / fmi2GetRealOutputDerivatives to it)
OK, DISCARD, ERROR = int(Fmi2Status.ok), int(Fmi2Status.discard), int(Fmi2Status.error)

# Units with their SI base-unit exponents (FMI 2.0 UnitDefinitions).
UNITS = {
    "m": {"m": 1}, "m/s": {"m": 1, "s": -1}, "m/s2": {"m": 1, "s": -2},
    "N": {"kg": 1, "m": 1, "s": -2}, "N/m": {"kg": 1, "s": -2}, "N.s/m": {"kg": 1, "s": -1},
    "kg": {"kg": 1}, "s": {"s": 1}, "Hz": {"s": -1}, "rad": {"rad": 1}, "W": {"kg": 1, "m": 2, "s": -3},
    "K": {"K": 1}, "J": {"kg": 1, "m": 2, "s": -2}, "N.s": {"kg": 1, "m": 1, "s": -1}, "s/m": {"m": -1, "s": 1},
    "1": {},
}


class Var:
    """One row of a slave's variable table."""

    __slots__ = ("name", "attr", "type", "causality", "variability", "start", "unit", "description",
                 "min", "max", "min_exclusive", "initial", "depends", "vr", "derivative")

    def __init__(self, name, type_, causality, variability, start, unit, description,
                 min_=None, max_=None, min_exclusive=False, initial=None, depends=(), derivative=False):
        self.name = name
        self.derivative = derivative
        self.attr = name.replace(".", "_")
        self.type = type_
        self.causality = causality
        self.variability = variability
        self.start = start
        self.unit = unit
        self.description = description
        self.min = min_
        self.max = max_
        self.min_exclusive = min_exclusive
        self.initial = initial
        self.depends = tuple(depends)
        self.vr = None

    def valid_range(self):
        lo = "-inf" if self.min is None else repr(self.min)
        hi = "inf" if self.max is None else repr(self.max)
        return ("(" if self.min_exclusive or self.min is None else "[") + lo + ", " + hi + \
               (")" if self.max is None else "]")

    def unit_text(self):
        return "" if self.unit in (None, "1") else " " + self.unit


def _kind(value):
    return "Boolean" if isinstance(value, bool) else "Integer" if isinstance(value, int) else "Real"


def parameter(name, start, unit, description, min=None, max=None, min_exclusive=False):
    """A fixed parameter (causality parameter, initial exact)."""
    return Var(name, _kind(start), "parameter", "fixed", start, unit, description, min, max, min_exclusive, "exact")


def inp(name, start, unit, description):
    """An input (continuous for Real, discrete for Integer/Boolean)."""
    kind = _kind(start)
    return Var(name, kind, "input", "continuous" if kind == "Real" else "discrete", start, unit, description)


def out(name, unit, description, depends=(), start=None, kind="Real", derivative=False):
    """An output. ``depends`` lists the inputs it depends on directly (feed-through);
    ``start`` makes it initial="exact" (a start value the user may set, like s(start=...));
    ``derivative`` publishes its first time derivative (fmi2GetRealOutputDerivatives)."""
    variability = "continuous" if kind == "Real" else "discrete"
    initial = "exact" if start is not None else "calculated"
    if derivative:
        description += " (first derivative available)"
    return Var(name, kind, "output", variability, start, unit, description, initial=initial, depends=depends,
               derivative=derivative)


def motion_in_flange(flange, what):
    """Flange of a compliant element: motion in (s, v, a), force out. ``what`` names the element."""
    return [
        inp(flange + ".s", 0.0, "m", f"Absolute position of {flange} (input: motion of the connected body)"),
        inp(flange + ".v", 0.0, "m/s", f"Absolute velocity of {flange} (input)"),
        inp(flange + ".a", 0.0, "m/s2", f"Absolute acceleration of {flange} (input; 0 = no information)"),
    ]


def interface_outputs(depends):
    """Interface stiffness and damping of a two-flange compliant element: the partial derivatives
    of its force f = flange_b.f with respect to s_rel and v_rel at the present inputs. A master
    can use them to make the coupling implicit (contactfmu's scheme="implicit"); the element's
    own behaviour does not depend on them."""
    return [
        out("interface.c", "N/m", "Interface stiffness: df/ds_rel (f = flange_b.f) at the present inputs, for "
                                  "masters that couple implicitly (0 where f does not depend on s_rel)",
            depends=depends),
        out("interface.d", "N.s/m", "Interface damping: df/dv_rel at the present inputs, for masters that "
                                    "couple implicitly (0 where f does not depend on v_rel)", depends=depends),
    ]


FORCE_INPUTS_PER_FLANGE = 4  # <flange>.f, .f2, .f3, .f4


def _tuple_getter(names):
    """obj -> tuple of the named attributes (attrgetter of one name returns the bare value)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def force_inputs(flange):
    """Names of the force inputs of an inertial flange: <flange>.f and the numbered extra inputs
    <flange>.f2 .. .f4, summed by the body. A master that sums the forces of a node (the project's)
    uses <flange>.f alone; tools that connect one output to one input (SSP, libcosim) connect up to
    four compliant elements on a node, one to each."""
    return (flange + ".f",) + tuple(f"{flange}.f{k}" for k in range(2, FORCE_INPUTS_PER_FLANGE + 1))


# the force inputs (and their derivatives) of a flange, read in one call, per flange attribute
_FORCE_ATTRS = {fl: operator.attrgetter(*(n.replace(".", "_") for n in force_inputs(fl)))
                for fl in ("flange", "flange_a", "flange_b")}
_FORCE_RATE_ATTRS = {fl: operator.attrgetter(*("der_" + n.replace(".", "_") for n in force_inputs(fl)))
                     for fl in ("flange", "flange_a", "flange_b")}


def force_in_flange(flange):
    """Flange of an inertial element: force in, motion out (outputs declared by the slave)."""
    first, *extra = force_inputs(flange)
    return [inp(first, 0.0, "N",
                f"Cut force at {flange}: the force acting on the connected compliant element at this flange "
                f"(MSL flange.f of that element, or the sum over all elements on the node); "
                f"the body receives its negative")] + [
            inp(name, 0.0, "N",
                f"Cut force at {flange} of a further compliant element on the node (added to {first}; for "
                f"tools that connect one output to one input, e.g. SSP and libcosim; 0 if unused)")
            for name in extra]


def flange_motion_outputs(depends):
    """Motion outputs of the two flanges of a rigid body (MSL PartialRigid): flange_a.s = s - L/2,
    flange_b.s = s + L/2, same v and a; `depends`: the inputs a depends on directly."""
    return [
        out("flange_a.s", "m", "Position of left flange (= s - L/2)"),
        out("flange_a.v", "m/s", "Velocity of left flange (= v)"),
        out("flange_a.a", "m/s2", "Acceleration of left flange (= a)", depends=depends),
        out("flange_b.s", "m", "Position of right flange (= s + L/2)"),
        out("flange_b.v", "m/s", "Velocity of right flange (= v)"),
        out("flange_b.a", "m/s2", "Acceleration of right flange (= a)", depends=depends),
    ]


def sampled_law_remedy(c, d, step_size, inertia=None):
    """Remedy hint of a compliant element that outputs its law (stiffness c, damping d) at the
    sampled inputs, for ``remedy()``. The master holds that force over the step (or makes it
    linear); against a body of mass m the damper alone is then unstable above h = 2*m/d
    (|1 - h*d/m| > 1), and the spring needs h*sqrt(c/m) well below 1. The element does not know
    m unless told: ``inertia`` = (parameters, what they are), e.g. ("m_a/m_b", "the masses at the
    flanges"); None for an element without them."""
    bounds = []
    if d > 0.0:
        bound = f"below 2*m/d (= {2.0 / d:.3g} s for m = 1 kg"
        if step_size:
            bound += f"; at h = {step_size:.3g} s only for m > h*d/2 = {0.5 * step_size * d:.3g} kg"
        bounds.append(bound + ")")
    if c > 0.0:
        bounds.append(f"well below sqrt(m/c) (= {1.0 / math.sqrt(c):.3g} s for m = 1 kg)")
    if not bounds:
        return ""
    step = "a communication step " + " and ".join(bounds)
    limits = (["the damper alone is unstable above h = 2*m/d"] if d > 0.0 else []) + \
        (["the spring needs h*sqrt(c/m) well below 1"] if c > 0.0 else [])
    why = (f"the element outputs its law (c = {c:.6g} N/m, d = {d:.6g} N.s/m) at the sampled inputs, the master "
           f"holds that force over the step, and against a mass m {' and '.join(limits)}")
    if inertia:
        names, meaning = inertia
        return (f"Remedy: give {names} ({meaning}) or {step}. With {names} = 0 {why}; the element does not know m "
                f"without {names}.")
    return (f"Remedy: {step}, m being the mass the element moves, or a master that couples the element "
            f"implicitly through its interface.c/interface.d outputs (contactfmu: scheme=\"implicit\"). "
            f"{why[0].upper()}{why[1:]}.")


def inertial_remedy(m):
    """Remedy hint of a body (Mass, MassWithStopAndFriction) whose motion came out non-finite
    from finite force inputs, for ``remedy()``."""
    return (f"Remedy: the force inputs are too large for the mass m = {m!r} kg over the step; they come from the "
            f"elements on its flanges: a stiff compliant element that outputs its law at the sampled inputs (e.g. "
            f"TranslationalHardstop, ElastoGap or EndStop without the masses at its flanges) is unstable at a step "
            f"large for its stiffness: give that element the masses at its flanges (m_a/m_b, m1/m2) or use a "
            f"smaller communication step.")


class ContactSlave(Fmi2Slave):
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
    INPUT_DERIVATIVES = False  # True: uses first derivatives of its Real inputs (canInterpolateInputs)
    STEP_USES_OUTPUTS = True   # False: step() reads inputs and state only, so doStep need not bring
    #                            the outputs up to date first (one compute_outputs per step saved)

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
        table = self._table()
        self._infra = set(self.__dict__) | {"_infra"}
        # all model values live in plain attributes; everything set from here on is state
        for var in table:
            setattr(self, var.attr, var.start if var.start is not None else
                    {"Real": 0.0, "Integer": 0, "Boolean": False}[var.type])
        for var in table:
            if var.derivative or (self.INPUT_DERIVATIVES and var.causality == "input" and var.type == "Real"):
                setattr(self, "der_" + var.attr, 0.0)
        self.time = 0.0
        self._good = self._checked_values(self)  # outputs that passed the finiteness check last
        self._step_size = None  # of the last doStep (for remedy hints)
        self._status = OK
        self._failed = ""
        self._stale = True  # inputs changed since compute_outputs
        self._initialized = False

    # ---- variable table --------------------------------------------------------------------

    @classmethod
    def _table(cls):
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
        cls._checked = [(v.attr, v.name) for v in real_outputs] + \
                       [("der_" + v.attr, f"der({v.name})") for v in real_outputs if v.derivative]
        cls._real_inputs = [(v.attr, v.name) for v in table if v.causality == "input" and v.type == "Real"]
        cls._get_attrs = {kind: {v.vr: v.attr for v in table if v.type == kind}
                          for kind in ("Real", "Integer", "Boolean")}
        cls._fast_get = {}  # (kind, vrs) -> attrgetter of those variables, or False (full path)
        cls._step_uses_outputs = cls.STEP_USES_OUTPUTS and cls.step is not ContactSlave.step
        cls._checked_values = staticmethod(_tuple_getter([attr for attr, _ in cls._checked]))
        return table

    # ---- hooks -----------------------------------------------------------------------------

    def check(self):
        """Extra parameter rules: return a list of (name, value, rule) for invalid values."""
        return []

    def initialize(self, t0):
        """Called when initialization ends, after the parameters passed their checks."""

    def compute_outputs(self):
        """Update the outputs that depend directly on inputs (feed-through)."""

    def step(self, t, h):
        """Advance the internal state over [t, t + h]; stateless elements need nothing here."""

    def remedy(self, step_size):
        """Hint appended to the message of a non-finite output: what the user can change (e.g.
        sampled_law_remedy for a compliant element). step_size: of the last doStep, or None."""
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

    def publish_motion(self):
        """Flange outputs of a rigid body from its s, v, a and length L (see flange_motion_outputs)."""
        self.flange_a_s, self.flange_b_s = self.s - 0.5 * self.L, self.s + 0.5 * self.L
        self.flange_a_v = self.flange_b_v = self.v
        self.flange_a_a = self.flange_b_a = self.a

    def cut_force(self, flange):
        """Sum of the force inputs of an inertial flange (``flange`` as attribute, e.g. flange_a)."""
        a, b, c, d = _FORCE_ATTRS[flange](self)
        return a + b + c + d

    def cut_force_rate(self, flange):
        """Sum of the first derivatives set for the force inputs of an inertial flange."""
        a, b, c, d = _FORCE_RATE_ATTRS[flange](self)
        return a + b + c + d

    def publish_force(self, f, rate):
        """Outputs of a two-flange compliant element (MSL PartialCompliant): f = flange_b.f =
        -flange_a.f, and their first time derivatives."""
        self.f, self.flange_b_f, self.flange_a_f = f, f, -f
        self.der_f, self.der_flange_b_f, self.der_flange_a_f = rate, rate, -rate

    # ---- errors ----------------------------------------------------------------------------

    def _error(self, message):
        self._status = ERROR
        if not self._failed:
            self._failed = message
        self.log(message, Fmi2Status.error, "logStatusError")

    def _crash(self, where):
        self._error(f"{self.modelName} ({self.instance_name}): internal error in {where}: "
                    + traceback.format_exc(limit=4).strip().replace("\n", " | "))

    def _begin(self):
        self._status = ERROR if self._failed else OK

    # ---- FMI entry points ------------------------------------------------------------------

    def setup_experiment(self, start_time, stop_time=None, tolerance=None):
        try:
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
            elif var.min is not None and (value < var.min or (var.min_exclusive and value == var.min)):
                bad.append((var, value, f"valid range {var.valid_range()}"))
            elif var.max is not None and value > var.max:
                bad.append((var, value, f"valid range {var.valid_range()}"))
        if not bad:
            by_name = {v.name: v for v in self._params}
            for name, value, rule in self.check():
                bad.append((by_name.get(name) or Var(name, "Real", "", "", None, None, ""), value, rule))
        return bad

    def exit_initialization_mode(self):
        try:
            self._begin()
            bad = self._invalid_parameters()
            for var, value, rule in bad:
                self._error(f"Invalid parameter {var.name} = {value!r}{var.unit_text()}: {rule}")
            if bad:
                return
            self._p = self.build_parameters()
            self.initialize(self.time)
            self._stale = True
            self._initialized = True
        except Exception:
            self._crash("fmi2ExitInitializationMode")

    def _compute(self):
        """compute_outputs(), unless a parameter is invalid before initialization ends: then the
        outputs keep their values (nothing divides by a zero mass) and fmi2ExitInitializationMode
        reports the parameter."""
        if self._initialized or not self._invalid_parameters():
            self.compute_outputs()
            self._stale = False

    def _refuse_nonfinite(self, call):
        """If a Real output (or published derivative) is not finite: log it with the inputs that
        produced it and the slave's remedy, restore the outputs that last passed the check, put
        the instance in error state and return True. False if all are finite (a batch of finite
        values can still sum to infinity)."""
        bad = [(name, x) for (attr, name), x in zip(self._checked, self._checked_values(self))
               if not math.isfinite(x)]
        if not bad:
            return False
        for (attr, _), x in zip(self._checked, self._good):
            setattr(self, attr, x)
        self._stale = False
        outputs = ", ".join(f"{name} = {x!r}" for name, x in bad)
        inputs = ", ".join(f"{name} = {getattr(self, attr)!r}" for attr, name in self._real_inputs)
        message = (f"{self.modelName}: non-finite output{'s' if len(bad) > 1 else ''} {outputs} at t = "
                   f"{self.time!r} s ({call})" + (f", from the inputs {inputs}" if inputs else "")
                   + "; the outputs keep their values from the last successful fmi2DoStep (the start values "
                     "before it).")
        try:
            hint = self.remedy(self._step_size)
        except Exception:
            hint = ""
        self._error(message + (" " + hint if hint else ""))
        return True

    def do_step(self, current_time, step_size):
        try:
            self._begin()
            if self._failed:
                self.log(f"doStep refused: the instance is in error state ({self._failed})",
                         Fmi2Status.error, "logStatusError")
                return False
            if not step_size > 0.0:
                self._error(f"Invalid communication step size {step_size!r} s: must be > 0")
                return False
            self._step_size = step_size
            if self._stale and self._step_uses_outputs:
                self._compute()
            self.step(current_time, step_size)
            self.time = current_time + step_size
            self.compute_outputs()
            self._stale = False
            # every output finite after the step; else fmi2Error naming it (previous outputs restored)
            values = self._checked_values(self)
            if _isfinite(sum(values)) or not self._refuse_nonfinite("fmi2DoStep"):
                self._good = values
            return self._status == OK
        except Exception:
            self._crash("fmi2DoStep")
            return False

    def terminate(self):
        pass

    # ---- getters and setters ---------------------------------------------------------------

    def _get(self, vrs, kind, convert, default, call):
        """Values of a getter; a Real value that is not finite (an output computed from the
        present inputs) is refused: fmi2Error, and the outputs of the last successful doStep are
        returned (one math.isfinite over the sum of the batch when all is well)."""
        if self._stale and (kind != "Integer" or STATUS_VR not in vrs):  # the shim's status query computes nothing
            try:
                self._compute()
            except Exception:
                self._crash("compute_outputs")
        key = (kind, tuple(vrs))
        fast = self._fast_get.get(key)
        if fast is None:  # first request of these variables: plain model variables only?
            attrs = self._get_attrs[kind]
            fast = bool(vrs) and all(vr in attrs for vr in vrs) and (
                len(vrs), operator.attrgetter(*(attrs[vr] for vr in vrs)), kind == "Real")
            self._fast_get[key] = fast
        if fast:
            n, getter, real = fast
            if n > 1:
                values = getter(self)
                if real and not _isfinite(sum(values)) and self._refuse_nonfinite(call):
                    values = getter(self)
                return [convert(x) for x in values]
            value = getter(self)
            if real and not _isfinite(value) and self._refuse_nonfinite(call):
                value = getter(self)
            return [convert(value)]
        values = self._values(vrs, kind, convert, default)
        if kind == "Real" and not _isfinite(sum(values)) and self._refuse_nonfinite(
                "fmi2GetRealOutputDerivatives" if max(vrs) >= DERIVATIVE_VR else call):
            values = self._values(vrs, kind, convert, default)
        return values

    def _values(self, vrs, kind, convert, default):
        """Values of a getter, one by one: the status (STATUS_VR), output derivatives (vr +
        DERIVATIVE_VR), wrong value references (an error, default value)."""
        values = []
        for vr in vrs:
            var = self._by_vr.get(vr)
            if var is None or var.type != kind:
                if vr == STATUS_VR and kind == "Integer":
                    values.append(self._status)
                    continue
                if vr >= DERIVATIVE_VR and kind == "Real":
                    var = self._by_vr.get(vr - DERIVATIVE_VR)
                    if var is not None and var.derivative:
                        values.append(float(getattr(self, "der_" + var.attr)))
                    else:
                        self._status = ERROR  # a refused request; the instance stays usable
                        self.log(f"fmi2GetRealOutputDerivatives: {var.name if var else vr} has no derivative; "
                                 f"available for: {', '.join(v.name for v in self._table() if v.derivative)}",
                                 Fmi2Status.error, "logStatusError")
                        values.append(0.0)
                    continue
                self._error(f"fmi2Get{kind}: value reference {vr} is not a {kind} variable of {self.modelName}")
                values.append(default)
            else:
                values.append(convert(getattr(self, var.attr)))
        return values

    def get_real(self, vrs):
        try:
            return self._get(vrs, "Real", float, 0.0, "fmi2GetReal")
        except Exception:
            self._crash("fmi2GetReal")
            return [0.0] * len(vrs)

    def get_integer(self, vrs):
        try:
            return self._get(vrs, "Integer", int, 0, "fmi2GetInteger")
        except Exception:
            self._crash("fmi2GetInteger")
            return [0] * len(vrs)

    def get_boolean(self, vrs):
        try:
            return self._get(vrs, "Boolean", bool, False, "fmi2GetBoolean")
        except Exception:
            self._crash("fmi2GetBoolean")
            return [False] * len(vrs)

    def get_string(self, vrs):
        self._error(f"fmi2GetString: {self.modelName} has no String variables")
        return [""] * len(vrs)

    def _set(self, vrs, values, kind, convert):
        for vr, value in zip(vrs, values):
            var = self._by_vr.get(vr)
            if var is None and vr >= DERIVATIVE_VR and kind == "Real":
                self._set_derivative(self._by_vr.get(vr - DERIVATIVE_VR), vr - DERIVATIVE_VR, convert(value))
                continue
            if var is None or var.type != kind:
                self._error(f"fmi2Set{kind}: value reference {vr} is not a {kind} variable of {self.modelName}")
                continue
            if var.causality == "output" and (var.initial != "exact" or self._initialized):
                self._error(f"fmi2Set{kind}: {var.name} is an output and cannot be set"
                            + (" after initialization" if var.initial == "exact" else ""))
                continue
            if var.causality == "parameter" and self._initialized:
                self._error(f"fmi2Set{kind}: parameter {var.name} is fixed after initialization "
                            f"(value {getattr(self, var.attr)!r} kept)")
                continue
            value = convert(value)
            if kind == "Real" and not math.isfinite(value):
                self._error(f"Non-finite value {value!r} for {var.causality} {var.name} refused; "
                            f"previous value {getattr(self, var.attr)!r} kept")
                continue
            setattr(self, var.attr, value)
            if self.INPUT_DERIVATIVES and var.causality == "input" and kind == "Real":
                setattr(self, "der_" + var.attr, 0.0)  # a new value without a derivative: held
        self._stale = True

    def _set_derivative(self, var, vr, value):
        if not (self.INPUT_DERIVATIVES and var is not None and var.causality == "input" and var.type == "Real"):
            self._error(f"fmi2SetRealInputDerivatives: value reference {vr} is not a Real input of "
                        f"{self.modelName} that takes derivatives")
        elif not math.isfinite(value):
            self._error(f"Non-finite derivative {value!r} for input {var.name} refused; previous value "
                        f"{getattr(self, 'der_' + var.attr)!r} kept")
        else:
            setattr(self, "der_" + var.attr, value)

    def set_real(self, vrs, values):
        try:
            self._set(vrs, values, "Real", float)
        except Exception:
            self._crash("fmi2SetReal")

    def set_integer(self, vrs, values):
        try:
            self._set(vrs, values, "Integer", int)
        except Exception:
            self._crash("fmi2SetInteger")

    def set_boolean(self, vrs, values):
        try:
            self._set(vrs, values, "Boolean", bool)
        except Exception:
            self._crash("fmi2SetBoolean")

    def set_string(self, vrs, values):
        self._error(f"fmi2SetString: {self.modelName} has no String variables")

    # ---- FMU state -------------------------------------------------------------------------

    def _get_fmu_state(self):
        try:
            return {k: _snapshot(v) for k, v in self.__dict__.items() if k not in self._infra}
        except Exception:
            self._crash("fmi2GetFMUstate")
            return {}

    def _set_fmu_state(self, state):
        try:
            self._status = OK
            if not isinstance(state, dict) or "__invalid__" in state or "time" not in state:
                reason = state.get("__invalid__") if isinstance(state, dict) else "not a state of this FMU"
                self._error(f"fmi2SetFMUstate/fmi2DeSerializeFMUstate: invalid FMU state ({reason})")
                return
            for key, value in state.items():
                current = self.__dict__.get(key)
                if isinstance(value, dict) and "__object__" in value and current is not None:
                    _restore(current, value)
                else:
                    setattr(self, key, copy.deepcopy(value))
        except Exception:
            self._crash("fmi2SetFMUstate")

    @staticmethod
    def _fmu_state_to_bytes(state):
        try:
            return json.dumps(state).encode("utf-8")
        except Exception as exc:  # cannot log here: no instance
            return json.dumps({"__invalid__": f"not serializable: {exc}"}).encode("utf-8")

    @staticmethod
    def _fmu_state_from_bytes(data):
        try:
            state = json.loads(bytes(data).decode("utf-8"))
            return state if isinstance(state, dict) else {"__invalid__": "not a JSON object"}
        except Exception as exc:
            return {"__invalid__": f"cannot decode serialized state: {exc}"}

    # ---- model description -----------------------------------------------------------------

    def to_xml(self, model_options=None):
        table = self._table()
        attrib = {
            "fmiVersion": "2.0", "modelName": self.modelName, "guid": "{" + str(uuid.uuid4()) + "}",
            "description": " ".join(self.description.split()), "author": self.author,
            "version": self.version, "license": self.license, "generationTool": "contactfmu (pythonfmu)",
            "variableNamingConvention": "structured", "numberOfEventIndicators": "0",
        }
        root = Element("fmiModelDescription", attrib)
        SubElement(root, "CoSimulation", {
            "modelIdentifier": self.modelName, "needsExecutionTool": "true",
            "canHandleVariableCommunicationStepSize": "true",
            "canInterpolateInputs": "true" if self.INPUT_DERIVATIVES else "false",
            "maxOutputDerivativeOrder": "1" if any(v.derivative for v in table) else "0",
            "canRunAsynchronuously": "false",
            "canBeInstantiatedOnlyOncePerProcess": "false", "canNotUseMemoryManagementFunctions": "true",
            "canGetAndSetFMUstate": "true", "canSerializeFMUstate": "true",
            "providesDirectionalDerivative": "false",
        })
        units = sorted({v.unit for v in table if v.unit})
        if units:
            unit_defs = SubElement(root, "UnitDefinitions")
            for unit in units:
                node = SubElement(unit_defs, "Unit", {"name": unit})
                SubElement(node, "BaseUnit", {k: str(e) for k, e in UNITS[unit].items()})
        cats = SubElement(root, "LogCategories")
        for name, text in self.log_categories.items():
            SubElement(cats, "Category", {"name": name, "description": text})
        de = getattr(self, "default_experiment", None)
        if de is not None:
            SubElement(root, "DefaultExperiment", {k: repr(float(v)) for k, v in (
                ("startTime", de.start_time), ("stopTime", de.stop_time),
                ("stepSize", de.step_size), ("tolerance", de.tolerance)) if v is not None})
        mv = SubElement(root, "ModelVariables")
        for var in table:
            a = {"name": var.name, "valueReference": str(var.vr), "description": var.description,
                 "causality": var.causality, "variability": var.variability}
            if var.initial:
                a["initial"] = var.initial
            sv = SubElement(mv, "ScalarVariable", a)
            t = {}
            if var.type == "Real" and var.unit:
                t["unit"] = var.unit
            if var.min is not None:
                t["min"] = _fmt(var.min)
            if var.max is not None:
                t["max"] = _fmt(var.max)
            if var.causality in ("parameter", "input") or var.initial == "exact":
                t["start"] = _fmt(var.start)
            SubElement(sv, var.type, t)
        index = {v.name: v.vr + 1 for v in table}
        ms = SubElement(root, "ModelStructure")
        outs = SubElement(ms, "Outputs")
        for var in self._outputs:
            SubElement(outs, "Unknown", {"index": str(var.vr + 1),
                                         "dependencies": " ".join(str(index[d]) for d in var.depends)})
        initial = [v for v in self._outputs if v.initial != "exact"]
        if initial:
            knowns = [v.vr + 1 for v in table if v.initial == "exact"]
            iu = SubElement(ms, "InitialUnknowns")
            for var in initial:
                deps = sorted(set(knowns) | {index[d] for d in var.depends})
                SubElement(iu, "Unknown", {"index": str(var.vr + 1), "dependencies": " ".join(map(str, deps))})
        return root


def _fmt(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def _snapshot(value):
    """Deep, JSON-able copy of plain data; objects are captured by their attributes."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_snapshot(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _snapshot(v) for k, v in value.items()}
    if hasattr(value, "__dict__"):
        return {"__object__": type(value).__name__, **{k: _snapshot(v) for k, v in vars(value).items()}}
    raise TypeError(f"cannot capture {type(value).__name__} in an FMU state")


def _restore(obj, data):
    for key, value in data.items():
        if key == "__object__":
            continue
        current = getattr(obj, key, None)
        if isinstance(value, dict) and "__object__" in value and current is not None:
            _restore(current, value)
        else:
            setattr(obj, key, copy.deepcopy(value))
