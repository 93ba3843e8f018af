"""Run an SSP package or a System in libcosim (DNV's Open Simulation Platform, PyPI libcosimpy).

libcosim's fixed-step algorithm is a Jacobi scheme: every FMU steps, then every output read
after the step is copied to its inputs (values only, no derivatives).
``System.simulate(..., scheme="jacobi")`` runs the same scheme in the project's master, so the
two can be compared value for value. libcosim keeps time in integer nanoseconds: steps must be
whole nanoseconds.

libcosimpy is an optional dependency (``pip install libcosimpy``, in the ``test`` extra).
"""

import math
import os
import tempfile
import zipfile
from xml.etree import ElementTree

import numpy as np

from .errors import CosimError
from .results import Result

NANO = 1_000_000_000


def _libcosim():
    try:
        from libcosimpy.CosimExecution import CosimExecution
        from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
        from libcosimpy.CosimManipulator import CosimManipulator
        from libcosimpy.CosimObserver import CosimObserver
    except ImportError as exc:
        raise CosimError(f"libcosim is not installed ({exc}): pip install libcosimpy") from None
    return CosimExecution, CosimObserver, CosimManipulator, CosimLogLevel, log_output_level


def default_experiment(ssp_path):
    """(start, stop, step) of an SSP package's DefaultExperiment and OSP step annotation."""
    with zipfile.ZipFile(ssp_path) as z:
        root = ElementTree.fromstring(z.read("SystemStructure.ssd"))
    ns = {
        "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
        "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations",
    }
    exp = root.find("ssd:DefaultExperiment", ns)
    algo = None if exp is None else exp.find(".//osp:FixedStepAlgorithm", ns)
    if algo is None:
        raise CosimError(
            f"{ssp_path}: no osp:FixedStepAlgorithm step size in the DefaultExperiment "
            f"(libcosim cannot run an SSP without one)"
        )
    return (
        float(exp.get("startTime", 0.0)),
        float(exp.get("stopTime", "nan")),
        float(algo.get("baseStepSize")),
    )


def _ns(x, what):
    n = round(x * NANO)
    if n <= 0 or abs(n - x * NANO) > 1e-6 * max(1.0, abs(x * NANO)):
        raise CosimError(
            f"{what} {x!r} s is not a whole number of nanoseconds (libcosim's time unit)"
        )
    return n


