"""Export a System as an SSP 1.0 package (System Structure and Parameterization, Modelica Association).

The package (a zip, ``.ssp``) holds ``SystemStructure.ssd`` and the FMUs under ``resources/``:

* one ``ssd:Component`` per FMU instance, with the connectors its connections use and its
  parameters and start values as an inline parameter set (``ssd:ParameterValues``);
* the flange connections as plain signal connections, the way the project's master copies them
  (``contactfmu.cosim.system``): the inertial flange's s, v and a go to each compliant flange on
  its node; each compliant element's force goes to one force input of the inertial flange:
  ``<flange>.f`` for the first element, ``.f2``, ``.f3``, ``.f4`` for further ones (an SSP
  input takes one connection, so the sum the master forms is formed inside the body instead);
* a rigid rod (``connect(..., rod=L)``) as an ``ssc:LinearTransformation`` with
  ``offset = L`` (factor 1) on the position connection only: s_b = s_a + L, v and a unchanged.
  libcosim turns it into one of its linear-transformation functions, evaluated in the same
  transfer as the connections (no delay);
* units (``ssd:Units``) for the connectors, a ``ssd:DefaultExperiment`` with the start and stop
  time and the OSP annotation ``osp:FixedStepAlgorithm baseStepSize`` (libcosim needs a step
  size: without one, loading the SSP fails).

Importers with a plain fixed-step master run it with values held over each step; the
project's master (``System.simulate``) adds first-order hold, and ``scheme="jacobi"`` reproduces
libcosim's algorithm exactly (see ``contactfmu.cosim.libcosim``).
"""

import math
import os
import zipfile
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement, tostring

from ..conventions import FORCE_INPUTS_PER_FLANGE
from .errors import CosimError

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations",
}
_SSC_TYPE = {"Real": "Real", "Integer": "Integer", "Enumeration": "Integer", "Boolean": "Boolean"}
_SI = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


def _base_units(md):
    """{unit name: {SI base unit: exponent (str), the non-zero ones}} of a model description's
    UnitDefinitions."""
    return {
        u.name: {k: str(getattr(u.baseUnit, k)) for k in _SI if getattr(u.baseUnit, k)}
        for u in md.unitDefinitions
        if u.baseUnit is not None
    }


def _num(x):
    return repr(float(x))


def connections(system):
    """The system's connections as (start "inst.var", end "inst.var", offset) triples, in the
    order an SSP lists them (offset: LinearTransformation offset of a rod, else 0)."""
    out = []
    for si, sf, targets in system.node_links():
        if len(targets) > FORCE_INPUTS_PER_FLANGE:
            raise CosimError(
                f"{si.name}.{sf} carries {len(targets)} compliant elements "
                f"({', '.join(f'{ti.name}.{tf}' for ti, tf, _ in targets)}); an SSP input takes one connection "
                f"and an inertial flange has {FORCE_INPUTS_PER_FLANGE} force inputs (.f, .f2 .. "
                f".f{FORCE_INPUTS_PER_FLANGE}): connect further elements through a rod to another flange of the body"
            )
        for k, (ti, tf, off) in enumerate(targets):
            out.append((f"{si.name}.{si.port(sf, 's')}", f"{ti.name}.{ti.port(tf, 's')}", off))
            out.append((f"{si.name}.{si.port(sf, 'v')}", f"{ti.name}.{ti.port(tf, 'v')}", 0.0))
            if system.passes_acceleration(si, sf, ti, tf):
                out.append((f"{si.name}.{si.port(sf, 'a')}", f"{ti.name}.{ti.port(tf, 'a')}", 0.0))
            force_in = si.port(sf, "f") + ("" if k == 0 else str(k + 1))
            si.var(force_in)  # an FMU without the numbered inputs fails here, by name
            out.append((f"{ti.name}.{ti.port(tf, 'f')}", f"{si.name}.{force_in}", 0.0))
    for a, b in system.signals:
        out.append((a, b, 0.0))
    return out


