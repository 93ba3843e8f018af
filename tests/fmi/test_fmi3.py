"""The FMI 3.0 co-simulation build: every FMU built from the same slave class as its
FMI 2.0 FMU, valid for fmpy, with the same variables, value references, units, ranges and
descriptions, the same results in fmpy bit for bit (both builds loaded in one process: the default
experiment, and flanges driven by sinusoids, parameters changed, no event), the same flange
terminals; an invalid parameter stops the run with the parameter named; and the Reference-FMUs'
fmusim (when CONTACTFMU_FMI_TOOLS names its folder) runs the FMI 3 Mass with every combination of
--early-return-allowed and --event-mode-used, exit status 0 and fmpy's results.

What pythonfmu3's library cannot do (errors of setters and of fmi3ExitInitializationMode reported
as fmi3OK, no early return, no events) and the status shim adds is in docs/fmi3.md; the events:
test_fmi3_events.py."""

import math
import os
import subprocess
import zipfile

import numpy as np
import pytest
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave
from fmpy.util import read_csv

from contactfmu.build import python_record
from contactfmu.components import NAMES
from contactfmu.fmi import terminals
from contactfmu.fmi.shim import CONTROL_VR, DERIVATIVE_VR
from contactfmu.validation import problems

TYPES = {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean"}
ERROR = 3  # fmi3Error


@pytest.mark.parametrize("name", NAMES)
def test_the_fmi3_fmu_is_valid(fmu3_dir, name):
    assert problems(fmu3_dir / f"{name}.fmu") == []


@pytest.mark.parametrize("name", NAMES)
def test_the_fmi3_fmu_has_the_variables_of_the_fmi2_one(fmu_dir, fmu3_dir, name):
    md2 = read_model_description(str(fmu_dir / f"{name}.fmu"))
    md3 = read_model_description(str(fmu3_dir / f"{name}.fmu"))
    assert (md2.fmiVersion, md3.fmiVersion) == ("2.0", "3.0")
    (time,) = [v for v in md3.modelVariables if v.causality == "independent"]
    assert (time.name, time.unit, time.valueReference) == ("time", "s", len(md2.modelVariables))

    def row(v, fmi3):
        return (
            v.name,
            v.valueReference,
            v.type if fmi3 else TYPES[v.type],
            v.causality,
            v.variability,
            v.initial,
            v.unit,
            v.min,
            v.max,
            v.start,
            v.description,
        )

    assert [row(v, True) for v in md3.modelVariables if v is not time] == [
        row(v, False) for v in md2.modelVariables
    ]
    deps2 = {u.variable.name: sorted(d.name for d in u.dependencies) for u in md2.outputs}
    deps3 = {u.variable.name: sorted(d.name for d in u.dependencies) for u in md3.outputs}
    assert deps3 == deps2 and len(deps2) == sum(v.causality == "output" for v in md2.modelVariables)
    assert md3.defaultExperiment.stopTime == md2.defaultExperiment.stopTime
    with (
        zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z2,
        zipfile.ZipFile(fmu3_dir / f"{name}.fmu") as z3,
    ):
        if terminals.PATH in z2.namelist():
            assert z3.read(terminals.PATH) == z2.read(terminals.PATH)
        else:  # a component without flanges (Sine)
            assert terminals.PATH not in z3.namelist()


def _assert_same(r2, r3):
    assert r3.dtype.names == r2.dtype.names
    assert len(r3) == len(r2) > 1
    for column in r2.dtype.names:
        np.testing.assert_array_equal(r3[column], r2[column], err_msg=column)


@pytest.mark.parametrize("name", NAMES)
def test_every_fmi3_fmu_runs_its_default_experiment_like_the_fmi2_one(fmu_dir, fmu3_dir, name):
    r2 = simulate_fmu(str(fmu_dir / f"{name}.fmu"), fmi_type="CoSimulation")
    r3 = simulate_fmu(str(fmu3_dir / f"{name}.fmu"), fmi_type="CoSimulation")
    md = read_model_description(str(fmu_dir / f"{name}.fmu"))
    assert r2["time"][-1] == pytest.approx(float(md.defaultExperiment.stopTime))
    _assert_same(r2, r3)


SECOND_FLANGE = ("flange_b.", "ctr2.")  # the second flange of a two-flange component


def _driven_inputs(md, stop, h):
    """Every Real input driven: the flange positions (m) s = s0 + A sin(w t) with the velocity and
    acceleration (m/s, m/s2) that belong to it, the first flange A = 2 mm at 3 Hz about 0, the
    second 5 mm at 5 Hz about 20 mm; forces (N) a few newtons at those frequencies; any other
    input (a temperature) its start value + 10 sin(w t)."""
    t = np.arange(0.0, stop + h / 2, h)
    columns = [("time", t)]
    for v in md.modelVariables:
        if v.causality != "input" or v.type != "Real":
            continue
        k = 1 if v.name.startswith(SECOND_FLANGE) else 0
        w, a, s0 = 2 * math.pi * (3.0, 5.0)[k], (0.002, 0.005)[k], (0.0, 0.02)[k]
        if v.unit == "m":
            x = s0 + a * np.sin(w * t)
        elif v.unit == "m/s":
            x = a * w * np.cos(w * t)
        elif v.unit == "m/s2":
            x = -a * w * w * np.sin(w * t)
        elif v.unit == "N":
            x = (3.0, 2.0)[k] / len(columns) * np.sin(w * t)
        else:
            x = float(v.start) + 10.0 * np.sin(w * t)
        columns.append((v.name, x))
    return np.array(list(zip(*(c for _, c in columns))), dtype=[(n, float) for n, _ in columns])


# parameters other than the defaults, Integer and Boolean ones among them (fmi3SetInt32,
# fmi3SetBoolean); none makes an event happen in the driven run
DRIVEN_STARTS = {
    "Damper": {"d": 2.0},
    "ElastoGap": {"c": 1e4, "d": 10.0, "n": 1.5, "useHeatPort": True},
    "EndStop": {"ci": 0.5, "kind": 2, "k1": 2e6},
    "Fixed": {"s0": 0.3},
    "Mass": {"m": 2.0, "L": 0.1, "v_start": 0.5},
    "MassWithStopAndFriction": {"m": 2.0, "useHeatPort": True},
    "Sine": {"amplitude": 2.0, "f": 3.0, "phase": 0.5, "offset": 0.1},
    "Spring": {"c": 100.0, "s_rel0": 0.01},
    "SpringDamper": {"c": 100.0, "d": 3.0},
    "TranslationalHardstop": {"b": 0.5},
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "early,event_mode", [(False, False), (True, False), (False, True), (True, True)]
)
def test_every_fmi3_fmu_follows_driven_inputs_like_the_fmi2_one(
    fmu_dir, fmu3_dir, name, early, event_mode
):
    """With or without early return and event mode: no event happens in the run, so the FMI 3.0
    FMU's results equal the FMI 2.0 FMU's bit for bit."""
    md = read_model_description(str(fmu_dir / f"{name}.fmu"))
    starts = DRIVEN_STARTS.get(name, {})
    kwargs = dict(
        stop_time=0.2,
        step_size=1e-3,
        output_interval=1e-3,
        input=_driven_inputs(md, 0.2, 1e-3),
        start_values=starts,
        output=[v.name for v in md.modelVariables if v.causality == "output"] + list(starts),
        fmi_type="CoSimulation",
    )
    r2 = simulate_fmu(str(fmu_dir / f"{name}.fmu"), **kwargs)
    r3 = simulate_fmu(
        str(fmu3_dir / f"{name}.fmu"),
        early_return_allowed=early,
        use_event_mode=event_mode,
        **kwargs,
    )
    _assert_same(r2, r3)
    assert len(r3) == 201
    for parameter, value in starts.items():  # set and read back through FMI 3.0
        assert r3[parameter][-1] == value, parameter
    types = {v.name: v.type for v in md.modelVariables}
    discrete = [c for c in r3.dtype.names if types.get(c) in ("Integer", "Boolean")]
    assert all(len(np.unique(r3[c])) == 1 for c in discrete), "an event happened"
    moving = [c for c in r3.dtype.names if c != "time" and len(np.unique(r3[c])) > 1]
    assert moving  # the inputs or the parameters moved something


def _force_input(stop, h):
    t = np.arange(0.0, stop + h / 2, h)
    return np.array(
        list(zip(t, -3.0 * np.sin(7.0 * t), 0.5 * t)),
        dtype=[("time", float), ("flange_a.f", float), ("flange_b.f2", float)],
    )


def test_fmi3_mass_runs_like_the_fmi2_mass_in_one_process(fmu_dir, fmu3_dir):
    kwargs = dict(
        stop_time=0.5,
        output_interval=1e-3,
        step_size=1e-3,
        start_values={"m": 2.0, "v_start": 1.0, "s_start": 0.2, "L": 0.1},
        input=_force_input(0.5, 1e-3),
        output=["s", "v", "a", "flange_a.s", "flange_b.s", "interface.m"],
        fmi_type="CoSimulation",
    )
    r2 = simulate_fmu(str(fmu_dir / "Mass.fmu"), **kwargs)
    r3 = simulate_fmu(str(fmu3_dir / "Mass.fmu"), **kwargs)
    assert len(r3) == len(r2) == 501
    for column in r2.dtype.names:
        np.testing.assert_array_equal(r3[column], r2[column], err_msg=column)
    assert r3["v"][-1] != 1.0 and r3["interface.m"][-1] == 2.0  # the forces moved it


def test_the_fmi3_fmu_runs_from_any_start_time_like_the_fmi2_one(fmu_dir, fmu3_dir):
    """fmpy from start_time 1.25 s (pythonfmu3's library drops fmi3EnterInitializationMode's
    startTime; the status shim passes it): the FMI 3.0 Mass runs as the FMI 2.0 one, bit for bit,
    and moves as the closed form, s = s_start + v_start*(t - 1.25) with no force."""
    kwargs = dict(
        start_time=1.25,
        stop_time=1.75,
        output_interval=0.05,
        start_values={"v_start": 2.0, "s_start": 0.5},
        output=["s", "v"],
        fmi_type="CoSimulation",
    )
    r2 = simulate_fmu(str(fmu_dir / "Mass.fmu"), **kwargs)
    r3 = simulate_fmu(str(fmu3_dir / "Mass.fmu"), **kwargs)
    assert r3["time"][0] == 1.25 and r3["time"][-1] == pytest.approx(1.75, abs=1e-12)
    for column in r2.dtype.names:
        np.testing.assert_array_equal(r3[column], r2[column], err_msg=column)
    np.testing.assert_allclose(r3["s"], 0.5 + 2.0 * (r3["time"] - 1.25), rtol=0, atol=1e-12)


def test_an_invalid_parameter_stops_the_fmi3_run_naming_it(fmu3_dir, tmp_path):
    messages = []

    def logger(*args):  # FMI 3.0: (instanceEnvironment, status, category, message)
        messages.append(args[-1].decode())

    # extracted here: fmpy removes its own unzip directory only after a run that succeeded
    unzipped = extract(str(fmu3_dir / "Mass.fmu"), unzipdir=str(tmp_path / "Mass"))
    with pytest.raises(FMICallException) as failed:
        simulate_fmu(
            unzipped,
            stop_time=0.01,
            step_size=1e-3,
            start_values={"m": 0.0},
            fmi_type="CoSimulation",
            logger=logger,
        )
    # the call itself fails (the FMI 3.0 status shim), not the first fmi3DoStep
    assert (failed.value.function, failed.value.status) == ("fmi3ExitInitializationMode", ERROR)
    assert any("Invalid parameter m = 0.0 kg: valid range (0.0, inf)" in m for m in messages)


# ---- errors as errors: the FMI 3.0 status shim (fmi/fmi3_status_shim.c), through fmpy ------------


@pytest.fixture
def mass3(fmu3_dir, tmp_path):
    """An instantiated FMI 3.0 Mass (fmpy's FMU3Slave) and the (status, message) it logged."""
    path = str(fmu3_dir / "Mass.fmu")
    md = read_model_description(path)
    fmu = FMU3Slave(
        guid=md.guid,
        unzipDirectory=extract(path, unzipdir=str(tmp_path / "Mass")),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName="mass3",
    )
    messages = []
    fmu.instantiate(
        logMessage=lambda env, status, category, msg: messages.append((status, msg.decode()))
    )
    fmu.vr = {v.name: v.valueReference for v in md.modelVariables}
    yield fmu, messages
    fmu.freeInstance()


def test_a_refused_fmi3_setter_returns_error_and_the_instance_goes_on(mass3):
    fmu, messages = mass3
    fmu.enterInitializationMode(startTime=0.0)
    fmu.setFloat64([fmu.vr["m"]], [2.0])
    fmu.exitInitializationMode()
    with pytest.raises(FMICallException) as failed:  # a parameter after initialization
        fmu.setFloat64([fmu.vr["m"]], [5.0])
    assert (failed.value.function, failed.value.status) == ("fmi3SetFloat64", ERROR)
    assert (
        messages[-1][0] == ERROR and "parameter m is fixed after initialization" in messages[-1][1]
    )
    with pytest.raises(FMICallException) as failed:  # an output
        fmu.setFloat64([fmu.vr["v"]], [1.0])
    assert (failed.value.function, failed.value.status) == ("fmi3SetFloat64", ERROR)
    fmu.setFloat64([fmu.vr["flange_a.f"]], [-4.0])  # an input: fmi3OK
    fmu.doStep(0.0, 0.5)
    assert fmu.getFloat64([fmu.vr["m"], fmu.vr["v"]]) == [2.0, 1.0]  # m a = -f, kept m = 2


def test_fmi3_getters_and_setters_refuse_a_wrong_nvalues_and_the_shims_value_references(mass3):
    """nValues must equal nValueReferences (every variable is a scalar; pythonfmu3's library
    alone returned fmi3OK and left a SystemError set); the shim's own value references (its
    channel to the slave, the derivative slots) are declared in no model description and are
    refused, so an importer cannot turn early return on through them."""
    fmu, messages = mass3
    fmu.enterInitializationMode(startTime=0.0)
    fmu.setFloat64([fmu.vr["m"]], [2.0])
    fmu.exitInitializationMode()
    with pytest.raises(FMICallException) as failed:
        fmu.getFloat64([fmu.vr["v"]], nValues=2)
    assert (failed.value.function, failed.value.status) == ("fmi3GetFloat64", ERROR)
    assert messages[-1] == (
        ERROR,
        "contactfmu: fmi3GetFloat64: nValues = 2, but the 1 value references name scalar "
        "variables: nValues must be 1",
    )
    for vr, call in (
        (CONTROL_VR, lambda: fmu.getFloat64([CONTROL_VR])),
        (CONTROL_VR + 1, lambda: fmu.getBoolean([CONTROL_VR + 1])),
        (CONTROL_VR, lambda: fmu.setBoolean([CONTROL_VR], [True])),
        (DERIVATIVE_VR + fmu.vr["v"], lambda: fmu.getFloat64([DERIVATIVE_VR + fmu.vr["v"]])),
    ):
        with pytest.raises(FMICallException) as failed:
            call()
        assert failed.value.status == ERROR
        assert f"value reference {vr} is not a variable of this FMU" in messages[-1][1]
    fmu.setFloat64([fmu.vr["flange_a.f"]], [-4.0])
    fmu.doStep(0.0, 0.5)
    assert fmu.getFloat64([fmu.vr["m"], fmu.vr["v"]]) == [2.0, 1.0]


def test_fmi3_functions_the_fmu_lacks_return_error_and_the_host_survives(mass3):
    fmu, messages = mass3
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    # pythonfmu3's library alone throws a C++ exception out of these (the process aborts)
    for call in (
        lambda: fmu.getFloat32([fmu.vr["v"]]),
        lambda: fmu.setInt64([fmu.vr["v"]], [1]),
        lambda: fmu.getString([fmu.vr["v"]]),
        lambda: fmu.getOutputDerivatives([fmu.vr["v"]], [1]),
    ):
        with pytest.raises(FMICallException) as failed:
            call()
        assert failed.value.status == ERROR
        assert messages[-1] == (
            ERROR,
            f"contactfmu: {failed.value.function} is not supported by this FMU",
        )
    fmu.doStep(0.0, 0.1)
    assert fmu.getFloat64([fmu.vr["v"]]) == [0.0]


# ---- fmusim (Reference-FMUs v0.0.39), FMI 3.0 co-simulation -------------------------------------

TOOLS = os.environ.get("CONTACTFMU_FMI_TOOLS")


@pytest.mark.skipif(
    not TOOLS, reason="CONTACTFMU_FMI_TOOLS is not set: set it to the folder holding fmusim"
)
@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--early-return-allowed",),
        ("--event-mode-used",),
        ("--early-return-allowed", "--event-mode-used"),
    ],
)
def test_fmusim_runs_the_fmi3_mass_like_fmpy(fmu3_dir, tmp_path, flags):
    record = dict(line.split("=", 1) for line in python_record().splitlines() if "=" in line)
    assert record["libpython"], "the building Python has no shared libpython"
    out = tmp_path / "out.csv"
    starts = {"m": 2.0, "v_start": 1.0, "flange_a.f": -4.0}
    cmd = [os.path.join(TOOLS, "fmusim"), "--interface-type", "cs", "--stop-time", "1"]
    cmd += ["--output-interval", "1e-3", "--output-file", str(out), *flags]
    for name, value in starts.items():
        cmd += ["--start-value", name, repr(value)]
    # an empty environment: the FMU loads libpython itself
    proc = subprocess.run(
        [*cmd, str(fmu3_dir / "Mass.fmu")], env={}, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = read_csv(str(out))
    reference = simulate_fmu(
        str(fmu3_dir / "Mass.fmu"),
        stop_time=1.0,
        output_interval=1e-3,
        step_size=1e-3,
        start_values=starts,
        fmi_type="CoSimulation",
        output=["s", "v", "a"],
    )
    assert len(result) == len(reference) == 1001
    for column in ("s", "v", "a"):
        np.testing.assert_allclose(result[column], reference[column], rtol=1e-15, atol=0)
    # m*a = -flange_a.f: v = 1 + 2 t, s = t + t^2
    assert result["v"][-1] == pytest.approx(3.0) and result["s"][-1] == pytest.approx(2.0)


# ---- FMU state (fmi3GetFMUState, serialization) -------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_fmi3_fmu_saves_serializes_and_restores_its_state(fmu3_dir, tmp_path, name):
    """The state of a slave holding objects of its own package (a law's parameters, the coupling)
    is captured too: the FMI 3.0 slave class lives in the entry script, outside the package
    (fmi3.Fmi3Slave._build). A step repeated from the restored and from the deserialized state
    gives the same outputs, bit for bit."""
    path = str(fmu3_dir / f"{name}.fmu")
    md = read_model_description(path)
    fmu = FMU3Slave(
        guid=md.guid,
        unzipDirectory=extract(path, unzipdir=str(tmp_path / name)),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=name,
    )
    messages = []
    fmu.instantiate(logMessage=lambda env, status, category, msg: messages.append(msg.decode()))
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    outputs = [v.valueReference for v in md.modelVariables if v.type == "Float64"]
    fmu.doStep(0.0, 0.01)
    state = fmu.getFMUState()
    copy = fmu.deserializeFMUState(fmu.serializeFMUState(state))
    fmu.doStep(0.01, 0.01)
    after = fmu.getFloat64(outputs)
    for saved in (state, copy):
        fmu.setFMUState(saved)
        fmu.doStep(0.01, 0.01)
        assert fmu.getFloat64(outputs) == after
        fmu.freeFMUState(saved)
    assert not messages, messages
    fmu.terminate()
    fmu.freeInstance()
