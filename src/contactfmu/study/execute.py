"""One run of a study, as a worker (or the client, for a serial study) executes it, and the FMU files
a worker uses.

FMUs are identified by the SHA-256 of their file. A process uses the file at the client's path when
it can read it there with the same hash (the client's machine, a shared file system); otherwise the
bytes that came from the client are written once into the process's cache folder (on a worker: its
local directory) and that copy is used for every run; the master (cosim.system) extracts each FMU
file once per process. Nothing here imports dask: the serial path runs the same code.
"""

import hashlib
import math
import os
import socket
import sys
import time
from pathlib import Path
from typing import NamedTuple

from .runs import StudyError

_PROVIDED = {}  # FMU sha256 -> path of a file with that content, for this process
_HASHES = {}  # (real path, mtime_ns, size) -> sha256
_MODELS = {}  # sha256 of a model source -> its build_system function, for this process
WORKER = f"{socket.gethostname()}/{os.getpid()}"


def sha256_file(path):
    """SHA-256 of the file at `path` (cached per path, modification time and size)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key not in _HASHES:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


class FmuFile(NamedTuple):
    """An FMU of the study: its name in the model (fmu["Mass"]), content hash, the client's path and,
    when it travels to workers, its bytes."""

    name: str
    sha: str
    path: str
    data: bytes = None


def provide(files, cache):
    """Make every FmuFile available in this process: the client's path if it holds the same content,
    else a copy written once into `cache`/<sha>/<name>.fmu. Returns {sha: path}."""
    for f in files:
        if f.sha in _PROVIDED and os.path.isfile(_PROVIDED[f.sha]):
            continue
        try:
            if os.path.isfile(f.path) and sha256_file(f.path) == f.sha:
                _PROVIDED[f.sha] = f.path
                continue
        except OSError:
            pass
        if f.data is None:
            raise StudyError(
                f"FMU {f.name}: {f.path} is not readable here and its content was not sent"
            )
        if hashlib.sha256(f.data).hexdigest() != f.sha:
            raise StudyError(f"FMU {f.name}: the content received does not match its hash {f.sha}")
        target = Path(cache) / f.sha / f"{f.name}.fmu"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f"{target.name}.{os.getpid()}.part")
            part.write_bytes(f.data)
            os.replace(part, target)  # atomic: a process never sees a half-written FMU
        _PROVIDED[f.sha] = str(target)
    return {f.sha: _PROVIDED[f.sha] for f in files}


class ExampleModel:
    """The model of an example script: its ``build_system(fmu)``. The script's source travels with the
    study, so a worker without the source checkout runs it too (it needs contactfmu installed)."""

    def __init__(self, path):
        self.path = str(Path(path).resolve())
        try:
            self.source = Path(path).read_text()
        except OSError as exc:
            raise StudyError(f"model {path}: cannot read it: {exc.strerror}") from None
        self.sha = hashlib.sha256(self.source.encode()).hexdigest()
        self.name = Path(path).stem
        if "def build_system(" not in self.source:
            raise StudyError(
                f"model {path}: the example has no build_system(fmu) function to study"
            )

    def build_function(self):
        if self.sha not in _MODELS:
            namespace = {"__name__": f"contactfmu_study_model_{self.name}", "__file__": self.path}
            code = compile(self.source, self.path, "exec")
            exec(code, namespace)
            _MODELS[self.sha] = namespace["build_system"]
        return _MODELS[self.sha]

    def __call__(self, fmu):
        return self.build_function()(fmu)

    def identity(self):
        return {"example": self.name, "path": self.path, "sha256": self.sha}


class Job(NamedTuple):
    """What every run of a study shares: the model, its FMUs {name: sha}, metrics, outputs to record,
    stop time, simulate() options, and whether to return the trajectory."""

    model: object
    fmus: dict
    metrics: list
    outputs: list
    stop_time: float
    options: dict
    trajectory: bool


def apply(system, params):
    """Set the run's parameters and start values on the System's instances."""
    for name, value in params.items():
        inst, var = name.split(".", 1)
        system.instances[inst].values[var] = value


def _message(exc):
    from ..cosim import CosimError

    text = str(exc) if isinstance(exc, (CosimError, StudyError)) else f"{type(exc).__name__}: {exc}"
    return text or type(exc).__name__


def execute(job, run):
    """Build the model, set the run's values, simulate, evaluate the metrics: a row {run_id, metric
    values, wall_time, status ("ok" or "error"), error (the message), worker} and, if the job asks for
    it, "trajectory": (names, values). An exception of the FMUs, the master or a metric is the row's
    error, never raised."""
    t0 = time.perf_counter()
    row = {
        "run_id": run.run_id,
        **{m.name: math.nan for m in job.metrics},
        "status": "ok",
        "error": "",
        "worker": WORKER,
    }
    try:
        fmu = {}
        for name, sha in job.fmus.items():
            if sha not in _PROVIDED:
                raise StudyError(
                    f"FMU {name} ({sha[:12]}) is not available in this process (the study "
                    f"provides it to every worker before the runs start)"
                )
            fmu[name] = _PROVIDED[sha]
        system = job.model(fmu)
        apply(system, run.params)
        options = {**job.options, **run.options}
        stop = options.pop("stop_time", job.stop_time)
        result = system.simulate(stop, outputs=job.outputs, **options)
    except Exception as exc:
        row.update(status="error", error=_message(exc))
    else:
        errors = []
        for m in job.metrics:
            try:
                row[m.name] = float(m(result))
            except Exception as exc:
                errors.append(f"metric {m.name}: {_message(exc)}")
        if errors:
            row.update(status="error", error="; ".join(errors))
        if job.trajectory:
            row["trajectory"] = (list(result.names), result.values)
    row["wall_time"] = time.perf_counter() - t0
    sys.stdout.flush()
    return row
