"""The FMI contract under hostile input, through the FMU's own C functions (fmpy's ctypes
bindings, so that every status is seen, not raised):

* a call that fails returns fmi2Error itself, with one message; a refused call changed nothing
  and the instance stays usable (the next doStep works); only a failure that leaves the
  instance inconsistent (a failed doStep, non-finite outputs) puts it in error state;
* an arithmetic error while computing the outputs is an fmi2Error with a message, not a
  traceback, and fmi2SetFMUstate to an earlier state recovers the instance;
* an FMU state restores a fully working instance bit-identically, also into an instance that
  is only instantiated or initialized with other parameters; a state (or serialized bytes) of
  another FMU, or garbage, is refused;
* declared parameter ranges and the checks agree;
* doStep checks its time arguments; fmi2Reset brings the time back to the start."""

import ctypes
import gc
import math

import pytest
from fmpy.fmi2 import fmi2Boolean, fmi2Byte, fmi2FMUstate, fmi2Integer, fmi2Real, fmi2ValueReference
from fmu_helpers import Slave

from contactfmu.components import NAMES
from contactfmu.fmi.state import SEAL_HEADER, STATE_FORMAT

OK, ERROR = 0, 3
_TYPES = {"Real": fmi2Real, "Integer": fmi2Integer, "Boolean": fmi2Boolean}


class Raw(Slave):
    """A Slave whose FMI calls return their status (fmpy's wrappers raise on fmi2Error)."""

    def call(self, name, *args):
        return self.fmu._functions[name](self.fmu.component, *args)

    def ref(self, name):
        return name if isinstance(name, int) else self.vars[name].valueReference

    def put(self, kind, values):
        """fmi2Set<kind> of {name or value reference: value}; the status."""
        n = len(values)
        return self.call(
            f"fmi2Set{kind}",
            (fmi2ValueReference * n)(*map(self.ref, values)),
            n,
            (_TYPES[kind] * n)(*values.values()),
        )

    def fetch(self, kind, names):
        """fmi2Get<kind>: (status, values)."""
        n = len(names)
        buf = (_TYPES[kind] * n)()
        status = self.call(
            f"fmi2Get{kind}", (fmi2ValueReference * n)(*map(self.ref, names)), n, buf
        )
        return status, list(buf)

    def step(self, t, h):
        return self.call("fmi2DoStep", fmi2Real(t), fmi2Real(h), 1)

    def exit_init(self):
        assert self.call("fmi2EnterInitializationMode") == OK
        return self.call("fmi2ExitInitializationMode")

    def get_state(self):
        state = fmi2FMUstate()
        assert self.call("fmi2GetFMUstate", ctypes.byref(state)) == OK, self.log
        return state

    def set_state(self, state):
        return self.call("fmi2SetFMUstate", state)

    def deserialize(self, data):
        state = fmi2FMUstate()
        status = self.call(
            "fmi2DeSerializeFMUstate",
            (fmi2Byte * len(data)).from_buffer_copy(data),
            len(data),
            ctypes.byref(state),
        )
        return status, state

    def outputs(self):
        """Every output (Real, Integer, Boolean), read without a failure."""
        row = []
        for kind in ("Real", "Integer", "Boolean"):
            names = [
                v.name for v in self.md.modelVariables if v.causality == "output" and v.type == kind
            ]
            if names:
                status, values = self.fetch(kind, names)
                assert status == OK, self.errors()
                row += values
        return row

    def new_errors(self):
        """The error messages logged since the last call of new_errors."""
        seen = getattr(self, "_seen", 0)
        self._seen = len(self.log)
        return [m for s, m in self.log[seen:] if s >= ERROR]


def raw(fmu_dir, name, start_time=0.0, **params):
    s = Raw(fmu_dir / f"{name}.fmu", start_time=start_time)
    for key, value in params.items():
        kind = s.vars[key].type
        assert s.put(kind, {key: value}) == OK
    return s


def initialized(fmu_dir, name, **params):
    s = raw(fmu_dir, name, **params)
    assert s.exit_init() == OK, s.errors()
    return s


# ---- 1. a failing call returns fmi2Error; a refused call leaves the instance usable ----------------

