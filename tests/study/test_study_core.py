"""The Study class (contactfmu.study, study/__init__.py) without FMUs: a stand-in System of two
instances whose variables are declared here, FMU files of a few bytes, a stand-in for the cluster's
run_all and a stand-in clock for the progress bar. What is checked: the examples and the FMU folder
a study finds its model and FMUs in, the identity of a model, every refusal of the model, the
values, the metrics, the outputs, the options and the run's arguments with its exact text, the
units, the columns, the description and its fingerprint, the job, serial runs (rows, trajectories,
the FMUs provided from their bytes), the table written and resumed (ok and error rows kept, lost and
missing ones run again, rows of other runs kept, another study refused), runs on a cluster in
completion order, the frame, and the progress bar's text and timing. The studies of real FMUs
(serial, on a cluster, a killed worker, the command line) are in tests/study/test_study.py."""

import hashlib
import importlib
import inspect
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import contactfmu.build
import contactfmu.examples
from contactfmu.components import NAMES
from contactfmu.cosim import CosimError, Result, System, read_csv
from contactfmu.study import Metric, Study, StudyError, explicit, grid, signal
from contactfmu.study.execute import ExampleModel, FmuFile, Job

study = importlib.import_module("contactfmu.study")
execute = importlib.import_module("contactfmu.study.execute")
cluster = importlib.import_module("contactfmu.study.cluster")

OPTIONS = "step, start_time, output_interval, scheme, rtol, atol"
SIMULATED = []  # (values set on the instances, stop time, outputs, options) of every simulate()


def _no_cluster(*args, **kwargs):
    raise AssertionError("no dask cluster or client is made by these tests")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """Each test as in a fresh process: no FMU provided, no file hashed, no model compiled; and no
    dask cluster or client made (a serial study that tried would fail here)."""
    monkeypatch.setattr(execute, "_PROVIDED", {})
    monkeypatch.setattr(execute, "_HASHES", {})
    monkeypatch.setattr(execute, "_MODELS", {})
    monkeypatch.setattr(cluster, "LocalCluster", _no_cluster)
    monkeypatch.setattr(cluster, "Client", _no_cluster)
    SIMULATED.clear()


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def var(name, causality, type="Real", initial=None, unit=None):
    return SimpleNamespace(name=name, causality=causality, type=type, initial=initial, unit=unit)


COIL = [  # FMU "Coil"
    var("c", "parameter", initial="exact", unit="N/m"),
    var("d", "parameter"),  # no unit
    var("n", "parameter", type="Integer"),
    var("f", "output", initial="calculated", unit="N"),
    var("u", "input", unit="N"),
    var("k", "input", type="Integer"),  # an input that is not Real: settable, not listed
    var("flange.s", "output", initial="exact", unit="m"),  # a name with a dot, a start value
]
BODY = [  # FMU "Body"
    var("m", "parameter", unit="kg"),
    var("s", "output", initial="exact", unit="m"),  # a start value
    var("v", "output", initial="approx", unit="m/s"),  # a start value
    var("a", "output", initial="calculated", unit="m/s2"),
]


class Instance:
    def __init__(self, name, path, model_name, variables):
        self.name, self.path, self.values = name, str(path), {}
        self.md = SimpleNamespace(modelName=model_name, modelVariables=variables)
        self.variables = {v.name: v for v in variables}


class Stand(System):
    """Stands for a cosim System of the instances coil (FMU Coil) and body (FMU Body) (no FMU is
    read): simulate records its arguments and returns body.s = c t, body.v = c, coil.f = -c t at
    start, middle and stop (c: coil.c, default 1); a negative c is refused like an FMU refuses it."""

    def __init__(self, fmu):  # System.__init__ is not called
        self.fmu = dict(fmu)
        self.instances = {
            "coil": Instance("coil", fmu["Coil"], "Coil", COIL),
            "body": Instance("body", fmu["Body"], "Body", BODY),
        }

    def simulate(self, stop, outputs=None, **options):
        values = {
            f"{i}.{k}": v for i, inst in self.instances.items() for k, v in inst.values.items()
        }
        SIMULATED.append((values, stop, outputs, options))
        c = self.instances["coil"].values.get("c", 1.0)
        if c < 0:
            raise CosimError(f"coil: Invalid parameter c = {c!r} N/m: valid range [0.0, inf)")
        t = np.linspace(options.get("start_time", 0.0), stop, 3)
        return Result(
            ["time", "body.s", "body.v", "coil.f"], np.column_stack([t, c * t, c + 0 * t, -c * t])
        )


def two_body(fmu):
    """The model: a stand-in System."""
    return Stand(fmu)


def other_model(fmu):
    """Another model: the same System, another function."""
    return Stand(fmu)


@pytest.fixture
def fmus(tmp_path):
    """{name: path} of the FMU files of the model (a few bytes each) and one it does not use."""
    folder = tmp_path / "fmus"
    folder.mkdir()
    for name, data in (("Coil", b"coil"), ("Body", b"body"), ("Extra", b"extra")):
        (folder / f"{name}.fmu").write_bytes(data)
    return {n: folder / f"{n}.fmu" for n in ("Coil", "Body", "Extra")}


def refused(fn, *args, **kw):
    with pytest.raises(StudyError) as err:
        fn(*args, **kw)
    return str(err.value)


def make(fmus, runs=None, metrics=("final:body.s",), **kw):
    kw.setdefault("stop_time", 2.0)
    return Study(two_body, runs or grid({"coil.c": [1.0, 2.0]}), metrics, fmus=fmus, **kw)


def peak(result):
    return float(np.max(result["body.s"]))


