"""Shared plumbing of the example scripts in examples/: the command line contract
(--out DIR, --step H, --fmus DIR), FMU provisioning, reference comparison, the summary. Their
plots: contactfmu.plots."""

import argparse
from pathlib import Path

from .build import ensure_fmus
from .cosim import compare, read_csv

ROOT = Path(__file__).resolve().parents[2]
REFDATA = (
    Path(__file__).resolve().parent / "refdata"
)  # the MSL reference results (refdata/README.md)


class ReferenceMissing(RuntimeError):
    """A reference result that an example compares with is missing or unreadable."""


def parse_args(description, default_step, argv=None, default_rtol=None):
    """Command line of an example; default_step None: the master chooses the steps unless --step is
    given, at the tolerance --rtol (default default_rtol; atol = rtol*1e-2) if the example has one."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--out", default="results", help="output directory for CSV and PNG (default: results/)"
    )
    parser.add_argument(
        "--step",
        type=float,
        default=default_step,
        help="fixed communication step in s (default: "
        + (
            f"{default_step:g})"
            if default_step
            else "none: the master chooses the steps under its "
            "error tolerance, cosim.algorithms.adaptive)"
        ),
    )
    parser.add_argument(
        "--fmus",
        default=str(ROOT / "fmus"),
        help="directory of the FMUs; missing or outdated ones are built (default: fmus/)",
    )
    if default_rtol is not None:
        parser.add_argument(
            "--rtol",
            type=float,
            default=default_rtol,
            help=f"tolerance of the adaptive master (default {default_rtol:g}; atol = rtol*1e-2)",
        )
    args = parser.parse_args(argv)
    if args.step is not None and not args.step > 0:
        parser.error(f"--step must be > 0, got {args.step!r}")
    if default_rtol is not None and not args.rtol > 0:
        parser.error(f"--rtol must be > 0, got {args.rtol!r}")
    return args


def tolerance(step, rtol):
    """simulate()'s tolerance keywords of an example: none with a fixed step, else rtol and
    atol = rtol*1e-2."""
    return {} if step else dict(rtol=rtol, atol=rtol * 1e-2)


def fmus(directory, names):
    """Paths of the FMUs `names`, building any that are missing or out of date."""
    return ensure_fmus(directory, names)


def reference(example):
    """The Dymola reference result of an MSL example (contactfmu/refdata/<example>/<example>.csv);
    ReferenceMissing if it is missing or unreadable."""
    path = REFDATA / example / f"{example}.csv"
    if not path.is_file():
        raise ReferenceMissing(
            f"reference result of {example} not found: {path} (the package's refdata/ "
            f"folder is incomplete; reinstall contactfmu or restore it from the repository)"
        )
    try:
        return read_csv(path)
    except Exception as exc:
        raise ReferenceMissing(f"reference result of {example} unreadable: {path}: {exc}") from None


def read_table(path):
    """Rows (dicts) of a small reference table in the refdata folder (CSV with a header);
    ReferenceMissing if it is missing or unreadable."""
    import csv

    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise ReferenceMissing(f"reference table {path} not readable: {exc.strerror}") from None
    if not rows:
        raise ReferenceMissing(f"reference table {path} has no rows")
    return rows


def check(result, example, signals):
    """Tube comparison (tolerance 2e-3) of `signals` against the example's Dymola reference."""
    return compare(result, reference(example), signals)


def simulate(system, out, name, **kwargs):
    """Run `system.simulate(**kwargs)` with a progress bar, write out/<name>.csv;
    returns (result, wall time in s, output directory)."""
    import time
    from pathlib import Path

    t0 = time.perf_counter()
    result = system.simulate(progress=True, **kwargs)
    wall = time.perf_counter() - t0
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result.to_csv(out / f"{name}.csv")
    return result, wall, out


