"""Parameter studies: many co-simulations of one model, on dask.distributed.

A study is a model (a function ``build(fmu) -> System``, e.g. an example's ``build_system``, or the
name of an example), a set of runs (``grid``, ``samples`` or a list: parameters and start values
``"instance.variable"``, simulate() options by their names) and metrics (functions of a run's
Result). ``Study.run`` executes the runs on a LocalCluster of worker processes (one thread each), on
the cluster of a scheduler address or a given Client, or serially (``workers=0``), and returns a
pandas DataFrame with one row per run: the run's id and values, the metrics, its wall time, status
("ok"; "error" with the message of the FMU, master or metric; "lost" if the cluster could not run it)
and the worker that ran it. With an output file (.csv or .parquet) rows are written as runs finish
and a second call with the same file runs only what is missing::

    from contactfmu.study import Study, grid
    study = Study("msl_preload", grid({"spring.c": [1e4, 2e4, 3e4]}), ["max:spool.s"], stop_time=25.0,
                  options={"scheme": "implicit", "step": 5e-3})
    table = study.run("results/preload.csv", workers=2)
"""

import hashlib
import inspect
import json
import math
import numbers
import sys
import tempfile
import time
from pathlib import Path

from .execute import ExampleModel, FmuFile, Job, execute, provide
from .metrics import KINDS, Metric, as_metric, parse_metric, signal, tube
from .runs import (
    METHODS,
    OPTIONS,
    Run,
    Runs,
    StudyError,
    as_runs,
    explicit,
    grid,
    is_option,
    parse_grid,
    parse_range,
    samples,
)
from .table import STRINGS, Table

__all__ = [
    "Study",
    "StudyError",
    "Run",
    "Runs",
    "grid",
    "samples",
    "explicit",
    "Metric",
    "signal",
    "tube",
    "parse_grid",
    "parse_range",
    "parse_metric",
    "KINDS",
    "METHODS",
    "OPTIONS",
    "example_path",
]

STATUSES = ("ok", "error", "lost")
SETTABLE = ("parameter", "input")


def example_path(name):
    """examples/<name>.py of the source checkout; StudyError listing the examples if there is none."""
    from ..examples import ROOT

    folder = ROOT / "examples"
    found = {p.stem: p for p in sorted(folder.glob("*.py"))} if folder.is_dir() else {}
    stem = name[:-3] if name.endswith(".py") else name
    if stem not in found:
        raise StudyError(
            f"unknown example {name!r}; available: {', '.join(found) or 'none'} (examples/ of the "
            f"source checkout)"
        )
    return found[stem]


class _FmuFolder(dict):
    """The FMUs of a folder by name, built when missing or out of date; remembers the names used."""

    def __init__(self, folder):
        super().__init__()
        self.folder = Path(folder)

    def __missing__(self, name):
        from ..build import ensure_fmus
        from ..components import NAMES as MODELS

        if (self.folder / f"{name}.fmu").is_file() and name not in MODELS:
            path = self.folder / f"{name}.fmu"  # an FMU that is not the project's: used as it is
        elif name in MODELS:
            path = ensure_fmus(self.folder, [name])[name]
        else:
            raise KeyError(
                f"no FMU {name!r} in {self.folder} (and not one the project builds: "
                f"{', '.join(MODELS)})"
            )
        self[name] = str(path)
        return self[name]


def _identity(fn):
    """What identifies a model function: its module, name and source hash."""
    if isinstance(fn, ExampleModel):
        return fn.identity()
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    return {
        "function": f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}",
        "source_sha256": hashlib.sha256(source.encode()).hexdigest() if source else None,
    }


