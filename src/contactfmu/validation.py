"""Validation of an FMU, as the build and `contactfmu validate` run it: fmpy's validate_fmu, the
project's model-description checks, its terminalsAndIcons.xml (fmpy does not read it), every
documented parameter present (the component's spec) and a state round trip through
fmi2SerializeFMUstate."""

import zipfile

from . import components
from .fmi import terminals
from .fmi.shim import PLATFORM, PLATFORM3

# What differs between the standards in an FMU of the project: where its binaries are, the name of
# the library the status shim loads, the Real type's name and the FMU-state capabilities' names
STANDARDS = {
    "2.0": (PLATFORM, "_pythonfmu.so", "Real", "canGetAndSetFMUstate/canSerializeFMUstate"),
    "3.0": (PLATFORM3, "_pythonfmu3.so", "Float64", "canGetAndSetFMUState/canSerializeFMUState"),
}


def problems(path):
    """Problems of an FMU of the project, FMI 2.0 or 3.0: fmpy's validate_fmu (schema and model
    description), its status shim and the library it loads, its DefaultExperiment and FMU-state
    capabilities, a description on every variable and a unit on every Real (Float64) one, and its
    terminalsAndIcons.xml."""
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    found = list(validate_fmu(str(path)))
    if found:
        return found
    md = read_model_description(str(path))
    if md.fmiVersion not in STANDARDS:
        return [f"fmiVersion {md.fmiVersion}: not one of {', '.join(STANDARDS)}"]
    platform, library, real, states = STANDARDS[md.fmiVersion]
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        data = z.read(terminals.PATH) if terminals.PATH in names else None
    lib = f"binaries/{platform}/{md.coSimulation.modelIdentifier}"
    for binary in (f"{lib}.so", f"{lib}{library}"):  # the status shim, pythonfmu's library
        if binary not in names:
            found.append(f"missing {binary}")
    if md.defaultExperiment is None:
        found.append("no DefaultExperiment")
    if not (md.coSimulation.canGetAndSetFMUstate and md.coSimulation.canSerializeFMUstate):
        found.append(f"{states} not set")
    for v in md.modelVariables:
        if not v.description:
            found.append(f"variable {v.name} has no description")
        if v.type == real and v.unit is None:
            found.append(f"{real} variable {v.name} has no unit")
    if data is not None:
        found += terminal_problems(data, {v.name: v.causality for v in md.modelVariables})
    return found


def terminals_schema():
    """fmpy's copy of the FMI 3.0 schema fmi3TerminalsAndIcons.xsd, as an lxml XMLSchema."""
    from pathlib import Path

    import fmpy
    from lxml import etree

    xsd = Path(fmpy.__file__).parent / "schema" / "fmi3" / "fmi3TerminalsAndIcons.xsd"
    return etree.XMLSchema(etree.parse(str(xsd)))


def terminal_problems(data, causalities):
    """Problems of the bytes `data` of a terminalsAndIcons.xml, for an FMU whose variables have the
    causalities `causalities` (name -> causality): not XML, not valid under the FMI 3.0 schema,
    or what fmi.terminals.problems finds (unknown variables, kinds against causalities, memberNames)."""
    from xml.etree import ElementTree

    from lxml import etree

    try:
        document = etree.fromstring(data)
    except etree.XMLSyntaxError as exc:
        return [f"{terminals.PATH} is not XML ({len(data)} bytes starting {data[:8]!r}): {exc}"]
    schema = terminals_schema()
    if not schema.validate(document):
        return [f"{terminals.PATH}: {e.line}: {e.message}" for e in schema.error_log]
    return [
        f"{terminals.PATH}: {p}"
        for p in terminals.problems(ElementTree.fromstring(data), causalities)
    ]


def state_round_trip(path, md):
    """Run the FMU's cross-check experiment (or its DefaultExperiment with start inputs) to the
    middle, save and serialize its state, run 20 steps, restore the deserialized state and run
    them again: returns a problem text or None."""
    import shutil
    import tempfile

    from fmpy import extract
    from fmpy.fmi2 import FMU2Slave

    de = md.defaultExperiment
    start = float(de.startTime or 0.0) if de else 0.0
    stop = float(de.stopTime or 1.0) if de else 1.0
    h = float(de.stepSize or (stop - start) / 500) if de else (stop - start) / 500
    inputs = (
        components.spec(md.modelName).CROSS_CHECK[1] if md.modelName in components.NAMES else {}
    )
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    drive = [(vrs[n], f) for n, f in inputs.items() if n in vrs]
    outs = [
        v.valueReference for v in md.modelVariables if v.causality == "output" and v.type == "Real"
    ]
    tmp = tempfile.mkdtemp(prefix="contactfmu_validate_")
    fmu = None
    try:
        fmu = FMU2Slave(
            guid=md.guid,
            unzipDirectory=extract(str(path), unzipdir=tmp),
            modelIdentifier=md.coSimulation.modelIdentifier,
            instanceName="validate",
        )
        fmu.instantiate()
        fmu.setupExperiment(startTime=start)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        n_half = max(1, int(round((stop - start) / h / 2)))

        def run(n0, n):
            rows = []
            for k in range(n0, n0 + n):
                t = start + k * h
                for vr, f in drive:
                    fmu.setReal([vr], [f(t)])
                fmu.doStep(t, h)
                rows.append(fmu.getReal(outs) if outs else [])
            return rows

        run(0, n_half)
        state = fmu.deSerializeFMUstate(fmu.serializeFMUstate(fmu.getFMUstate()))
        first = run(n_half, 20)
        fmu.setFMUstate(state)
        again = run(n_half, 20)
        fmu.freeFMUstate(state)
        fmu.terminate()
        if first != again:
            return "state round trip: 20 steps repeated from the serialized state differ"
        return None
    except Exception as exc:
        return f"state round trip failed: {exc}"
    finally:
        if fmu is not None:
            try:
                fmu.freeInstance()
            except Exception:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def validate(path, md):
    """Problems of the FMU at `path` (model description `md`): fmpy's validation, the project's
    model-description checks (binaries, DefaultExperiment, state capabilities, descriptions,
    units on every Real), every documented parameter present, and a state round trip."""
    found = problems(path)
    if found:
        return found
    names = {v.name for v in md.modelVariables if v.causality == "parameter"}
    if md.modelName in components.NAMES:
        documented = components.spec(md.modelName).DOCUMENTED_PARAMETERS
        found += [f"documented parameter {p} is missing" for p in documented if p not in names]
    problem = state_round_trip(path, md)
    if problem:
        found.append(problem)
    return found
