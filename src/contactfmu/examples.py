"""Shared plumbing of the example scripts in examples/: the command line contract
(--out DIR, --step H, --fmus DIR), FMU provisioning, reference comparison and plots."""
import argparse
from pathlib import Path

from .build import ensure_fmus
from .cosim import compare, read_csv

ROOT = Path(__file__).resolve().parents[2]
REFDATA = ROOT.parent / "shared" / "refdata"


def parse_args(description, default_step, argv=None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default="results", help="output directory for CSV and PNG (default: results/)")
    parser.add_argument("--step", type=float, default=default_step,
                        help=f"communication step in s (default: {default_step:g})")
    parser.add_argument("--fmus", default=str(ROOT / "fmus"),
                        help="directory of the FMUs; missing or outdated ones are built (default: fmus/)")
    args = parser.parse_args(argv)
    if not args.step > 0:
        parser.error(f"--step must be > 0, got {args.step!r}")
    return args


def fmus(directory, names):
    """Paths of the FMUs `names`, building any that are missing or out of date."""
    return ensure_fmus(directory, names)


def reference(example):
    """The Dymola reference result of an MSL example (shared/refdata/<example>/<example>.csv)."""
    path = REFDATA / example / f"{example}.csv"
    return read_csv(path) if path.is_file() else None


def check(result, example, signals):
    """Tube comparison (tolerance 2e-3) of `signals` against the reference; None if no reference."""
    ref = reference(example)
    return None if ref is None else compare(result, ref, signals)


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


def summarize(name, result, step, wall, out, report, against="Dymola reference"):
    """Print the run's summary and tube report; returns the exit status (1 if the tube failed)."""
    print(f"{name}: {len(result.time)} rows, step {step:g} s, wall time {wall:.2f} s -> {out}/{name}.csv, .png")
    if report is None:
        return 0
    print(report)
    print(f"tube vs {against}: {'PASSED' if report.passed else 'FAILED'}")
    return 0 if report.passed else 1


def plot(result, path, panels, title, ref=None):
    """Plot panels [(ylabel, [signals])] against time, with the reference dashed if given."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), sharex=True, squeeze=False)
    for ax, (ylabel, signals) in zip(axes[:, 0], panels):
        for name in signals:
            line, = ax.plot(result.time, result[name], label=name)
            if ref is not None and name in ref:
                ax.plot(ref.time, ref[name], "--", color=line.get_color(), lw=1, alpha=0.7,
                        label=f"{name} (reference)")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def exit_now(code):
    """Leave the process without interpreter finalization (see README, known issues): seen
    intermittently (a few runs in a hundred, under CPU load), a process that ran pythonfmu FMUs
    aborted after all its work was done ("corrupted double-linked list") while Python shut down."""
    import os
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
