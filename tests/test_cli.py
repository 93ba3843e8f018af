"""The contactfmu command line (installed as a console script; `python -m contactfmu` is the same)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contactfmu import hostenv
from contactfmu.examples import REFDATA, ROOT


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "contactfmu", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )


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


@pytest.mark.parametrize(
    "args, message",
    [
        (["validate", "no/such.fmu"], "no/such.fmu: no such file"),
        (["validate", "README.md"], "README.md: not an FMU"),
        (["info", "pyproject.toml"], "pyproject.toml: not an FMU"),
        (["run", "no_such_example"], "unknown example 'no_such_example'; available: "),
        (["compare", "missing.csv", "also_missing.csv"], "missing.csv: no such file"),
    ],
)
def test_bad_input_gives_a_clear_error_and_status_2(args, message):
    run = cli(*args, cwd=ROOT)
    assert run.returncode == 2
    assert run.stderr.startswith("contactfmu: error: ") and message in run.stderr


def _versions(folder):
    """{FMU name: fmiVersion of its model description} of the FMUs in `folder`."""
    from fmpy import read_model_description

    return {p.stem: read_model_description(str(p)).fmiVersion for p in folder.glob("*.fmu")}


def test_build_builds_both_standards_as_build_fmus_py(tmp_path):
    """`contactfmu build` builds FMI 2.0 into --out and FMI 3.0 into --out/fmi3 (as build_fmus.py),
    validates each and writes the cross-check files of the FMI 2.0 build; `--fmi 2` or `--fmi 3`
    builds one standard. The command describes itself as both."""
    from contactfmu.components import NAMES

    run = cli("build", "--out", tmp_path / "both")
    assert run.returncode == 0, run.stdout + run.stderr
    assert _versions(tmp_path / "both") == dict.fromkeys(NAMES, "2.0")
    assert _versions(tmp_path / "both" / "fmi3") == dict.fromkeys(NAMES, "3.0")
    assert (tmp_path / "both" / "cross-check").is_dir()
    assert "11 of 11 FMI 2.0 FMUs valid, 11 of 11 FMI 3.0 FMUs valid" in run.stdout
    run = cli("build", "--out", tmp_path / "two", "--fmi", "2", "--no-cross-check")
    assert run.returncode == 0 and "11 of 11 FMI 2.0 FMUs valid (" in run.stdout
    assert len(_versions(tmp_path / "two")) == 11 and not (tmp_path / "two" / "fmi3").exists()
    assert cli("build", "--fmi", "4").returncode == 2
    assert "(FMI 2.0 and FMI 3.0 Co-Simulation)" in " ".join(cli("--help").stdout.split())


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
    run = cli(
        "run", "msl_generation_of_fmus", "--out", tmp_path, "--fmus", fmu_dir, "--step", "1e-3"
    )
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


# ---- rough edges a new user hit -----------------------------------------------------------------


def one_line_error(run):
    """The single 'contactfmu: error: ...' line of a bad-input run (exit status 2)."""
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("contactfmu: error: "), run.stderr
    assert "Traceback" not in run.stderr and "usage:" not in run.stderr
    return lines[0]


@pytest.fixture
def csvs(tmp_path):
    """A 1 s reference, a copy of it, and files that are not result CSVs."""
    t = [k / 100 for k in range(101)]
    ref = tmp_path / "ref.csv"
    ref.write_text('"time","y"\n' + "".join(f"{x!r},{x * x!r}\n" for x in t))
    (tmp_path / "same.csv").write_text(ref.read_text())
    (tmp_path / "header_only.csv").write_text('"time","y"\n')
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "nan.csv").write_text('"time","y"\n0,0\n0.5,nan\n1,1\n')
    (tmp_path / "text.csv").write_text('"time","y"\n0,0\n0.5,abc\n1,1\n')
    (tmp_path / "no_time.csv").write_text('"x","y"\n0,0\n1,1\n')
    (tmp_path / "adir").mkdir()
    return tmp_path


@pytest.mark.parametrize("name", ["header_only.csv", "empty.csv"])
@pytest.mark.parametrize("as_reference", [False, True])
def test_compare_names_a_csv_without_data(csvs, name, as_reference):
    files = (csvs / "ref.csv", csvs / name)[:: 1 if as_reference else -1]
    error = one_line_error(cli("compare", *files))
    reason = "no data rows" if name == "header_only.csv" else "empty file"
    assert error.endswith(
        f"{csvs / name}: not a result CSV (time first, one header line): {reason}"
        + (" (only a header line)" if reason == "no data rows" else "")
    ), error


@pytest.mark.parametrize("tol", ["-1", "nan", "inf", "0", "abc", "-1e-3", "-inf"])
def test_compare_rejects_a_tolerance_that_is_not_a_positive_finite_number(csvs, tol):
    error = one_line_error(cli("compare", csvs / "same.csv", csvs / "ref.csv", "--tol", tol))
    assert f"--tol {tol}: " in error and "must be a finite number > 0" in error


def test_compare_accepts_a_valid_tolerance(csvs):
    run = cli("compare", csvs / "same.csv", csvs / "ref.csv", "--tol", "1e-3")
    assert run.returncode == 0 and "(tolerance 0.001): PASSED" in run.stdout, (
        run.stdout + run.stderr
    )


def test_compare_fails_a_result_that_does_not_cover_the_reference_time_range(csvs):
    lines = (csvs / "ref.csv").read_text().splitlines()
    (csvs / "short.csv").write_text("\n".join(lines[:12]) + "\n")  # 0 .. 0.1 s of the 1 s reference
    run = cli("compare", csvs / "short.csv", csvs / "ref.csv")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "y: FAILED: result covers 0 .. 0.1 s, reference 0 .. 1 s" in run.stdout
    assert run.stdout.splitlines()[-1].startswith(
        "0 of 1 signals inside the tube (tolerance 0.002): FAILED: "
        "result covers 0 .. 0.1 s, reference 0 .. 1 s"
    )
    (csvs / "late.csv").write_text("\n".join(lines[:1] + lines[50:]) + "\n")  # starts at 0.49 s
    late = cli("compare", csvs / "late.csv", csvs / "ref.csv")
    assert late.returncode == 1 and "result covers 0.49 .. 1 s, reference 0 .. 1 s" in late.stdout


@pytest.mark.parametrize(
    "name, reason",
    [
        ("nan.csv", "line 3, column 'y': 'nan' is not finite"),
        ("text.csv", "line 3, column 'y': 'abc' is not a number"),
        ("no_time.csv", "first column is 'x', expected 'time'"),
    ],
)
def test_compare_reports_a_bad_cell_or_header_with_its_line(csvs, name, reason):
    error = one_line_error(cli("compare", csvs / name, csvs / "ref.csv"))
    assert error.endswith(
        f"{csvs / name}: not a result CSV (time first, one header line): {reason}"
    ), error


def test_compare_says_a_directory_is_a_directory(csvs):
    error = one_line_error(cli("compare", csvs / "same.csv", csvs / "adir"))
    assert error == f"contactfmu: error: {csvs / 'adir'}: is a directory, not a result CSV"


def test_compare_names_the_file_of_a_bad_csv_once(csvs):
    error = one_line_error(cli("compare", "no_time.csv", "ref.csv", cwd=csvs))
    assert error.count("no_time.csv") == 1, error


@pytest.mark.parametrize("signals", ["", ",", "y,,y", "y,"])
def test_compare_rejects_an_empty_signal_list_or_name(csvs, signals):
    error = one_line_error(
        cli("compare", csvs / "same.csv", csvs / "ref.csv", "--signals", signals)
    )
    assert f"--signals {signals!r}: " in error and (
        "no signal names" in error or "empty signal name" in error
    )


def test_run_without_an_example_names_example_and_lists_them():
    error = one_line_error(cli("run"))
    assert (
        not re.search(r"\brest\b", error) and "missing EXAMPLE" in error
    )  # argparse's name of the options
    assert (
        "available: " + ", ".join(p.stem for p in sorted((ROOT / "examples").glob("*.py"))) in error
    )


def test_run_help_lists_the_examples_with_their_summary():
    run = cli("run", "--help")
    assert run.returncode == 0, run.stderr
    assert "examples (examples/*.py of the source checkout):" in run.stdout
    lines = run.stdout.splitlines()
    for path in sorted((ROOT / "examples").glob("*.py")):
        line = next((line for line in lines if line.split()[:1] == [path.stem]), None)
        assert line is not None, f"{path.stem} not listed in\n{run.stdout}"
    line = next(line for line in lines if line.split()[:1] == ["msl_preload"])
    assert "MSL Translational.Examples.PreLoad rebuilt from FMUs" in line
    assert not re.search(r"\brest\b", run.stdout)


def test_info_prints_several_fmus(fmu_dir):
    run = cli("info", fmu_dir / "Fixed.fmu", fmu_dir / "Force.fmu")
    assert run.returncode == 0, run.stdout + run.stderr
    blocks = run.stdout.split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("Fixed  (FMI 2.0") and blocks[1].startswith("Force  (FMI 2.0")
    bad = one_line_error(cli("info", fmu_dir / "Fixed.fmu", "README.md", cwd=ROOT))
    assert "README.md: not an FMU" in bad


def test_run_passes_a_bad_step_to_the_example_which_names_itself():
    run = cli("run", "msl_generation_of_fmus", "--step", "-1e-3", cwd=ROOT)
    assert run.returncode == 2
    assert (
        "contactfmu run msl_generation_of_fmus: error: --step must be > 0, got -0.001" in run.stderr
    )
