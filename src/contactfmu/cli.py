"""The ``contactfmu`` command line.

    contactfmu build [--out DIR] [--fmi 2|3|both] [--no-cross-check]
                                                       build and validate (FMI 2.0 into DIR, 3.0
                                                       into DIR/fmi3), write cross-check files
    contactfmu validate FMU...                         fmpy's validation + the project's checks
    contactfmu info FMU...                             parameters and variables as a table
    contactfmu run EXAMPLE [--step H] [--out DIR]      run an example (examples/<EXAMPLE>.py)
    contactfmu study EXAMPLE --grid NAME=lo:hi:n ...   parameter study of an example's model on
               | --samples N --param NAME=lo:hi ...    dask.distributed: table and plot into --out
               --metric KIND:SIGNAL ... --stop T [--workers N | --scheduler ADDR] [--out DIR]
    contactfmu compare RESULT.csv REFERENCE.csv        tube comparison (MSL csv-compare, 2e-3)
               [--signals a,b] [--tol 2e-3]            (the result must cover the reference's time range)
    contactfmu env [--json]                            optional settings for non-Python FMI hosts

Exit status: 0 success, 1 a check failed (invalid FMU, tube failed, result not covering the
reference's time range, a run of a study failed), 2 bad input (missing file, not an FMU or not a result CSV, bad option
value, unknown example or variable), with one line "contactfmu: error: ..." on stderr (argparse's
own usage errors, such as an unknown option, print the usage first).
"""

import argparse
import ast
import json
import math
import runpy
import sys
import textwrap
import time
import zipfile
from pathlib import Path

from . import __version__, components, validation
from .examples import ReferenceMissing

# Parameters of each component's documentation (stateSelect, a Modelica translator directive,
# is left out of every FMU; co-simulation extras such as m_a/m_b, m1/m2, s_start/v_start are not
# listed because the documentation does not have them).


class CliError(Exception):
    """Bad input: reported as 'contactfmu: error: ...' with exit status 2."""


def _fmu(path):
    """Model description of the FMU at `path`, or a CliError saying what is wrong."""
    from fmpy import read_model_description

    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    if p.is_dir() or not zipfile.is_zipfile(p):
        raise CliError(f"{path}: not an FMU (an FMU is a zip archive with a modelDescription.xml)")
    with zipfile.ZipFile(p) as z:
        if "modelDescription.xml" not in z.namelist():
            raise CliError(f"{path}: not an FMU (no modelDescription.xml in the archive)")
    try:
        return read_model_description(str(p))
    except Exception as exc:
        raise CliError(f"{path}: unreadable modelDescription.xml: {exc}") from None


# ---- build -----------------------------------------------------------------------------------


def cmd_build(args):
    from . import crosscheck
    from .build import build_all, build_all3

    t0 = time.perf_counter()
    results = {}
    if args.fmi in ("2", "both"):
        print(f"Building FMI 2.0 FMUs into {args.out}")
        results = build_all(args.out)
    bad = {n: p for n, (_, p) in results.items() if p}
    if results and not bad and not args.no_cross_check:
        target = Path(args.out) / "cross-check"
        dirs = crosscheck.write_all([p for p, _ in results.values()], target, progress=None)
        print(f"Cross-check files for {len(dirs)} FMUs in {dirs[0].parent}")
    counts = [f"{len(results) - len(bad)} of {len(results)} FMI 2.0 FMUs valid"] if results else []
    if args.fmi in ("3", "both"):
        print(f"Building FMI 3.0 FMUs into {Path(args.out) / 'fmi3'}")
        results3 = build_all3(Path(args.out) / "fmi3")
        bad3 = [n for n, (_, p) in results3.items() if p]
        counts.append(f"{len(results3) - len(bad3)} of {len(results3)} FMI 3.0 FMUs valid")
        bad.update(dict.fromkeys(bad3))
    print(f"{', '.join(counts)} ({time.perf_counter() - t0:.1f} s)")
    return 1 if bad else 0


# ---- validate --------------------------------------------------------------------------------


def cmd_validate(args):
    failed = 0
    for path in args.fmu:
        md = _fmu(path)
        problems = validation.validate(path, md)
        known = (
            ""
            if md.modelName in components.NAMES
            else " (not a contactfmu model: documented parameters not checked)"
        )
        if problems:
            failed += 1
            print(f"{path}: {len(problems)} problem(s){known}")
            for p in problems:
                print(f"  - {p}")
        else:
            print(
                f"{path}: valid ({md.modelName}, FMI {md.fmiVersion}: fmpy validation, units, "
                f"documented parameters, state round trip){known}"
            )
    return 1 if failed else 0


# ---- info ------------------------------------------------------------------------------------


def cmd_info(args):
    mds = [_fmu(path) for path in args.fmu]  # every file checked before anything is printed
    for k, md in enumerate(mds):
        if k:
            print()
        print_info(md)
    return 0


