"""FMI behaviour every FMU shares: errors as fmi2Error with a message, no lost values,
state get/set/serialize bit-identical, fmi2Reset."""

import math

import pytest
from fmpy.fmi1 import FMICallException
from fmu_helpers import Slave

INVALID = [  # (FMU, parameter, bad value, expected range text)
    ("Mass", "m", -1.0, "(0.0, inf)"),
    ("Mass", "m", 0.0, "(0.0, inf)"),
    ("MassWithStopAndFriction", "m", 0.0, "(0.0, inf)"),
    ("MassWithStopAndFriction", "m", -2.0, "(0.0, inf)"),
    ("MassWithStopAndFriction", "v_small", -1e-3, "[0.0, inf)"),  # 0 is valid: not used
    ("Spring", "c", -5.0, "[0.0, inf)"),
    ("Damper", "d", -0.1, "[0.0, inf)"),
    ("SpringDamper", "c", -1.0, "[0.0, inf)"),
    ("SpringDamper", "d", -2.0, "[0.0, inf)"),
    ("Sine", "f", -1.0, "[0.0, inf)"),
    ("ElastoGap", "s_ref", 0.0, "(0.0, inf)"),
    ("ElastoGap", "s_ref", -1.0, "(0.0, inf)"),
    ("ElastoGap", "n", 0.5, "[1.0, inf)"),
    ("ElastoGap", "s_nominal", -1e-4, "[0.0, inf)"),  # 0 is valid: not used
    ("TranslationalHardstop", "b", -0.1, "[0.0, inf)"),
    ("TranslationalHardstop", "c", -1.0, "[0.0, inf)"),
    ("TranslationalHardstop", "d", -5.0, "[0.0, inf)"),
    ("TranslationalHardstop", "m_b", -1.0, "[0.0, inf)"),
    ("TranslationalHardstop", "s_nominal", -1e-4, "[0.0, inf)"),  # 0 valid
    ("EndStop", "ci", 1.5, "[0.0, 1.0]"),
    ("EndStop", "ci", -0.1, "[0.0, 1.0]"),
    ("EndStop", "k1", -1.0, "[0.0, inf)"),
    ("EndStop", "b2", -3.0, "[0.0, inf)"),
    ("EndStop", "mode", 3, "[1, 2]"),
    ("EndStop", "dvL", 0.0, "(0.0, inf)"),
    ("EndStop", "eps_tau", 0.0, "(0.0, inf)"),
    ("EndStop", "eps_sigma", 0.0, "(0.0, inf)"),
]
# valid parameters and inputs that make the outputs use the parameter under test (a division by
# the mass, by s_ref, by dvL, eps_tau, eps_sigma in the friction transition, ...)
CONTEXT = {
    "Mass": {"flange_a.f": -2.0},
    "MassWithStopAndFriction": {"flange_a.f": -20.0, "v_start": 0.5},
    "ElastoGap": {"flange_b.s": -0.1, "flange_b.v": -1.0, "flange_b.a": 2.0},
    "TranslationalHardstop": {"flange_b.s": 0.7, "flange_b.v": 1.0, "m_b": 1.0},
    "EndStop": {"friction": True, "adv": True, "ctr1.x": 0.02, "ctr1.v": 1e-4, "ctr1.a": 1.0},
    "Spring": {"flange_b.s": 0.2},
    "Damper": {"flange_b.v": 0.2},
    "SpringDamper": {"flange_b.v": 0.2},
}
CONTEXT_OVERRIDES = {("EndStop", "eps_tau"): {"kindTrans": 2}}


def _unit_text(s, name):
    unit = s.vars[name].unit
    return "" if unit in (None, "1") else " " + unit


def _real_outputs(s):
    return s.vr(
        [v.name for v in s.md.modelVariables if v.causality == "output" and v.type == "Real"]
    )


@pytest.mark.parametrize("name,param,value,rng", INVALID)
def test_invalid_parameter_ends_initialization_with_fmi2Error(fmu_dir, name, param, value, rng):
    s = Slave(fmu_dir / f"{name}.fmu")
    context = {
        k: v
        for k, v in {**CONTEXT.get(name, {}), **CONTEXT_OVERRIDES.get((name, param), {})}.items()
        if k != param
    }
    s.set(**{k.replace(".", "__"): v for k, v in context.items()}, **{param: value})
    s.fmu.enterInitializationMode()
    s.fmu.getReal(
        _real_outputs(s)
    )  # outputs read during initialization: nothing divides by the bad value
    with pytest.raises(FMICallException) as exc:
        s.fmu.exitInitializationMode()
    assert exc.value.status == 3  # fmi2Error, not fmi2Fatal
    # one clear message, not buried among tracebacks
    assert s.errors() == [
        f"Invalid parameter {param} = {value!r}{_unit_text(s, param)}: valid range {rng}"
    ], s.log
    s.fmu.getReal(_real_outputs(s))  # still readable, still no division
    # the instance is alive: stepping is refused with fmi2Error, and fmi2Reset recovers it
    with pytest.raises(FMICallException) as exc:
        s.fmu.doStep(0.0, 1e-3)
    assert exc.value.status == 3
    assert not any(
        "Traceback" in m or "ZeroDivisionError" in m or "internal error" in m for _, m in s.log
    ), s.log
    s.fmu.reset()
    s.fmu.setupExperiment(startTime=0.0)
    s.fmu.enterInitializationMode()
    s.fmu.exitInitializationMode()
    s.fmu.doStep(0.0, 1e-3)
    s.close()


