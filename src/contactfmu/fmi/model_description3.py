"""The FMI 3.0 model description of a slave, from the same variable table as the FMI 2.0 one
(model_description.py): the same names, value references, types (Real -> Float64, Integer ->
Int32, Boolean), causalities, variabilities, start values, units, min/max, descriptions and
dependencies (FMI 3.0 names them by value reference), a DefaultExperiment, and the independent
variable `time` that FMI 3.0 requires.

Declared as what the FMI 3 build runs (pythonfmu3's library behind fmi3.Fmi3Slave and the status
shim): event mode for every FMU; early return and intermediate update for a slave with events
(HAS_EVENTS: fmi3_status_shim.c's fmi3DoStep); no output derivatives (FMI 3.0 co-simulation has no
input derivatives).

Generic: names no component and no physical domain. Only the standard library is imported."""

import re
import uuid
from xml.etree.ElementTree import Element, SubElement

from .model_description import type_attributes, unit_categories_experiment, variable_attributes

TYPES = {"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean"}

# The FMI 3.0 function that answers where the slave names an FMI 2.0 one; every other fmi2<Name>
# (fmi2DoStep, fmi2Reset, fmi2ExitInitializationMode, fmi2Error, ...) is fmi3<Name>
FMI3_NAMES = {
    "fmi2GetReal": "fmi3GetFloat64",
    "fmi2SetReal": "fmi3SetFloat64",
    "fmi2GetInteger": "fmi3GetInt32",
    "fmi2SetInteger": "fmi3SetInt32",
    "fmi2SetupExperiment": "fmi3EnterInitializationMode",
    "fmi2GetFMUstate": "fmi3GetFMUState",
    "fmi2SetFMUstate": "fmi3SetFMUState",
    "fmi2FreeFMUstate": "fmi3FreeFMUState",
    "fmi2SerializedFMUstateSize": "fmi3SerializedFMUStateSize",
    "fmi2SerializeFMUstate": "fmi3SerializeFMUState",
    "fmi2DeSerializeFMUstate": "fmi3DeserializeFMUState",
    "fmi2GetRealOutputDerivatives": "fmi3GetOutputDerivatives",
}
_FMI2_NAME = re.compile(r"\bfmi2([A-Za-z]+)")


def in_fmi3_words(text):
    """`text` (a message or description of the slave, which names the FMI 2.0 functions and
    statuses) with each FMI 2.0 name replaced by the FMI 3.0 one (FMI3_NAMES)."""
    if "fmi2" not in text:
        return text
    return _FMI2_NAME.sub(lambda m: FMI3_NAMES.get(m.group(0), "fmi3" + m.group(1)), text)


def time_vr(table):
    """The value reference of the independent variable `time` (FMI 3.0 requires one): the one
    after the table's, so that every other variable keeps its FMI 2.0 value reference."""
    return len(table)


def model_description(slave):
    """The fmiModelDescription element (FMI 3.0) of `slave` (an instance of a fmi.slave.Slave
    subclass)."""
    table = slave.variable_table()
    events = "true" if slave.HAS_EVENTS else "false"
    root = Element(
        "fmiModelDescription",
        {
            "fmiVersion": "3.0",
            "modelName": slave.modelName,
            "instantiationToken": "{" + str(uuid.uuid4()) + "}",
            "description": " ".join(slave.description.split()),
            "author": slave.author,
            "version": slave.version,
            "license": slave.license,
            "generationTool": "contactfmu (pythonfmu3)",
            "variableNamingConvention": "structured",
        },
    )
    SubElement(
        root,
        "CoSimulation",
        {
            "modelIdentifier": slave.modelName,
            "needsExecutionTool": "true",
            "canBeInstantiatedOnlyOncePerProcess": "false",
            "canGetAndSetFMUState": "true",
            "canSerializeFMUState": "true",
            "providesDirectionalDerivatives": "false",
            "providesAdjointDerivatives": "false",
            "canHandleVariableCommunicationStepSize": "true",
            "maxOutputDerivativeOrder": "0",
            # events (a slave with HAS_EVENTS: fmi3_status_shim.c's fmi3DoStep); every FMU can
            # be stepped in event mode (it then has nothing to update)
            "providesIntermediateUpdate": events,
            "mightReturnEarlyFromDoStep": events,
            "canReturnEarlyAfterIntermediateUpdate": events,
            "hasEventMode": "true",
        },
    )
    unit_categories_experiment(root, slave, {v.unit for v in table if v.unit} | {"s"})
    for category in root.iter("Category"):
        category.set("description", in_fmi3_words(category.get("description")))
    mv = SubElement(root, "ModelVariables")
    SubElement(
        mv,
        "Float64",
        {
            "name": "time",
            "valueReference": str(time_vr(table)),
            "description": "Simulation time",
            "causality": "independent",
            "variability": "continuous",
            "unit": "s",
        },
    )
    for var in table:
        SubElement(mv, TYPES[var.type], {**variable_attributes(var), **type_attributes(var)})
    by_name = {v.name: v for v in table}
    ms = SubElement(root, "ModelStructure")
    outputs = [v for v in table if v.causality == "output"]
    for var in outputs:
        SubElement(
            ms,
            "Output",
            {
                "valueReference": str(var.vr),
                "dependencies": " ".join(str(by_name[d].vr) for d in var.depends),
            },
        )
    knowns = {v.vr for v in table if v.initial == "exact"}
    for var in outputs:
        if var.initial != "exact":
            deps = sorted(knowns | {by_name[d].vr for d in var.depends})
            SubElement(
                ms,
                "InitialUnknown",
                {"valueReference": str(var.vr), "dependencies": " ".join(map(str, deps))},
            )
    return root