class Study:
    """A parameter study (module docstring).

    model: a function fmu -> System (fmu: {"Mass": path, ...}), or the name or path of an example
    script with build_system(fmu); runs: Runs (grid, samples, explicit) or a list of dicts; metrics:
    Metric, "KIND:instance.variable" or functions of a Result; stop_time: of every run (unless a run
    sets "stop_time"); fmus: a folder (default: the checkout's fmus/, missing FMUs are built) or a
    dict {name: path}; options: simulate() options of every run (step, rtol, scheme, ...); outputs:
    signals recorded besides those the metrics read (None: only those; every output if a metric does
    not say what it reads); name: of the study (tables, plots).

    The model is built once here, and every parameter, start value and metric signal is checked
    against its FMUs (a StudyError names what is wrong and what is valid)."""

    def __init__(
        self,
        model,
        runs,
        metrics=(),
        *,
        stop_time=None,
        fmus=None,
        options=None,
        outputs=None,
        name=None,
    ):
        from ..examples import ROOT

        if isinstance(model, (str, Path)):
            path = Path(model)
            model = ExampleModel(
                path if path.suffix == ".py" and path.is_file() else example_path(str(model))
            )
        if not callable(model):
            raise StudyError(f"model {model!r}: give a function fmu -> System or an example's name")
        self.model = model
        self.name = name or getattr(model, "name", None) or getattr(model, "__name__", "study")
        self.runs = as_runs(runs)
        self.metrics = [as_metric(m) for m in metrics]
        names = [m.name for m in self.metrics]
        clash = sorted(
            {n for n in names if names.count(n) > 1}
            | (set(names) & (set(STRINGS) | {"wall_time", "trajectory"} | set(self.runs.names)))
        )
        if clash:
            raise StudyError(
                f"metric names {', '.join(clash)} are used twice or name another column"
            )
        self.options = dict(options or {})
        for key in self.options:
            if key not in OPTIONS or key == "stop_time":
                raise StudyError(
                    f"option {key!r}: the options of every run are {', '.join(OPTIONS[1:])} "
                    f"(the stop time is stop_time=)"
                )
        if stop_time is None and not all("stop_time" in r.values for r in self.runs):
            raise StudyError(
                "stop_time: give the stop time of the runs (or a stop_time value in every run)"
            )
        if stop_time is not None and not (
            isinstance(stop_time, numbers.Real) and math.isfinite(stop_time)
        ):
            raise StudyError(f"stop_time = {stop_time!r}: must be a finite number of seconds")
        self.stop_time = None if stop_time is None else float(stop_time)
        folder = fmus if fmus is not None else ROOT / "fmus"
        used = _FmuFolder(folder) if isinstance(folder, (str, Path)) else dict(folder)
        system = self._check_model(used)
        paths = {str(Path(i.path).resolve()) for i in system.instances.values()}
        self.files = []  # the FMUs the model uses, read now: the runs need no file of the client's
        for n, p in used.items():
            if str(Path(p).resolve()) in paths:
                data = Path(p).read_bytes()
                self.files.append(
                    FmuFile(n, hashlib.sha256(data).hexdigest(), str(Path(p).resolve()), data)
                )
        self.units = self._check_values(system)
        self.outputs = self._outputs(system, outputs)

    # ---- checks against the model ------------------------------------------------------------

    def _check_model(self, fmu):
        from ..cosim import System

        try:
            system = self.model(fmu)
        except StudyError:
            raise
        except KeyError as exc:
            key = exc.args[0] if exc.args else exc
            if isinstance(fmu, _FmuFolder):
                raise StudyError(f"model {self.name}: {key}") from None
            raise StudyError(
                f"model {self.name}: needs the FMU {key!r}, not among the fmus given "
                f"({', '.join(map(str, fmu)) or 'none'})"
            ) from None
        if not isinstance(system, System):
            raise StudyError(
                f"model {self.name} returned {type(system).__name__}, not a contactfmu.cosim.System"
            )
        return system

    def _variable(self, system, ref, what):
        inst_name, _, var_name = ref.partition(".")
        inst = system.instances.get(inst_name)
        if inst is None:
            raise StudyError(
                f"{what} {ref!r}: the model has no instance {inst_name!r}; its instances are "
                f"{', '.join(system.instances)}"
            )
        var = inst.variables.get(var_name)
        return inst, var

    def _check_values(self, system):
        """Units of every value name of the runs; StudyError for a name the model cannot set."""
        units = {}
        for ref in self.runs.names:
            if is_option(ref):
                units[ref] = {
                    "step": "s",
                    "start_time": "s",
                    "stop_time": "s",
                    "output_interval": "s",
                }.get(ref, "")
                continue
            inst, var = self._variable(system, ref, "parameter")
            var_name = ref.partition(".")[2]
            settable = [
                v.name
                for v in inst.md.modelVariables
                if v.causality == "parameter" or (v.causality == "input" and v.type == "Real")
            ]
            if var is None or not (var.causality in SETTABLE or var.initial in ("exact", "approx")):
                what = (
                    f"has no variable {var_name!r}"
                    if var is None
                    else f"computes {var_name!r} (an {var.causality}), it cannot be set"
                )
                raise StudyError(
                    f"parameter {ref!r}: {inst.name} ({inst.md.modelName}) {what}; its parameters "
                    f"and inputs: {', '.join(settable)}"
                )
            units[ref] = var.unit or ""
        for m in self.metrics:
            for ref in m.signals or ():
                inst, var = self._variable(system, ref, f"metric {m.name}: signal")
                if var is None:
                    outputs = [v.name for v in inst.md.modelVariables if v.causality == "output"]
                    raise StudyError(
                        f"metric {m.name}: {inst.name} ({inst.md.modelName}) has no variable "
                        f"{ref.partition('.')[2]!r}; its outputs: {', '.join(outputs)}"
                    )
                if getattr(m, "kind", None) and not m.unit:
                    m.unit = var.unit or ""
        return units

    def _outputs(self, system, outputs):
        if any(m.signals is None for m in self.metrics) and outputs is None:
            return None  # a metric reads what it wants: record every output
        names = list(outputs or [])
        for ref in names:
            inst, var = self._variable(system, ref, "output")
            if var is None:
                raise StudyError(
                    f"output {ref!r}: {inst.name} ({inst.md.modelName}) has no such variable"
                )
        return list(dict.fromkeys(names + [s for m in self.metrics for s in m.signals or ()]))

    # ---- description -------------------------------------------------------------------------

    @property
    def columns(self):
        return (
            ["run_id"]
            + self.runs.names
            + [m.name for m in self.metrics]
            + ["wall_time", "status", "error", "worker"]
        )

    def describe(self):
        """The study as JSON-ready data (written beside the table as <name>.json)."""
        return {
            "study": self.name,
            "model": _identity(self.model),
            "fmus": {f.name: f.sha for f in self.files},
            "stop_time": self.stop_time,
            "options": self.options,
            "outputs": self.outputs,
            "metrics": [m.identity() for m in self.metrics],
            "units": self.units,
            "runs": self.runs.describe(),
            "columns": self.columns,
        }

    def fingerprint(self):
        """Hash of what makes two studies' rows comparable: model, FMUs, stop time, options, outputs,
        metrics (not the runs: a resumed study may add runs)."""
        d = self.describe()
        key = {k: d[k] for k in ("model", "fmus", "stop_time", "options", "outputs", "metrics")}
        key["model"] = {k: v for k, v in key["model"].items() if k != "path"}
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[
            :16
        ]

    def job(self, trajectory=False):
        return Job(
            self.model,
            {f.name: f.sha for f in self.files},
            self.metrics,
            self.outputs,
            self.stop_time,
            self.options,
            bool(trajectory),
        )

    # ---- running -----------------------------------------------------------------------------

    def run(
        self,
        out=None,
        *,
        workers=None,
        scheduler=None,
        client=None,
        resume=True,
        trajectories=False,
        progress=None,
    ):
        """Execute the runs; returns the DataFrame (one row per run, in the order of the runs).

        out: the table file (.csv or .parquet; beside it <name>.json, and <name>.runs/ with the
        trajectories); resume: runs whose rows are in `out` (status ok or error) are not repeated,
        "lost" ones are; resume=False starts the file afresh. workers: worker processes of the
        LocalCluster (default: one per CPU), 0 to run serially in this process; scheduler: address of
        a running dask scheduler; client: a distributed.Client to use. trajectories: write each run's
        Result to <name>.runs/<run_id>.csv (needs out). progress: a bar on stderr (None: once the
        study has taken 2 s; False: never)."""
        import pandas as pd

        if trajectories and out is None:
            raise StudyError("trajectories are written beside the table: give out=...")
        if workers is not None and not (isinstance(workers, int) and workers >= 0):
            raise StudyError(
                f"workers = {workers!r}: a number of worker processes >= 1, or 0 to run serially"
            )
        if workers is not None and (scheduler is not None or client is not None):
            raise StudyError(
                "workers= starts a local cluster (0: serial runs); a scheduler or client is a running "
                "cluster: give one of them"
            )
        if scheduler is not None and client is not None:
            raise StudyError("give a scheduler address or a client, not both")
        table = Table(out, self.columns) if out is not None else None
        kept, done = [], {}
        meta = {**self.describe(), "fingerprint": self.fingerprint()}
        if table is not None and resume:
            old = table.read_meta()
            if old is not None and old.get("fingerprint") != meta["fingerprint"]:
                differ = [
                    k
                    for k in ("model", "fmus", "stop_time", "options", "outputs", "metrics")
                    if json.dumps(old.get(k), sort_keys=True, default=str)
                    != json.dumps(meta[k], sort_keys=True, default=str)
                ]
                raise StudyError(
                    f"{out} holds another study ({', '.join(differ) or 'its description'} differ"
                    f"{'s' if len(differ) <= 1 else ''}; see {table.meta}): write to another file or "
                    f"start afresh (resume=False, --fresh)"
                )
            existing = table.read()
            if existing is not None:
                for row in existing.to_dict("records"):
                    if row["status"] in ("ok", "error"):
                        kept.append(row)
                        done[row["run_id"]] = row
        todo = [r for r in self.runs if r.run_id not in done]
        rows = dict(done)
        bar = _Bar(self.name, len(self.runs), sum(r.run_id in done for r in self.runs), progress)
        if table is not None:
            table.start(meta, kept)
            if trajectories:
                table.runs_dir.mkdir(parents=True, exist_ok=True)

        def on_row(run, row):
            row = {**run.values, **row}
            trajectory = row.pop("trajectory", None)
            if trajectory is not None:
                from ..cosim import Result

                Result(*trajectory).to_csv(table.runs_dir / f"{run.run_id}.csv")
            rows[run.run_id] = row
            if table is not None:
                table.append(row)
            bar.update(row["status"])

        try:
            if todo:
                job = self.job(trajectories)
                if workers == 0:
                    self._serial(job, todo, on_row)
                else:
                    from .cluster import run_all

                    run_all(job, todo, self.files, on_row, workers, scheduler, client)
        finally:
            bar.close()
            if table is not None:
                table.close()
        ordered = [rows[r.run_id] for r in self.runs]
        frame = self._frame(ordered)
        if table is not None:
            extra = [r for r in kept if r["run_id"] not in {x.run_id for x in self.runs}]
            table.finish(
                ordered + extra,
                pd.concat([frame, self._frame(extra)], ignore_index=True) if extra else frame,
            )
        return frame

    def _serial(self, job, runs, on_row):
        provide(self.files, Path(tempfile.gettempdir()) / "contactfmu-fmus")
        for run in runs:
            on_row(run, execute(job, run))

    def _frame(self, rows):
        import pandas as pd

        frame = pd.DataFrame(
            [{c: row.get(c, math.nan) for c in self.columns} for row in rows], columns=self.columns
        )
        for c in STRINGS:
            frame[c] = frame[c].fillna("").astype(str)
        return frame