REFUSED_SETS = [  # FMU, type, variable (name or value reference), value, expected message
    (
        "Mass",
        "Real",
        "m",
        2.0,
        "fmi2SetReal refused: parameter m is fixed after initialization (value 1.0 kept)",
    ),
    ("Spring", "Real", "f", 1.0, "fmi2SetReal refused: f is an output and cannot be set"),
    (
        "Spring",
        "Real",
        999999,
        1.0,
        "fmi2SetReal refused: value reference 999999 is not a variable of Spring",
    ),
    (
        "Spring",
        "Real",
        "flange_b.s",
        math.nan,
        "fmi2SetReal refused: non-finite value nan for input flange_b.s; previous value 0.5 kept",
    ),
    (
        "Mass",
        "Real",
        "flange_a.f",
        -math.inf,
        "fmi2SetReal refused: non-finite value -inf for input flange_a.f; previous value -2.0 kept",
    ),
    (
        "EndStop",
        "Integer",
        "mode",
        1,
        "fmi2SetInteger refused: parameter mode is fixed after initialization (value 2 kept)",
    ),
    (
        "EndStop",
        "Integer",
        999999,
        1,
        "fmi2SetInteger refused: value reference 999999 is not a variable of EndStop",
    ),
    (
        "EndStop",
        "Integer",
        "l1",
        1,
        "fmi2SetInteger refused: l1 (value reference {vr}) is a Real variable of EndStop, not an Integer one",
    ),
    (
        "ElastoGap",
        "Boolean",
        "useHeatPort",
        True,
        "fmi2SetBoolean refused: parameter useHeatPort is fixed after initialization (value False kept)",
    ),
    (
        "ElastoGap",
        "Boolean",
        999999,
        True,
        "fmi2SetBoolean refused: value reference 999999 is not a variable of ElastoGap",
    ),
    (
        "ElastoGap",
        "Boolean",
        "contact",
        True,
        "fmi2SetBoolean refused: contact is an output and cannot be set",
    ),
]
INPUTS = {
    "Mass": {"flange_a.f": -2.0},
    "Spring": {"flange_b.s": 0.5},
    "EndStop": {"ctr1.x": 0.012},
    "ElastoGap": {"flange_b.s": -0.01, "flange_b.v": -0.5},
}
STEP = {"ElastoGap": 1e-4}


def _twins(fmu_dir, name):
    """Two instances initialized alike, with the same inputs, one step done."""
    pair = [initialized(fmu_dir, name) for _ in range(2)]
    h = STEP.get(name, 1e-3)
    for s in pair:
        assert s.put("Real", INPUTS[name]) == OK
        assert s.step(0.0, h) == OK
        s.new_errors()
    return pair, h


@pytest.mark.parametrize("name,kind,var,value,message", REFUSED_SETS)
def test_a_refused_set_is_an_fmi2Error_and_changes_nothing(
    fmu_dir, name, kind, var, value, message
):
    (s, twin), h = _twins(fmu_dir, name)
    before = s.outputs()
    assert s.put(kind, {var: value}) == ERROR
    assert s.new_errors() == [message.format(vr=s.ref(var))]
    assert s.outputs() == before
    # nothing changed: the next step works, exactly as in the twin that never saw the call
    assert s.step(h, h) == OK, s.errors()
    assert twin.step(h, h) == OK
    assert s.outputs() == twin.outputs()
    assert s.new_errors() == []


def test_a_set_call_with_one_refused_value_sets_none_of_its_values(fmu_dir):
    s = initialized(fmu_dir, "Spring", c=10.0)
    assert s.put("Real", {"flange_a.s": 0.1, "flange_b.s": 0.5}) == OK
    assert s.put("Real", {"flange_a.s": 0.3, "flange_b.s": math.inf}) == ERROR
    assert s.new_errors() == [
        "fmi2SetReal refused: non-finite value inf for input flange_b.s; previous value "
        "0.5 kept (none of the 2 values of this call is set)"
    ]
    assert s.fetch("Real", ["flange_a.s", "flange_b.s", "f"]) == (OK, [0.1, 0.5, 4.0])
    assert s.step(0.0, 1e-3) == OK


REFUSED_GETS = [  # FMU, type, variable, expected message
    (
        "ElastoGap",
        "Real",
        "contact",  # an importer that reads Boolean outputs with fmi2GetReal
        "fmi2GetReal refused: contact (value reference {vr}) is a Boolean variable of ElastoGap, not a Real one",
    ),
    (
        "ElastoGap",
        "Real",
        999999,
        "fmi2GetReal refused: value reference 999999 is not a variable of ElastoGap",
    ),
    (
        "EndStop",
        "Integer",
        "ctr1.F",
        "fmi2GetInteger refused: ctr1.F (value reference {vr}) is a Real variable of "
        "EndStop, not an Integer one",
    ),
    (
        "EndStop",
        "Boolean",
        "stop",
        "fmi2GetBoolean refused: stop (value reference {vr}) is an Integer variable of "
        "EndStop, not a Boolean one",
    ),
    (
        "Mass",
        "Integer",
        999999,
        "fmi2GetInteger refused: value reference 999999 is not a variable of Mass",
    ),
]


@pytest.mark.parametrize("name,kind,var,message", REFUSED_GETS)
def test_a_refused_get_is_an_fmi2Error_and_the_instance_stays_usable(
    fmu_dir, name, kind, var, message
):
    (s, twin), h = _twins(fmu_dir, name)
    status, _ = s.fetch(kind, [var])
    assert status == ERROR
    assert s.new_errors() == [message.format(vr=s.ref(var))]
    assert s.step(h, h) == OK, s.errors()
    assert twin.step(h, h) == OK
    assert s.outputs() == twin.outputs()


