"""One run of a study (study/execute.py) without FMUs: the FMU files a process uses (the client's
path when it holds the same bytes, else a copy written once into the cache, refused without bytes
or with bytes that do not match the hash), the example-script model, the parameters set on the
instances, and the row of a run (metric values, status, error texts, trajectory, wall time) with a
stand-in model whose System records what it was asked."""

import hashlib
import importlib
import math
import os
from types import SimpleNamespace

import numpy as np
import pytest

from contactfmu.cosim import CosimError
from contactfmu.study.execute import ExampleModel, FmuFile, Job
from contactfmu.study.runs import StudyError

execute = importlib.import_module(
    "contactfmu.study.execute"
)  # the package exports a function of this name


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(execute, "_PROVIDED", {})
    monkeypatch.setattr(execute, "_HASHES", {})
    monkeypatch.setattr(execute, "_MODELS", {})


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def test_sha256_of_a_file_read_in_blocks_and_cached_by_mtime_and_size(tmp_path):
    path = tmp_path / "a.fmu"
    data = bytes(range(256)) * 5000  # over one 1 MiB block
    path.write_bytes(data)
    assert execute.sha256_file(path) == _sha(data)
    assert list(execute._HASHES.values()) == [_sha(data)]
    path.write_bytes(b"other")  # another size: hashed anew
    assert execute.sha256_file(path) == _sha(b"other")
    assert len(execute._HASHES) == 2


def test_the_clients_file_is_used_where_it_holds_the_same_bytes(tmp_path):
    path = tmp_path / "Mass.fmu"
    path.write_bytes(b"mass")
    f = FmuFile("Mass", _sha(b"mass"), str(path))
    assert execute.provide([f], tmp_path / "cache") == {f.sha: str(path)}
    assert not (tmp_path / "cache").exists()


def test_bytes_sent_are_written_once_into_the_cache(tmp_path):
    f = FmuFile("Mass", _sha(b"mass"), str(tmp_path / "elsewhere" / "Mass.fmu"), b"mass")
    target = tmp_path / "cache" / f.sha / "Mass.fmu"
    assert execute.provide([f], tmp_path / "cache") == {f.sha: str(target)}
    assert target.read_bytes() == b"mass"
    assert os.listdir(target.parent) == ["Mass.fmu"]  # no part file left
    mtime = target.stat().st_mtime_ns
    execute._PROVIDED.clear()  # another process: the copy is there already
    assert execute.provide([f], tmp_path / "cache") == {f.sha: str(target)}
    assert target.stat().st_mtime_ns == mtime


def test_a_client_file_with_other_bytes_is_not_used(tmp_path):
    path = tmp_path / "Mass.fmu"
    path.write_bytes(b"changed")
    f = FmuFile("Mass", _sha(b"mass"), str(path), b"mass")
    (got,) = execute.provide([f], tmp_path / "cache").values()
    assert got == str(tmp_path / "cache" / f.sha / "Mass.fmu")


def test_a_provided_file_is_not_looked_at_again_while_it_exists(tmp_path):
    path = tmp_path / "Mass.fmu"
    path.write_bytes(b"mass")
    f = FmuFile("Mass", _sha(b"mass"), str(path))
    execute.provide([f], tmp_path)
    execute._PROVIDED[f.sha] = str(path)
    path.write_bytes(b"other")  # not hashed again: the path provided stands
    assert execute.provide([f], tmp_path) == {f.sha: str(path)}
    path.unlink()  # gone: provided anew, from the bytes (none here)
    with pytest.raises(StudyError):
        execute.provide([f], tmp_path)


def test_a_file_neither_readable_nor_sent_is_refused(tmp_path):
    f = FmuFile("Mass", _sha(b"mass"), str(tmp_path / "missing.fmu"))
    with pytest.raises(StudyError) as e:
        execute.provide([f], tmp_path)
    assert str(e.value) == (
        f"FMU Mass: {tmp_path / 'missing.fmu'} is not readable here and its content was not sent"
    )


def test_bytes_that_do_not_match_the_hash_are_refused(tmp_path):
    f = FmuFile("Mass", _sha(b"mass"), str(tmp_path / "missing.fmu"), b"massive")
    with pytest.raises(StudyError) as e:
        execute.provide([f], tmp_path)
    assert str(e.value) == f"FMU Mass: the content received does not match its hash {f.sha}"
    assert not (tmp_path / f.sha).exists()


