"""The commands on runs and results: run, study, compare, env."""

import ast
import json
import math
import runpy
import sys
import textwrap
import time
from pathlib import Path

from .common import CliError

# ---- run -------------------------------------------------------------------------------------


def _examples():
    from ..examples import ROOT

    d = ROOT / "examples"
    return {p.stem: p for p in sorted(d.glob("*.py"))} if d.is_dir() else {}


def _summary(path):
    """First paragraph (summary) of the docstring of the example at `path`, "" if none or unreadable."""
    try:
        doc = ast.get_docstring(ast.parse(Path(path).read_text())) or ""
    except (OSError, SyntaxError, ValueError):
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def examples_text():
    """The examples, each with the summary line of its docstring, for `run --help`."""
    examples = _examples()
    if not examples:
        return "No examples found (they are the examples/ folder of the source checkout)."
    width = max(map(len, examples))
    return "examples (examples/*.py of the source checkout):\n" + "\n".join(
        textwrap.fill(
            _summary(path) or "-",
            100,
            initial_indent=f"  {name.ljust(width)}  ",
            subsequent_indent=" " * (width + 4),
        )
        for name, path in examples.items()
    )


def cmd_run(args):
    examples = _examples()
    if args.example is None:
        raise CliError(
            f"missing EXAMPLE, the example to run; available: {', '.join(examples) or 'none'} "
            f"(contactfmu run --help describes them)"
        )
    name = args.example[:-3] if args.example.endswith(".py") else args.example
    if name not in examples:
        raise CliError(
            f"unknown example {args.example!r}; available: {', '.join(examples) or 'none'} "
            f"(examples/ of the source checkout)"
        )
    argv = []
    if args.step is not None:
        if not args.step > 0:
            raise CliError(f"--step must be > 0, got {args.step!r}")
        argv += ["--step", repr(args.step)]
    if args.out:
        argv += ["--out", args.out]
    if args.fmus:
        argv += ["--fmus", args.fmus]
    module = runpy.run_path(str(examples[name]))
    sys.argv[0] = f"contactfmu run {name}"  # the example's own usage and errors name the command
    return module["main"](argv + list(args.rest))


# ---- study -----------------------------------------------------------------------------------


def _study_runs(args):
    from ..study import grid, parse_grid, parse_range, samples

    if bool(args.grid) == (args.samples is not None):
        raise CliError(
            "give either --grid NAME=VALUES (one or more: a full-factorial grid) or --samples N "
            "with --param NAME=lo:hi (one or more)"
        )
    if args.grid:
        if args.param:
            raise CliError(
                "--param goes with --samples; a grid's values are given by --grid NAME=lo:hi:n"
            )
        axes = dict(parse_grid(spec) for spec in args.grid)
        if len(axes) != len(args.grid):
            raise CliError("--grid: a parameter is given twice")
        return grid(axes)
    if not args.param:
        raise CliError("--samples N needs the ranges: --param NAME=lo:hi (one per parameter)")
    if args.samples < 1:
        raise CliError(f"--samples {args.samples}: the number of runs must be >= 1")
    ranges = dict(parse_range(spec) for spec in args.param)
    if len(ranges) != len(args.param):
        raise CliError("--param: a parameter is given twice")
    return samples(args.samples, ranges, args.method, args.seed)