def test_strings_are_refused_with_fmi2Error(fmu_dir):
    s = initialized(fmu_dir, "Mass")
    vr = (fmi2ValueReference * 1)(0)
    assert s.call("fmi2GetString", vr, 1, (ctypes.c_char_p * 1)()) == ERROR
    assert s.call("fmi2SetString", vr, 1, (ctypes.c_char_p * 1)(b"x")) == ERROR
    assert s.new_errors() == [
        "fmi2GetString refused: Mass has no String variables",
        "fmi2SetString refused: Mass has no String variables",
    ]
    assert s.step(0.0, 1e-3) == OK


def test_a_failed_step_still_puts_the_instance_in_error_state(fmu_dir):
    s = initialized(fmu_dir, "Mass", m=0.5)
    assert s.step(0.0, 1e-3) == OK
    state = s.get_state()
    assert s.put("Real", {"flange_a.f": -1e308, "flange_b.f": -1e308}) == OK
    assert s.step(1e-3, 1e-3) == ERROR
    assert s.new_errors()[0].startswith("Mass: non-finite output")
    assert s.put("Real", {"flange_a.f": 0.0, "flange_b.f": 0.0}) == OK
    assert s.step(1e-3, 1e-3) == ERROR  # inconsistent: refused until a state is restored
    assert s.new_errors()[0].startswith(
        "doStep refused: the instance is in error state (Mass: non-finite"
    )
    assert s.set_state(state) == OK
    assert s.step(1e-3, 1e-3) == OK


# ---- 2. non-finite and overflowing outputs --------------------------------------------------------


def test_an_overflow_in_compute_outputs_is_an_fmi2Error_with_a_message_and_a_state_recovers(
    fmu_dir,
):
    """ElastoGap n = 2: |s_rel/s_ref|**2 raises OverflowError for flange_a.s = 1e200."""
    s = initialized(fmu_dir, "ElastoGap", n=2.0, c=1e3)
    assert s.put("Real", {"flange_b.s": -0.01, "flange_b.v": -0.2}) == OK
    assert s.step(0.0, 1e-4) == OK
    state = s.get_state()

    def run():
        rows = []
        for i in range(3):
            assert s.put("Real", {"flange_b.s": -0.01 - 1e-3 * i}) == OK
            assert s.step(1e-4 * (i + 1), 1e-4) == OK, s.errors()
            rows.append(s.outputs())
        return rows

    expected = run()
    assert s.set_state(state) == OK
    f_before = s.fetch("Real", ["f"])[1]
    assert s.put("Real", {"flange_a.s": 1e200}) == OK
    status, f = s.fetch("Real", ["f"])
    assert (
        status == ERROR and f == f_before
    )  # the outputs of the last successful step, not a made-up 0
    (message,) = s.new_errors()
    assert message.startswith(
        "ElastoGap: the outputs cannot be computed at t = 0.0001 s (fmi2GetReal): OverflowError: "
    ), message
    assert (
        "flange_a.s = 1e+200" in message
        and "Traceback" not in message
        and "internal error" not in message
    )
    assert s.step(1e-4, 1e-4) == ERROR  # outputs that do not match the inputs: error state
    assert s.set_state(state) == OK
    assert run() == expected


NON_FINITE = [  # FMU, parameters, inputs, the call that fails, the output it names
    ("Damper", {"d": 10.0}, {"flange_a.v": 1.797e308}, "fmi2GetReal", "f = -inf"),
    ("Mass", {}, {"flange_a.f": -1e308, "flange_a.f2": -1e308}, "fmi2GetReal", "a = inf"),
    ("Damper", {"d": 10.0}, {"flange_b.a": 1.797e308}, "fmi2DoStep", "der(f) = inf"),
]


@pytest.mark.parametrize("name,params,inputs,call,named", NON_FINITE)
def test_a_non_finite_output_is_an_fmi2Error_naming_it_and_a_state_recovers(
    fmu_dir, name, params, inputs, call, named
):
    s = initialized(fmu_dir, name, **params)
    state = s.get_state()
    before = s.outputs()
    assert s.put("Real", inputs) == OK
    if call == "fmi2GetReal":
        assert s.fetch("Real", [named.split(" = ")[0]])[0] == ERROR
    else:
        assert s.step(0.0, 0.95) == ERROR
    (message,) = s.new_errors()
    assert (
        message.startswith(f"{name}: non-finite output")
        and f" {named}" in message
        and f"({call})" in message
    )
    for key, value in inputs.items():
        assert f"{key} = {value!r}" in message
    assert s.outputs() == before
    assert s.set_state(state) == OK
    assert s.step(0.0, 1e-3) == OK
    assert s.outputs() == before


# ---- 3. FMU state -----------------------------------------------------------------------------

