"""Optional: the FMI community's own tools on every FMU, replaying its FMI cross-check files.

* the FMU Compliance Checker (``fmuCheck.linux64``): exit status 0, no warning, error or fatal
  line in its log, its summary counts 0, and its output CSV equal to ``<Model>_ref.csv`` within
  what its time drift explains (below);
* the Reference-FMUs' simulator (``fmusim``): exit status 0, no log line, and its output CSV equal
  to ``<Model>_ref.csv`` to the precision it prints with.

The tests run only when the environment variable ``CONTACTFMU_FMI_TOOLS`` names a folder holding
both executables (CI sets it); otherwise every test here is skipped with a reason naming the
variable. Both tools are C programs, not Python hosts: they run with an empty environment
(``env -i``: no LD_PRELOAD, PATH or PYTHONHOME); each FMU loads libpython itself (docs/importers.md
"Non-Python hosts"). Every message fmuCheck receives from an FMU must carry the instance name
fmuCheck gave (it flags "FMU does not utilize provided instance name").

Measured with fmuCheck (HEAD c704b98 on FMI Library 2.0.3) and fmusim v0.0.39:

* fmuCheck advances its time by adding the step (t = 0.050000000000000405 where n*h = 0.05),
  sets the inputs interpolated at that time and passes it to fmi2DoStep. Its time column is
  written with 17 digits, so the drift dt = max|t_check - t_ref| is measured from the file:
  7.8e-16 s (1000 steps to 1 s), 1.8e-15 s (ElastoGap, 1000 steps to 0.1 s), 3.3e-13 s
  (MassWithStopAndFriction, 5000 steps to 5 s); bounded by n_steps*eps*t_stop (each addition
  rounds by at most eps*t/2). Every Real output y then differs from the reference by
  0.69 .. 1.01 times max|dy/dt|*dt + 4*eps*max|y| at most (the largest of each FMU; worst
  Sine.y, 5.3e-15 for 5.3e-15; MassWithStopAndFriction.s 4.6e-12); the tolerance is twice
  that. Discrete outputs are equal (no experiment sits on a switching threshold at a grid point:
  the drift would move the switch by a step there).
* fmusim replays the inputs on the exact grid and writes "%.16g": every value (time included,
  all 11 FMUs, 138 604 values) equals the reference printed with 16 significant digits, i.e.
  the FMU computes bit for bit what the project's master computes. Largest relative difference
  5.4e-16; the tolerance is the bound of 16-digit printing plus one rounding on reading,
  5e-16 + 2**-53 = 6.1e-16.
"""

import csv
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from contactfmu import crosscheck
from contactfmu.components import NAMES

ENV_VAR = "CONTACTFMU_FMI_TOOLS"
FMUCHECK = "fmuCheck.linux64"
FMUSIM = "fmusim"
ENV = shutil.which("env") or "/usr/bin/env"
INSTANCE_NAME = "Test FMI 2.0 CS"  # the name fmuCheck gives a co-simulation instance


def _tools():
    """(folder, None) when the variable names a folder with both tools, else (None, reason)."""
    folder = os.environ.get(ENV_VAR)
    if not folder:
        return None, (
            f"{ENV_VAR} is not set: set it to a folder holding {FMUCHECK} and {FMUSIM} "
            f"to run the FMU Compliance Checker and fmusim on every FMU"
        )
    missing = [n for n in (FMUCHECK, FMUSIM) if not os.access(os.path.join(folder, n), os.X_OK)]
    if missing:
        return None, f"{ENV_VAR}={folder} holds no executable {' or '.join(missing)}"
    return Path(folder), None


TOOLS, SKIP_REASON = _tools()
pytestmark = pytest.mark.skipif(TOOLS is None, reason=SKIP_REASON or "")

# Findings of the tools that are known and explained: {regular expression: reason}. A log line
# matching one does not fail the test; the test is reported as xfail with the line and reason.
KNOWN_FINDINGS = {}  # none left (the shim's own messages carry the host's instance name)

# fmuCheck's time drift moves a discrete output by one step where the experiment's input sits on
# a switching threshold exactly at a grid point: {model: ({output: [times]}, reason)}. None: every
# experiment changes its discrete outputs between grid points (ElastoGap's contact 4.7e-6 s away,
# tests/test_crosscheck.py).
EXPECTED_EVENT_SHIFTS = {}

