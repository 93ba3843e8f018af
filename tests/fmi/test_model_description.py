"""The model descriptions the slave base writes (fmi/model_description.py: FMI 2.0,
fmi/model_description3.py: FMI 3.0), in-process from a probe slave's variable table, without an
FMU: every attribute written against the rules of the module docstrings and of the standards
(element order of the schema, value references, 1-based indices in FMI 2.0's ModelStructure,
dependencies of the outputs and InitialUnknowns, units with their SI exponents, the
DefaultExperiment), and the result valid under fmpy's copy of the schemas."""

import re
import uuid
from xml.etree import ElementTree

import pytest
from fmpy import read_model_description
from pythonfmu.default_experiment import DefaultExperiment

from contactfmu.fmi.fmi3 import Fmi3Slave
from contactfmu.fmi.model_description3 import time_vr
from contactfmu.fmi.slave import Slave
from contactfmu.fmi.variables import inp, out, parameter

CATEGORIES = {
    "logStatusWarning": "Messages with status fmi2Warning",
    "logStatusDiscard": "Messages with status fmi2Discard",
    "logStatusError": "Messages with status fmi2Error",
    "logStatusFatal": "Messages with status fmi2Fatal",
    "logAll": "All messages",
}


class Probe(Slave):
    description = "  A probe\n    of the   writers  "
    default_experiment = DefaultExperiment(start_time=0.0, stop_time=2.0, step_size=1e-3)
    VARIABLES = [
        parameter("m", 2.0, "kg", "mass", min=0.0, min_exclusive=True),  # vr 0
        parameter("n", 3, "1", "a count", min=1, max=9),  # vr 1
        parameter("flag", True, None, "a switch"),  # vr 2
        inp("f", 0.5, "N", "force"),  # vr 3
        inp("k", 0, None, "an Integer input"),  # vr 4
        out("s", "m", "position", start=0.25),  # vr 5, initial exact
        out("v", "m/s", "velocity", derivative=True),  # vr 6
        out("a", "m/s2", "acceleration", depends=("f",)),  # vr 7
        out("mode", None, "a mode", depends=("k", "f"), kind="Integer"),  # vr 8
    ]

    def step(self, t, h):
        pass


class Interpolating(Slave):
    """Takes input derivatives, publishes none, every output has a start value, a
    DefaultExperiment with a stop time and a tolerance only."""

    model_name = "Other"
    INPUT_DERIVATIVES = True
    default_experiment = DefaultExperiment(stop_time=1, tolerance=1e-6)
    VARIABLES = [inp("u", 0.0, "m", "input"), out("y", "m", "output", depends=("u",), start=0.0)]

    def step(self, t, h):
        pass


class Bare(Slave):
    """No DefaultExperiment, no unit."""

    VARIABLES = [inp("u", 0, None, "input"), out("y", None, "output", kind="Boolean")]

    def step(self, t, h):
        pass


class Probe3(Fmi3Slave, Probe):
    pass


def _xml(cls):
    return cls(instance_name="probe", resources="/tmp").to_xml()


def _valid(root, tmp_path):
    """fmpy reads (and validates against its schema) the model description."""
    ElementTree.indent(root)
    (tmp_path / "modelDescription.xml").write_bytes(
        ElementTree.tostring(root, encoding="UTF-8", xml_declaration=True)
    )
    return read_model_description(
        str(tmp_path), validate=True, validate_variable_names=True, validate_model_structure=True
    )


def _token(text):
    assert re.fullmatch(r"\{[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\}", text)
    return uuid.UUID(text[1:-1])


def test_fmi2_root_and_cosimulation_attributes():
    root = _xml(Probe)
    attrib = dict(root.attrib)
    _token(attrib.pop("guid"))
    assert attrib == {
        "fmiVersion": "2.0",
        "modelName": "Probe",
        "description": "A probe of the writers",  # whitespace runs collapsed
        "author": "contactfmu",
        "version": "0.1.0",
        "license": "BSD-3-Clause",
        "generationTool": "contactfmu (pythonfmu)",
        "variableNamingConvention": "structured",
        "numberOfEventIndicators": "0",
    }
    assert [c.tag for c in root] == [
        "CoSimulation",
        "UnitDefinitions",
        "LogCategories",
        "DefaultExperiment",
        "ModelVariables",
        "ModelStructure",
    ]
    assert root.find("CoSimulation").attrib == {
        "modelIdentifier": "Probe",
        "needsExecutionTool": "true",
        "canHandleVariableCommunicationStepSize": "true",
        "canInterpolateInputs": "false",  # INPUT_DERIVATIVES is False
        "maxOutputDerivativeOrder": "1",  # v publishes its derivative
        "canRunAsynchronuously": "false",
        "canBeInstantiatedOnlyOncePerProcess": "false",
        "canNotUseMemoryManagementFunctions": "true",
        "canGetAndSetFMUstate": "true",
        "canSerializeFMUstate": "true",
        "providesDirectionalDerivative": "false",
    }


