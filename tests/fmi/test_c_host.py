"""A non-Python host: tests/host/fmi2_host.c, compiled here with the system C compiler, loads each
FMU with dlopen and replays its cross-check experiment through the plain FMI 2.0 C API. Its
outputs must equal, bit for bit, the project's master (System.simulate(scheme="jacobi"), the replay order of
cross-check importers). The host runs with an empty environment (`env -i`: no LD_PRELOAD, no
PATH, no PYTHONHOME): the FMU's status shim loads libpython itself (docs/importers.md "Non-Python hosts").
The settings of `contactfmu env` (for unusual installations) still work."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from contactfmu import crosscheck, hostenv
from contactfmu.components import NAMES
from contactfmu.fmi.shim import CONTROL_VR, DERIVATIVE_VR

HOST_SRC = Path(__file__).resolve().parents[1] / "host" / "fmi2_host.c"
ENV = shutil.which("env") or "/usr/bin/env"


def clean(cmd, **variables):
    """`cmd` started by `env -i` (an empty environment) with only `variables` set."""
    return [ENV, "-i", *(f"{k}={v}" for k, v in variables.items()), *map(str, cmd)]


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    exe = tmp_path_factory.mktemp("host") / "fmi2_host"
    cc = os.environ.get("CC", "gcc")
    subprocess.run(
        [
            cc,
            "-std=c99",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(exe),
            str(HOST_SRC),
            "-ldl",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
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
    specs = [
        {"Real": "r", "Integer": "i", "Boolean": "b"}[vr[n].type] + str(vr[n].valueReference)
        for n in ref.names[1:]
    ]
    args = [
        "-i",
        ",".join(str(vr[n].valueReference) for n in ins.names[1:]),
        "-o",
        ",".join(specs),
        str(unzip),
        md.coSimulation.modelIdentifier,
        md.guid,
        repr(start),
        repr(stop),
        repr(step),
        str(inputs),
        str(tmp_path / "out.csv"),
    ]
    if len(ins.names) == 1:
        args = args[2:]
        args[-2] = "-"
    return args, ref


def check_like_the_master(tmp_path, ref, model):
    out = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    assert out.shape == ref.values.shape
    scale = 1.0 + np.abs(ref.values).max(axis=0)
    err = (np.abs(out - ref.values) / scale).max()
    assert err == 0.0, (
        f"{model}: differs from the master by {err:.3g} (relative to the signal range)"
    )
    assert (
        np.ptp(out[:, 1:], axis=0).max() > 0
    )  # the outputs move: a real experiment, not start values
    return out


@pytest.mark.parametrize("model", list(NAMES))
def test_c_host_with_an_empty_environment_runs_every_fmu_like_the_master(
    host, fmu_dir, tmp_path, model
):
    """`env -i`: no LD_PRELOAD, PATH or PYTHONHOME; the FMU finds and loads libpython itself."""
    args, ref = prepare(fmu_dir / f"{model}.fmu", tmp_path)
    run = subprocess.run(clean([host, "-s", *args]), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not run.stderr.strip(), run.stderr  # nothing logged: no warning about the Python found
    check_like_the_master(tmp_path, ref, model)


def test_c_host_with_the_contactfmu_env_settings_runs_like_the_master(host, fmu_dir, tmp_path):
    """The settings `contactfmu env` prints (libpython preloaded, python3 on PATH) still work."""
    model = "MassWithStopAndFriction"
    args, ref = prepare(fmu_dir / f"{model}.fmu", tmp_path)
    run = subprocess.run(
        [str(host), "-s", *args],
        env=hostenv.environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    check_like_the_master(tmp_path, ref, model)


def test_c_host_can_load_libpython_itself(host, fmu_dir, tmp_path):
    """A host that dlopens libpython with RTLD_GLOBAL before the FMU: the FMU uses that one."""
    args, ref = prepare(fmu_dir / "ElastoGap.fmu", tmp_path)
    run = subprocess.run(
        clean([host, "-l", hostenv.libpython(), *args]), capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    out = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    assert np.array_equal(out, ref.values)
    assert out[:, ref.names.index("contact")].max() == 1.0  # the flange went into contact


def test_the_fmu_records_the_python_that_built_it(fmu_dir):
    with zipfile.ZipFile(fmu_dir / "Spring.fmu") as z:
        text = z.read("binaries/linux64/Spring_libpython.txt").decode()
    record = dict(
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )
    assert record["version"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert os.path.samefile(record["libpython"], hostenv.libpython())
    assert record["prefix"] == sys.base_prefix
    assert os.path.isfile(
        os.path.join(record["prefix"], "lib", f"python{record['version']}", "os.py")
    )


def unfindable(fmu_dir, tmp_path):
    """A copy of Spring whose record names a missing libpython of a Python 3.99 that no machine has
    (so neither the recorded path nor the version's sonames load): (host arguments, paths)."""
    args, _ = prepare(fmu_dir / "Spring.fmu", tmp_path)
    record = tmp_path / "fmu" / "binaries" / "linux64" / "Spring_libpython.txt"
    bogus = tmp_path / "gone" / "libpython3.99.so.1.0"
    record.write_text(
        f"version=3.99\nlibpython={bogus}\nprefix={tmp_path / 'gone'}\nexecutable=python3.99\n"
    )
    return args, bogus


def test_without_a_python_the_fmu_refuses_to_instantiate_and_says_what_it_looked_for(
    host, fmu_dir, tmp_path
):
    args, bogus = unfindable(fmu_dir, tmp_path)
    missing = tmp_path / "missing" / "libpython3.so"
    run = subprocess.run(
        clean([host, "-n", "spring #7", *args], CONTACTFMU_LIBPYTHON=missing),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 3, run.stderr
    assert "fmi2_host: fmi2Instantiate failed" in run.stderr
    logged = run.stderr.split("fmi2_host:")[0]
    # one message, through the host's logger, under the instance name the host gave
    assert logged.startswith(
        "[Fatal] spring #7 (logStatusFatal): contactfmu: no Python runtime found"
    ), logged
    assert logged.count("[Fatal]") == 1 and "[Warning]" not in logged, logged
    for looked_for in (
        "a libpython already in the process: none",
        f"CONTACTFMU_LIBPYTHON = {missing}: cannot open",
        f"the building Python's {bogus}: cannot open",
        "soname libpython3.99.so.1.0: cannot open",
        "soname libpython3.99.so: cannot open",
    ):
        assert f"\n  - {looked_for}" in logged, (looked_for, logged)
    assert (
        "Install Python 3.99 with its shared library" in logged
        and "set CONTACTFMU_LIBPYTHON" in logged
    )


def test_the_interpreter_starts_in_the_installation_of_the_libpython_loaded(
    host, fmu_dir, tmp_path
):
    """A libpython in another installation (a copy of this one's, its standard library linked to
    this Python's, plus a sitecustomize.py that records where the interpreter started): the FMU
    sets PYTHONHOME to that installation while the interpreter starts, and removes it again from
    the host's environment."""
    v = f"python{sys.version_info.major}.{sys.version_info.minor}"
    home = tmp_path / "relocated"
    stdlib = home / "lib" / v
    stdlib.mkdir(parents=True)
    lib = home / "lib" / os.path.basename(hostenv.libpython())
    shutil.copy(hostenv.libpython(), lib)
    for entry in Path(sysconfig.get_path("stdlib")).iterdir():
        if entry.name not in ("site-packages", "sitecustomize.py"):
            (stdlib / entry.name).symlink_to(entry)
    marker = tmp_path / "started.txt"
    (stdlib / "sitecustomize.py").write_text(
        f"import os, sys\nopen({str(marker)!r}, 'w').write(os.environ.get('PYTHONHOME', '') + '\\n' + sys.prefix)\n"
    )
    args, _ = unfindable(fmu_dir, tmp_path)
    run = subprocess.run(
        clean([host, "-e", *args], CONTACTFMU_LIBPYTHON=lib),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert marker.read_text().splitlines() == [str(home), str(home)]
    assert run.stderr == "fmi2_host: PYTHONHOME after fmi2Instantiate: (unset)\n", run.stderr


def test_contactfmu_libpython_names_the_library_to_use(host, fmu_dir, tmp_path):
    """The override loads where the record does not, in an empty environment."""
    args, _ = unfindable(fmu_dir, tmp_path)
    run = subprocess.run(
        clean([host, *args], CONTACTFMU_LIBPYTHON=hostenv.libpython()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert not run.stderr.strip(), run.stderr


def test_an_unusable_override_is_a_warning_when_the_record_loads(host, fmu_dir, tmp_path):
    args, ref = prepare(fmu_dir / "Spring.fmu", tmp_path)
    run = subprocess.run(
        clean([host, "-n", "s1", *args], CONTACTFMU_LIBPYTHON=tmp_path / "nothing.so"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith(
        f"[Warning] s1 (logStatusWarning): CONTACTFMU_LIBPYTHON={tmp_path / 'nothing.so'} "
        f"cannot be used; using "
    ), run.stderr
    assert np.array_equal(np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1), ref.values)


def test_host_settings_name_this_python():
    s = hostenv.settings()
    assert os.path.isfile(s["LD_PRELOAD"]) and "libpython3" in os.path.basename(s["LD_PRELOAD"])
    assert os.path.isfile(os.path.join(s["PATH"], "python3"))
    text = hostenv.shell_text()
    assert (
        f'export LD_PRELOAD="{s["LD_PRELOAD"]}' in text
        and f'export PATH="{s["PATH"]}:$PATH"' in text
    )


def test_c_host_gets_an_error_from_the_element_whose_force_is_not_finite(host, fmu_dir, tmp_path):
    """A hardstop sampled at a speed whose law force overflows (d*v = 1e10 * 1e300): the FMU's own
    call returns fmi2Error in a C host too, with the outputs, inputs and remedy in its log."""
    md = read_model_description(str(fmu_dir / "TranslationalHardstop.fmu"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzip = tmp_path / "fmu"
    with zipfile.ZipFile(fmu_dir / "TranslationalHardstop.fmu") as z:
        z.extractall(unzip)
    inputs = tmp_path / "inputs.txt"
    inputs.write_text(
        "0 0.1 1.0\n0.001 0.6 1e300\n0.002 0.6 1e300\n"
    )  # default b = 1 m: stop at 0.5 m
    run = subprocess.run(
        [
            str(host),
            "-i",
            f"{vr['flange_b.s']},{vr['flange_b.v']}",
            "-o",
            f"r{vr['F']}",
            str(unzip),
            md.coSimulation.modelIdentifier,
            md.guid,
            "0",
            "0.003",
            "0.001",
            str(inputs),
            str(tmp_path / "out.csv"),
        ],
        env={},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert "non-finite output" in run.stderr and "F = inf" in run.stderr
    assert "flange_b.v = 1e+300" in run.stderr and "Remedy: give m_a/m_b" in run.stderr


# ---- fmi2Instantiate's arguments ----------------------------------------------------------------

BAD_ARGUMENTS = {
    "name-not-utf8": "contactfmu: the instance name is not valid UTF-8",
    "name-null": "contactfmu: the instance name is NULL",
    "guid-wrong": "contactfmu: the GUID {00000000-0000-0000-0000-000000000000} is not this FMU's",
    "guid-null": "contactfmu: the GUID (NULL) is not this FMU's",
    "resources-missing": "/fmu/nowhere does not exist",
    "resources-null": "contactfmu: the fmuResourceLocation (NULL) is no local file URI",
    "resources-relative": "contactfmu: the fmuResourceLocation resources is no local file URI",
    "model-exchange": "contactfmu: this FMU is for co-simulation only",
}


@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
def test_instantiation_with_arguments_the_fmu_cannot_use_returns_null_and_says_why(
    host, fmu_dir, tmp_path, case
):
    """pythonfmu's library alone crashed the host (SIGSEGV: a name that is not UTF-8, a resource
    URI of a missing folder; an abort: NULL), or took any GUID and Model Exchange. A crash, a
    hang (the 60 s timeout) or an instance fails here."""
    args, _ = prepare(fmu_dir / "Spring.fmu", tmp_path)
    run = subprocess.run(
        clean([host, "-x", case, *args]),
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )
    assert run.returncode == 3, run.stderr
    logged, _, failed = run.stderr.partition("fmi2_host: ")
    assert failed == "fmi2Instantiate failed\n", run.stderr
    # one message, under the instance name the host gave
    name = {"name-not-utf8": "spring \ufffd(", "name-null": ""}.get(case, "host")
    assert logged.count("\n") == 1, logged
    assert logged.startswith(f"[Error] {name} (logStatusError): contactfmu: "), logged
    assert BAD_ARGUMENTS[case] in logged, logged


@pytest.mark.parametrize("case", ["uri-localhost", "uri-one-slash", "uri-encoded"])
def test_resource_uris_of_every_local_form_run_like_the_master(host, fmu_dir, tmp_path, case):
    """file://localhost/<path>, file:/<path> and percent-encoded URIs of the resources folder:
    pythonfmu's library alone took only file://<path> (file:/<path> crashed the host)."""
    args, ref = prepare(fmu_dir / "Spring.fmu", tmp_path)
    run = subprocess.run(
        clean([host, "-x", case, *args]), capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and not run.stderr, run.stderr
    check_like_the_master(tmp_path, ref, "Spring")


def test_value_references_no_model_description_declares_are_refused(host, fmu_dir, tmp_path):
    """The derivative slots (DERIVATIVE_VR + vr: the shim's own fmi2SetRealInputDerivatives and
    fmi2GetRealOutputDerivatives) and any value reference beyond the variables: every getter and
    setter returns fmi2Error with a message (fmi2SetReal of a derivative slot returned fmi2OK and
    set the input's derivative). Afterwards the FMU runs like the master."""
    md = read_model_description(str(fmu_dir / "Spring.fmu"))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    probes = [DERIVATIVE_VR + vr["flange_b.s"], DERIVATIVE_VR + vr["flange_b.f"], CONTROL_VR, 99999]
    args, ref = prepare(fmu_dir / "Spring.fmu", tmp_path)
    run = subprocess.run(
        clean([host, "-V", ",".join(map(str, probes)), *args]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    statuses = [line.split() for line in run.stdout.splitlines() if line.startswith("probe ")]
    assert len(statuses) == 5 * len(probes) + 1
    assert all(status == "3" for *_, status in statuses), statuses
    errors = [line for line in run.stderr.splitlines() if line.startswith("[Error] host")]
    assert len(errors) == len(statuses), run.stderr
    for probe in probes[:3]:
        assert f"value reference {probe} is not a variable of this FMU" in run.stderr
    assert "fmi2GetReal: the values array is NULL" in run.stderr
    check_like_the_master(tmp_path, ref, "Spring")