STATEFUL = {  # FMU: (parameters of the source, parameters of an initialized target, step, inputs(i))
    "EndStop": (
        {"mode": 1, "m1": 1.0, "friction": True, "kindF": 2},
        {},
        1e-3,
        lambda i: {"ctr1.x": 0.004 + 1e-3 * i, "ctr1.v": 1.0 - 0.2 * i},
    ),
    "EndStop-elastic": (
        {"friction": True, "dvL": 0.5},
        {"k1": 1.0},
        1e-3,
        lambda i: {"ctr1.x": 0.008 + 1e-3 * i, "ctr1.v": 0.3 - 0.1 * i, "ctr1.a": 1.0},
    ),
    "MassWithStopAndFriction": (
        {"smax": 0.01, "smin": -0.01, "m": 0.2},
        {"m": 3.0, "F_Coulomb": 0.0},
        1e-3,
        lambda i: {"flange_a.f": -30.0 + 9.0 * i},
    ),
    "ElastoGap": (
        {"m_a": 1.0, "m_b": 2.0},
        {"c": 5.0},
        1e-4,
        lambda i: {"flange_b.s": -1e-4 * i, "flange_b.v": -1.0 + 0.1 * i},
    ),
    "TranslationalHardstop": (
        {"m_a": 1.0, "m_b": 2.0},
        {"b": 0.3},
        1e-3,
        lambda i: {"flange_b.s": 0.497 + 1e-3 * i, "flange_b.v": 1.0 - 0.3 * i},
    ),
    "Mass": (
        {"m": 2.0, "s_start": 1.0},
        {"m": 7.0},
        1e-3,
        lambda i: {"flange_a.f": -1.0 - i, "flange_b.f": 0.5},
    ),
}


def _stepping(s, inputs, h, first, n):
    rows = []
    for i in range(first, first + n):
        assert s.put("Real", inputs(i)) == OK, s.errors()
        assert s.step(h * i, h) == OK, s.errors()
        rows.append(s.outputs())
    return rows


@pytest.mark.parametrize(
    "target", ["instantiated", "initialized with other parameters", "deserialized"]
)
@pytest.mark.parametrize("config", list(STATEFUL))
def test_a_state_restores_a_working_instance_bit_identically(fmu_dir, config, target):
    name = config.split("-")[0]
    params, other, h, inputs = STATEFUL[config]
    source = initialized(fmu_dir, name, **params)
    _stepping(source, inputs, h, 0, 4)
    state = source.get_state()
    expected = _stepping(source, inputs, h, 4, 4)
    if target == "initialized with other parameters":
        instance = initialized(fmu_dir, name, **other)
        _stepping(instance, inputs, h, 0, 2)
    else:
        instance = raw(fmu_dir, name)  # instantiated (and fmi2SetupExperiment) only
    if target == "deserialized":
        blob = source.fmu.serializeFMUstate(state)
        status, state = instance.deserialize(blob)
        assert status == OK, instance.errors()
    assert instance.set_state(state) == OK, instance.errors()
    assert _stepping(instance, inputs, h, 4, 4) == expected
    names = list(params) or ["m"]
    assert [instance.fetch(source.vars[n].type, [n]) for n in names] == [
        source.fetch(source.vars[n].type, [n]) for n in names
    ]
    assert instance.errors() == []


USED = {  # every FMU: (parameters of the source, of the used target, step, inputs(i), other inputs(i))
    # the targets are initialized with parameters that make them build more (an inertia-aware
    # coupler from m_a/m_b, m1/m2; EndStop's friction; MassWithStopAndFriction's stops)
    "Damper": (
        {"d": 3.0},
        {"d": 50.0},
        1e-3,
        lambda i: {"flange_a.v": 0.1 * i, "flange_b.s": 0.01 * i, "flange_b.v": -0.2},
        lambda i: {"flange_a.v": 7.0, "flange_b.v": 3.0 - i},
    ),
    "Spring": (
        {"c": 100.0},
        {"c": 5.0, "s_rel0": 0.5},
        1e-3,
        lambda i: {"flange_a.s": 0.01 * i, "flange_b.s": 0.2, "flange_b.v": 1.0},
        lambda i: {"flange_b.s": 3.0 + i},
    ),
    "SpringDamper": (
        {"c": 100.0, "d": 2.0},
        {"c": 1e4, "d": 0.1},
        1e-3,
        lambda i: {"flange_a.s": 0.01 * i, "flange_b.s": 0.2, "flange_b.v": 1.0 - 0.1 * i},
        lambda i: {"flange_b.s": -1.0, "flange_a.v": 2.0},
    ),
    "Fixed": (
        {"s0": 0.25},
        {"s0": -3.0},
        1e-3,
        lambda i: {"flange.f": 1.0 + i},
        lambda i: {"flange.f": -5.0, "flange.f2": 2.0},
    ),
    "Force": (
        {},
        {},
        1e-3,
        lambda i: {"f": 2.0 - i, "flange.s": 0.1 * i},
        lambda i: {"f": 40.0, "flange.v": 3.0},
    ),
    "Sine": (
        {"amplitude": 2.0, "f": 3.0},
        {"amplitude": 0.5, "f": 11.0, "phase": 1.0},
        1e-3,
        lambda i: {},
        lambda i: {},
    ),
    "Mass": (
        {"m": 2.0, "s_start": 1.0},
        {"m": 7.0, "v_start": -3.0},
        1e-3,
        lambda i: {"flange_a.f": -1.0 - i, "flange_b.f": 0.5},
        lambda i: {"flange_a.f": 30.0, "flange_b.f2": -4.0},
    ),
    "MassWithStopAndFriction": (
        # the first input, 15.01 N forward, lies in the friction's hysteresis (f0 = 15 N < F <=
        # f0_max = 15.015 N at the defaults): stuck from rest, sliding on in the mode FORWARD the
        # used instance, pushed by 50 N, is in
        {"m": 0.2},
        {"smax": 0.01, "smin": -0.01, "m": 3.0},
        1e-3,
        lambda i: {"flange_a.f": -15.01 - 9.0 * i},
        lambda i: {"flange_a.f": -50.0},
    ),
    "ElastoGap": (
        {"c": 1e5, "d": 20.0},
        {"m_a": 1.0, "m_b": 2.0, "c": 5e3},
        1e-4,
        lambda i: {"flange_b.s": -1e-4 * i, "flange_b.v": -1.0 + 0.1 * i},
        lambda i: {"flange_b.s": -3e-3, "flange_b.v": 2.0},
    ),
    "TranslationalHardstop": (
        {"b": 0.5},
        {"m_a": 1.0, "m_b": 2.0, "b": 0.3},
        1e-3,
        lambda i: {"flange_b.s": 0.497 + 1e-3 * i, "flange_b.v": 1.0 - 0.3 * i},
        lambda i: {"flange_b.s": 0.31, "flange_b.v": 0.8},
    ),
    "EndStop": (
        {"k1": 1.0},
        {"mode": 1, "m1": 1.0, "friction": True, "kindF": 2},
        1e-3,
        lambda i: {"ctr1.x": 0.008 + 1e-3 * i, "ctr1.v": 0.3 - 0.1 * i, "ctr1.a": 1.0},
        lambda i: {"ctr1.x": 0.004 + 1e-3 * i, "ctr1.v": 1.0 - 0.2 * i},
    ),
}


