"""The FMI 3.0 FMUs name FMI 3.0 functions and statuses in what they log and declare: the slaves
write FMI 2.0's names (fmi2SetReal, fmi2DoStep, ...), and their FMI 3.0 face (fmi/fmi3.py,
model_description3.in_fmi3_words) puts FMI 3.0's in their place (fmi3SetFloat64, fmi3DoStep)."""

import re
import zipfile
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

from contactfmu.fmi.model_description3 import FMI3_NAMES, in_fmi3_words

ERROR = 3


@pytest.fixture
def slave3(fmu3_dir, tmp_path):
    """A function (name) -> (an instantiated FMI 3.0 FMU, the (status, message) it logs)."""
    made = []

    def make(name):
        path = str(fmu3_dir / f"{name}.fmu")
        md = read_model_description(path)
        fmu = FMU3Slave(
            guid=md.guid,
            unzipDirectory=extract(path, unzipdir=str(tmp_path / f"{name}{len(made)}")),
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        messages = []
        fmu.instantiate(
            logMessage=lambda env, status, category, msg: messages.append((status, msg.decode()))
        )
        fmu.vr = {v.name: v.valueReference for v in md.modelVariables}
        made.append(fmu)
        return fmu, messages

    yield make
    for fmu in made:
        fmu.freeInstance()


def _refused(call):
    """Call; it must fail (fmpy raises on fmi3Error)."""
    with pytest.raises(Exception, match="status 3"):
        call()


def test_refused_calls_name_the_fmi3_function(slave3):
    """Every refusal of the FMI 3.0 Mass names the FMI 3.0 function called (the messages of the
    FMI 2.0 build name fmi2SetReal, fmi2GetInteger, fmi2SetFMUstate, fmi2DeSerializeFMUstate,
    fmi2SerializeFMUstate, fmi2SetupExperiment and fmi2Reset there)."""
    fmu, messages = slave3("Mass")
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    vr = fmu.vr
    _refused(lambda: fmu.setFloat64([vr["m"]], [5.0]))
    _refused(lambda: fmu.setFloat64([vr["v"]], [1.0]))
    _refused(lambda: fmu.getInt32([vr["v"]]))
    _refused(lambda: fmu.setFloat64([vr["flange_a.f"]], [float("nan")]))
    _refused(lambda: fmu.doStep(1.0, 0.1))
    altered = bytearray(fmu.serializeFMUState(fmu.getFMUState()))
    altered[-5] ^= 1
    _refused(lambda: fmu.deserializeFMUState(bytes(altered)))
    _refused(lambda: fmu.enterInitializationMode(startTime=0.0))
    texts = [m for s, m in messages if s == ERROR]
    expected = [
        "fmi3SetFloat64 refused: parameter m is fixed after initialization",
        "fmi3SetFloat64 refused: v is an output and cannot be set",
        f"fmi3GetInt32 refused: v (value reference {vr['v']}) is a Real variable",
        "fmi3SetFloat64 refused: non-finite value nan for input flange_a.f",
        "doStep refused: currentCommunicationPoint = 1.0 s is not the time of Mass",
        "fmi3DeserializeFMUState refused: corrupted: not a serialized FMU state as "
        "fmi3SerializeFMUState wrote it",
        # the shim's state machine refuses it before the slave sees it
        "contactfmu: fmi3EnterInitializationMode is not allowed in Step Mode",
    ]
    assert len(texts) == len(expected), texts
    for text, start in zip(texts, expected):
        assert text.startswith(start), (text, start)
    assert "restores an earlier state with fmi3SetFMUState first" in texts[4]
    assert not [m for _, m in messages if "fmi2" in m], messages


def test_a_failed_step_names_fmi3DoStep(slave3):
    """A non-finite output in the step (Damper, flange_b.a = 1.797e308: der(f) = inf) is an
    fmi3Error of fmi3DoStep, the message naming it."""
    fmu, messages = slave3("Damper")
    fmu.enterInitializationMode(startTime=0.0)
    fmu.setFloat64([fmu.vr["d"]], [10.0])
    fmu.exitInitializationMode()
    fmu.setFloat64([fmu.vr["flange_b.a"]], [1.797e308])
    _refused(lambda: fmu.doStep(0.0, 0.95))
    (message,) = [m for s, m in messages if s == ERROR]
    assert message.startswith("Damper: non-finite output") and "(fmi3DoStep)" in message
    assert "fmi2" not in message


def test_the_fmi3_model_descriptions_name_no_fmi2_status(fmu3_dir):
    """The log categories of every FMI 3.0 FMU describe FMI 3.0 statuses."""
    for path in sorted(fmu3_dir.glob("*.fmu")):
        with zipfile.ZipFile(path) as z:
            md = z.read("modelDescription.xml").decode()
        assert "fmi2" not in md, path.name
        assert 'description="Messages with status fmi3Error"' in md, path.name


@pytest.mark.parametrize(
    "text, expected",
    [
        ("fmi2DoStep refused", "fmi3DoStep refused"),
        ("(fmi2GetReal)", "(fmi3GetFloat64)"),
        ("fmi2GetRealOutputDerivatives refused", "fmi3GetOutputDerivatives refused"),
        (
            "fmi2SetFMUstate (to an earlier state) or fmi2Reset",
            "fmi3SetFMUState (to an earlier state) or fmi3Reset",
        ),
        ("fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState"),
        ("fmi2SerializedFMUstateSize", "fmi3SerializedFMUStateSize"),
        ("Messages with status fmi2Warning", "Messages with status fmi3Warning"),
        ("fmi2SetupExperiment refused", "fmi3EnterInitializationMode refused"),
        ("no function named", "no function named"),
    ],
)
def test_fmi2_names_in_fmi3_words(text, expected):
    assert in_fmi3_words(text) == expected


def test_every_renamed_function_is_an_fmi3_function():
    """The FMI 3.0 names of the table are functions the FMI 3.0 header declares (fmpy's copy)."""
    import fmpy

    header = (Path(fmpy.__file__).parent / "c-code" / "fmi3Functions.h").read_text()
    declared = set(re.findall(r"\bfmi3[A-Z][A-Za-z0-9]+", header))
    assert set(FMI3_NAMES.values()) <= declared, set(FMI3_NAMES.values()) - declared
    # the names the rule fmi2<Name> -> fmi3<Name> gives for the calls the slaves name
    for name in ("DoStep", "Reset", "Terminate", "ExitInitializationMode", "GetBoolean"):
        assert in_fmi3_words(f"fmi2{name}") in declared