def test_an_unreadable_client_path_falls_back_to_the_bytes(tmp_path, monkeypatch):
    path = tmp_path / "Mass.fmu"
    path.write_bytes(b"mass")

    def unreadable(p):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(execute, "sha256_file", unreadable)
    f = FmuFile("Mass", _sha(b"mass"), str(path), b"mass")
    assert execute.provide([f], tmp_path / "c") == {f.sha: str(tmp_path / "c" / f.sha / "Mass.fmu")}


SCRIPT = "CALLS = []\n\ndef build_system(fmu):\n    CALLS.append(fmu)\n    return ('system', fmu, __name__)\n"


def test_an_example_model_runs_its_build_system(tmp_path):
    path = tmp_path / "bouncer.py"
    path.write_text(SCRIPT)
    model = ExampleModel(path)
    assert (model.name, model.path, model.source) == ("bouncer", str(path.resolve()), SCRIPT)
    assert model.identity() == {
        "example": "bouncer",
        "path": str(path.resolve()),
        "sha256": _sha(SCRIPT.encode()),
    }
    assert model({"Mass": "m.fmu"}) == (
        "system",
        {"Mass": "m.fmu"},
        "contactfmu_study_model_bouncer",
    )
    build = model.build_function()
    assert model.build_function() is build  # compiled once per process
    assert build.__globals__["__file__"] == str(path.resolve())
    assert list(execute._MODELS) == [model.sha]


def test_an_example_model_must_be_readable_and_have_build_system(tmp_path):
    with pytest.raises(StudyError) as e:
        ExampleModel(tmp_path / "none.py")
    assert (
        str(e.value) == f"model {tmp_path / 'none.py'}: cannot read it: No such file or directory"
    )
    (tmp_path / "x.py").write_text("def build(fmu):\n    pass\n")
    with pytest.raises(StudyError) as e:
        ExampleModel(tmp_path / "x.py")
    assert str(e.value) == (
        f"model {tmp_path / 'x.py'}: the example has no build_system(fmu) function to study"
    )


class System:
    """Stands for a cosim System: instances with values, simulate records its arguments."""

    def __init__(self, fmu, fail=None):
        self.fmu, self.fail = fmu, fail
        self.instances = {"mass": SimpleNamespace(values={}), "spring": SimpleNamespace(values={})}

    def simulate(self, stop, outputs=None, **options):
        if self.fail:
            raise self.fail
        self.asked = (stop, outputs, options)
        return SimpleNamespace(
            names=["time", "mass.s"], values=np.array([[0.0, 1.0], [stop, 2.0]]), system=self
        )


def test_apply_sets_values_on_the_named_instances():
    s = System({})
    execute.apply(s, {"mass.m": 2.0, "spring.flange_a.s": 0.5})
    assert s.instances["mass"].values == {"m": 2.0}
    assert s.instances["spring"].values == {"flange_a.s": 0.5}


def _job(metrics, trajectory=False, fail=None, fmus=None, options=None):
    systems = []

    def model(fmu):
        systems.append(System(fmu, fail))
        return systems[-1]

    job = Job(
        model,
        fmus or {"Mass": "ab" * 32},
        metrics,
        ["mass.s"],
        2.0,
        options or {"step": 0.1},
        trajectory,
    )
    return job, systems


def _metric(name, fn):
    m = SimpleNamespace(name=name)
    m.__call__ = fn
    return type("M", (), {"name": name, "__call__": lambda self, r: fn(r)})()


def test_a_run_gives_its_metrics_status_and_worker(monkeypatch):
    execute._PROVIDED["ab" * 32] = "/x/Mass.fmu"
    clock = iter([10.0, 10.25])
    monkeypatch.setattr(execute.time, "perf_counter", lambda: next(clock))
    peak = _metric("peak", lambda r: np.max(r.values[:, 1]))
    job, systems = _job([peak], options={"step": 0.1, "rtol": 1e-6})
    run = SimpleNamespace(
        run_id=7, params={"mass.m": 3.0}, options={"step": 0.01, "stop_time": 4.0}
    )
    row = execute.execute(job, run)
    assert row == {
        "run_id": 7,
        "peak": 2.0,
        "status": "ok",
        "error": "",
        "worker": execute.WORKER,
        "wall_time": 0.25,
    }
    assert type(row["peak"]) is float
    (s,) = systems
    assert s.fmu == {"Mass": "/x/Mass.fmu"} and s.instances["mass"].values == {"m": 3.0}
    # the run's options over the job's; its stop_time over the job's, not passed on
    assert s.asked == (4.0, ["mass.s"], {"step": 0.01, "rtol": 1e-6})
    assert job.options == {"step": 0.1, "rtol": 1e-6}  # not changed
    run = SimpleNamespace(run_id=8, params={}, options={})
    clock = iter([0.0, 1.0])
    row = execute.execute(job, run)
    assert systems[-1].asked == (2.0, ["mass.s"], {"step": 0.1, "rtol": 1e-6})