@pytest.mark.parametrize("name,param", [("Mass", "L"), ("Fixed", "s0"), ("Sine", "amplitude")])
def test_nan_parameter_is_refused_and_the_value_kept(fmu_dir, name, param):
    s = Slave(fmu_dir / f"{name}.fmu")
    before = s.get(param)
    with pytest.raises(FMICallException) as exc:
        s.set(**{param: math.nan})
    assert exc.value.status == 3
    assert s.get(param) == before
    assert any(param in m and "nan" in m for m in s.errors())
    s.close()


def test_non_finite_input_is_refused_with_its_name_and_nothing_is_lost(fmu_dir):
    s = Slave(fmu_dir / "Spring.fmu").init(c=10.0)
    s.set(flange_b__s=0.5)
    with pytest.raises(FMICallException) as exc:
        s.set(flange_b__s=math.inf)
    assert exc.value.status == 3
    assert any("flange_b.s" in m and "inf" in m and "0.5 kept" in m for m in s.errors())
    assert s.get("flange_b.s") == 0.5 and s.get("f") == 5.0
    s.close()


STEPPING = {  # FMU: inputs to apply while stepping
    "Mass": {"flange_a.f": -3.0, "flange_b.f": 1.0},
    "Fixed": {"flange.f": 2.0},
    "Spring": {"flange_a.s": 0.1, "flange_b.s": 0.4},
    "Damper": {"flange_a.v": 0.1, "flange_b.v": -0.3},
    "SpringDamper": {"flange_a.s": 0.1, "flange_b.v": 0.2},
    "Force": {"f": 4.0, "flange.v": 1.5},
    "Sine": {},
}


@pytest.mark.parametrize("name", list(STEPPING))
def test_state_restore_and_deserialize_give_bit_identical_outputs(fmu_dir, name):
    s = Slave(fmu_dir / f"{name}.fmu").init()
    outputs = [v.name for v in s.md.modelVariables if v.causality == "output"]
    inputs = STEPPING[name]

    def run(k, t0):
        rows = []
        for i in range(k):
            for n, x in inputs.items():
                s.fmu.setReal(s.vr([n]), [x * (1 + 0.1 * i)])
            s.fmu.doStep(t0 + 1e-3 * i, 1e-3)  # from the FMU's time (fmi2DoStep checks it)
            rows.append(s.fmu.getReal(s.vr(outputs)))
        return rows

    run(3, 0.0)
    state = s.fmu.getFMUstate()
    first = run(5, 3e-3)
    s.fmu.setFMUstate(state)
    assert run(5, 3e-3) == first
    blob = s.fmu.serializeFMUstate(state)
    s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(blob))
    assert run(5, 3e-3) == first
    s.fmu.freeFMUstate(state)
    s.close()


def test_corrupt_serialized_state_is_an_error_not_a_crash(fmu_dir):
    s = Slave(fmu_dir / "Mass.fmu").init()
    with pytest.raises(FMICallException) as exc:  # refused by fmi2DeSerializeFMUstate itself
        s.fmu.deSerializeFMUstate(b"not json at all")
    assert exc.value.status == 3
    assert any("not a serialized FMU state" in m for m in s.errors())
    s.fmu.doStep(0.0, 1e-3)  # the instance is usable
    s.close()


def test_state_captures_internal_attributes_not_only_variables():
    """The base snapshots every plain-data attribute, including ones that are not FMI variables."""
    from contactfmu.components.Mass.slave import Mass

    slave = Mass(instance_name="m")
    slave.hidden = {"events": [1.0, 2.0]}
    state = slave._get_fmu_state()
    slave.hidden["events"].append(3.0)
    slave.s = 7.0
    restored = Mass._fmu_state_from_bytes(Mass._fmu_state_to_bytes(state))
    slave._set_fmu_state(restored)
    assert slave.hidden == {"events": [1.0, 2.0]} and slave.s == 0.0