def test_every_model_description_has_a_guid_of_its_own():
    assert _token(_xml(Probe).get("guid")) != _token(_xml(Probe).get("guid"))


def test_input_derivatives_and_no_output_derivative_are_declared():
    root = _xml(Interpolating)
    assert root.get("modelName") == "Other" and root.get("description") == ""
    cs = root.find("CoSimulation")
    assert cs.get("modelIdentifier") == "Other"
    assert (cs.get("canInterpolateInputs"), cs.get("maxOutputDerivativeOrder")) == ("true", "0")


def test_unit_definitions_log_categories_and_default_experiment():
    root = _xml(Probe)
    units = {
        u.get("name"): (
            [c.tag for c in u],
            {k: int(v) for k, v in u.find("BaseUnit").attrib.items()},
        )
        for u in root.find("UnitDefinitions")
    }
    # every unit of the table once, sorted, with its SI exponents (N = kg m s-2)
    assert list(units) == ["1", "N", "kg", "m", "m/s", "m/s2"]
    assert units == {
        "1": (["BaseUnit"], {}),
        "N": (["BaseUnit"], {"kg": 1, "m": 1, "s": -2}),
        "kg": (["BaseUnit"], {"kg": 1}),
        "m": (["BaseUnit"], {"m": 1}),
        "m/s": (["BaseUnit"], {"m": 1, "s": -1}),
        "m/s2": (["BaseUnit"], {"m": 1, "s": -2}),
    }
    assert [c.attrib for c in root.find("LogCategories")] == [
        {"name": k, "description": v} for k, v in CATEGORIES.items()
    ]
    assert [c.tag for c in root.find("LogCategories")] == ["Category"] * 5
    assert root.find("DefaultExperiment").attrib == {
        "startTime": "0.0",
        "stopTime": "2.0",
        "stepSize": "0.001",
    }
    # the fields left None are left out, the others written as floats
    assert _xml(Interpolating).find("DefaultExperiment").attrib == {
        "stopTime": "1.0",
        "tolerance": "1e-06",
    }


def test_a_slave_without_units_or_default_experiment_writes_neither():
    root = _xml(Bare)
    assert [c.tag for c in root] == [
        "CoSimulation",
        "LogCategories",
        "ModelVariables",
        "ModelStructure",
    ]
    assert root.find("CoSimulation").get("maxOutputDerivativeOrder") == "0"


def test_fmi2_model_variables():
    rows = [
        (sv.attrib, [(c.tag, c.attrib) for c in sv]) for sv in _xml(Probe).find("ModelVariables")
    ]

    def var(name, vr, description, causality, variability, initial=None):
        a = {
            "name": name,
            "valueReference": str(vr),
            "description": description,
            "causality": causality,
            "variability": variability,
        }
        return a if initial is None else {**a, "initial": initial}

    assert rows == [
        (
            var("m", 0, "mass (must be > 0)", "parameter", "fixed", "exact"),
            [("Real", {"unit": "kg", "min": "0.0", "start": "2.0"})],
        ),
        (
            var("n", 1, "a count", "parameter", "fixed", "exact"),
            [("Integer", {"min": "1", "max": "9", "start": "3"})],  # no unit on an Integer
        ),
        (
            var("flag", 2, "a switch", "parameter", "fixed", "exact"),
            [("Boolean", {"start": "true"})],
        ),
        (var("f", 3, "force", "input", "continuous"), [("Real", {"unit": "N", "start": "0.5"})]),
        (var("k", 4, "an Integer input", "input", "discrete"), [("Integer", {"start": "0"})]),
        (
            var("s", 5, "position", "output", "continuous", "exact"),
            [("Real", {"unit": "m", "start": "0.25"})],
        ),
        (
            var(
                "v",
                6,
                "velocity (first derivative available)",
                "output",
                "continuous",
                "calculated",
            ),
            [("Real", {"unit": "m/s"})],  # a calculated output has no start
        ),
        (
            var("a", 7, "acceleration", "output", "continuous", "calculated"),
            [("Real", {"unit": "m/s2"})],
        ),
        (var("mode", 8, "a mode", "output", "discrete", "calculated"), [("Integer", {})]),
    ]