def cmd_study(args):
    from ..study import Study, StudyError, example_path
    from ..study.plot import plot

    examples = _examples()
    if args.example is None:
        raise CliError(
            f"missing EXAMPLE, the model to study; available: {', '.join(examples) or 'none'}"
        )
    try:
        path = example_path(args.example)
        runs = _study_runs(args)
        if not args.metric:
            raise CliError(
                "give at least one --metric KIND:SIGNAL (KIND: final, initial, max, min, absmax, "
                "ptp, mean; e.g. --metric max:mass.s)"
            )
        if args.stop is None or not (math.isfinite(args.stop) and args.stop > 0):
            raise CliError(
                "--stop T: the stop time of every run in s, a finite number > 0 (required)"
            )
        if args.workers is not None and args.workers < 0:
            raise CliError(
                f"--workers {args.workers}: a number of worker processes >= 1, or 0 for serial runs"
            )
        if args.workers is not None and args.scheduler:
            raise CliError(
                "--workers starts a local cluster; --scheduler uses a running one: give one of them"
            )
        options = {
            k: v
            for k, v in (
                ("step", args.step),
                ("rtol", args.rtol),
                ("atol", args.atol),
                ("scheme", args.scheme),
                ("output_interval", args.output_interval),
            )
            if v is not None
        }
        name = args.name or f"{path.stem}_study"
        study = Study(
            path,
            runs,
            args.metric,
            stop_time=args.stop,
            options=options,
            name=name,
            fmus=args.fmus or None,
        )
        out = Path(args.out or "results")
        table_path = out / f"{name}.{args.format}"
        t0 = time.perf_counter()
        table = study.run(
            table_path,
            workers=args.workers,
            scheduler=args.scheduler,
            resume=not args.fresh,
            trajectories=args.trajectories,
            progress=True,
        )
    except StudyError as exc:
        raise CliError(str(exc)) from None
    wall = time.perf_counter() - t0
    png = plot(table, study, out / f"{name}.png")
    counts = table["status"].value_counts()
    print(
        f"{name}: {len(table)} runs ({', '.join(f'{n} {s}' for s, n in counts.items())}) in {wall:.1f} s "
        f"-> {table_path}, {png}"
    )
    ok = table[table["status"] == "ok"]
    for m in study.metrics:
        if len(ok):
            print(
                f"  {m.name}: {ok[m.name].min():.6g} .. {ok[m.name].max():.6g}{' ' + m.unit if m.unit else ''}"
            )
    failed = table[table["status"] != "ok"]
    for message in list(dict.fromkeys(failed["error"]))[:3]:
        print(f"  failed: {message.splitlines()[0] if message else '(no message)'}")
    return 1 if len(failed) else 0


# ---- compare ---------------------------------------------------------------------------------


def _result_csv(path):
    """The Result in the CSV file `path`, or a CliError saying what is wrong (with the line)."""
    import numpy as np

    from ..cosim.results import CsvError, read_csv

    p = Path(path)
    if p.is_dir():
        raise CliError(f"{path}: is a directory, not a result CSV")
    if not p.exists():
        raise CliError(f"{path}: no such file")
    try:
        result = read_csv(p, finite=True)
    except CsvError as exc:
        raise CliError(
            f"{path}: not a result CSV (time first, one header line): {exc.reason}"
        ) from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc.strerror}") from None
    t = result.time
    back = np.flatnonzero(t[1:] < t[:-1])
    if len(back):
        k = back[0] + 1
        raise CliError(
            f"{path}: not a result CSV: time decreases at data row {k + 1} "
            f"(from {t[k - 1]:.17g} to {t[k]:.17g})"
        )
    return result


def _tolerance(text):
    """--tol as a float: a finite number > 0, else a CliError."""
    try:
        tol = float(text)
    except ValueError:
        tol = math.nan
    if not (math.isfinite(tol) and tol > 0):
        raise CliError(
            f"--tol {text}: the tolerance must be a finite number > 0 (relative to each "
            f"signal's range, e.g. 2e-3 the MSL default)"
        )
    return tol


def _signal_list(text):
    """--signals as a list of names, or a CliError for an empty list or an empty name."""
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise CliError(
            f"--signals {text!r}: no signal names (give comma-separated names, or leave "
            f"--signals out to compare every signal in common)"
        )
    if not all(names):
        raise CliError(f"--signals {text!r}: empty signal name (two commas or a comma at an end)")
    return names


def cmd_compare(args):
    from ..cosim.compare import compare

    tol = _tolerance(args.tol)
    signals = None if args.signals is None else _signal_list(args.signals)
    result, reference = _result_csv(args.result), _result_csv(args.reference)
    signals = signals or [n for n in reference.names[1:] if n in result]
    for name in signals:
        for what, r, path in (
            ("reference", reference, args.reference),
            ("result", result, args.result),
        ):
            if name not in r:
                raise CliError(
                    f"unknown variable {name!r}: not in the {what} {path} "
                    f"(columns: {', '.join(r.names[1:])})"
                )
    if not signals:
        raise CliError(f"{args.result} and {args.reference} have no signal in common")
    report = compare(result, reference, signals, tol)
    print(report)
    print(
        f"{sum(r.passed for r in report.values())} of {len(report)} signals inside the tube "
        f"(tolerance {tol:g}): {'PASSED' if report.passed else 'FAILED'}"
        + (f": {report.coverage}" if report.coverage else "")
    )
    return 0 if report.passed else 1


# ---- env -------------------------------------------------------------------------------------


def cmd_env(args):
    from .. import hostenv

    try:
        if args.json:
            print(json.dumps(hostenv.settings(), indent=2))
        else:
            print(hostenv.shell_text())
    except hostenv.HostEnvError as exc:
        raise CliError(str(exc)) from None
    return 0