def print_info(md):
    cs = md.coSimulation
    de = md.defaultExperiment
    print(
        f"{md.modelName}  (FMI {md.fmiVersion} Co-Simulation, {md.generationTool or 'unknown tool'})"
    )
    print(textwrap.fill(md.description or "", 100))
    print(f"GUID {md.guid}")
    if de:
        print(f"DefaultExperiment: {de.startTime} to {de.stopTime} s, step {de.stepSize} s")
    if cs:
        print(
            f"canGetAndSetFMUstate {cs.canGetAndSetFMUstate}, canSerializeFMUstate {cs.canSerializeFMUstate}, "
            f"canInterpolateInputs {cs.canInterpolateInputs}, maxOutputDerivativeOrder {cs.maxOutputDerivativeOrder}"
        )
    rows = [("name", "causality", "type", "unit", "start", "range", "description")]
    for v in md.modelVariables:
        lo, hi = getattr(v, "min", None), getattr(v, "max", None)
        rng = (
            f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
            if (lo or hi) is not None
            else ""
        )
        rows.append(
            (
                v.name,
                v.causality,
                v.type,
                v.unit or "",
                "" if v.start is None else str(v.start),
                rng,
                v.description or "",
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(6)]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:6], widths)) + "  " + r[6])
        if k == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 11)


# ---- run -------------------------------------------------------------------------------------


def _examples():
    from .examples import ROOT

    d = ROOT / "examples"
    return {p.stem: p for p in sorted(d.glob("*.py"))} if d.is_dir() else {}


def _summary(path):
    """First paragraph (summary) of the docstring of the example at `path`, "" if none or unreadable."""
    try:
        doc = ast.get_docstring(ast.parse(Path(path).read_text())) or ""
    except (OSError, SyntaxError, ValueError):
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _examples_text():
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
    from .study import grid, parse_grid, parse_range, samples

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
    from .study import Study, StudyError, example_path
    from .study.plot import plot

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

    from .cosim.results import CsvError, read_csv

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
    from .cosim.compare import compare

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
    from . import hostenv

    try:
        if args.json:
            print(json.dumps(hostenv.settings(), indent=2))
        else:
            print(hostenv.shell_text())
    except hostenv.HostEnvError as exc:
        raise CliError(str(exc)) from None
    return 0