def test_fmi2_model_structure_indices_are_one_based():
    ms = _xml(Probe).find("ModelStructure")
    assert [c.tag for c in ms] == ["Outputs", "InitialUnknowns"]
    # outputs s, v, a, mode (value references 5-8, indices 6-9), their direct inputs f (4), k (5)
    assert [u.attrib for u in ms.find("Outputs")] == [
        {"index": "6", "dependencies": ""},
        {"index": "7", "dependencies": ""},
        {"index": "8", "dependencies": "4"},
        {"index": "9", "dependencies": "5 4"},
    ]
    assert [u.tag for u in ms.find("Outputs")] == ["Unknown"] * 4
    # the outputs without initial="exact", each depending on every exact variable (m, n, flag,
    # s: indices 1, 2, 3, 6) and its direct inputs, sorted
    assert [u.attrib for u in ms.find("InitialUnknowns")] == [
        {"index": "7", "dependencies": "1 2 3 6"},
        {"index": "8", "dependencies": "1 2 3 4 6"},
        {"index": "9", "dependencies": "1 2 3 4 5 6"},
    ]
    assert [u.tag for u in ms.find("InitialUnknowns")] == ["Unknown"] * 3


def test_no_initial_unknowns_when_every_output_is_exact():
    ms = _xml(Interpolating).find("ModelStructure")
    assert [c.tag for c in ms] == ["Outputs"]
    assert [u.attrib for u in ms.find("Outputs")] == [{"index": "2", "dependencies": "1"}]


@pytest.mark.parametrize("cls", [Probe, Interpolating, Bare])
def test_fmi2_model_description_is_valid(cls, tmp_path):
    md = _valid(_xml(cls), tmp_path)
    assert md.fmiVersion == "2.0"
    assert [v.name for v in md.modelVariables] == [v.name for v in cls.variable_table()]


def test_time_is_the_value_reference_after_the_table():
    assert time_vr(Probe.variable_table()) == 9
    assert time_vr([]) == 0


def test_fmi3_root_and_cosimulation_attributes():
    root = _xml(Probe3)
    attrib = dict(root.attrib)
    _token(attrib.pop("instantiationToken"))
    assert attrib == {
        "fmiVersion": "3.0",
        "modelName": "Probe3",
        "description": "A probe of the writers",
        "author": "contactfmu",
        "version": "0.1.0",
        "license": "BSD-3-Clause",
        "generationTool": "contactfmu (pythonfmu3)",
        "variableNamingConvention": "structured",
    }
    assert [c.tag for c in root] == [
        "CoSimulation",
        "UnitDefinitions",
        "LogCategories",
        "DefaultExperiment",
        "ModelVariables",
        "ModelStructure",
    ]
    assert root.find("CoSimulation").attrib == {
        "modelIdentifier": "Probe3",
        "needsExecutionTool": "true",
        "canBeInstantiatedOnlyOncePerProcess": "false",
        "canGetAndSetFMUState": "true",
        "canSerializeFMUState": "true",
        "providesDirectionalDerivatives": "false",
        "providesAdjointDerivatives": "false",
        "canHandleVariableCommunicationStepSize": "true",
        "maxOutputDerivativeOrder": "0",
        "providesIntermediateUpdate": "false",
        "mightReturnEarlyFromDoStep": "false",
        "canReturnEarlyAfterIntermediateUpdate": "false",
        "hasEventMode": "true",
    }
    # time's unit s joins the table's units
    assert [u.get("name") for u in root.find("UnitDefinitions")] == [
        "1",
        "N",
        "kg",
        "m",
        "m/s",
        "m/s2",
        "s",
    ]
    assert root.find("UnitDefinitions")[-1].find("BaseUnit").attrib == {"s": "1"}
    assert root.find("DefaultExperiment").attrib == {
        "startTime": "0.0",
        "stopTime": "2.0",
        "stepSize": "0.001",
    }