def test_a_run_with_the_trajectory():
    execute._PROVIDED["ab" * 32] = "/x/Mass.fmu"
    job, _ = _job([], trajectory=True)
    row = execute.execute(job, SimpleNamespace(run_id=1, params={}, options={}))
    names, values = row["trajectory"]
    assert names == ["time", "mass.s"] and values.tolist() == [[0.0, 1.0], [2.0, 2.0]]
    job, _ = _job([])
    assert "trajectory" not in execute.execute(
        job, SimpleNamespace(run_id=1, params={}, options={})
    )


def test_an_fmu_not_provided_is_the_rows_error():
    job, systems = _job([_metric("peak", lambda r: 1.0)])
    row = execute.execute(job, SimpleNamespace(run_id=3, params={}, options={}))
    assert row["status"] == "error" and math.isnan(row["peak"]) and not systems
    assert row["error"] == (
        "FMU Mass (abababababab) is not available in this process (the study provides it to every "
        "worker before the runs start)"
    )
    assert row["wall_time"] >= 0.0


@pytest.mark.parametrize(
    "exc, text",
    [
        (CosimError("the master refused"), "the master refused"),
        (StudyError("a study error"), "a study error"),
        (ValueError("bad value"), "ValueError: bad value"),
        (CosimError(""), "CosimError"),
        (ZeroDivisionError(), "ZeroDivisionError: "),
    ],
)
def test_an_exception_of_the_run_is_the_rows_error(exc, text):
    execute._PROVIDED["ab" * 32] = "/x/Mass.fmu"
    job, _ = _job([_metric("peak", lambda r: 1.0)], fail=exc)
    row = execute.execute(job, SimpleNamespace(run_id=3, params={}, options={}))
    assert (row["status"], row["error"]) == ("error", text)
    assert math.isnan(row["peak"])


def test_failing_metrics_are_named_and_the_others_kept():
    execute._PROVIDED["ab" * 32] = "/x/Mass.fmu"
    metrics = [
        _metric("a", lambda r: 1.5),
        _metric("b", lambda r: 1 / 0),
        _metric("c", lambda r: "x"),
    ]
    job, _ = _job(metrics, trajectory=True)
    row = execute.execute(job, SimpleNamespace(run_id=3, params={}, options={}))
    assert row["a"] == 1.5 and math.isnan(row["b"]) and math.isnan(row["c"])
    assert row["status"] == "error"
    assert row["error"] == (
        "metric b: ZeroDivisionError: division by zero; "
        "metric c: ValueError: could not convert string to float: 'x'"
    )
    assert "trajectory" in row  # the run itself succeeded


def test_every_file_of_a_list_is_provided(tmp_path):
    """Several FMUs at once: one already provided, one at the client's path, two with the same
    bytes under different names (one folder per hash, a file per name)."""
    client = tmp_path / "Spring.fmu"
    client.write_bytes(b"spring")
    known = FmuFile("Fixed", _sha(b"fixed"), str(tmp_path / "gone.fmu"), b"fixed")
    execute.provide([known], tmp_path / "cache")
    files = [
        known,
        FmuFile("Spring", _sha(b"spring"), str(client)),
        FmuFile("Mass", _sha(b"body"), str(tmp_path / "x.fmu"), b"body"),
        FmuFile("Mass2", _sha(b"body"), str(tmp_path / "y.fmu"), b"body"),
        FmuFile("Damper", _sha(b"damper"), str(tmp_path / "z.fmu"), b"damper"),
    ]
    got = execute.provide(files, tmp_path / "cache")
    assert got == {
        known.sha: str(tmp_path / "cache" / known.sha / "Fixed.fmu"),
        files[1].sha: str(client),
        files[2].sha: str(tmp_path / "cache" / files[2].sha / "Mass.fmu"),
        files[4].sha: str(tmp_path / "cache" / files[4].sha / "Damper.fmu"),
    }
    # the second name of the same bytes: the first copy serves it (provided already)
    assert sorted(os.listdir(tmp_path / "cache" / files[2].sha)) == ["Mass.fmu"]
    execute._PROVIDED.pop(files[2].sha)
    (tmp_path / "cache" / files[2].sha / "Mass.fmu").unlink()
    got = execute.provide([files[3]], tmp_path / "cache")  # its folder exists already
    assert got == {files[3].sha: str(tmp_path / "cache" / files[3].sha / "Mass2.fmu")}