def test_reset_restores_start_values(fmu_dir):
    s = Slave(fmu_dir / "Mass.fmu").init(s_start=1.0, v_start=2.0)
    s.fmu.doStep(0.0, 0.5)
    assert s.get("s") == 2.0
    s.fmu.reset()
    assert s.get("s", "v") == [0.0, 0.0]
    s.close()


def test_errors_reach_the_host_even_with_logging_off(fmu_dir):
    s = Slave(fmu_dir / "Damper.fmu")  # instantiated with loggingOn = False
    s.set(d=-1.0)
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException):
        s.fmu.exitInitializationMode()
    assert s.errors() == ["Invalid parameter d = -1.0 N.s/m: valid range [0.0, inf)"]


NON_FINITE = {  # FMU: (parameters, inputs that make an output overflow, an output named, remedy text or None)
    "Spring": (
        {"c": 1e10},
        {"flange_b.s": 1e300},
        "f = inf",
        "Remedy: a communication step well below sqrt(m/c) (= 1e-05 s for m = 1 kg), m being the mass the "
        "element moves, or a master that couples the element implicitly through its interface.c/interface.d "
        'outputs (contactfmu: scheme="implicit").',
    ),
    "Damper": (
        {"d": 1e10},
        {"flange_b.v": 1e300},
        "f = inf",
        "Remedy: a communication step below 2*m/d (= 2e-10 s",
    ),
    "SpringDamper": (
        {"c": 1e10, "d": 1e10},
        {"flange_b.v": 1e300},
        "flange_b.f = inf",
        "Remedy: a communication step below 2*m/d (= 2e-10 s for m = 1 kg; at h = 0.001 s only for "
        "m > h*d/2 = 5e+06 kg) and well below sqrt(m/c) (= 1e-05 s for m = 1 kg)",
    ),
    "ElastoGap": (
        {"c": 1e10, "d": 1e10},
        {"flange_b.s": -1e300},
        "flange_b.f = -inf",
        "Remedy: give m_a/m_b (the masses at the flanges; n = 1) or a communication step below 2*m/d",
    ),
    "EndStop": (
        {"k1": 1e10},
        {"ctr1.x": 1e300},
        "ctr1.F = inf",
        "Remedy: give m1/m2 (the masses at ctr1/ctr2) or a communication step below 2*m/d (= 0.02 s",
    ),
    "Mass": (
        {"m": 0.5},
        {"flange_a.f": -1e308},
        "a = inf",
        "Remedy: the force inputs are too large for the mass m = 0.5 kg over the step",
    ),
    "MassWithStopAndFriction": (
        {"m": 0.5},
        {"flange_a.f": -1e308},
        "a = inf",
        "Remedy: the force inputs are too large for the mass m = 0.5 kg over the step",
    ),
    "Fixed": ({}, {"flange.f": 1e308, "flange.f2": 1e308}, "f_support = -inf", None),
    "Force": ({}, {"f": 1e308, "flange.v": 10.0}, "power = inf", None),
    "Sine": (
        {"amplitude": 1e308, "f": 10.0, "startTime": 0.5},
        {},
        "der(y) = inf",
        None,
    ),  # in fmi2DoStep
}


@pytest.mark.parametrize("name", list(NON_FINITE))
def test_non_finite_output_is_an_error_of_the_element_that_computes_it(fmu_dir, name):
    """Every Real value a getter delivers (here computed from the inputs just set) and every Real
    output and published derivative after fmi2DoStep must be finite: otherwise that call returns
    fmi2Error, one message names the output, its value, the inputs and the element's remedy, and
    the outputs of the last successful step stay readable."""
    params, inputs, named, remedy = NON_FINITE[name]
    s = Slave(fmu_dir / f"{name}.fmu").init(**params)
    outputs = _real_outputs(s)
    s.fmu.doStep(0.0, 1e-3)
    before = s.fmu.getReal(outputs)
    s.set(**{k.replace(".", "__"): v for k, v in inputs.items()})
    call = "fmi2GetReal" if inputs else "fmi2DoStep"
    with pytest.raises(FMICallException) as exc:
        s.fmu.getReal(outputs) if inputs else s.fmu.doStep(1e-3, 1.0)
    assert exc.value.status == 3
    (message,) = s.errors()
    assert message.startswith(f"{name}: non-finite output"), message
    assert f" {named}" in message and f"s ({call})" in message, message
    for key, value in inputs.items():
        assert f"{key} = {value!r}" in message, message
    assert "the outputs keep their values from the last successful fmi2DoStep" in message
    if remedy:
        assert remedy in message, message
    else:
        assert "Remedy" not in message
    assert s.fmu.getReal(outputs) == before  # readable: the values of the last successful step
    with pytest.raises(FMICallException) as exc:  # and the instance is in error state
        s.fmu.doStep(1e-3, 1e-3)
    assert exc.value.status == 3
    s.close()