# ---- the examples and the FMU folder -------------------------------------------------------------


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A checkout (contactfmu.examples.ROOT) whose examples/ holds twobody.py (the stand-in model),
    alpha.py and a text file."""
    monkeypatch.setattr(contactfmu.examples, "ROOT", tmp_path)
    folder = tmp_path / "examples"
    folder.mkdir()
    (folder / "twobody.py").write_text(SCRIPT)
    (folder / "alpha.py").write_text("def build_system(fmu):\n    return None\n")
    (folder / "notes.txt").write_text("def build_system(fmu): pass\n")
    return folder


SCRIPT = "from test_study_core import Stand\n\n\ndef build_system(fmu):\n    return Stand(fmu)\n"


def test_example_path_is_a_script_of_the_checkouts_examples_named_with_or_without_py(examples):
    assert study.example_path("twobody") == examples / "twobody.py"
    assert study.example_path("twobody.py") == examples / "twobody.py"
    assert study.example_path("alpha") == examples / "alpha.py"
    for name in ("beta", "notes", "notes.txt", "twobody.pyc", "wobody"):
        assert refused(study.example_path, name) == (
            f"unknown example {name!r}; available: alpha, twobody (examples/ of the source checkout)"
        )


def test_example_path_without_an_examples_folder_lists_none(tmp_path, monkeypatch):
    monkeypatch.setattr(contactfmu.examples, "ROOT", tmp_path)
    (tmp_path / "examples").write_text("not a folder")
    assert refused(study.example_path, "twobody") == (
        "unknown example 'twobody'; available: none (examples/ of the source checkout)"
    )


def test_an_fmu_folder_gives_an_fmu_the_project_does_not_build_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(contactfmu.build, "ensure_fmus", None)  # nothing is built
    (tmp_path / "Probe.fmu").write_bytes(b"probe")
    folder = study._FmuFolder(str(tmp_path))
    assert folder.folder == tmp_path and dict(folder) == {}
    assert folder["Probe"] == str(tmp_path / "Probe.fmu")
    assert dict(folder) == {"Probe": str(tmp_path / "Probe.fmu")}  # the names used
    with pytest.raises(KeyError) as err:
        folder["Other"]
    assert err.value.args == (
        f"no FMU 'Other' in {tmp_path} (and not one the project builds: {', '.join(NAMES)})",
    )
    assert "Other" not in folder


def test_an_fmu_folder_builds_the_projects_fmus_when_missing_or_out_of_date(tmp_path, monkeypatch):
    asked = []

    def ensure_fmus(folder, names):
        asked.append((folder, names))
        return {n: Path(folder) / f"{n}.fmu" for n in names}

    monkeypatch.setattr(contactfmu.build, "ensure_fmus", ensure_fmus)
    (tmp_path / "Mass.fmu").write_bytes(b"old")  # a project FMU: ensure_fmus decides, not the file
    folder = study._FmuFolder(tmp_path)
    assert folder["Mass"] == str(tmp_path / "Mass.fmu")
    assert folder["Spring"] == str(tmp_path / "Spring.fmu")
    assert folder["Mass"] == str(tmp_path / "Mass.fmu")  # remembered: not built again
    assert asked == [(tmp_path, ["Mass"]), (tmp_path, ["Spring"])]
    assert dict(folder) == {
        "Mass": str(tmp_path / "Mass.fmu"),
        "Spring": str(tmp_path / "Spring.fmu"),
    }


# ---- the identity of a model ---------------------------------------------------------------------


class CallableModel:
    def __call__(self, fmu):
        return Stand(fmu)


class NoModule(CallableModel):
    @property
    def __module__(self):  # an object that names no module
        raise AttributeError("__module__")


def test_the_identity_of_a_model_is_its_module_name_and_source_hash(tmp_path):
    assert study._identity(two_body) == {
        "function": f"{__name__}.two_body",
        "source_sha256": _sha(inspect.getsource(two_body).encode()),
    }
    assert study._identity(Stand.simulate)["function"] == f"{__name__}.Stand.simulate"
    # no source to be had: a callable object (TypeError), a function made by exec (OSError)
    assert study._identity(CallableModel()) == {
        "function": f"{__name__}.CallableModel",
        "source_sha256": None,
    }
    assert study._identity(NoModule()) == {"function": ".NoModule", "source_sha256": None}
    namespace = {"__name__": "generated"}
    exec("def build(fmu):\n    return fmu\n", namespace)
    assert study._identity(namespace["build"]) == {
        "function": "generated.build",
        "source_sha256": None,
    }
    (tmp_path / "m.py").write_text(SCRIPT)
    model = ExampleModel(tmp_path / "m.py")
    assert study._identity(model) == model.identity()


# ---- the model -----------------------------------------------------------------------------------


def test_a_model_named_as_an_example_or_given_as_a_script(examples, fmus, tmp_path):
    runs = grid({"coil.c": [1.0]})
    for model in ("twobody", "twobody.py"):
        s = Study(model, runs, stop_time=1.0, fmus=fmus)
        assert isinstance(s.model, ExampleModel) and s.model.path == str(
            (examples / "twobody.py").resolve()
        )
        assert s.name == "twobody" and s.describe()["model"] == s.model.identity()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.py").write_text(SCRIPT)
    for model in (elsewhere / "mine.py", str(elsewhere / "mine.py")):
        s = Study(model, runs, stop_time=1.0, fmus=fmus)
        assert s.model.path == str((elsewhere / "mine.py").resolve()) and s.name == "mine"
    # a path that is not a .py file is an example's name
    (elsewhere / "mine.txt").write_text(SCRIPT)
    (elsewhere / "folder.py").mkdir()
    for model in ("missing.py", elsewhere / "mine.txt", elsewhere / "folder.py"):
        assert refused(Study, model, runs, stop_time=1.0, fmus=fmus) == (
            f"unknown example {str(model)!r}; available: alpha, twobody (examples/ of the source "
            f"checkout)"
        )


@pytest.mark.parametrize("model", [42, None, b"twobody"])
def test_a_model_that_is_no_function_is_refused(model, fmus):
    assert refused(Study, model, grid({"coil.c": [1.0]}), stop_time=1.0, fmus=fmus) == (
        f"model {model!r}: give a function fmu -> System or an example's name"
    )


def test_the_name_of_a_study(fmus):
    runs = grid({"coil.c": [1.0]})
    assert Study(two_body, runs, stop_time=1.0, fmus=fmus).name == "two_body"
    assert Study(two_body, runs, stop_time=1.0, fmus=fmus, name="mine").name == "mine"
    assert Study(CallableModel(), runs, stop_time=1.0, fmus=fmus).name == "study"
    named = CallableModel()
    named.name = "named"
    assert Study(named, runs, stop_time=1.0, fmus=fmus).name == "named"


def test_a_model_that_needs_an_fmu_not_given_is_refused(fmus, monkeypatch):
    runs = grid({"coil.c": [1.0]})
    given = {"Coil": fmus["Coil"], "Extra": fmus["Extra"]}
    err = pytest.raises(StudyError, Study, two_body, runs, stop_time=1.0, fmus=given)
    assert str(err.value) == (
        "model two_body: needs the FMU 'Body', not among the fmus given (Coil, Extra)"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert refused(Study, two_body, runs, stop_time=1.0, fmus={}, name="m") == (
        "model m: needs the FMU 'Coil', not among the fmus given (none)"
    )
    # a folder: the folder's own message (no such file, not one the project builds)
    monkeypatch.setattr(contactfmu.build, "ensure_fmus", None)
    folder = fmus["Coil"].parent
    fmus["Body"].unlink()
    err = pytest.raises(StudyError, Study, two_body, runs, stop_time=1.0, fmus=folder)
    assert str(err.value) == (
        f"model two_body: no FMU 'Body' in {folder} (and not one the project builds: "
        f"{', '.join(NAMES)})"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_a_model_that_fails_or_returns_no_system_is_refused(fmus):
    runs = grid({"coil.c": [1.0]})
    error = StudyError("the model's own words")

    def failing(fmu):
        raise error

    with pytest.raises(StudyError) as err:
        Study(failing, runs, stop_time=1.0, fmus=fmus)
    assert err.value is error

    def bare(fmu):
        raise KeyError

    assert refused(Study, bare, runs, stop_time=1.0, fmus={"Coil": fmus["Coil"]}) == (
        "model bare: needs the FMU KeyError(), not among the fmus given (Coil)"
    )

    def tuple_model(fmu):
        return ("not", "a system")

    assert refused(Study, tuple_model, runs, stop_time=1.0, fmus=fmus) == (
        "model tuple_model returned tuple, not a contactfmu.cosim.System"
    )


def test_the_fmus_are_read_from_the_default_folder_or_a_folder(tmp_path, fmus, monkeypatch):
    monkeypatch.setattr(contactfmu.examples, "ROOT", tmp_path)  # tmp_path/fmus holds them
    monkeypatch.setattr(contactfmu.build, "ensure_fmus", None)
    for given in ({}, {"fmus": tmp_path / "fmus"}, {"fmus": str(tmp_path / "fmus")}):
        s = Study(two_body, grid({"coil.c": [1.0]}), stop_time=1.0, **given)
        assert s.files == [
            FmuFile("Coil", _sha(b"coil"), str(fmus["Coil"].resolve()), b"coil"),
            FmuFile("Body", _sha(b"body"), str(fmus["Body"].resolve()), b"body"),
        ]


def test_the_files_are_the_fmus_the_model_uses_read_once(tmp_path, fmus):
    """Only the FMUs of the model's instances (not Extra), named as given, at their resolved path,
    with their bytes read when the study is made."""
    (tmp_path / "sub").mkdir()
    given = {
        "Extra": fmus["Extra"],
        "Body": str(fmus["Body"]),
        "Coil": tmp_path / "sub" / ".." / "fmus" / "Coil.fmu",
    }
    s = Study(two_body, grid({"coil.c": [1.0]}), stop_time=1.0, fmus=given)
    assert s.files == [
        FmuFile("Body", _sha(b"body"), str(fmus["Body"].resolve()), b"body"),
        FmuFile("Coil", _sha(b"coil"), str(fmus["Coil"].resolve()), b"coil"),
    ]
    fmus["Coil"].write_bytes(b"changed")  # the study keeps what it read
    assert s.files[1].data == b"coil"


# ---- the values, metrics, options, stop time -----------------------------------------------------


def test_the_units_of_the_values_from_the_fmus_and_of_the_options(fmus):
    runs = explicit(
        [
            {
                "coil.c": 1.0,
                "coil.d": 1.0,
                "coil.u": 1.0,
                "coil.k": 1.0,
                "body.s": 0.0,
                "body.v": 1.0,
                "coil.flange.s": 0.5,
                "step": 0.1,
                "start_time": 0.0,
                "stop_time": 1.0,
                "output_interval": 0.1,
                "rtol": 1e-6,
                "atol": 1e-8,
                "scheme": "jacobi",
            }
        ]
    )
    s = Study(two_body, runs, fmus=fmus)
    assert s.units == {
        "coil.c": "N/m",
        "coil.d": "",
        "coil.u": "N",
        "coil.k": "",
        "body.s": "m",
        "body.v": "m/s",
        "coil.flange.s": "m",
        "step": "s",
        "start_time": "s",
        "stop_time": "s",
        "output_interval": "s",
        "rtol": "",
        "atol": "",
        "scheme": "",
    }
    assert s.stop_time is None  # every run has its own


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "spring.c",
            "parameter 'spring.c': the model has no instance 'spring'; its instances are coil, body",
        ),
        (
            "coil.x",
            "parameter 'coil.x': coil (Coil) has no variable 'x'; its parameters and inputs: "
            "c, d, n, u",
        ),
        (
            "coil.f",
            "parameter 'coil.f': coil (Coil) computes 'f' (an output), it cannot be set; its "
            "parameters and inputs: c, d, n, u",
        ),
        (
            "coil.flange.q",
            "parameter 'coil.flange.q': coil (Coil) has no variable 'flange.q'; its parameters and "
            "inputs: c, d, n, u",
        ),
        (
            "body.a",
            "parameter 'body.a': body (Body) computes 'a' (an output), it cannot be set; its "
            "parameters and inputs: m",
        ),
    ],
)
def test_a_value_the_model_cannot_set_is_refused(name, message, fmus):
    assert refused(make, fmus, grid({name: [1.0]})) == message


def test_the_signals_of_the_metrics_are_checked_and_give_the_units(fmus):
    assert refused(make, fmus, metrics=["final:body.q"]) == (
        "metric final(body.q): body (Body) has no variable 'q'; its outputs: s, v, a"
    )
    assert refused(make, fmus, metrics=["final:coil.flange.q"]) == (
        "metric final(coil.flange.q): coil (Coil) has no variable 'flange.q'; its outputs: f, "
        "flange.s"
    )
    assert refused(make, fmus, metrics=[Metric("peak", peak, ["body.s", "spring.f"])]) == (
        "metric peak: signal 'spring.f': the model has no instance 'spring'; its instances are "
        "coil, body"
    )
    metrics = [
        "final:body.s",
        signal("max", "body.v", unit="mm/s"),
        signal("min", "coil.k", name="kmin"),
        "max:coil.flange.s",
        Metric("peak", peak, ["body.s"]),
        Metric("any", peak),  # reads what it wants: not checked
    ]
    s = make(fmus, metrics=metrics)
    # a statistic without a unit takes its signal's; a unit given stays; a Metric keeps its own
    assert [m.unit for m in s.metrics] == ["m", "mm/s", "", "m", "", ""]


@pytest.mark.parametrize(
    "names, clash",
    [
        (["peak", "peak"], "peak"),
        (["status"], "status"),
        (["run_id"], "run_id"),
        (["error"], "error"),
        (["worker"], "worker"),
        (["wall_time"], "wall_time"),
        (["trajectory"], "trajectory"),
        (["coil.c"], "coil.c"),
        (["worker", "peak", "coil.c", "peak", "x"], "coil.c, peak, worker"),
    ],
)
def test_metric_names_that_clash_are_refused(names, clash, fmus):
    metrics = [Metric(n, peak, ["body.s"]) for n in names]
    assert refused(make, fmus, metrics=metrics) == (
        f"metric names {clash} are used twice or name another column"
    )


def test_three_metrics_of_one_name_are_named_once(fmus):
    metrics = [Metric("peak", peak, ["body.s"])] * 3
    assert refused(make, fmus, metrics=metrics) == (
        "metric names peak are used twice or name another column"
    )


@pytest.mark.parametrize("key", ["tolerance", "stop_time", "Step"])
def test_an_option_of_every_run_that_simulate_does_not_take_is_refused(key, fmus):
    assert refused(make, fmus, options={"step": 0.1, key: 1.0}) == (
        f"option {key!r}: the options of every run are {OPTIONS} (the stop time is stop_time=)"
    )


def test_the_options_of_every_run_are_a_copy(fmus):
    options = {"step": 0.1, "rtol": 1e-6}
    s = make(fmus, options=options)
    options["step"] = 0.2
    assert s.options == {"step": 0.1, "rtol": 1e-6}
    assert make(fmus).options == {}


def test_the_stop_time(fmus):
    assert refused(make, fmus, stop_time=None) == (
        "stop_time: give the stop time of the runs (or a stop_time value in every run)"
    )
    some = explicit([{"coil.c": 1.0, "stop_time": 1.0}, {"coil.c": 2.0}])
    assert refused(make, fmus, some, stop_time=None) == (
        "stop_time: give the stop time of the runs (or a stop_time value in every run)"
    )
    every = explicit([{"coil.c": 1.0, "stop_time": 1.0}, {"coil.c": 2.0, "stop_time": 3.0}])
    assert make(fmus, every, stop_time=None).stop_time is None
    assert make(fmus, every, stop_time=4).stop_time == 4.0
    assert type(make(fmus, stop_time=2).stop_time) is float
    assert make(fmus, stop_time=np.float32(0.5)).stop_time == 0.5
    for bad in ("1", math.inf, -math.inf, math.nan, [1.0], 1j):
        assert refused(make, fmus, stop_time=bad) == (
            f"stop_time = {bad!r}: must be a finite number of seconds"
        )


# ---- the outputs ---------------------------------------------------------------------------------


def test_the_outputs_are_those_asked_and_those_the_metrics_read(fmus):
    two = ["final:body.s", Metric("x", peak, ["coil.f", "body.s"]), "max:body.s"]
    assert make(fmus, metrics=two).outputs == ["body.s", "coil.f"]
    assert make(fmus, metrics=two, outputs=("body.v", "coil.f")).outputs == [
        "body.v",
        "coil.f",
        "body.s",
    ]
    assert make(fmus, metrics=[], outputs=iter(["body.a", "coil.flange.s"])).outputs == [
        "body.a",
        "coil.flange.s",
    ]
    assert make(fmus, metrics=[]).outputs == []
    # a metric that does not say what it reads: every output, unless outputs are named
    free = ["final:body.s", Metric("free", peak)]
    assert make(fmus, metrics=free).outputs is None
    assert make(fmus, metrics=free, outputs=["coil.f"]).outputs == ["coil.f", "body.s"]
    assert make(fmus, metrics=free, outputs=[]).outputs == ["body.s"]


def test_an_output_the_model_has_not_is_refused(fmus):
    assert refused(make, fmus, outputs=["body.s", "body.q"]) == (
        "output 'body.q': body (Body) has no such variable"
    )
    assert refused(make, fmus, outputs=["spring.f"]) == (
        "output 'spring.f': the model has no instance 'spring'; its instances are coil, body"
    )
    assert refused(make, fmus, metrics=[Metric("free", peak)], outputs=["body.q"]) == (
        "output 'body.q': body (Body) has no such variable"
    )


# ---- columns, description, fingerprint, job ------------------------------------------------------


def test_the_columns_and_the_description(fmus):
    s = make(
        fmus,
        grid({"coil.c": [1.0, 2.0], "body.m": [3.0]}, options={"step": 0.5}),
        ["final:body.s", Metric("peak", peak, ["body.s"])],
        options={"rtol": 1e-6},
        outputs=["coil.f"],
    )
    columns = [
        "run_id",
        "coil.c",
        "body.m",
        "step",
        "final(body.s)",
        "peak",
        "wall_time",
        "status",
        "error",
        "worker",
    ]
    assert s.columns == columns
    d = s.describe()
    assert d == {
        "study": "two_body",
        "model": {
            "function": f"{__name__}.two_body",
            "source_sha256": _sha(inspect.getsource(two_body).encode()),
        },
        "fmus": {"Coil": _sha(b"coil"), "Body": _sha(b"body")},
        "stop_time": 2.0,
        "options": {"rtol": 1e-6},
        "outputs": ["coil.f", "body.s"],
        "metrics": [
            {"name": "final(body.s)", "kind": "final", "signal": "body.s", "unit": "m"},
            {
                "name": "peak",
                "function": f"{__name__}.peak",
                "signals": ["body.s"],
                "unit": "",
            },
        ],
        "units": {"coil.c": "N/m", "body.m": "kg", "step": "s"},
        "runs": {
            "kind": "grid",
            "count": 2,
            "axes": {"coil.c": [1.0, 2.0], "body.m": [3.0]},
        },
        "columns": columns,
    }
    assert json.loads(json.dumps(d)) == d


def test_the_fingerprint_is_stable_and_ignores_runs_name_order_and_the_scripts_place(
    fmus, tmp_path
):
    base = make(fmus, options={"step": 0.1, "rtol": 1e-6}, outputs=["coil.f"])
    fp = base.fingerprint()
    assert len(fp) == 16 and int(fp, 16) >= 0 and fp == fp.lower()
    assert fp == base.fingerprint()
    same = [
        make(fmus, options={"step": 0.1, "rtol": 1e-6}, outputs=["coil.f"]),
        make(
            fmus,
            grid({"coil.c": [1.0, 2.0, 3.0], "body.m": [1.0]}),  # other runs: may be added
            options={"rtol": 1e-6, "step": 0.1},  # another order
            outputs=["coil.f"],
            name="another name",
        ),
    ]
    assert [s.fingerprint() for s in same] == [fp, fp]
    # the same script in two places: the same model source
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "model.py").write_text(SCRIPT)
    a, b = (
        Study(tmp_path / f / "model.py", grid({"coil.c": [1.0]}), stop_time=1.0, fmus=fmus)
        for f in ("a", "b")
    )
    assert a.describe()["model"] != b.describe()["model"]
    assert a.fingerprint() == b.fingerprint()


def test_the_fingerprint_changes_with_model_fmus_stop_time_options_outputs_metrics(fmus, tmp_path):
    kw = dict(options={"step": 0.1}, outputs=["coil.f"])
    fp = make(fmus, **kw).fingerprint()
    other_fmu = dict(fmus, Body=tmp_path / "Body2.fmu")
    other_fmu["Body"].write_bytes(b"body2")
    others = [
        Study(
            other_model,
            grid({"coil.c": [1.0, 2.0]}),
            ["final:body.s"],
            stop_time=2.0,
            fmus=fmus,
            **kw,
        ),
        make(other_fmu, **kw),
        make(fmus, stop_time=2.5, **kw),
        make(fmus, options={"step": 0.2}, outputs=["coil.f"]),
        make(fmus, options={"step": 0.1}, outputs=["body.v"]),
        make(fmus, metrics=["max:body.s"], **kw),
        make(fmus, metrics=[signal("final", "body.s", unit="mm")], **kw),
    ]
    prints = [s.fingerprint() for s in others]
    assert fp not in prints and len(set(prints)) == len(prints)


def test_a_study_with_numpy_option_values_has_a_fingerprint_and_runs(fmus):
    s = make(fmus, options={"step": np.float32(0.5)})
    assert s.fingerprint() == make(fmus, options={"step": np.float32(0.5)}).fingerprint()
    assert s.fingerprint() != make(fmus, options={"step": np.float32(0.25)}).fingerprint()
    assert list(s.run(workers=0)["status"]) == ["ok", "ok"]


def test_the_job_every_run_shares(fmus):
    s = make(fmus, options={"step": 0.1}, outputs=["coil.f"])
    job = s.job()
    assert job == Job(
        two_body,
        {"Coil": _sha(b"coil"), "Body": _sha(b"body")},
        s.metrics,
        ["coil.f", "body.s"],
        2.0,
        {"step": 0.1},
        False,
    )
    assert s.job(trajectory=1).trajectory is True and s.job(True).trajectory is True
    assert s.job(trajectory=0).trajectory is False


# ---- run: refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"trajectories": True}, "trajectories are written beside the table: give out=..."),
        (
            {"workers": -1},
            "workers = -1: a number of worker processes >= 1, or 0 to run serially",
        ),
        (
            {"workers": 1.5},
            "workers = 1.5: a number of worker processes >= 1, or 0 to run serially",
        ),
        (
            {"workers": "2"},
            "workers = '2': a number of worker processes >= 1, or 0 to run serially",
        ),
        (
            {"workers": 2, "scheduler": "tcp://h:8786"},
            "workers= starts a local cluster (0: serial runs); a scheduler or client is a "
            "running cluster: give one of them",
        ),
        (
            {"workers": 0, "client": object()},
            "workers= starts a local cluster (0: serial runs); a scheduler or client is a "
            "running cluster: give one of them",
        ),
        (
            {"scheduler": "tcp://h:8786", "client": object()},
            "give a scheduler address or a client, not both",
        ),
    ],
)
def test_run_refuses_arguments_that_do_not_go_together(kw, message, fmus, tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "run_all", None)  # nothing runs
    s = make(fmus)
    out = tmp_path / "t.csv" if "trajectories" not in kw else None
    assert refused(s.run, out, **kw) == message
    assert not SIMULATED and list(tmp_path.glob("t.*")) == []


# ---- run: serial ---------------------------------------------------------------------------------


def test_a_serial_run_gives_one_row_per_run_in_their_order(fmus):
    s = make(
        fmus,
        grid({"coil.c": [2.0, -1.0, 0.5]}, options={"step": 0.25}),
        ["final:body.s", Metric("peak", peak, ["body.s"])],
        options={"rtol": 1e-6},
    )
    frame = s.run(workers=0)
    assert list(frame.columns) == s.columns
    assert list(frame["run_id"]) == [r.run_id for r in s.runs]
    assert list(frame["coil.c"]) == [2.0, -1.0, 0.5] and list(frame["step"]) == [0.25] * 3
    assert frame["final(body.s)"].tolist()[::2] == [4.0, 1.0]  # c * stop time
    assert frame["peak"].tolist()[::2] == [4.0, 1.0]
    assert list(frame["status"]) == ["ok", "error", "ok"]
    assert list(frame["error"]) == [
        "",
        "coil: Invalid parameter c = -1.0 N/m: valid range [0.0, inf)",
        "",
    ]
    assert math.isnan(frame["final(body.s)"][1]) and math.isnan(frame["peak"][1])
    assert list(frame["worker"]) == [execute.WORKER] * 3
    assert all(w >= 0.0 for w in frame["wall_time"])
    # each run simulated once, with its values, the study's options and outputs
    assert SIMULATED == [
        ({"coil.c": c}, 2.0, ["body.s"], {"rtol": 1e-6, "step": 0.25}) for c in (2.0, -1.0, 0.5)
    ]


def test_a_serial_run_provides_the_fmus_from_their_bytes_when_the_files_are_gone(
    fmus, tmp_path, monkeypatch
):
    cache = tmp_path / "tmp"
    monkeypatch.setattr(study.tempfile, "gettempdir", lambda: str(cache))
    made = []

    def model(fmu):
        made.append(fmu)
        return Stand(fmu)

    s = Study(model, grid({"coil.c": [1.0]}), ["final:body.s"], stop_time=1.0, fmus=fmus)
    fmus["Coil"].unlink()
    made.clear()
    frame = s.run(workers=0)
    assert list(frame["status"]) == ["ok"], list(frame["error"])
    coil = cache / "contactfmu-fmus" / _sha(b"coil") / "Coil.fmu"
    assert made == [{"Coil": str(coil), "Body": str(fmus["Body"].resolve())}]
    assert coil.read_bytes() == b"coil"


def test_the_table_and_the_trajectories_written_by_a_serial_run(fmus, tmp_path):
    s = make(fmus, grid({"coil.c": [2.0, -1.0]}), options={"step": 0.5})
    out = tmp_path / "results" / "study.csv"
    frame = s.run(out, workers=0, trajectories=True)
    assert "trajectory" not in frame.columns
    table = pd.read_csv(out, keep_default_na=False, na_values=["nan"])
    assert list(table.columns) == s.columns and list(table["run_id"]) == list(frame["run_id"])
    assert list(table["status"]) == ["ok", "error"]
    meta = json.loads((tmp_path / "results" / "study.json").read_text())
    assert meta == {**s.describe(), "fingerprint": s.fingerprint()}
    ok, bad = frame["run_id"]
    back = read_csv(tmp_path / "results" / "study.runs" / f"{ok}.csv")
    assert back.names == ["time", "body.s", "body.v", "coil.f"]
    assert back.values.tolist() == [
        [0.0, 0.0, 2.0, 0.0],
        [1.0, 2.0, 2.0, -2.0],
        [2.0, 4.0, 2.0, -4.0],
    ]
    assert sorted(p.name for p in (tmp_path / "results" / "study.runs").iterdir()) == [f"{ok}.csv"]
    # resumed with trajectories: nothing runs, the folder stays
    again = s.run(out, workers=0, trajectories=True)
    assert len(SIMULATED) == 2 and again.equals(frame)
    assert not (tmp_path / "results" / "study.runs" / f"{bad}.csv").exists()


def test_the_trajectories_folder_is_made_before_the_runs(fmus, tmp_path):
    s = make(fmus, grid({"coil.c": [-1.0]}))
    s.run(tmp_path / "out.csv", workers=0, trajectories=True)
    assert (tmp_path / "out.runs").is_dir() and not any((tmp_path / "out.runs").iterdir())
    s.run(tmp_path / "none.csv", workers=0)
    assert not (tmp_path / "none.runs").exists()


# ---- run: resume ---------------------------------------------------------------------------------


def _lines(path):
    return path.read_text().splitlines(keepends=True)


def test_a_resume_keeps_ok_and_error_rows_and_runs_lost_and_missing_ones_again(fmus, tmp_path):
    """docs/studies.md, Resume: rows with status ok or error are kept (the error row with its
    message: the run is not executed again), lost rows and runs missing from the file run again."""
    out = tmp_path / "study.csv"
    s = make(fmus, grid({"coil.c": [1.0, -1.0, 2.0, 3.0]}))
    first = s.run(out, workers=0)
    assert list(first["status"]) == ["ok", "error", "ok", "ok"]
    assert len(SIMULATED) == 4
    again = s.run(out, workers=0)
    assert len(SIMULATED) == 4 and again.equals(first)
    # interrupted: the row of c = 2 lost on a cluster, that of c = 3 never written
    lines = _lines(out)
    out.write_text(lines[0] + lines[1] + lines[2] + lines[3].replace(",ok,", ",lost,"))
    third = s.run(out, workers=0)
    assert [v["coil.c"] for v, *_ in SIMULATED[4:]] == [2.0, 3.0]  # not 1 (ok), not -1 (error)
    assert third.drop(columns="wall_time").equals(first.drop(columns="wall_time"))
    assert third["wall_time"][:2].tolist() == first["wall_time"][:2].tolist()
    assert third["error"][1] == "coil: Invalid parameter c = -1.0 N/m: valid range [0.0, inf)"
    assert _lines(out)[:3] == lines[:3] and len(_lines(out)) == 5
    # resume=False: everything runs again
    s.run(out, workers=0, resume=False)
    assert len(SIMULATED) == 10


def test_a_resume_keeps_the_rows_of_other_runs_in_the_file_after_the_studys(fmus, tmp_path):
    out = tmp_path / "study.csv"
    make(fmus, grid({"coil.c": [1.0, 2.0, 3.0]})).run(out, workers=0)
    lines = _lines(out)
    fewer = make(fmus, grid({"coil.c": [3.0, 4.0]}))
    frame = fewer.run(out, workers=0)
    assert [v["coil.c"] for v, *_ in SIMULATED] == [1.0, 2.0, 3.0, 4.0]
    assert list(frame["coil.c"]) == [3.0, 4.0]
    table = pd.read_csv(out)
    assert list(table["coil.c"]) == [3.0, 4.0, 1.0, 2.0]
    assert _lines(out)[1] == lines[3] and _lines(out)[3:] == lines[1:3]
    # afresh: only this study's rows
    fewer.run(out, workers=0, resume=False)
    assert list(pd.read_csv(out)["coil.c"]) == [3.0, 4.0]


def test_a_resume_of_a_parquet_table_keeps_the_rows_of_other_runs(fmus, tmp_path):
    out = tmp_path / "study.parquet"
    make(fmus, grid({"coil.c": [1.0, 2.0]})).run(out, workers=0)
    frame = make(fmus, grid({"coil.c": [2.0, 3.0]})).run(out, workers=0)
    assert list(frame["coil.c"]) == [2.0, 3.0]
    back = pd.read_parquet(out)
    assert list(back["coil.c"]) == [2.0, 3.0, 1.0] and list(back.index) == [0, 1, 2]
    assert list(back["final(body.s)"]) == [4.0, 6.0, 2.0]
    assert list(back["status"]) == ["ok"] * 3 and list(back.columns) == list(frame.columns)
    assert [v["coil.c"] for v, *_ in SIMULATED] == [1.0, 2.0, 3.0]


def test_a_table_without_its_description_is_resumed(fmus, tmp_path):
    out = tmp_path / "study.csv"
    s = make(fmus)
    first = s.run(out, workers=0)
    (tmp_path / "study.json").unlink()
    assert s.run(out, workers=0).equals(first) and len(SIMULATED) == 2
    assert json.loads((tmp_path / "study.json").read_text())["fingerprint"] == s.fingerprint()


def test_the_table_of_another_study_is_refused_naming_what_differs(fmus, tmp_path):
    out = tmp_path / "study.csv"
    make(fmus, options={"step": 0.1}).run(out, workers=0)
    meta = tmp_path / "study.json"
    written = meta.read_text()
    tail = f"; see {meta}): write to another file or start afresh (resume=False, --fresh)"
    assert refused(make(fmus, stop_time=3.0, options={"step": 0.1}).run, out, workers=0) == (
        f"{out} holds another study (stop_time differs{tail}"
    )
    assert refused(make(fmus, metrics=["max:body.s"], outputs=["coil.f"]).run, out) == (
        f"{out} holds another study (options, outputs, metrics differ{tail}"
    )
    assert refused(make(fmus, stop_time=3.0).run, out) == (
        f"{out} holds another study (stop_time, options differ{tail}"
    )
    # an option value JSON does not know (numpy float32): compared as its text
    assert refused(make(fmus, options={"step": np.float32(0.1)}).run, out) == (
        f"{out} holds another study (options differs{tail}"
    )
    other = Study(
        other_model,
        grid({"coil.c": [1.0]}),
        ["final:body.s"],
        stop_time=2.0,
        fmus=fmus,
        options={"step": 0.1},
    )
    assert refused(other.run, out) == f"{out} holds another study (model differs{tail}"
    assert meta.read_text() == written and len(SIMULATED) == 2  # nothing ran, nothing written
    # a description whose fingerprint is not this study's, all else equal
    data = json.loads(written)
    data["fingerprint"] = "0" * 16
    meta.write_text(json.dumps(data))
    assert refused(make(fmus, options={"step": 0.1}).run, out) == (
        f"{out} holds another study (its description differs{tail}"
    )
    # afresh: the other study's table is replaced
    frame = make(fmus, stop_time=3.0, options={"step": 0.1}).run(out, workers=0, resume=False)
    assert list(frame["final(body.s)"]) == [3.0, 6.0] and len(SIMULATED) == 4
    assert json.loads(meta.read_text())["stop_time"] == 3.0


def test_an_interrupted_study_keeps_the_rows_taken_and_resumes_the_others(
    fmus, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "study.csv"
    s = make(fmus, grid({"coil.c": [1.0, 2.0, 3.0]}))

    def run_all(job, runs, files, on_row, workers, scheduler, client):
        execute.provide(files, tmp_path / "cache")  # as the cluster's plugin does
        on_row(runs[1], execute.execute(job, runs[1]))
        raise KeyboardInterrupt

    monkeypatch.setattr(cluster, "run_all", run_all)
    with pytest.raises(KeyboardInterrupt):
        s.run(out, progress=True)
    assert capsys.readouterr().err.endswith(" \n")  # the bar closed
    table = pd.read_csv(out)
    assert list(table["coil.c"]) == [2.0] and list(table["status"]) == ["ok"]
    frame = s.run(out, workers=0)
    assert [v["coil.c"] for v, *_ in SIMULATED] == [2.0, 1.0, 3.0]
    assert list(frame["final(body.s)"]) == [2.0, 4.0, 6.0]
    assert list(pd.read_csv(out)["coil.c"]) == [1.0, 2.0, 3.0]


def test_an_interrupted_parquet_study_keeps_its_rows_in_the_journal(fmus, tmp_path, monkeypatch):
    out = tmp_path / "study.parquet"
    s = make(fmus, grid({"coil.c": [1.0, 2.0]}))

    def run_all(job, runs, files, on_row, workers, scheduler, client):
        execute.provide(files, tmp_path / "cache")
        on_row(runs[0], execute.execute(job, runs[0]))
        raise RuntimeError("cluster gone")

    monkeypatch.setattr(cluster, "run_all", run_all)
    with pytest.raises(RuntimeError):
        s.run(out)
    journal = pd.read_csv(tmp_path / "study.parquet.partial.csv")
    assert list(journal["coil.c"]) == [1.0] and not out.exists()


# ---- run: on a cluster ---------------------------------------------------------------------------


def test_runs_on_a_cluster_are_taken_in_completion_order_and_returned_in_run_order(
    fmus, tmp_path, monkeypatch
):
    calls = []

    def run_all(job, runs, files, on_row, workers, scheduler, client):
        calls.append((job, list(runs), files, workers, scheduler, client))
        execute.provide(files, tmp_path / "cache")
        for run in runs[::-1]:
            if run.values["coil.c"] == 2.0:
                on_row(
                    run,
                    {
                        "run_id": run.run_id,
                        "status": "lost",
                        "worker": "",
                        "error": "KilledWorker: gone",
                    },
                )
            else:
                on_row(run, execute.execute(job, run))

    monkeypatch.setattr(cluster, "run_all", run_all)
    s = make(fmus, grid({"coil.c": [1.0, 2.0, 3.0]}), ["final:body.s", "max:body.v"])
    out = tmp_path / "study.csv"
    frame = s.run(out, trajectories=True)
    ((job, runs, files, workers, scheduler, client),) = calls
    assert job == s.job(True) and runs == list(s.runs) and files == s.files
    assert (workers, scheduler, client) == (None, None, None)
    assert list(frame["coil.c"]) == [1.0, 2.0, 3.0]
    assert list(frame["status"]) == ["ok", "lost", "ok"]
    assert list(frame["error"]) == ["", "KilledWorker: gone", ""]
    assert list(frame["worker"]) == [execute.WORKER, "", execute.WORKER]
    assert frame["final(body.s)"][0] == 2.0 and frame["max(body.v)"][2] == 3.0
    for c in ("final(body.s)", "max(body.v)", "wall_time"):
        assert math.isnan(frame[c][1])
    assert frame["run_id"][1] == s.runs[1].run_id and frame["coil.c"][1] == 2.0
    # the file: rows as they came, then in run order; the lost run runs again on resume
    assert list(pd.read_csv(out)["coil.c"]) == [1.0, 2.0, 3.0]
    assert sorted(p.stem for p in (tmp_path / "study.runs").iterdir()) == sorted(
        [s.runs[0].run_id, s.runs[2].run_id]
    )
    client = object()
    s.run(out, client=client)
    assert [r.values["coil.c"] for r in calls[1][1]] == [2.0]
    assert calls[1][3:] == (None, None, client)
    s.run(out, workers=3, resume=False)
    assert len(calls[2][1]) == 3 and calls[2][3:] == (3, None, None)
    s.run(out, scheduler="tcp://h:8786", resume=False)
    assert calls[3][3:] == (None, "tcp://h:8786", None)


def test_nothing_runs_when_every_run_is_in_the_table(fmus, tmp_path, monkeypatch):
    out = tmp_path / "study.csv"
    s = make(fmus)
    first = s.run(out, workers=0)

    def run_all(*args):
        raise AssertionError("nothing to run")

    monkeypatch.setattr(cluster, "run_all", run_all)
    monkeypatch.setattr(study, "provide", run_all)
    monkeypatch.setattr(Study, "job", run_all)
    assert s.run(out).equals(first) and s.run(out, workers=0).equals(first)


def test_the_frame_of_rows_with_missing_cells(fmus):
    s = make(fmus, metrics=["final:body.s"])
    frame = s._frame(
        [
            {"run_id": "a", "coil.c": 1.0, "status": "lost", "error": "KilledWorker: x"},
            {"run_id": "b", "final(body.s)": 2.5, "status": "ok", "error": None, "worker": "w"},
        ]
    )
    assert list(frame.columns) == s.columns
    assert frame["error"].tolist() == ["KilledWorker: x", ""]
    assert frame["worker"].tolist() == ["", "w"]
    assert frame["run_id"].tolist() == ["a", "b"] and frame["status"].tolist() == ["lost", "ok"]
    assert math.isnan(frame["coil.c"][1]) and math.isnan(frame["final(body.s)"][0])
    assert math.isnan(frame["wall_time"][0]) and frame["final(body.s)"][1] == 2.5
    empty = s._frame([])
    assert list(empty.columns) == s.columns and len(empty) == 0


# ---- the progress bar ----------------------------------------------------------------------------


class Clock:
    def __init__(self, now):
        self.now = now

    def monotonic(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock(1.0)
    monkeypatch.setattr(study, "time", c)
    return c


def _bar_at(clock, t, bar, status):
    clock.now = t
    bar.update(status)


def test_the_progress_bar_text(clock, capsys):
    bar = study._Bar("demo", 4, 0, True)  # started at 1.0 s
    _bar_at(clock, 1.5, bar, "ok")  # shown at once
    assert capsys.readouterr().err == (
        "\r  demo: [#######                       ] 1/4 runs  0.5 s, ETA 1.5 s "
    )
    _bar_at(clock, 1.9, bar, "error")  # 0.4 s after the last: not shown
    assert capsys.readouterr().err == ""
    _bar_at(clock, 2.0, bar, "lost")  # 0.5 s after
    assert capsys.readouterr().err == (
        "\r  demo: [######################        ] 3/4 runs (1 error, 1 lost)  1.0 s, ETA 0.3 s "
    )
    _bar_at(clock, 2.1, bar, "ok")  # the last run: always shown
    assert capsys.readouterr().err == (
        "\r  demo: [##############################] 4/4 runs (1 error, 1 lost)  1.1 s, ETA 0.0 s "
    )
    assert bar.counts == {"ok": 2, "error": 1, "lost": 1}
    bar.close()
    assert capsys.readouterr().err == "\n"


def test_the_progress_bar_shows_at_once_when_asked(clock, capsys):
    bar = study._Bar("one", 1, 0, True)
    _bar_at(clock, 1.2, bar, "error")  # 0.2 s after the start, the first update
    assert capsys.readouterr().err == (
        "\r  one: [##############################] 1/1 runs (1 error)  0.2 s, ETA 0.0 s "
    )
    bar = study._Bar("two", 2, 0, True)
    _bar_at(clock, 1.3, bar, "lost")
    assert capsys.readouterr().err == (
        "\r  two: [###############               ] 1/2 runs (1 lost)  0.1 s, ETA 0.1 s "
    )


def test_the_progress_bar_after_two_seconds_counts_the_resumed_runs(clock, capsys):
    bar = study._Bar("resumed", 10, 4, None)  # 4 of 10 runs in the table already
    for t in (1.5, 2.0, 2.9):  # under 2 s: not shown
        _bar_at(clock, t, bar, "ok")
    assert capsys.readouterr().err == ""
    bar.close()
    assert capsys.readouterr().err == ""  # never shown: no line end
    _bar_at(clock, 3.0, bar, "ok")  # 2 s: 8 of 10, 4 new in 2 s
    assert capsys.readouterr().err == (
        "\r  resumed: [########################      ] 8/10 runs  2.0 s, ETA 1.0 s "
    )
    bar.close()
    assert capsys.readouterr().err == "\n"


def test_the_progress_bar_never_shown_when_asked_not_to(clock, capsys):
    bar = study._Bar("quiet", 2, 0, False)
    _bar_at(clock, 10.0, bar, "ok")
    _bar_at(clock, 20.0, bar, "error")
    bar.close()
    assert capsys.readouterr().err == "" and bar.done == 2 and bar.counts["error"] == 1


def test_a_study_shows_its_progress_bar(fmus, tmp_path, clock, capsys):
    s = make(fmus, grid({"coil.c": [1.0, 2.0, -1.0]}), name="bar")
    out = tmp_path / "study.csv"
    s.run(out, workers=0, progress=False)
    assert capsys.readouterr().err == ""
    s.run(out, workers=0, resume=False)  # under 2 s by the clock: not shown
    assert capsys.readouterr().err == ""
    lines = _lines(out)
    out.write_text("".join(lines[:3]))  # the third run missing
    s.run(out, workers=0, progress=True)
    assert capsys.readouterr().err == (
        "\r  bar: [##############################] 3/3 runs (1 error)  0.0 s, ETA 0.0 s \n"
    )