class _Bar:
    """Progress of a study on stderr: runs done of all, errors, elapsed and remaining time; shown once
    the study has taken 2 s (progress None) or at once (True); never with False."""

    def __init__(self, name, total, done, progress):
        self.name, self.total, self.done, self.progress = name, total, done, progress
        self.start, self.last, self.shown, self.new = time.monotonic(), 0.0, False, 0
        self.counts = {s: 0 for s in STATUSES}

    def update(self, status):
        self.done += 1
        self.new += 1
        self.counts[status] = self.counts.get(status, 0) + 1
        now = time.monotonic()
        if self.progress is False or (self.progress is None and now - self.start < 2.0):
            return
        if now - self.last < 0.5 and self.done < self.total:
            return
        self.last, self.shown = now, True
        elapsed = now - self.start
        eta = elapsed / self.new * (self.total - self.done)
        frac = self.done / max(self.total, 1)
        bad = ", ".join(f"{self.counts[s]} {s}" for s in ("error", "lost") if self.counts.get(s))
        sys.stderr.write(
            f"\r  {self.name}: [{'#' * int(30 * frac):<30}] {self.done}/{self.total} runs"
            f"{' (' + bad + ')' if bad else ''}  {elapsed:.1f} s, ETA {eta:.1f} s "
        )
        sys.stderr.flush()

    def close(self):
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