class Check:
    """A scalar against an independent value (analytic, published): passed if |value - expected| <= tol."""

    def __init__(self, name, value, expected, tol, unit=""):
        self.name, self.value, self.expected, self.tol, self.unit = (
            name,
            float(value),
            float(expected),
            tol,
            unit,
        )

    @property
    def passed(self):
        return abs(self.value - self.expected) <= self.tol  # False for NaN

    def __str__(self):
        unit = f" {self.unit}" if self.unit else ""
        diff = abs(self.value - self.expected)
        return (
            f"{self.name}: {'PASSED' if self.passed else 'FAILED'}: {self.value:.10g}{unit} vs {self.expected:.10g}"
            f"{unit} (|difference| {diff:.3g} {'<=' if self.passed else '>'} {self.tol:.3g})"
        )


class Checks(list):
    """Checks of one kind; ``passed`` if there is at least one and every one passed."""

    @property
    def passed(self):
        return bool(self) and all(c.passed for c in self)

    def __str__(self):
        return "\n".join(map(str, self))


def step_text(result, step):
    """'step 0.001 s', or for an adaptive run its accepted and rejected steps."""
    records = getattr(result, "steps", None)
    if step is not None:
        return f"step {step:g} s"
    if not records:
        return "adaptive steps"
    accepted = [r.h for r in records if r.accepted]
    return (
        f"adaptive steps: {len(accepted)} accepted ({min(accepted):.2g} .. {max(accepted):.2g} s), "
        f"{len(records) - len(accepted)} rejected"
    )


def summarize(name, result, step, wall, out, *sections):
    """Print the run's summary and, per section (against, report) -- a tube Report of
    cosim.compare or Checks -- one PASSED/FAILED line per signal or value and a verdict.
    Returns the exit status: 1 if anything failed."""
    print(
        f"{name}: {len(result.time)} rows, {step_text(result, step)}, wall time {wall:.2f} s -> {out}/{name}.csv, .png"
    )
    ok = True
    for against, report in sections:
        print(f"{against}:")
        print("\n".join("  " + line for line in str(report).splitlines()))
        n_ok = sum(r.passed for r in (report.values() if isinstance(report, dict) else report))
        print(
            f"  {against}: {'PASSED' if report.passed else 'FAILED'} ({n_ok} of {len(report)} passed)"
        )
        ok = ok and report.passed
    return 0 if ok else 1


def run_main(main):
    """Run an example's main() and leave with its status (exit_now); a missing or unreadable
    reference is a one-line error with status 1."""
    import sys

    try:
        code = main()
    except ReferenceMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    exit_now(code)


def exit_now(code):
    """Leave the process without interpreter finalization (see docs/known-issues.md, "Abort at
    interpreter exit (pythonfmu 0.7.0)"): seen
    intermittently (a few runs in a hundred, under CPU load), a process that ran pythonfmu FMUs
    aborted after all its work was done ("corrupted double-linked list") while Python shut down.
    The clean-ups registered with atexit run first (the master's FMU unzip directories in the
    temporary directory, pytest's), as at a normal exit: only the finalization is skipped."""
    import atexit
    import os
    import sys

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def summarize_study(name, table, wall, out, *sections):
    """Print a study's summary (runs by status, wall time, files) and, per section (against,
    Checks), one PASSED/FAILED line per value and a verdict. Returns the exit status: 1 if a run
    failed or a check failed."""
    counts = table["status"].value_counts()
    print(
        f"{name}: {len(table)} runs ({', '.join(f'{n} {s}' for s, n in counts.items())}), wall time {wall:.1f} s "
        f"-> {out}/{name}.csv, .png"
    )
    ok = (table["status"] == "ok").all()
    for message in list(dict.fromkeys(table.loc[table["status"] != "ok", "error"]))[:3]:
        print(f"  failed run: {message.splitlines()[0] if message else '(no message)'}")
    for against, report in sections:
        print(f"{against}:")
        print("\n".join("  " + line for line in str(report).splitlines()))
        print(
            f"  {against}: {'PASSED' if report.passed else 'FAILED'} ({sum(r.passed for r in report)} of "
            f"{len(report)} passed)"
        )
        ok = ok and report.passed
    return 0 if ok else 1
