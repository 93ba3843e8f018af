"""The contactfmu command line (installed as a console script; `python -m contactfmu` is the same)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contactfmu import hostenv
from contactfmu.examples import REFDATA, ROOT


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "contactfmu", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def test_the_console_script_is_installed():
    script = Path(sys.executable).parent / "contactfmu"
    assert script.is_file(), "pip install -e . installs the contactfmu command next to python"
    run = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "contactfmu 0.1.0"


def test_validate_accepts_every_built_fmu(fmu_dir):
    fmus = sorted(fmu_dir.glob("*.fmu"))
    run = cli("validate", *fmus)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(": valid (") == len(fmus) == 11
    assert "state round trip" in run.stdout


def test_validate_reports_a_missing_documented_parameter(fmu_dir, tmp_path):
    """An FMU whose model description lacks a documented parameter (here EndStop's ci) fails."""
    import zipfile

    bad = tmp_path / "EndStop.fmu"
    with zipfile.ZipFile(fmu_dir / "EndStop.fmu") as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "modelDescription.xml":
                data = data.replace(b'name="ci"', b'name="c_i"')
            dst.writestr(item, data)
    run = cli("validate", bad)
    assert run.returncode == 1
    assert "documented parameter ci is missing" in run.stdout


@pytest.mark.parametrize("args, message", [
    (["validate", "no/such.fmu"], "no/such.fmu: no such file"),
    (["validate", "README.md"], "README.md: not an FMU"),
    (["info", "pyproject.toml"], "pyproject.toml: not an FMU"),
    (["run", "no_such_example"], "unknown example 'no_such_example'; available: "),
    (["compare", "missing.csv", "also_missing.csv"], "missing.csv: no such file"),
])
def test_bad_input_gives_a_clear_error_and_status_2(args, message):
    run = cli(*args, cwd=ROOT)
    assert run.returncode == 2
    assert run.stderr.startswith("contactfmu: error: ") and message in run.stderr


def test_info_prints_the_parameter_table(fmu_dir):
    run = cli("info", fmu_dir / "EndStop.fmu")
    assert run.returncode == 0
    lines = run.stdout.splitlines()
    assert lines[0].startswith("EndStop  (FMI 2.0 Co-Simulation")
    row = next(line for line in lines if line.startswith("k1 "))
    assert row.split()[:5] == ["k1", "parameter", "Real", "N/m", "1000000.0"]
    assert any(line.startswith("ctr1.F ") and " output " in line for line in lines)


def test_run_and_compare(fmu_dir, tmp_path):
    """run writes the example's CSV; compare passes it against the Dymola reference, and fails (1)
    against a shifted copy; an unknown variable is an error (2)."""
    run = cli("run", "msl_generation_of_fmus", "--out", tmp_path, "--fmus", fmu_dir, "--step", "1e-3")
    assert run.returncode == 0, run.stdout + run.stderr
    result = tmp_path / "GenerationOfFMUs.csv"
    ref = REFDATA / "GenerationOfFMUs" / "GenerationOfFMUs.csv"
    ok = cli("compare", result, ref)
    assert ok.returncode == 0 and "8 of 8 signals inside the tube" in ok.stdout
    from contactfmu.cosim.results import Result, read_csv

    r = read_csv(result)
    shifted = Result(r.names, r.values + [[0.0] + [0.01] * (len(r.names) - 1)])
    shifted.to_csv(tmp_path / "shifted.csv")
    bad = cli("compare", tmp_path / "shifted.csv", ref, "--signals", "mass2a.s")
    assert bad.returncode == 1 and "FAILED" in bad.stdout
    unknown = cli("compare", result, ref, "--signals", "mass9.s")
    assert unknown.returncode == 2 and "unknown variable 'mass9.s'" in unknown.stderr


def test_env_prints_this_machines_settings():
    run = cli("env", "--json")
    assert run.returncode == 0 and json.loads(run.stdout) == hostenv.settings()
    text = cli("env").stdout
    assert "export LD_PRELOAD=" in text and os.path.basename(hostenv.libpython()) in text