def test_fmi3_a_slave_with_events_may_return_early_and_update_intermediately():
    class Eventful3(Fmi3Slave, Probe):
        HAS_EVENTS = True

    cosim = _xml(Eventful3).find("CoSimulation").attrib
    assert {
        key: cosim[key]
        for key in (
            "providesIntermediateUpdate",
            "mightReturnEarlyFromDoStep",
            "canReturnEarlyAfterIntermediateUpdate",
            "hasEventMode",
        )
    } == {
        "providesIntermediateUpdate": "true",
        "mightReturnEarlyFromDoStep": "true",
        "canReturnEarlyAfterIntermediateUpdate": "true",
        "hasEventMode": "true",
    }


def test_fmi3_model_variables_keep_the_fmi2_value_references():
    rows = [(v.tag, v.attrib) for v in _xml(Probe3).find("ModelVariables")]

    def var(name, vr, description, causality, variability, initial=None, **t):
        a = {
            "name": name,
            "valueReference": str(vr),
            "description": description,
            "causality": causality,
            "variability": variability,
        }
        return {**a, **({"initial": initial} if initial else {}), **t}

    assert rows == [
        (
            "Float64",
            {
                "name": "time",
                "valueReference": "9",
                "description": "Simulation time",
                "causality": "independent",
                "variability": "continuous",
                "unit": "s",
            },
        ),
        (
            "Float64",
            var(
                "m",
                0,
                "mass (must be > 0)",
                "parameter",
                "fixed",
                "exact",
                unit="kg",
                min="0.0",
                start="2.0",
            ),
        ),
        (
            "Int32",
            var("n", 1, "a count", "parameter", "fixed", "exact", min="1", max="9", start="3"),
        ),
        ("Boolean", var("flag", 2, "a switch", "parameter", "fixed", "exact", start="true")),
        ("Float64", var("f", 3, "force", "input", "continuous", unit="N", start="0.5")),
        ("Int32", var("k", 4, "an Integer input", "input", "discrete", start="0")),
        (
            "Float64",
            var("s", 5, "position", "output", "continuous", "exact", unit="m", start="0.25"),
        ),
        (
            "Float64",
            var(
                "v",
                6,
                "velocity (first derivative available)",
                "output",
                "continuous",
                "calculated",
                unit="m/s",
            ),
        ),
        ("Float64", var("a", 7, "acceleration", "output", "continuous", "calculated", unit="m/s2")),
        ("Int32", var("mode", 8, "a mode", "output", "discrete", "calculated")),
    ]


def test_fmi3_model_structure_names_value_references():
    ms = _xml(Probe3).find("ModelStructure")
    assert [(c.tag, c.attrib) for c in ms] == [
        ("Output", {"valueReference": "5", "dependencies": ""}),
        ("Output", {"valueReference": "6", "dependencies": ""}),
        ("Output", {"valueReference": "7", "dependencies": "3"}),
        ("Output", {"valueReference": "8", "dependencies": "4 3"}),
        # the outputs without initial="exact": every exact variable (0, 1, 2, 5) and direct inputs
        ("InitialUnknown", {"valueReference": "6", "dependencies": "0 1 2 5"}),
        ("InitialUnknown", {"valueReference": "7", "dependencies": "0 1 2 3 5"}),
        ("InitialUnknown", {"valueReference": "8", "dependencies": "0 1 2 3 4 5"}),
    ]


def test_fmi3_model_description_is_valid(tmp_path):
    md = _valid(_xml(Probe3), tmp_path)
    assert md.fmiVersion == "3.0"
    assert [v.name for v in md.modelVariables] == ["time"] + [
        v.name for v in Probe.variable_table()
    ]


def test_a_parameter_row_without_initial_still_gets_its_start():
    """FMI 2.0: a parameter's initial defaults to "exact", which requires a start value; the
    writer gives every parameter (and input) its start, whatever the row's initial says."""
    from contactfmu.fmi.model_description import type_attributes
    from contactfmu.fmi.variables import Var

    row = Var("g", "Real", "parameter", "fixed", 9.81, "m/s2", "gravity")
    assert row.initial is None
    assert type_attributes(row) == {"unit": "m/s2", "start": "9.81"}
    local = Var("x", "Real", "local", "continuous", 1.0, None, "a local")
    assert type_attributes(local) == {}