def parser():
    p = argparse.ArgumentParser(
        prog="contactfmu",
        description="Contact and end-stop FMUs (FMI 2.0 and FMI 3.0 "
        "Co-Simulation): build, check, inspect, run, compare.",
    )
    p.add_argument("--version", action="version", version=f"contactfmu {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    b = sub.add_parser(
        "build", help="build and validate every FMU, write the FMI cross-check files"
    )
    b.add_argument("--out", default="fmus", help="output directory (default: fmus)")
    b.add_argument(
        "--fmi",
        choices=("2", "3", "both"),
        default="both",
        help="the standard: FMI 2.0 into OUT, FMI 3.0 into OUT/fmi3, or both (default)",
    )
    b.add_argument("--no-cross-check", action="store_true", help="skip the cross-check files")
    b.set_defaults(func=cmd_build)
    v = sub.add_parser(
        "validate", help="fmpy validation + units, documented parameters, state round trip"
    )
    v.add_argument("fmu", nargs="+", metavar="FMU")
    v.set_defaults(func=cmd_validate)
    i = sub.add_parser("info", help="the FMU's parameters and variables")
    i.add_argument("fmu", nargs="+", metavar="FMU")
    i.set_defaults(func=cmd_info)
    r = sub.add_parser(
        "run",
        help="run an example of examples/ (CSV and PNG into --out)",
        usage="contactfmu run EXAMPLE [--step H] [--out DIR] [--fmus DIR] [OPTION ...]",
        epilog=_examples_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # EXAMPLE is optional for argparse only, so that its absence is reported by cmd_run with the
    # list of examples (and not as "required: EXAMPLE, rest")
    r.add_argument("example", nargs="?", metavar="EXAMPLE", help="name of the example (see below)")
    r.add_argument("--step", type=float, default=None, help="communication step in s")
    r.add_argument("--out", default=None, help="output directory (default: results)")
    r.add_argument(
        "--fmus", default=None, help="FMU directory (default: fmus; missing FMUs are built)"
    )
    r.add_argument(
        "rest", nargs=argparse.REMAINDER, metavar="OPTION", help="further options of the example"
    )
    r.set_defaults(func=cmd_run)
    st = sub.add_parser(
        "study",
        help="parameter study of an example's model on dask.distributed (table and "
        "plot into --out)",
        usage="contactfmu study EXAMPLE (--grid NAME=VALUES ... | --samples N "
        "--param NAME=LO:HI ...) --metric KIND:SIGNAL ... --stop T [options]",
        description="Runs the model of examples/<EXAMPLE>.py (its build_system) once per parameter set "
        "on a dask.distributed cluster and writes OUT/STUDY.csv (one row per run: values, metrics, "
        "wall time, status, error message), OUT/STUDY.json (the study) and OUT/STUDY.png (a curve "
        "for one grid parameter, a heat map for two, histograms otherwise); OUT: --out, STUDY: "
        "--name (default EXAMPLE_study). Runs already in the table "
        "are not repeated (--fresh starts over). Exit status 1 if a run failed. NAME: "
        "instance.variable, a parameter or start value (spring.c, mass.s_start), or a simulate() "
        "option (step, rtol, ...).",
    )
    st.add_argument(
        "example",
        nargs="?",
        metavar="EXAMPLE",
        help="name of the example (contactfmu run --help lists them)",
    )
    st.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="NAME=VALUES",
        help="grid axis: lo:hi:n (evenly spaced), lo:hi:n:log (geometric) or a,b,c; several: full factorial",
    )
    st.add_argument(
        "--samples", type=int, default=None, metavar="N", help="N sampled runs (with --param)"
    )
    st.add_argument(
        "--param", action="append", default=[], metavar="NAME=LO:HI[:log]", help="sampling range"
    )
    st.add_argument(
        "--method",
        default="random",
        choices=["random", "lhs", "sobol", "halton"],
        help="sampling: random (Monte Carlo), lhs (Latin hypercube), sobol, halton (default: random)",
    )
    st.add_argument("--seed", type=int, default=0, help="seed of the samples (default 0)")
    st.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="KIND:SIGNAL",
        help="a column: final, initial, max, min, absmax, ptp or mean of a signal, e.g. max:mass.s",
    )
    st.add_argument(
        "--stop", type=float, default=None, help="stop time of every run in s (required)"
    )
    st.add_argument(
        "--step", type=float, default=None, help="fixed communication step in s (default: adaptive)"
    )
    st.add_argument("--rtol", type=float, default=None, help="tolerance of the adaptive master")
    st.add_argument(
        "--atol", type=float, default=None, help="absolute tolerance of the adaptive master"
    )
    st.add_argument("--scheme", default=None, help="gauss-seidel, jacobi, implicit or adaptive")
    st.add_argument(
        "--output-interval",
        type=float,
        default=None,
        dest="output_interval",
        help="recording interval in s",
    )
    st.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the local cluster "
        "(default: one per CPU; 0: serial in this process)",
    )
    st.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="address of a running dask scheduler "
        "(e.g. tcp://host:8786) instead of a local cluster",
    )
    st.add_argument(
        "--out", default=None, metavar="OUT", help="output directory (default: results)"
    )
    st.add_argument(
        "--name",
        default=None,
        metavar="STUDY",
        help="name of the table and plot (default: EXAMPLE_study)",
    )
    st.add_argument(
        "--format", default="csv", choices=["csv", "parquet"], help="table format (default: csv)"
    )
    st.add_argument(
        "--fmus", default=None, help="FMU directory (default: fmus; missing FMUs are built)"
    )
    st.add_argument(
        "--trajectories",
        action="store_true",
        help="also write every run's result to DIR/NAME.runs/",
    )
    st.add_argument(
        "--fresh", action="store_true", help="start the table afresh instead of resuming it"
    )
    st.set_defaults(func=cmd_study)
    c = sub.add_parser("compare", help="tube comparison of a result CSV against a reference CSV")
    c.add_argument("result", metavar="RESULT.csv")
    c.add_argument("reference", metavar="REFERENCE.csv")
    c.add_argument(
        "--signals", default=None, help="comma-separated signals (default: all in common)"
    )
    c.add_argument(
        "--tol", default="2e-3", help="relative tube tolerance, a finite number > 0 (default: 2e-3)"
    )
    c.set_defaults(func=cmd_compare)
    e = sub.add_parser(
        "env",
        help="optional environment settings for non-Python FMI hosts (the "
        "FMUs find libpython themselves; for unusual installations)",
    )
    e.add_argument("--json", action="store_true", help="as JSON")
    e.set_defaults(func=cmd_env)
    return p


def _values_of(argv, options=("--tol", "--step")):
    """'--tol -1e-3' as '--tol=-1e-3': argparse takes a value that starts with '-' and is not a
    plain negative number (-1e-3, -inf) for an option, and would answer with its usage."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = []
    while argv:
        arg = argv.pop(0)
        if arg in options and argv and argv[0].startswith("-") and len(argv[0]) > 1:
            arg = f"{arg}={argv.pop(0)}"
        out.append(arg)
    return out


def run(argv=None):
    args = parser().parse_args(_values_of(argv))
    try:
        return args.func(args)
    except CliError as exc:
        print(f"contactfmu: error: {exc}", file=sys.stderr)
        return 2
    except ReferenceMissing as exc:
        print(f"contactfmu: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("contactfmu: interrupted", file=sys.stderr)
        return 130


def main(argv=None):
    """Console entry point. Ends the process without interpreter finalization after flushing
    (docs/known-issues.md, "Abort at interpreter exit (pythonfmu 0.7.0)": pythonfmu's runtime can
    abort at interpreter exit)."""
    from .examples import exit_now

    exit_now(run(argv))
