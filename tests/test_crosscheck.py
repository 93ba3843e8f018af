"""FMI cross-check files: build_fmus.py writes <Model>_in.csv, _ref.csv, _ref.opt for every FMU,
in the cross-check repository's layout and rules, from an experiment in which the documented
behaviour (a contact) happens; fmpy's simulate_fmu reproduces each reference exactly."""

import os
import runpy

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu
from fmpy.util import read_csv, read_ref_opt_file

from contactfmu import __version__, crosscheck
from contactfmu.components import NAMES
from contactfmu.examples import ROOT


@pytest.fixture(scope="module")
def xc(fmu_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("xc")
    crosscheck.write_all([fmu_dir / f"{m}.fmu" for m in NAMES], out, progress=None)
    return out / "fmus" / "2.0" / "cs" / "linux64" / "contactfmu" / __version__


@pytest.mark.parametrize("model", list(NAMES))
def test_files_follow_the_cross_check_rules(xc, model):
    d = xc / model
    md = read_model_description(
        str(d / f"{model}.fmu"),
        validate=True,
        validate_variable_names=True,
        validate_model_structure=True,
    )
    names = {v.name for v in md.modelVariables}
    opts = read_ref_opt_file(str(d / f"{model}_ref.opt"))
    de = md.defaultExperiment
    assert (opts["StartTime"], opts["StopTime"], opts["StepSize"]) == tuple(
        map(float, (de.startTime, de.stopTime, de.stepSize))
    )
    for suffix in ("_ref.csv", "_in.csv"):
        path = d / f"{model}{suffix}"
        if suffix == "_in.csv" and model == "Sine":
            assert not path.exists()  # no inputs
            continue
        assert os.path.getsize(path) < 1e6
        traj = np.genfromtxt(path, delimiter=",", names=True, deletechars="")
        assert traj.dtype.names[0] == "time" and set(traj.dtype.names[1:]) <= names
        assert np.all(np.diff(traj["time"]) > 0)
        assert traj["time"][0] == opts["StartTime"] and traj["time"][-1] == opts["StopTime"]
    outputs = {v.name for v in md.modelVariables if v.causality == "output"}
    assert set(read_csv(str(d / f"{model}_ref.csv")).dtype.names[1:]) == outputs
    assert (d / "ReadMe.md").read_text().startswith(f"# {model}")


CONTACT = {
    "ElastoGap": lambda r: r["contact"].max() == 1 and r["f"].min() < -0.04,
    "TranslationalHardstop": lambda r: (
        set(np.unique(r["contact"])) == {-1, 0, 1} and np.ptp(r["F"]) > 1e9
    ),
    "EndStop": lambda r: (
        set(np.unique(r["stop"])) == {0, 1, 2} and r["Fi"].max() > 0 > r["Fi"].min()
    ),
    "MassWithStopAndFriction": lambda r: (
        r["stopped"].max() == 1
        and r["s"].max() == 25.0
        and r["locked"].max() == 1
        and r["locked"].min() == 0
    ),
}


@pytest.mark.parametrize("model", list(CONTACT))
def test_the_default_experiment_has_a_contact(xc, model):
    assert CONTACT[model](read_csv(str(xc / model / f"{model}_ref.csv")))


def test_the_elastogap_contact_changes_between_communication_points(xc):
    """The input crosses the contact threshold (s_rel = s_rel0 = 0, flange_a at 0) between
    communication points, 4.7e-6 s (1.4e-5 m) from the nearest: a tool that accumulates its time
    (fmuCheck: t off by up to 1.8e-15 s, s off by 6e-15 m) sees the contact change at the rows of
    the reference. The contact closes and opens once."""
    inputs = read_csv(str(xc / "ElastoGap" / "ElastoGap_in.csv"))
    assert np.abs(inputs["flange_b.s"]).min() > 1e-5
    contact = read_csv(str(xc / "ElastoGap" / "ElastoGap_ref.csv"))["contact"].astype(int)
    assert np.count_nonzero(np.diff(contact) == 1) == np.count_nonzero(np.diff(contact) == -1) == 1


@pytest.mark.parametrize("model", list(NAMES))
def test_fmpy_replays_the_reference_exactly(xc, model):
    d = xc / model
    ref = read_csv(str(d / f"{model}_ref.csv"))
    opts = read_ref_opt_file(str(d / f"{model}_ref.opt"))
    inputs = read_csv(str(d / f"{model}_in.csv")) if (d / f"{model}_in.csv").exists() else None
    res = simulate_fmu(
        str(d / f"{model}.fmu"),
        start_time=opts["StartTime"],
        stop_time=opts["StopTime"],
        step_size=opts["StepSize"],
        output_interval=opts["StepSize"],
        input=inputs,
        output=list(ref.dtype.names[1:]),
    )
    idx = np.searchsorted(res["time"], ref["time"] - 1e-9)
    assert np.abs(res["time"][idx] - ref["time"]).max() < 1e-9
    for name in ref.dtype.names[1:]:
        assert np.array_equal(res[name][idx].astype(float), ref[name]), name


def test_build_fmus_writes_the_cross_check_files(tmp_path):
    build = runpy.run_path(str(ROOT / "build_fmus.py"))
    assert build["main"](["--out", str(tmp_path / "fmus"), "--no-showcase"]) == 0
    d = (
        tmp_path
        / "fmus"
        / "cross-check"
        / "fmus"
        / "2.0"
        / "cs"
        / "linux64"
        / "contactfmu"
        / __version__
    )
    for model in NAMES:
        assert {f"{model}.fmu", f"{model}_ref.csv", f"{model}_ref.opt"} <= set(
            os.listdir(d / model)
        )
