"""A pytest session, and a program that ends through contactfmu.examples.exit_now (os._exit, no
interpreter finalization), leave no contactfmu_* folder (the master's FMU unzip directories) and
no other unzip directory in the temporary directory: exit_now runs the clean-ups registered with
atexit before it leaves, and the test helpers extract through the master's cache."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _env(tmp):
    return {**os.environ, "TMPDIR": str(tmp)}


def test_a_program_ending_through_exit_now_leaves_no_unzip_directory(fmu_dir, tmp_path):
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    code = textwrap.dedent(
        f"""
        import os, tempfile
        from contactfmu.cosim.system import System
        from contactfmu.examples import exit_now
        s = System()
        s.add("mass", {str(fmu_dir / "Mass.fmu")!r}, v_start=1.0)
        s.add("fixed", {str(fmu_dir / "Fixed.fmu")!r})
        s.add("spring", {str(fmu_dir / "Spring.fmu")!r}, c=10.0)
        s.connect("fixed.flange", "spring.flange_a")
        s.connect("spring.flange_b", "mass.flange_a")
        s.simulate(stop_time=0.01, step=1e-3)
        assert any(n.startswith("contactfmu_") for n in os.listdir(tempfile.gettempdir()))
        print("simulated")
        exit_now(0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(tmp), timeout=120
    )
    assert done.returncode == 0 and "simulated" in done.stdout, done.stderr[-2000:]
    assert os.listdir(tmp) == []


def test_a_pytest_session_leaves_only_pytests_own_folder(tmp_path):
    """A session that builds the FMUs, runs them through the test helpers (fmpy) and through
    the master: afterwards the temporary directory holds pytest's own pytest-of-<user> folder
    (its base temporary directories, kept by pytest for the last three sessions) and nothing
    else."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/fmi/test_slave_contract.py::test_reset_restores_start_values",
            "tests/cosim/test_system.py::test_forces_of_several_elements_on_one_flange_add_up",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(tmp),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    left = sorted(os.listdir(tmp))
    assert all(n.startswith("pytest-of-") for n in left), left