FMUSIM_RTOL = 5e-16 + 2.0**-53  # "%.16g" rounds by <= 5e-16 relative, reading it back by <= 2**-53
FMUCHECK_DRIFT_FACTOR = 2.0  # measured error / (rate*drift + 4*eps*range) <= 1.01


# ---- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cross_check(fmu_dir, tmp_path_factory):
    """{model: its cross-check directory}, written for the freshly built FMUs."""
    out = tmp_path_factory.mktemp("cross-check")
    dirs = crosscheck.write_all([fmu_dir / f"{m}.fmu" for m in NAMES], out, progress=None)
    return {d.name: d for d in dirs}


def experiment(d):
    """(opt {key: text}, step [s] as float, the input file or None) of a cross-check directory."""
    opt = dict(
        line.split(",", 1)
        for line in (d / f"{d.name}_ref.opt").read_text().splitlines()
        if line.strip()
    )
    opt = {k.strip(): v.strip() for k, v in opt.items()}
    inputs = d / f"{d.name}_in.csv"
    return opt, float(opt["StepSize"]), inputs if inputs.exists() else None


def read_csv(path):
    """(column names, float array); Booleans as 0/1 (true/false accepted)."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    conv = {"true": 1.0, "false": 0.0}
    return rows[0], np.array([[conv[x] if x in conv else float(x) for x in r] for r in rows[1:]])


def on_reference_grid(path, ref_names, ref, step):
    """The rows of a tool's output CSV at the reference's communication points, its columns in the
    reference's order (tools order the columns by type; the reference keeps every k-th point when
    its CSV would exceed 1 MB)."""
    names, out = read_csv(path)
    assert set(names) == set(ref_names), f"{path.name}: columns {names} != {ref_names}"
    out = out[:, [names.index(n) for n in ref_names]]
    k = np.rint(out[:, 0] / step).astype(int)
    assert np.array_equal(k, np.arange(len(out))), (
        f"{path.name}: not one row per communication point"
    )
    k_ref = np.rint(ref[:, 0] / step).astype(int)
    assert k_ref[-1] == len(out) - 1, (
        f"{path.name} ends at {out[-1, 0]}, the reference at {ref[-1, 0]}"
    )
    return out[k_ref]


def output_types(fmu):
    return {
        v.name: v.type
        for v in read_model_description(str(fmu)).modelVariables
        if v.causality == "output"
    }


def run(cmd, cwd, **variables):
    """`cmd` started by `env -i`: an empty environment with only `variables`."""
    return subprocess.run(
        [ENV, "-i", *(f"{k}={v}" for k, v in variables.items()), *map(str, cmd)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


# fmuCheck's log: "[LEVEL][MODULE] message" (levels FATAL ERROR WARNING INFO VERBOSE DEBUG),
# messages of the FMU "\t[FMU][category][FMU status:Status] message"; other lines continue one.
LOG_LINE = re.compile(r"^\[(FATAL|ERROR|WARNING|INFO|VERBOSE|DEBUG)\]\[([A-Z0-9]+)\] ")
FMU_LINE = re.compile(r"^\s*\[FMU\](?:\[[^\]]*\])?\[FMU status:(\w+)\] ")


def fmucheck_findings(log):
    """The lines of fmuCheck's log at warning level or above, and FMU messages with a status other
    than OK."""
    findings = []
    for line in log.splitlines():
        m = LOG_LINE.match(line)
        if m and m.group(1) in ("FATAL", "ERROR", "WARNING"):
            findings.append(line)
        m = FMU_LINE.match(line)
        if m and m.group(1) not in ("OK", "Pending"):
            findings.append(line.strip())
    return findings


def fmucheck_summary(log):
    """{what: count} of the summary fmuCheck prints at the end of its log."""
    counts = {}
    for key, pattern in (
        ("fmu", r"FMU reported:\s+(\d+) warning\(s\) and error\(s\)"),
        ("warnings", r"Checker reported:\s+(\d+) Warning\(s\)"),
        ("errors", r"Checker reported:\s+\d+ Warning\(s\)\s+(\d+) Error\(s\)"),
        ("fatal", r"(\d+) Fatal error\(s\) occurred"),
    ):
        m = re.search(pattern, log)
        counts[key] = int(m.group(1)) if m else (0 if key == "fatal" else None)
    return counts


def fmucheck_command(d, workdir):
    opt, _, inputs = experiment(d)
    return (
        [TOOLS / FMUCHECK, "-h", opt["StepSize"], "-s", opt["StopTime"]]
        + (["-i", inputs] if inputs else [])
        + ["-o", workdir / "out.csv", "-n", "0", "-l", "4", "-t", workdir, d / f"{d.name}.fmu"]
    )


def fmusim_command(d, workdir):
    opt, _, inputs = experiment(d)
    return (
        [
            TOOLS / FMUSIM,
            "--interface-type",
            "cs",
            "--start-time",
            opt["StartTime"],
            "--stop-time",
            opt["StopTime"],
        ]
        + (["--input-file", inputs] if inputs else [])
        + [
            "--output-interval",
            opt["StepSize"],
            "--output-file",
            workdir / "out.csv",
            d / f"{d.name}.fmu",
        ]
    )


@pytest.fixture(scope="module")
def fmucheck_runs(cross_check, tmp_path_factory):
    """fmuCheck on one model, run once per model: (CompletedProcess, output CSV)."""
    done = {}

    def get(model):
        if model not in done:
            workdir = tmp_path_factory.mktemp(f"fmucheck-{model}")
            done[model] = (
                run(fmucheck_command(cross_check[model], workdir), workdir),
                workdir / "out.csv",
            )
        return done[model]

    return get


# ---- FMU Compliance Checker ----------------------------------------------------------------------


@pytest.mark.parametrize("model", list(NAMES))
def test_fmucheck_passes_without_warnings(fmucheck_runs, cross_check, model):
    proc, _ = fmucheck_runs(model)
    log = proc.stderr
    findings = fmucheck_findings(log)
    known = [
        (line, reason)
        for line in findings
        for pattern, reason in KNOWN_FINDINGS.items()
        if re.search(pattern, line)
    ]
    unexpected = [line for line in findings if line not in {k for k, _ in known}]
    assert proc.returncode == 0, f"{FMUCHECK} exit {proc.returncode}\n{log}\n{proc.stdout}"
    assert not proc.stdout.strip(), (
        proc.stdout
    )  # the log and its summary go to stderr, the CSV to -o
    assert not unexpected, f"{FMUCHECK} on {model}:\n" + "\n".join(unexpected)
    assert "instance name" not in log, log
    summary = fmucheck_summary(log)
    known_fmu = sum(1 for line, _ in known if FMU_LINE.match(line))
    known_checker = len(known) - known_fmu
    assert summary == {"fmu": known_fmu, "warnings": 0, "errors": known_checker, "fatal": 0}, log
    stop = float(experiment(cross_check[model])[0]["StopTime"])
    assert f"Simulation finished successfully at time {stop:g}" in log, log
    if known:
        pytest.xfail("; ".join(f"{line!r}: {reason}" for line, reason in known))


@pytest.mark.parametrize("model", list(NAMES))
def test_fmucheck_output_matches_the_reference(fmucheck_runs, cross_check, model):
    proc, out_csv = fmucheck_runs(model)
    assert proc.returncode == 0, proc.stderr
    d = cross_check[model]
    opt, step, _ = experiment(d)
    names, ref = read_csv(d / f"{model}_ref.csv")
    out = on_reference_grid(out_csv, names, ref, step)
    types = output_types(d / f"{model}.fmu")

    # the time drift, and its bound: each addition t + h rounds by at most eps*t/2
    drift = np.abs(out[:, 0] - ref[:, 0]).max()
    n_steps = round((float(opt["StopTime"]) - float(opt["StartTime"])) / step)
    assert drift <= n_steps * np.finfo(float).eps * float(opt["StopTime"]), (
        f"time drift {drift:.3g} s"
    )

    # discrete outputs: equal, except the explained event shifts
    shifted = {}
    for j, name in enumerate(names[1:], 1):
        if types[name] != "Real":
            rows = np.nonzero(out[:, j] != ref[:, j])[0]
            if len(rows):
                shifted[name] = [round(float(t), 12) for t in ref[rows, 0]]
    expected, reason = EXPECTED_EVENT_SHIFTS.get(model, ({}, ""))
    assert shifted == expected, (
        f"{model}: discrete outputs differ from the reference at {shifted} "
        f"(explained and expected: {expected} {reason})"
    )

    # Real outputs, except at the rows of those shifts: within the drift times the signal's rate
    keep = ~np.isin(np.round(ref[:, 0], 12), [t for ts in shifted.values() for t in ts])
    worst = []
    for j, name in enumerate(names[1:], 1):
        if types[name] != "Real":
            continue
        rate = np.abs(np.diff(ref[:, j]) / np.diff(ref[:, 0])).max()
        scale = np.abs(ref[:, j]).max()
        tol = FMUCHECK_DRIFT_FACTOR * (rate * drift + 4 * np.finfo(float).eps * scale)
        err = np.abs(out[keep, j] - ref[keep, j]).max()
        worst.append((err / tol if tol else (np.inf if err else 0.0), name, err, tol))
    ratio, name, err, tol = max(worst)
    assert ratio <= 1.0, (
        f"{model}.{name} differs from the reference by {err:.3g}, more than {tol:.3g} "
        f"({FMUCHECK_DRIFT_FACTOR:g} x (max|d{name}/dt| x time drift {drift:.3g} s "
        f"+ 4 eps x max|{name}|))"
    )


def without_python(d, tmp_path):
    """A copy of the FMU of cross-check directory `d` whose build record names a missing libpython
    of a Python 3.99 (so neither the recorded path nor the version's sonames load)."""
    src, dest = d / f"{d.name}.fmu", tmp_path / f"{d.name}.fmu"
    record = f"binaries/linux64/{d.name}_libpython.txt"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.namelist():
            zout.writestr(
                item,
                zin.read(item)
                if item != record
                else f"version=3.99\nlibpython={tmp_path}/gone/libpython3.99.so.1.0\nprefix={tmp_path}/gone\n",
            )
    return dest


def fmu_messages(log):
    return [line.strip() for line in log.splitlines() if FMU_LINE.match(line)]


def test_fmucheck_without_a_python_gets_the_fmus_reason(cross_check, tmp_path):
    """No libpython to be found (CONTACTFMU_LIBPYTHON names a missing file, the build's record a
    missing Python 3.99): the FMU refuses to instantiate and says what it looked for, through the
    host's logger, under fmuCheck's instance name."""
    d = cross_check["Spring"]
    fmu = without_python(d, tmp_path)
    cmd = fmucheck_command(d, tmp_path)
    cmd[-1] = fmu
    proc = run(cmd, tmp_path, CONTACTFMU_LIBPYTHON=tmp_path / "missing" / "libpython3.so")
    assert proc.returncode != 0
    findings = fmucheck_findings(proc.stderr)
    assert any("[FMU status:Fatal]" in f and "no Python runtime found" in f for f in findings), (
        proc.stderr
    )
    for looked_for in (
        f"CONTACTFMU_LIBPYTHON = {tmp_path}/missing/libpython3.so: cannot open",
        f"the building Python's {tmp_path}/gone/libpython3.99.so.1.0: cannot open",
        "soname libpython3.99.so.1.0: cannot open",
        "soname libpython3.99.so: cannot open",
    ):
        assert looked_for in proc.stderr, (looked_for, proc.stderr)
    assert "[FATAL][FMUCHK] Could not instantiate the model" in findings, proc.stderr
    assert "instance name" not in proc.stderr, proc.stderr


def test_fmucheck_finds_the_instance_name_in_every_message_of_the_fmu(cross_check, tmp_path):
    """Messages of the FMU in a compliance check: the fatal one of a failed start and the warning
    about an unusable CONTACTFMU_LIBPYTHON (the record's libpython is used instead). fmuCheck
    compares the instance name of each with the one it gave and reports no mismatch."""
    d = cross_check["Spring"]
    first, second = tmp_path / "failed", tmp_path / "warned"
    first.mkdir(), second.mkdir()
    failed = run(
        fmucheck_command(d, first)[:-1] + [without_python(d, first)],
        first,
        CONTACTFMU_LIBPYTHON=tmp_path / "nothing.so",
    )
    warned = run(fmucheck_command(d, second), second, CONTACTFMU_LIBPYTHON=tmp_path / "nothing.so")
    assert warned.returncode == 0, warned.stderr
    messages = fmu_messages(failed.stderr) + fmu_messages(warned.stderr)
    statuses = sorted(FMU_LINE.match(m).group(1) for m in messages)
    if statuses != ["Fatal", "Warning"]:  # not an AssertionError: fails, not xfail
        pytest.fail(
            f"expected one fatal and one warning message of the FMU, got {statuses}:\n"
            f"{failed.stderr}\n{warned.stderr}"
        )
    assert fmucheck_summary(warned.stderr)["fmu"] == 1, (
        warned.stderr
    )  # the warning reached fmuCheck
    for proc in (failed, warned):
        bad = [line for line in proc.stderr.splitlines() if "instance name" in line]
        assert not bad, "\n".join(bad)


# ---- fmusim (Reference-FMUs) ----------------------------------------------------------------------


@pytest.mark.parametrize("model", list(NAMES))
def test_fmusim_reproduces_the_reference(cross_check, tmp_path, model):
    d = cross_check[model]
    proc = run(fmusim_command(d, tmp_path), tmp_path)
    assert proc.returncode == 0, f"{FMUSIM} exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    logged = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert not logged, "\n".join(logged)
    _, step, _ = experiment(d)
    names, ref = read_csv(d / f"{model}_ref.csv")
    out = on_reference_grid(tmp_path / "out.csv", names, ref, step)
    rel = np.abs(out - ref) / np.where(ref == 0, np.inf, np.abs(ref))
    bad = np.abs(out - ref) > FMUSIM_RTOL * np.abs(ref)
    i, j = np.unravel_index(np.argmax(np.where(ref == 0, np.abs(out), rel)), ref.shape)
    assert not bad.any(), (
        f"{model}: {bad.sum()} values differ from the reference by more than "
        f"{FMUSIM_RTOL:.2g} relative; worst {names[j]} at t = {ref[i, 0]}: {out[i, j]!r} "
        f"vs {ref[i, j]!r}"
    )
    printed = np.vectorize(lambda x: float(f"{x:.16g}"))(ref)
    assert np.array_equal(out, printed), f"{model}: not the reference printed with 16 digits"


# ---- fmusim, the FMI 3.0 builds -----------------------------------------------------------------

FMUSIM3_FLAGS = {
    "plain": (),
    "ER": ("--early-return-allowed",),
    "EM": ("--event-mode-used",),
    "ER+EM": ("--early-return-allowed", "--event-mode-used"),
}


@pytest.mark.parametrize("flags", list(FMUSIM3_FLAGS))
@pytest.mark.parametrize("model", list(NAMES))
def test_fmusim_runs_every_fmi3_fmu_in_an_empty_environment(
    cross_check, fmu3_dir, tmp_path, model, flags
):
    """The FMI 3.0 build on the FMI 2.0 build's cross-check experiment, fmusim in `env -i`: the
    FMU loads libpython itself. Exit status 0, nothing logged. Without either flag: the reference
    printed with 16 digits, as the FMI 2.0 build. With early return or event mode: finite outputs
    from time 0 to within one output interval of the stop time (fmusim continues from an early
    return with its output interval, and ends the run when less than that is left; it records
    a point again after event mode); event mode alone, in a run without events (one row per
    grid point), gives the reference within 1e-12 of each signal's range (fmusim, using event
    mode, interpolates the inputs otherwise: Spring's force at 0.501 s differs by 5e-21 N)."""
    d = cross_check[model]
    cmd = fmusim_command(d, tmp_path)
    cmd[-1:] = [*FMUSIM3_FLAGS[flags], fmu3_dir / f"{model}.fmu"]
    proc = run(cmd, tmp_path)
    assert proc.returncode == 0, f"{FMUSIM} exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    logged = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert not logged, "\n".join(logged)
    opt, step, _ = experiment(d)
    names, ref = read_csv(d / f"{model}_ref.csv")
    if flags == "plain":
        out = on_reference_grid(tmp_path / "out.csv", names, ref, step)
        printed = np.vectorize(lambda x: float(f"{x:.16g}"))(ref)
        assert np.array_equal(out, printed), f"{model}: not the reference printed with 16 digits"
    else:
        out_names, out = read_csv(tmp_path / "out.csv")
        assert set(out_names) == set(names) and np.isfinite(out).all()
        out = out[:, [out_names.index(n) for n in names]]
        times, stop = out[:, 0], float(opt["StopTime"])
        assert times[0] == 0.0 and np.all(np.diff(times) >= 0)
        assert stop - step < times[-1] <= stop
        if flags == "EM" and len(out) == len(ref):
            scale = np.maximum(np.abs(ref).max(axis=0), 1e-300)
            assert (np.abs(out - ref) / scale).max() <= 1e-12, model