def system_structure(system, stop_time, step, start_time=0.0, name="contactfmu", sources=None):
    """The SystemStructure.ssd document (bytes) of `system`; `sources`: instance -> FMU path in
    the package (default resources/<file name>)."""
    if not (step > 0 and math.isfinite(step)):
        raise CosimError(f"communication step {step!r} s must be > 0")
    if not stop_time > start_time:
        raise CosimError(f"stop_time {stop_time!r} must be greater than start_time {start_time!r}")
    conns = connections(system)
    used = {}
    for a, b, _ in conns:
        for ref in (a, b):
            inst, var = system.resolve(ref)
            used.setdefault(inst.name, set()).add(var)
    units = {}  # unit name -> its SI base-unit exponents, as the FMU declares them

    root = Element(
        "ssd:SystemStructureDescription",
        {f"xmlns:{k}": v for k, v in NS.items()} | {"name": name, "version": "1.0"},
    )
    sysel = SubElement(
        root,
        "ssd:System",
        name=name,
        description="Exported by contactfmu from a contactfmu.cosim.System",
    )
    elements = SubElement(sysel, "ssd:Elements")
    for inst in system.instances.values():
        source = (sources or {}).get(inst.name, "resources/" + os.path.basename(inst.path))
        comp = SubElement(
            elements,
            "ssd:Component",
            name=inst.name,
            source=source,
            type="application/x-fmu-sharedlibrary",
        )
        names = [
            v.name
            for v in inst.md.modelVariables
            if v.name in used.get(inst.name, ()) or v.name in inst.values
        ]
        if names:
            conn_el = SubElement(comp, "ssd:Connectors")
            declared = _base_units(inst.md)
            for vname in names:
                var = inst.variables[vname]
                kind = (
                    var.causality
                    if var.causality in ("input", "output", "parameter")
                    else "parameter"
                )
                c = SubElement(conn_el, "ssd:Connector", name=vname, kind=kind)
                attrs = {}
                if var.type == "Real" and var.unit and var.unit in declared and var.unit != "1":
                    attrs["unit"] = var.unit
                    units[var.unit] = declared[var.unit]
                SubElement(c, "ssc:" + _SSC_TYPE.get(var.type, "Real"), attrs)
        if inst.values:
            bindings = SubElement(comp, "ssd:ParameterBindings")
            binding = SubElement(bindings, "ssd:ParameterBinding")
            values = SubElement(binding, "ssd:ParameterValues")
            pset = SubElement(values, "ssv:ParameterSet", version="1.0", name="initialValues")
            params = SubElement(pset, "ssv:Parameters")
            for vname, value in inst.values.items():
                var = inst.variables[vname]
                p = SubElement(params, "ssv:Parameter", name=vname)
                if var.type == "Real":
                    SubElement(p, "ssv:Real", value=_num(value))
                elif var.type == "Boolean":
                    SubElement(p, "ssv:Boolean", value="true" if value else "false")
                else:
                    SubElement(p, "ssv:Integer", value=str(int(value)))
    if conns:
        conn_root = SubElement(sysel, "ssd:Connections")
        for a, b, off in conns:
            ia, va = a.split(".", 1)
            ib, vb = b.split(".", 1)
            c = SubElement(
                conn_root,
                "ssd:Connection",
                startElement=ia,
                startConnector=va,
                endElement=ib,
                endConnector=vb,
            )
            if off:
                SubElement(c, "ssc:LinearTransformation", factor="1.0", offset=_num(off))
    if units:
        units_el = SubElement(root, "ssd:Units")
        for u in sorted(units):
            unit = SubElement(units_el, "ssc:Unit", name=u)
            SubElement(unit, "ssc:BaseUnit", units[u])
    exp = SubElement(
        root, "ssd:DefaultExperiment", startTime=_num(start_time), stopTime=_num(stop_time)
    )
    ann = SubElement(
        SubElement(exp, "ssd:Annotations"), "ssc:Annotation", type="com.opensimulationplatform"
    )
    SubElement(SubElement(ann, "osp:Algorithm"), "osp:FixedStepAlgorithm", baseStepSize=_num(step))
    _indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="unicode").encode(
        "utf-8"
    )


def export_ssp(system, path, stop_time, step, start_time=0.0, name=None):
    """Write `system` as an SSP 1.0 package at `path` (.ssp); returns the path.

    stop_time, step, start_time: the DefaultExperiment and the OSP fixed-step annotation."""
    path = Path(path)
    if path.suffix != ".ssp":
        raise CosimError(f"{path}: an SSP package must end in .ssp")
    files, sources = {}, {}
    for inst in system.instances.values():
        base = os.path.basename(inst.path)
        stem, ext = os.path.splitext(base)
        target, k = f"resources/{base}", 1
        while target in files and files[target] != os.path.abspath(inst.path):
            k += 1
            target = f"resources/{stem}_{k}{ext}"
        files[target] = os.path.abspath(inst.path)
        sources[inst.name] = target
    ssd = system_structure(system, stop_time, step, start_time, name or path.stem, sources)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("SystemStructure.ssd", ssd)
        for target, src in files.items():
            z.write(src, target)
    return path


def _indent(el, level=0):
    pad = "\n" + "  " * level
    if len(el):
        if not (el.text or "").strip():
            el.text = pad + "  "
        for child in el:
            _indent(child, level + 1)
        if not (child.tail or "").strip():
            child.tail = pad
    if level and not (el.tail or "").strip():
        el.tail = pad
