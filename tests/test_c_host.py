"""A non-Python host: tests/host/fmi2_host.c, compiled here with the system C compiler, loads each
FMU with dlopen and replays its cross-check experiment through the plain FMI 2.0 C API. Its
outputs must equal, bit for bit, the project's master (System.simulate(scheme="jacobi"), the replay order of
cross-check importers), with the environment `contactfmu env` prints (README "Non-Python hosts")."""
import os
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from contactfmu import crosscheck, hostenv
from contactfmu.fmus import SLAVES

HOST_SRC = Path(__file__).parent / "host" / "fmi2_host.c"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    exe = tmp_path_factory.mktemp("host") / "fmi2_host"
    cc = os.environ.get("CC", "gcc")
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(HOST_SRC), "-ldl"],
                   check=True, capture_output=True, text=True)
    return exe


def prepare(fmu, tmp_path):
    """Unzip the FMU, write its cross-check inputs; returns (command arguments, reference)."""
    md = read_model_description(str(fmu))
    ref, ins, (start, stop, step), _ = crosscheck.reference(fmu)
    unzip = tmp_path / "fmu"
    with zipfile.ZipFile(fmu) as z:
        z.extractall(unzip)
    vr = {v.name: v for v in md.modelVariables}
    inputs = tmp_path / "inputs.txt"
    np.savetxt(inputs, ins.values, fmt="%.17g")
    specs = [{"Real": "r", "Integer": "i", "Boolean": "b"}[vr[n].type] + str(vr[n].valueReference)
             for n in ref.names[1:]]
    args = ["-i", ",".join(str(vr[n].valueReference) for n in ins.names[1:]), "-o", ",".join(specs),
            str(unzip), md.coSimulation.modelIdentifier, md.guid, repr(start), repr(stop), repr(step),
            str(inputs), str(tmp_path / "out.csv")]
    if len(ins.names) == 1:
        args = args[2:]
        args[-2] = "-"
    return args, ref


@pytest.mark.parametrize("model", list(SLAVES))
def test_c_host_runs_every_fmu_like_the_master(host, fmu_dir, tmp_path, model):
    args, ref = prepare(fmu_dir / f"{model}.fmu", tmp_path)
    run = subprocess.run([str(host), "-s", *args], env=hostenv.environment(), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    out = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    assert out.shape == ref.values.shape
    scale = 1.0 + np.abs(ref.values).max(axis=0)
    err = (np.abs(out - ref.values) / scale).max()
    assert err == 0.0, f"{model}: differs from the master by {err:.3g} (relative to the signal range)"
    assert np.ptp(out[:, 1:], axis=0).max() > 0    # the outputs move: a real experiment, not start values


def test_c_host_can_load_libpython_itself(host, fmu_dir, tmp_path):
    """Instead of LD_PRELOAD, the host may dlopen libpython with RTLD_GLOBAL before the FMU."""
    args, ref = prepare(fmu_dir / "ElastoGap.fmu", tmp_path)
    env = dict(os.environ, PATH=hostenv.python_dir() + os.pathsep + os.environ.get("PATH", ""))
    env.pop("LD_PRELOAD", None)
    run = subprocess.run([str(host), "-l", hostenv.libpython(), *args], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    out = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    assert np.array_equal(out, ref.values)
    assert out[:, ref.names.index("contact")].max() == 1.0     # the flange went into contact


def test_without_libpython_the_fmu_refuses_to_instantiate_with_the_reason(host, fmu_dir, tmp_path):
    args, _ = prepare(fmu_dir / "Spring.fmu", tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    run = subprocess.run([str(host), *args], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 3
    assert "undefined symbol" in run.stderr and "fmi2Instantiate failed" in run.stderr


def test_host_settings_name_this_python():
    s = hostenv.settings()
    assert os.path.isfile(s["LD_PRELOAD"]) and "libpython3" in os.path.basename(s["LD_PRELOAD"])
    assert os.path.isfile(os.path.join(s["PATH"], "python3"))
    text = hostenv.shell_text()
    assert f'export LD_PRELOAD="{s["LD_PRELOAD"]}' in text and f'export PATH="{s["PATH"]}:$PATH"' in text


def test_c_host_gets_an_error_from_the_element_whose_force_is_not_finite(host, fmu_dir, tmp_path):
    """A hardstop sampled at a speed whose law force overflows (d*v = 1e10 * 1e300): the FMU's own
    call returns fmi2Error in a C host too, with the outputs, inputs and remedy in its log."""
    md = read_model_description(str(fmu_dir / "TranslationalHardstop.fmu"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzip = tmp_path / "fmu"
    with zipfile.ZipFile(fmu_dir / "TranslationalHardstop.fmu") as z:
        z.extractall(unzip)
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("0 0.1 1.0\n0.001 0.6 1e300\n0.002 0.6 1e300\n")     # default b = 1 m: stop at 0.5 m
    run = subprocess.run([str(host), "-i", f"{vr['flange_b.s']},{vr['flange_b.v']}", "-o", f"r{vr['F']}",
                          str(unzip), md.coSimulation.modelIdentifier, md.guid, "0", "0.003", "0.001", str(inputs),
                          str(tmp_path / "out.csv")], env=hostenv.environment(), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "non-finite output" in run.stderr and "F = inf" in run.stderr
    assert "flange_b.v = 1e+300" in run.stderr and "Remedy: give m_a/m_b" in run.stderr
