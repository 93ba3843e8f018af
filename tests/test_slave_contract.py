"""FMI behaviour every FMU shares: errors as fmi2Error with a message, no lost values,
state get/set/serialize bit-identical, fmi2Reset."""
import math

import pytest
from fmpy.fmi1 import FMICallException

from fmu_helpers import Slave

INVALID = [  # (FMU, parameter, bad value, expected range text)
    ("Mass", "m", -1.0, "(0.0, inf)"),
    ("Mass", "m", 0.0, "(0.0, inf)"),
    ("Spring", "c", -5.0, "[0.0, inf)"),
    ("Damper", "d", -0.1, "[0.0, inf)"),
    ("SpringDamper", "c", -1.0, "[0.0, inf)"),
    ("SpringDamper", "d", -2.0, "[0.0, inf)"),
    ("Sine", "f", -1.0, "[0.0, inf)"),
    ("TranslationalHardstop", "b", -0.1, "[0.0, inf)"),
    ("TranslationalHardstop", "c", -1.0, "[0.0, inf)"),
    ("TranslationalHardstop", "d", -5.0, "[0.0, inf)"),
    ("TranslationalHardstop", "m_b", -1.0, "[0.0, inf)"),
    ("TranslationalHardstop", "s_nominal", 0.0, "(0.0, inf)"),
    ("EndStop", "ci", 1.5, "[0.0, 1.0]"),
    ("EndStop", "ci", -0.1, "[0.0, 1.0]"),
    ("EndStop", "k1", -1.0, "[0.0, inf)"),
    ("EndStop", "b2", -3.0, "[0.0, inf)"),
    ("EndStop", "mode", 3, "[1, 2]"),
    ("EndStop", "dvL", 0.0, "(0.0, inf)"),
]


@pytest.mark.parametrize("name,param,value,rng", INVALID)
def test_invalid_parameter_ends_initialization_with_fmi2Error(fmu_dir, name, param, value, rng):
    s = Slave(fmu_dir / f"{name}.fmu")
    s.set(**{param: value})
    s.fmu.enterInitializationMode()
    with pytest.raises(FMICallException) as exc:
        s.fmu.exitInitializationMode()
    assert exc.value.status == 3  # fmi2Error, not fmi2Fatal
    assert any(f"{param} = {value!r}" in m and rng in m for m in s.errors()), s.log
    # the instance is alive: stepping is refused with fmi2Error, and fmi2Reset recovers it
    with pytest.raises(FMICallException) as exc:
        s.fmu.doStep(0.0, 1e-3)
    assert exc.value.status == 3
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

    def run(k):
        rows = []
        for i in range(k):
            for n, x in inputs.items():
                s.fmu.setReal(s.vr([n]), [x * (1 + 0.1 * i)])
            s.fmu.doStep(0.01 + 1e-3 * i, 1e-3)
            rows.append(s.fmu.getReal(s.vr(outputs)))
        return rows

    run(3)
    state = s.fmu.getFMUstate()
    first = run(5)
    s.fmu.setFMUstate(state)
    assert run(5) == first
    blob = s.fmu.serializeFMUstate(state)
    s.fmu.setFMUstate(s.fmu.deSerializeFMUstate(blob))
    assert run(5) == first
    s.fmu.freeFMUstate(state)
    s.close()


def test_corrupt_serialized_state_is_an_error_not_a_crash(fmu_dir):
    s = Slave(fmu_dir / "Mass.fmu").init()
    state = s.fmu.deSerializeFMUstate(b"not json at all")
    with pytest.raises(FMICallException) as exc:
        s.fmu.setFMUstate(state)
    assert exc.value.status == 3
    assert any("invalid FMU state" in m for m in s.errors())
    s.close()


def test_state_captures_internal_attributes_not_only_variables():
    """The base snapshots every plain-data attribute, including ones that are not FMI variables."""
    from contactfmu.fmus.mass import Mass

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
