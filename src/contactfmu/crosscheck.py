"""FMI Cross-Check files for every FMU (https://github.com/modelica/fmi-cross-check).

For each FMU a default experiment (its home's ``spec.CROSS_CHECK``) with the FMU's own default parameters and its
DefaultExperiment (start, stop, step): inputs follow a prescribed motion or force (written to
``<Model>_in.csv``) chosen so that the documented behaviour happens in it (the ElastoGap,
TranslationalHardstop and EndStop flanges pass into their contacts, the
MassWithStopAndFriction body sticks, slides and hits its stop); ``<Model>_ref.csv`` holds every
output at every communication point, computed by the project's master with the FMU alone, the
way importers replay an input file (fmpy's ``simulate_fmu``, the FMU Compliance Checker,
libcosim): the inputs of t_n are set, the FMU steps to t_n+1 and the outputs are read right
after the step, before the inputs of t_n+1 arrive (``System.simulate(scheme="jacobi")``); so an
output that depends directly on an input shows the value for the inputs of the previous
point. ``<Model>_ref.opt`` has the StartTime, StopTime, StepSize and RelTol.

Layout: ``<out>/fmus/2.0/cs/linux64/contactfmu/<version>/<Model>/`` with ``<Model>.fmu``, the
CSV and opt files and a ``ReadMe.md``, as in the cross-check repository.
"""

import math
import shutil
from pathlib import Path

import numpy as np

from . import __version__, components
from .cosim import System
from .cosim.results import Result


def experiment(fmu_path):
    """(start, stop, step, description, inputs) of the FMU's cross-check experiment."""
    from fmpy import read_model_description

    return _experiment(read_model_description(str(fmu_path)))


def _experiment(md):
    what, inputs = components.spec(md.modelName).CROSS_CHECK
    de = md.defaultExperiment
    return float(de.startTime), float(de.stopTime), float(de.stepSize), what, inputs


def reference(fmu_path, scheme="jacobi"):
    """Run the FMU alone with its cross-check inputs in the project's master; returns
    (Result of every output, Result of the inputs, (start, stop, step), description)."""
    from fmpy import read_model_description

    md = read_model_description(str(fmu_path))
    start, stop, step, what, inputs = _experiment(md)
    system = System()
    system.add(md.modelName, fmu_path)
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    result = system.simulate(
        stop,
        step,
        start_time=start,
        scheme=scheme,
        outputs=[f"{md.modelName}.{n}" for n in outputs],
        inputs={f"{md.modelName}.{k}": fn for k, fn in inputs.items()},
    )
    ref = Result(["time"] + outputs, result.values)
    t = ref.time
    ins = Result(
        ["time"] + list(inputs),
        np.column_stack([t] + [[fn(x) for x in t] for fn in inputs.values()]),
    )
    return ref, ins, (start, stop, step), what


MAX_CSV_BYTES = 900_000  # the cross-check rules allow 1 MB per CSV file


def decimation(result):
    """Every how many rows the reference keeps so that its CSV stays under MAX_CSV_BYTES."""
    row = sum(len(repr(float(x))) + 1 for x in result.values[len(result.values) // 2])
    return max(1, math.ceil(row * len(result.values) / MAX_CSV_BYTES))


def write(fmu_path, out_dir):
    """Write the cross-check directory of one FMU; returns it."""
    from fmpy import read_model_description

    md = read_model_description(str(fmu_path))
    name = md.modelName
    ref, ins, (start, stop, step), what = reference(fmu_path)
    d = Path(out_dir) / "fmus" / "2.0" / "cs" / "linux64" / "contactfmu" / __version__ / name
    d.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(fmu_path, d / f"{name}.fmu")
    keep = decimation(ref)
    ref_rows = Result(
        ref.names,
        ref.values[::keep]
        if ref.time[-1] == ref.time[::keep][-1]
        else np.vstack([ref.values[::keep], ref.values[-1:]]),
    )
    ref_rows.to_csv(d / f"{name}_ref.csv")
    if len(ins.names) > 1:
        ins.to_csv(d / f"{name}_in.csv")
    (d / f"{name}_ref.opt").write_text(
        f"StartTime, {start!r}\nStopTime, {stop!r}\nStepSize, {step!r}\nRelTol, 1e-6\n"
    )
    (d / "ReadMe.md").write_text(
        f"# {name}\n\n{md.description}\n\n## Cross-check experiment\n\n"
        f"Default parameters, {start:g} s to {stop:g} s, communication step {step:g} s. {what}.\n"
        f"Inputs (`{name}_in.csv`, on the step grid) are set at each communication point t_n, the FMU "
        f"steps to t_n+1, and the outputs read right after the step are recorded at t_n+1 "
        f"(`{name}_ref.csv`"
        + (f", every {keep}th point to stay under 1 MB" if keep > 1 else "")
        + f"; the first row after initialization), as fmpy's simulate_fmu and the FMU Compliance "
        f"Checker replay an input file. Reference computed by "
        f"contactfmu {__version__}'s co-simulation master.\n"
    )
    return d


def write_all(fmu_paths, out_dir, progress=print):
    dirs = []
    for path in fmu_paths:
        dirs.append(write(path, out_dir))
        if progress:
            progress(f"  cross-check files: {dirs[-1]}")
    return dirs