def run_ssp(ssp_path, outputs, stop_time=None, inputs=None, log_level="error"):
    """Run an SSP package in libcosim; returns a Result with the `outputs` ("inst.var") read after
    every step: rows at t0 + h, t0 + 2h, ... (libcosim initializes inside its first step).

    stop_time: default the package's DefaultExperiment stopTime; inputs: {"inst.var": f(t)} set
    through libcosim's override manipulator before every step (and as initial values)."""
    CosimExecution, CosimObserver, CosimManipulator, CosimLogLevel, log_output_level = _libcosim()
    ssp_path = os.path.abspath(ssp_path)
    if not os.path.isfile(ssp_path):
        raise CosimError(f"SSP package {ssp_path} not found")
    start, stop, step = default_experiment(ssp_path)
    stop = stop if stop_time is None else stop_time
    if not math.isfinite(stop) or stop <= start:
        raise CosimError(
            f"stop time {stop!r} s must be finite and after the start time {start!r} s"
        )
    _ns(step, "step")  # libcosim counts time in whole nanoseconds
    n_steps = int(round((stop - start) / step))
    log_output_level(getattr(CosimLogLevel, log_level.upper()))
    ex = CosimExecution.from_ssp_file(ssp_path)
    index = {info.name.decode(): info.index for info in ex.slave_infos()}
    refs = {}
    for i in index.values():
        refs[i] = {v.name.decode(): (v.reference, v.type) for v in ex.slave_variables(i)}

    def lookup(ref):
        inst, _, var = ref.partition(".")
        if inst not in index:
            raise CosimError(
                f"{ref}: no instance {inst!r} in {os.path.basename(ssp_path)} "
                f"(has {', '.join(index)})"
            )
        if var not in refs[index[inst]]:
            raise CosimError(f"{ref}: {inst} has no variable {var!r}")
        return index[inst], refs[index[inst]][var][0]

    cols = [lookup(r) for r in outputs]
    kinds = [refs[i][name.partition(".")[2]][1] for (i, _), name in zip(cols, outputs)]
    drive = [(lookup(r), fn) for r, fn in (inputs or {}).items()]
    for (i, vr), fn in drive:
        ex.real_initial_value(i, vr, float(fn(start)))
    if not drive and all(k == 0 for k in kinds):
        return _run_bulk(ex, CosimObserver, cols, outputs, start, step, n_steps, ssp_path)
    observer = CosimObserver.create_last_value()
    ex.add_observer(observer)
    manipulator = None
    if drive:
        manipulator = CosimManipulator.create_override()
        ex.add_manipulator(manipulator)
    groups = {}
    for k, ((i, vr), kind) in enumerate(zip(cols, kinds)):
        groups.setdefault((i, kind), []).append((k, vr))
    readers = {
        0: observer.last_real_values,
        1: observer.last_integer_values,
        3: observer.last_boolean_values,
    }
    rows = []

    def record(t):
        row = [t] + [0.0] * len(cols)
        for (i, kind), items in groups.items():
            values = readers[kind](i, [vr for _, vr in items])
            for (k, _), value in zip(items, values):
                row[k + 1] = float(value)
        rows.append(row)

    for n in range(1, n_steps + 1):
        t_prev = start + (n - 1) * step
        if drive and n > 1:  # the inputs held over the step from t_prev
            for (i, vr), fn in drive:
                manipulator.slave_real_values(i, [vr], [float(fn(t_prev))])
        if not ex.step(1):  # the first step initializes, then steps
            raise CosimError(f"libcosim failed in the step from t = {t_prev:.9g} s ({ssp_path})")
        record(start + n * step)  # outputs read after the step
    del ex
    return Result(["time"] + list(outputs), np.array(rows, dtype=float))


def _run_bulk(ex, CosimObserver, cols, outputs, start, step, n_steps, ssp_path):
    """All steps in one libcosim call, Real outputs from a time-series observer."""
    observer = CosimObserver.create_time_series(buffer_size=n_steps + 16)
    ex.add_observer(observer)
    from libcosimpy.CosimEnums import CosimVariableType

    for i, vr in cols:
        observer.start_time_series(i, vr, CosimVariableType.REAL)
    if not ex.step(n_steps):
        raise CosimError(f"libcosim failed before t = {start + n_steps * step:.9g} s ({ssp_path})")
    data = np.empty((n_steps, len(cols) + 1))
    data[:, 0] = start + step * np.arange(1, n_steps + 1)
    for k, (i, vr) in enumerate(cols):
        times, steps, values = observer.time_series_real_samples(
            i, vr, from_step=1, sample_count=n_steps
        )
        if len(values) != n_steps or list(steps[:1]) != [1]:
            raise CosimError(
                f"libcosim returned {len(values)} samples of {outputs[k]} for {n_steps} steps"
            )
        data[:, k + 1] = values
        if k == 0:
            data[:, 0] = np.asarray(times, dtype=float) / NANO
    del ex
    return Result(["time"] + list(outputs), data)


def run_system(system, outputs, stop_time, step, start_time=0.0, inputs=None):
    """Export `system` as an SSP package (contactfmu.cosim.ssp) and run it in libcosim."""
    from .ssp import export_ssp

    with tempfile.TemporaryDirectory(prefix="contactfmu_ssp_") as tmp:
        path = export_ssp(system, os.path.join(tmp, "system.ssp"), stop_time, step, start_time)
        return run_ssp(path, outputs, inputs=inputs)