def _used(fmu_dir, name, params, h, other):
    """An instance of `name` initialized with `params`, stepped three times with the inputs `other`."""
    instance = initialized(fmu_dir, name, **params)
    _stepping(instance, other, h, 0, 3)
    return instance


@pytest.mark.parametrize("name", list(USED))
def test_a_state_restored_into_a_used_instance_continues_bit_identically(fmu_dir, name):
    """A state of an instance initialized with the source's parameters and stepped, set into an
    instance that was initialized with other parameters (building what the source did not: a
    coupler, friction, stops) and stepped with other inputs: the used instance continues exactly
    as the source, every output, bit for bit, and reads the source's parameters."""
    params, other_params, h, inputs, other = USED[name]
    source = initialized(fmu_dir, name, **params)
    _stepping(source, inputs, h, 0, 4)
    state = source.get_state()
    expected = _stepping(source, inputs, h, 4, 5)
    for target in ("same FMU", "deserialized"):
        instance = _used(fmu_dir, name, other_params, h, other)
        restored = state
        if target == "deserialized":
            status, restored = instance.deserialize(source.fmu.serializeFMUstate(state))
            assert status == OK, instance.errors()
        assert instance.set_state(restored) == OK, instance.errors()
        assert _stepping(instance, inputs, h, 4, 5) == expected, target
        names = list(params) or ["f"]
        assert [instance.fetch(source.vars[n].type, [n]) for n in names] == [
            source.fetch(source.vars[n].type, [n]) for n in names
        ]
        assert instance.errors() == []


@pytest.mark.parametrize("name", ["ElastoGap", "MassWithStopAndFriction"])
def test_a_state_handed_back_is_updated_and_the_state_it_held_freed(fmu_dir, name):
    """A state pointer handed back to fmi2GetFMUstate (FMI 2.0 section 2.1.8: a state the FMU
    returned and nobody freed; libcosim overwrites its saved states so) holds the new state
    afterwards: restored, the steps from there repeat bit for bit. The state it held is freed
    (pythonfmu's library overwrote the pointer and leaked it: 200 hand-backs left 200 states
    alive), and fmi2FreeFMUstate returns NULL in its argument."""
    params, _, h, inputs, _ = USED[name]
    s = initialized(fmu_dir, name, **params)
    _stepping(s, inputs, h, 0, 2)
    state = s.get_state()
    _stepping(s, inputs, h, 2, 2)

    def alive():
        gc.collect()
        return sum(
            1
            for o in gc.get_objects()
            if isinstance(o, dict) and o.get("format") == STATE_FORMAT and o.get("model") == name
        )

    before = alive()
    for _ in range(200):
        assert s.call("fmi2GetFMUstate", ctypes.byref(state)) == OK, s.errors()
    assert alive() == before
    expected = _stepping(s, inputs, h, 4, 3)
    assert s.set_state(state) == OK, s.errors()
    assert _stepping(s, inputs, h, 4, 3) == expected
    assert s.call("fmi2FreeFMUstate", ctypes.byref(state)) == OK and state.value is None
    assert alive() == before - 1 and s.errors() == []


