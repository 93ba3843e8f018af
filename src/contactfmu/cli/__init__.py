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
import sys

from .. import __version__
from ..examples import ReferenceMissing
from .common import CliError
from .fmus import cmd_build, cmd_info, cmd_validate
from .runs import cmd_compare, cmd_env, cmd_run, cmd_study, examples_text


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
        epilog=examples_text(),
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
    from ..examples import exit_now

    exit_now(run(argv))
