"""The repository is self-contained: a copy of it in an empty folder, with nothing beside it, runs
the main job and every example, each against its reference; nothing but .ci/run refers to a
folder outside the repository; a missing, unreadable or failed reference makes an example fail
with a message (never a silent skip)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the workplace folder beside the checkout (written in pieces: this file is searched too)
OUTSIDE = (".." + "/shared", "shared" + "/refdata", "shared" + "/tools")

# each example with the options of a short run, and what its reference check must print
EXAMPLES = {
    "msl_generation_of_fmus": ([], "tube vs Dymola reference (2e-3): PASSED (8 of 8 passed)"),
    "msl_elastogap": ([], "tube vs Dymola reference (2e-3): PASSED (4 of 4 passed)"),
    "msl_friction": ([], "event times vs Dymola reference: PASSED (8 of 8 passed)"),
    "elastogap_demo": ([], "tube vs the monolithic ElastoGap solution: PASSED (1 of 1 passed)"),
    "hardstop": (
        [],
        "tube vs monolithic reference (scipy Radau, same law): PASSED (4 of 4 passed)",
        "largest penetration beyond a stop vs the monolithic reference: PASSED (2 of 2 passed)",
        "Acceptable while it stays within the position\ntube's half-height dy",
    ),
    "endstop": ([], "rigid stop vs the analytic bounce: PASSED (8 of 8 passed)"),
    "msl_preload": (["--stop", "0.3", "--check"], "(scipy, --check): PASSED (7 of 7 passed)"),
    "study_elastogap_restitution": (
        ["--quick", "--workers", "2"],
        "restitution vs the monolithic MSL law (relative, 0.01): PASSED (3 of 3 passed)",
    ),
    "study_preload": (
        ["--samples", "4", "--workers", "2"],
        "lift-off force vs the quasi-static model: PASSED",
        "travel vs the quasi-static model: PASSED",
    ),
}


def project_files():
    """The files of the repository as a clone has them (tracked, plus new files not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A copy of the repository alone in an empty folder, its FMUs built by its own build_fmus.py."""
    top = tmp_path_factory.mktemp("alone")
    repo = top / "contactfmu"
    for f in project_files():
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, repo / f)
    assert os.listdir(top) == ["contactfmu"]
    return repo


def run(repo, *args, timeout=900):
    """Run a script of the copy with the copy's own package first on the path."""
    env = dict(os.environ, PYTHONPATH=str(repo / "src"), MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, *map(str, args)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_no_file_but_ci_refers_outside_the_repository():
    offenders = []
    for f in project_files():
        if f.startswith(".ci/"):
            continue
        try:
            text = (ROOT / f).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [
            f"{f}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), 1)
            if any(p in line for p in OUTSIDE)
        ]
    assert not offenders, "\n".join(offenders)


def test_reference_data_and_its_licence_are_in_the_repository():
    files = set(project_files())
    for name in (
        "ElastoGap/ElastoGap.csv",
        "GenerationOfFMUs/GenerationOfFMUs.csv",
        "Friction/events.csv",
        "README.md",
        "LICENSE",
    ):
        assert f"src/contactfmu/refdata/{name}" in files, name
    readme = (ROOT / "src/contactfmu/refdata/README.md").read_text()
    assert "BSD 3-Clause" in readme and "MAP-LIB_ReferenceResults" in readme
    assert "BSD 3-Clause License" in (ROOT / "src/contactfmu/refdata/LICENSE").read_text()


def test_the_main_job_runs_in_a_copy_with_nothing_beside_it(clone):
    proc = run(clone, "build_fmus.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "FMUs: 11 of 11 valid" in proc.stdout
    assert "Tube vs Dymola reference (tolerance 2e-3): 8 of 8 signals passed" in proc.stdout
    assert (clone / "results" / "GenerationOfFMUs.csv").is_file() and (
        clone / "results" / "GenerationOfFMUs.png"
    ).is_file()
    assert (clone / "src" / "contactfmu" / "__init__.py").is_file()


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_runs_in_the_copy_and_passes_its_reference(clone, example):
    if not (clone / "fmus" / "Mass.fmu").is_file():
        pytest.skip("the main job did not build the FMUs (see the test above)")
    options, *verdicts = EXAMPLES[example]
    out = clone / "out" / example
    proc = run(clone, f"examples/{example}.py", "--out", out, *options)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for verdict in verdicts:
        assert verdict in proc.stdout, proc.stdout
    assert "FAILED" not in proc.stdout
    assert list(out.glob("*.csv")) and list(out.glob("*.png"))


def test_every_example_is_listed_here():
    assert {p.stem for p in (ROOT / "examples").glob("*.py")} == set(EXAMPLES)


@pytest.fixture
def damaged(clone):
    """The copy with its GenerationOfFMUs reference moved away; restored afterwards."""
    ref = clone / "src" / "contactfmu" / "refdata" / "GenerationOfFMUs" / "GenerationOfFMUs.csv"
    keep = ref.with_suffix(".keep")
    shutil.move(ref, keep)
    yield ref
    ref.unlink(missing_ok=True)
    shutil.move(keep, ref)


def test_a_missing_reference_is_an_error_with_a_message(clone, damaged):
    proc = run(clone, "examples/msl_generation_of_fmus.py", "--out", clone / "out" / "missing")
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .startswith("error: reference result of GenerationOfFMUs not found: ")
    )
    assert "Traceback" not in proc.stderr
    main = run(clone, "build_fmus.py", "--no-showcase")  # building needs no reference
    assert main.returncode == 0, main.stderr[-2000:]
    showcase = run(clone, "build_fmus.py")
    assert (
        showcase.returncode == 1
        and "reference result of GenerationOfFMUs not found" in showcase.stderr
    )


def test_an_unreadable_reference_is_an_error_with_a_message(clone, damaged):
    damaged.write_text('"time","mass2a.s"\n0.0,abc\n')
    proc = run(clone, "examples/msl_generation_of_fmus.py", "--out", clone / "out" / "unreadable")
    assert proc.returncode == 1
    assert "error: reference result of GenerationOfFMUs unreadable: " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_failed_comparison_prints_failed_per_signal_and_exits_1(clone, damaged):
    """The reference with mass2a.s shifted by 0.01 m (20 tube heights): that signal fails, the
    other seven pass, the example exits 1."""
    from contactfmu.cosim import Result, read_csv

    ref = read_csv(damaged.with_suffix(".keep"))
    shifted = ref.values.copy()
    shifted[:, ref.names.index("mass2a.s")] += 0.01
    Result(ref.names, shifted).to_csv(damaged)
    proc = run(clone, "examples/msl_generation_of_fmus.py", "--out", clone / "out" / "failed")
    assert proc.returncode == 1, proc.stdout
    lines = proc.stdout.splitlines()
    assert sum("FAILED at" in line for line in lines) == 1
    assert any(line.strip().startswith("mass2a.s: FAILED at") for line in lines)
    assert sum(": PASSED (" in line for line in lines) == 7
    assert "tube vs Dymola reference (2e-3): FAILED (7 of 8 passed)" in proc.stdout


def test_ci_clones_and_runs_the_readme_commands_exactly():
    """.ci/run takes the two commands from the README's Set-up section; they are the README's."""
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("\n## Set-up", 1)[1].split("\n## ", 1)[0]  # the Set-up section
    commands = [
        line.strip()
        for line in setup.splitlines()
        if line.strip().startswith("python -m pip install")
    ]
    assert commands == [
        "python -m pip install -e . && python build_fmus.py",
        'python -m pip install -e ".[test]" && python -m pytest',
    ]
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--commands"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout.splitlines() == commands
    ci = (ROOT / ".ci" / "run").read_text()
    assert "git clone" in ci and "python3 -m venv" in ci
