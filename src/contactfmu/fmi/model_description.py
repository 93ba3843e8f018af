"""The FMI 2.0 model description of a slave, from its variable table: units, descriptions,
start values, min/max, the variability of every Integer/Boolean variable, a DefaultExperiment,
and a ModelStructure with output dependencies and InitialUnknowns (which pythonfmu leaves out).

Generic: names no component and no physical domain. Only the standard library is imported."""

import uuid
from xml.etree.ElementTree import Element, SubElement

from .variables import UNITS, fmt


def model_description(slave):
    """The fmiModelDescription element of `slave` (an instance of a fmi.slave.Slave subclass)."""
    table = slave.variable_table()
    attrib = {
        "fmiVersion": "2.0",
        "modelName": slave.modelName,
        "guid": "{" + str(uuid.uuid4()) + "}",
        "description": " ".join(slave.description.split()),
        "author": slave.author,
        "version": slave.version,
        "license": slave.license,
        "generationTool": "contactfmu (pythonfmu)",
        "variableNamingConvention": "structured",
        "numberOfEventIndicators": "0",
    }
    root = Element("fmiModelDescription", attrib)
    SubElement(
        root,
        "CoSimulation",
        {
            "modelIdentifier": slave.modelName,
            "needsExecutionTool": "true",
            "canHandleVariableCommunicationStepSize": "true",
            "canInterpolateInputs": "true" if slave.INPUT_DERIVATIVES else "false",
            "maxOutputDerivativeOrder": "1" if any(v.derivative for v in table) else "0",
            "canRunAsynchronuously": "false",
            "canBeInstantiatedOnlyOncePerProcess": "false",
            "canNotUseMemoryManagementFunctions": "true",
            "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true",
            "providesDirectionalDerivative": "false",
        },
    )
    unit_categories_experiment(root, slave, {v.unit for v in table if v.unit})
    mv = SubElement(root, "ModelVariables")
    for var in table:
        sv = SubElement(mv, "ScalarVariable", variable_attributes(var))
        SubElement(sv, var.type, type_attributes(var))
    index = {v.name: v.vr + 1 for v in table}
    ms = SubElement(root, "ModelStructure")
    outs = SubElement(ms, "Outputs")
    outputs = [v for v in table if v.causality == "output"]
    for var in outputs:
        SubElement(
            outs,
            "Unknown",
            {
                "index": str(var.vr + 1),
                "dependencies": " ".join(str(index[d]) for d in var.depends),
            },
        )
    initial = [v for v in outputs if v.initial != "exact"]
    if initial:
        knowns = [v.vr + 1 for v in table if v.initial == "exact"]
        iu = SubElement(ms, "InitialUnknowns")
        for var in initial:
            deps = sorted(set(knowns) | {index[d] for d in var.depends})
            SubElement(
                iu, "Unknown", {"index": str(var.vr + 1), "dependencies": " ".join(map(str, deps))}
            )
    return root


def variable_attributes(var):
    """name, valueReference, description, causality, variability (and initial) of a variable:
    the same in both standards."""
    a = {
        "name": var.name,
        "valueReference": str(var.vr),
        "description": var.description,
        "causality": var.causality,
        "variability": var.variability,
    }
    if var.initial:
        a["initial"] = var.initial
    return a


def type_attributes(var):
    """unit, min, max and start of a variable (FMI 2.0: on its type element; FMI 3.0: on the
    variable)."""
    t = {}
    if var.type == "Real" and var.unit:
        t["unit"] = var.unit
    if var.min is not None:
        t["min"] = fmt(var.min)
    if var.max is not None:
        t["max"] = fmt(var.max)
    if var.causality in ("parameter", "input") or var.initial == "exact":
        t["start"] = fmt(var.start)
    return t


def unit_categories_experiment(root, slave, units):
    """The UnitDefinitions of `units`, the LogCategories and the DefaultExperiment of `slave`,
    in this order (both standards)."""
    if units:
        unit_defs = SubElement(root, "UnitDefinitions")
        for unit in sorted(units):
            node = SubElement(unit_defs, "Unit", {"name": unit})
            SubElement(node, "BaseUnit", {k: str(e) for k, e in UNITS[unit].items()})
    cats = SubElement(root, "LogCategories")
    for name, text in slave.log_categories.items():
        SubElement(cats, "Category", {"name": name, "description": text})
    de = getattr(slave, "default_experiment", None)
    if de is not None:
        SubElement(
            root,
            "DefaultExperiment",
            {
                k: repr(float(v))
                for k, v in (
                    ("startTime", de.start_time),
                    ("stopTime", de.stop_time),
                    ("stepSize", de.step_size),
                    ("tolerance", de.tolerance),
                )
                if v is not None
            },
        )