def _initializing(s, params, inputs):
    """Parameters and the first inputs set in initialization mode; the outputs read there (they
    are readable before initialization ends), then fmi2ExitInitializationMode."""
    assert s.call("fmi2EnterInitializationMode") == OK, s.errors()
    for key, value in params.items():
        assert s.put(s.vars[key].type, {key: value}) == OK, s.errors()
    if inputs:
        assert s.put("Real", inputs) == OK, s.errors()
    rows = [s.outputs()]
    assert s.call("fmi2ExitInitializationMode") == OK, s.errors()
    return rows + [s.outputs()]


@pytest.mark.parametrize("name", list(USED))
def test_a_state_saved_before_initialization_restores_a_used_instance_to_it(fmu_dir, name):
    """A state saved right after instantiation (fmi2SetupExperiment only: it lacks what
    initialization and the steps create, e.g. MassWithStopAndFriction's internal mode, its event
    log, the derived parameters) set into a used instance: the instance is the instantiated one
    again (fmi2SetFMUstate drops what the state does not hold), its outputs in initialization mode
    (MassWithStopAndFriction's start from no mode yet, not the used instance's stop) and every
    output after it, stepped like the source, bit for bit."""
    params, other_params, h, inputs, other = USED[name]
    source = raw(fmu_dir, name)
    state = source.get_state()
    expected = _initializing(source, params, inputs(0)) + _stepping(source, inputs, h, 0, 5)
    instance = _used(fmu_dir, name, other_params, h, other)
    assert instance.set_state(state) == OK, instance.errors()
    got = _initializing(instance, params, inputs(0)) + _stepping(instance, inputs, h, 0, 5)
    assert got == expected
    assert instance.errors() == []


def test_a_state_of_another_fmu_is_refused_and_the_instance_left_as_it_was(fmu_dir):
    mass = initialized(fmu_dir, "Mass")
    assert mass.step(0.0, 1e-3) == OK
    state = mass.get_state()
    fixed = initialized(fmu_dir, "Fixed", s0=0.25)
    assert fixed.put("Real", {"flange.f": 3.0}) == OK
    before = fixed.outputs()
    assert fixed.set_state(state) == ERROR
    assert fixed.new_errors() == [
        "fmi2SetFMUstate refused: a state of Mass, not of Fixed; the instance is left as it was"
    ]
    assert fixed.outputs() == before
    assert fixed.step(0.0, 1e-3) == OK
    assert fixed.outputs() == before


@pytest.mark.parametrize(
    "what", ["garbage", "empty", "JSON of something else", "truncated", "another model's"]
)
def test_serialized_bytes_that_are_not_a_state_of_this_fmu_are_refused(fmu_dir, what):
    fixed = initialized(fmu_dir, "Fixed")
    own = fixed.fmu.serializeFMUstate(fixed.get_state())
    mass = initialized(fmu_dir, "Mass")
    data = {
        "garbage": b"\x00\xffnot a state\x80",
        "empty": b"",
        "JSON of something else": b'{"time": 0.0}',
        "truncated": own[: len(own) // 2],
        "another model's": mass.fmu.serializeFMUstate(mass.get_state()),
    }[what]
    status, state = fixed.deserialize(data)
    assert status == ERROR and not state
    (message,) = fixed.new_errors()
    assert message.startswith("fmi2DeSerializeFMUstate refused: "), message
    if what == "another model's":
        assert message == "fmi2DeSerializeFMUstate refused: a state of Mass, not of Fixed"
    else:
        assert "not a serialized FMU state" in message or "not an FMU state" in message, message
    assert fixed.step(0.0, 1e-3) == OK  # the instance is untouched


def _flip_positions(blob):
    """Byte positions of a serialized state to flip, of every class: the header, the SHA-256
    checksum (hex) and its newline, the payload (its first and last bytes and 8 spread over it)."""
    head = len(SEAL_HEADER)
    payload = head + 65
    assert blob.startswith(SEAL_HEADER) and blob[payload - 1 : payload] == b"\n"
    spread = [payload + (len(blob) - 1 - payload) * k // 9 for k in range(10)]
    return sorted({0, head // 2, head - 1, head, head + 31, head + 63, payload - 1, *spread})


@pytest.mark.parametrize("name", list(NAMES))
def test_a_serialized_state_with_a_flipped_bit_is_refused_and_the_instance_left_as_it_was(
    fmu_dir, name
):
    """Every bit of a sample of byte positions (header, checksum, payload) flipped, one at a
    time: fmi2DeSerializeFMUstate refuses each with fmi2Error and a message (the state carries
    a SHA-256 of its content), fmi2SetFMUstate gets no state, and the instance continues as if
    nothing had happened (bit-identical to a twin that never saw the corrupted bytes)."""
    instance, twin = initialized(fmu_dir, name), initialized(fmu_dir, name)
    for s in (instance, twin):
        assert s.step(0.0, 1e-3) == OK and s.step(1e-3, 1e-3) == OK, s.errors()
    blob = instance.fmu.serializeFMUstate(instance.get_state())
    before = instance.outputs()
    positions = _flip_positions(blob)
    flips = 0
    for position in positions:
        for bit in range(8):
            data = bytearray(blob)
            data[position] ^= 1 << bit
            status, state = instance.deserialize(bytes(data))
            assert status == ERROR and not state, (position, bit, instance.errors())
            (message,) = instance.new_errors()
            assert message.startswith("fmi2DeSerializeFMUstate refused: "), message
            if position >= len(SEAL_HEADER):
                assert "corrupted" in message and "SHA-256" in message, message
            assert instance.set_state(state) == ERROR  # no state to set
            instance.new_errors()
            flips += 1
        assert instance.outputs() == before
    assert flips >= 64
    assert instance.step(2e-3, 1e-3) == OK and twin.step(2e-3, 1e-3) == OK
    assert instance.outputs() == twin.outputs()
    # the genuine bytes still restore (into the twin, which then repeats the instance's step)
    status, state = twin.deserialize(blob)
    assert status == OK, twin.errors()
    assert twin.set_state(state) == OK and twin.step(2e-3, 1e-3) == OK
    assert twin.outputs() == instance.outputs()


# ---- 4. declared ranges and the checks agree --------------------------------------------------


def _declared(fmu_dir):
    from fmpy import read_model_description

    cases = []
    for name in NAMES:
        md = read_model_description(str(fmu_dir / f"{name}.fmu"))
        for v in md.modelVariables:
            if v.causality == "parameter":
                for bound in ("min", "max"):
                    if getattr(v, bound) is not None:
                        cases.append((name, v.name, bound, getattr(v, bound), v.description))
    return cases


def test_a_parameter_at_its_declared_bound_is_accepted_unless_its_description_says_exclusive(
    fmu_dir,
):
    """FMI 2.0 has no exclusive minimum: a parameter that must be > min says so in its
    description, and the check's message gives the range as (min, inf); every other value at a
    declared min or max passes the range check (EndStop mode = 1 still needs m1 or m2)."""
    cases = _declared(fmu_dir)
    assert {
        (name, param) for name, param, _, _, description in cases if "must be >" in description
    } == {
        ("Mass", "m"),
        ("MassWithStopAndFriction", "m"),
        ("ElastoGap", "s_ref"),
        ("EndStop", "dvL"),
        ("EndStop", "eps_sigma"),
        ("EndStop", "eps_tau"),
    }
    for name, param, bound, value, description in cases:
        s = raw(fmu_dir, name)
        kind = s.vars[param].type
        typed = {"Real": float, "Integer": int, "Boolean": lambda x: x == "true"}[kind](value)
        assert s.put(kind, {param: typed}) == OK
        status = s.exit_init()
        range_errors = [
            m
            for m in s.errors()
            if m.startswith(f"Invalid parameter {param} = ") and "valid range" in m
        ]
        if "must be >" in description:
            assert bound == "min" and status == ERROR
            assert range_errors == [
                f"Invalid parameter {param} = {typed!r}{_unit(s, param)}: valid range "
                f"({typed!r}, inf)"
            ], (name, param)
        else:
            assert range_errors == [], (name, param, s.errors())
        s.close()


def _unit(s, name):
    unit = s.vars[name].unit
    return "" if unit in (None, "1") else " " + unit


@pytest.mark.parametrize(
    "name,param",
    [
        ("EndStop", "dvL"),
        ("MassWithStopAndFriction", "v_small"),
        ("ElastoGap", "s_nominal"),
        ("TranslationalHardstop", "s_nominal"),
    ],
)
def test_zero_is_refused_where_the_law_divides_by_it_and_accepted_where_unused(
    fmu_dir, name, param
):
    """dvL divides in EndStop's friction law: refused, and the description says > 0; v_small and
    s_nominal are kept for compatibility only (the physics does not use them): 0 is accepted."""
    s = raw(fmu_dir, name, **{param: 0.0})
    status = s.exit_init()
    if param == "dvL":
        assert status == ERROR
        assert s.errors() == ["Invalid parameter dvL = 0.0 m/s: valid range (0.0, inf)"]
        assert "must be > 0" in s.vars[param].description
    else:
        assert status == OK, s.errors()
        assert s.step(0.0, 1e-4) == OK
        assert "must be >" not in s.vars[param].description


@pytest.mark.parametrize(
    "params",
    [
        {"startTime": -1.797e308},
        {"startTime": -1.7976931348623157e308, "f": 1.7976931348623157e308, "amplitude": 1e-300},
        {"startTime": -1e300, "f": 0.3, "phase": 1.7976931348623157e308},
        {"startTime": 1.7976931348623157e308},
        {"startTime": -1.797e308, "f": 5e-324},
        {"startTime": -1.797e308, "f": 0.0, "phase": -1.797e308},
        {"f": 1e300, "phase": -1e300},
    ],
)
def test_a_sine_with_extreme_parameters_initializes_and_steps(fmu_dir, params):
    """Any finite startTime, f and phase: 2*pi*f*(time - startTime) + phase overflowed (a math
    domain error of sin(inf) failed the initialization); the number of periods is now reduced
    exactly where the plain product is not finite."""
    s = raw(fmu_dir, "Sine", **params)
    assert s.call("fmi2EnterInitializationMode") == OK
    assert s.fetch("Real", ["y"])[0] == OK, s.errors()  # read in initialization mode
    assert s.call("fmi2ExitInitializationMode") == OK, s.errors()
    amplitude = params.get("amplitude", 1.0)
    for i in range(4):
        assert s.step(0.125 * i, 0.125) == OK, s.errors()
        status, (y,) = s.fetch("Real", ["y"])
        assert status == OK and abs(y) <= amplitude, (y, s.errors())
    assert s.errors() == []


def test_a_sine_long_after_an_extreme_start_time_is_the_exact_sine(fmu_dir):
    """startTime = -1.797e308 s (an integer number of 1 Hz periods before 0): y = sin(2*pi*t)
    exactly reduced, at t = 0, 1/4, 1/2, 3/4 s."""
    s = raw(fmu_dir, "Sine", startTime=-1.797e308)
    assert s.exit_init() == OK, s.errors()
    ys = [s.fetch("Real", ["y"])[1][0]]
    for i in range(3):
        assert s.step(0.25 * i, 0.25) == OK, s.errors()
        ys.append(s.fetch("Real", ["y"])[1][0])
    assert ys == [0.0, 1.0, math.sin(math.pi), -1.0]


# ---- 5. time ----------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [math.inf, math.nan, 0.0, -1e-3])
def test_an_invalid_step_size_is_refused(fmu_dir, h):
    s = initialized(fmu_dir, "Mass", v_start=1.0)
    assert s.step(0.0, h) == ERROR
    assert s.new_errors() == [
        f"doStep refused: invalid communication step size {h!r} s: it must be finite and > 0"
    ]
    assert s.step(0.0, 0.5) == OK  # the time did not move: the FMU is still at 0
    assert s.fetch("Real", ["s"]) == (OK, [0.5])


@pytest.mark.parametrize("t", [5.0, -1e-3, 1e-9, math.nan, math.inf])
def test_a_communication_point_other_than_the_fmu_time_is_refused_naming_both(fmu_dir, t):
    s = initialized(fmu_dir, "Mass", v_start=1.0)
    assert s.step(0.0, 1e-3) == OK
    assert s.step(1e-3 + t, 1e-3) == ERROR
    assert s.new_errors() == [
        f"doStep refused: currentCommunicationPoint = {1e-3 + t!r} s is not the time of Mass, "
        f"0.001 s (the start time or the end of its last step; tolerance 1e-12 s); a master "
        f"continues from there, or restores an earlier state with fmi2SetFMUstate first"
    ]
    assert s.step(1e-3, 1e-3) == OK


def test_time_as_masters_compute_it_is_accepted(fmu_dir):
    """Accumulated t += h, a grid t0 + n*h with h = t_next - t (the project's master, the C host),
    nanosecond integer time converted to float (libcosim), a large start time."""
    s = initialized(fmu_dir, "Mass")
    t = 0.0
    for _ in range(2000):
        assert s.step(t, 0.1) == OK
        t += 0.1
    for start, step in ((3.7, 1e-3), (1e6 + 0.1, 0.01)):
        s = Raw(fmu_dir / "Mass.fmu", start_time=start)
        assert s.exit_init() == OK
        t = start
        for n in range(1000):
            t_next = start + (n + 1) * step
            assert s.step(t, t_next - t) == OK, s.errors()
            t = t_next
    s = initialized(fmu_dir, "Mass")
    ns, step_ns = 0, 1_000_000
    for _ in range(1000):
        assert s.step(ns * 1e-9, step_ns * 1e-9) == OK, s.errors()
        ns += step_ns


def test_a_step_ending_beyond_the_largest_float_is_refused(fmu_dir):
    s = initialized(fmu_dir, "Fixed")
    assert s.step(0.0, 1.5e308) == OK
    assert s.step(1.5e308, 1.5e308) == ERROR
    assert s.new_errors() == [
        "doStep refused: the end of the step, 1.5e+308 + 1.5e+308 s, is not a finite time"
    ]


def test_reset_brings_the_time_back_to_the_start(fmu_dir):
    s = Raw(fmu_dir / "Mass.fmu", start_time=2.0)
    assert s.put("Real", {"v_start": 1.0}) == OK
    assert s.exit_init() == OK
    assert s.step(2.0, 0.5) == OK
    assert s.call("fmi2Reset") == OK
    assert s.exit_init() == OK  # no fmi2SetupExperiment after the reset: the start time stays
    assert s.step(2.0, 0.5) == OK, s.errors()
    assert s.fetch("Real", ["s", "v"]) == (OK, [0.0, 0.0])  # start values again (v_start reset too)
    assert s.call("fmi2Reset") == OK
    assert s.call("fmi2SetupExperiment", 0, fmi2Real(0.0), fmi2Real(7.0), 0, fmi2Real(0.0)) == OK
    assert s.exit_init() == OK
    assert s.step(7.0, 0.5) == OK, s.errors()
