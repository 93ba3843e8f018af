"""Parameter studies (contactfmu.study) on dask.distributed: runs (grid, samples), names checked
against the FMUs, rows equal to serial runs bit for bit, an FMU's error as a row, a worker killed
mid-study, resumed studies, FMUs sent to workers that have none, the command line.

The cluster is a LocalCluster of 2 worker processes started here (one thread each); the scheduler
address used is that cluster's, on this machine."""

import logging
import os
import shutil
import signal
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from elastogap_written_out import restitution as closed_form_restitution

from contactfmu.cosim import System, read_csv
from contactfmu.study import Metric, Study, StudyError, grid, parse_grid, parse_range, samples
from contactfmu.study.cluster import local_cluster
from contactfmu.study.runs import explicit

GAP = 1.05e-3  # the mass starts 1.05 mm before the contact: it starts inside a 1e-4 s step


def impact(fmu):
    """Fixed -- ElastoGap -- Mass (1 kg at -1 m/s)."""
    s = System()
    s.add("wall", fmu["Fixed"])
    s.add("gap", fmu["ElastoGap"], c=1e5, d=20.0)
    s.add("mass", fmu["Mass"], m=1.0, s_start=GAP, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    return s


def rebound(result):
    return -result["mass.v"][-1] / result["mass.v"][0]


class Logged:
    """A metric that appends the run's start speed (its identity here) to `log`, once per execution;
    with `kill` = (speed, marker file) it kills its own worker process the first time that run executes."""

    def __init__(self, log, kill=None):
        self.log, self.kill = str(log), kill

    def __call__(self, result):
        v0 = float(result["mass.v"][0])
        with open(self.log, "a") as fh:
            fh.write(f"{v0!r} {os.getpid()}\n")
        if self.kill and v0 == self.kill[0]:
            try:
                fd = os.open(self.kill[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return v0
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        return v0


def read_table(path):
    """A study's CSV table, numbers read exactly (pandas 3 does by default, older pandas with round_trip)."""
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return pd.read_csv(path, keep_default_na=False, na_values=["nan"], **exact)


def executions(log):
    return [float(line.split()[0]) for line in open(log)] if os.path.exists(log) else []


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A LocalCluster of 2 worker processes, one thread each, and its client (the workers'
    folders in pytest's temporary folder, not dask's <tmp>/dask-scratch-space)."""
    from distributed import Client

    c = local_cluster(2, str(tmp_path_factory.mktemp("dask")))
    client = Client(c)
    yield client
    client.close()
    c.close()


@pytest.fixture(scope="module")
def fmus(fmu_dir):
    return {n: fmu_dir / f"{n}.fmu" for n in ("Fixed", "ElastoGap", "Mass")}


# ---- runs ------------------------------------------------------------------------------------


def test_grid_is_the_full_factorial_first_axis_slowest():
    runs = grid({"a.x": [1, 2], "b.y": [10.0, 20.0, 30.0]}, options={"step": 1e-3})
    assert [r.values for r in runs] == [
        {"a.x": 1.0, "b.y": 10.0, "step": 1e-3},
        {"a.x": 1.0, "b.y": 20.0, "step": 1e-3},
        {"a.x": 1.0, "b.y": 30.0, "step": 1e-3},
        {"a.x": 2.0, "b.y": 10.0, "step": 1e-3},
        {"a.x": 2.0, "b.y": 20.0, "step": 1e-3},
        {"a.x": 2.0, "b.y": 30.0, "step": 1e-3},
    ]
    assert len({r.run_id for r in runs}) == 6
    assert (
        grid({"b.y": [10, 20], "a.x": [1]}, {"step": 1e-3})[0].run_id == runs[0].run_id
    )  # an id of the values
    per_run = grid({"a.x": [1.0, 4.0]}, options=lambda v: {"stop_time": 2 * v["a.x"]})
    assert [r.options for r in per_run] == [{"stop_time": 2.0}, {"stop_time": 8.0}]


def test_samples_are_seeded_and_lie_in_their_ranges():
    ranges = {"a.x": (1.0, 3.0), "b.y": (1e2, 1e4, "log")}
    for method in ("random", "lhs", "sobol", "halton"):
        one, again, other = (samples(16, ranges, method, seed) for seed in (7, 7, 8))
        x = np.array([[r.values["a.x"], r.values["b.y"]] for r in one])
        assert [r.values for r in one] == [r.values for r in again], method
        assert [r.values for r in one] != [r.values for r in other], method
        assert np.all((x[:, 0] >= 1.0) & (x[:, 0] < 3.0) & (x[:, 1] >= 1e2) & (x[:, 1] < 1e4)), (
            method
        )
    # Monte Carlo: numpy's generator with the seed, scaled (uniform in log10 for the log range)
    u = np.random.default_rng(7).random((16, 2))
    x = np.array([[r.values["a.x"], r.values["b.y"]] for r in samples(16, ranges, "random", 7)])
    assert np.allclose(x[:, 0], 1.0 + 2.0 * u[:, 0], rtol=1e-15)
    assert np.allclose(np.log10(x[:, 1]), 2.0 + 2.0 * u[:, 1], rtol=1e-13)
    # Latin hypercube: each of the 16 strata of each range holds exactly one sample
    x = np.array([[r.values["a.x"], r.values["b.y"]] for r in samples(16, ranges, "lhs", 3)])
    assert sorted(np.floor((x[:, 0] - 1.0) / 2.0 * 16).astype(int)) == list(range(16))
    assert sorted(np.floor((np.log10(x[:, 1]) - 2.0) / 2.0 * 16).astype(int)) == list(range(16))
    # Sobol, 16 = 2^4 points: each half of each range holds 8
    x = np.array([r.values["a.x"] for r in samples(16, ranges, "sobol", 3)])
    assert (x < 2.0).sum() == 8


@pytest.mark.parametrize(
    "spec, name, values",
    [
        ("spring.c=1e3:1e5:3:log", "spring.c", [1e3, 1e4, 1e5]),
        ("mass.s_start=0:1:5", "mass.s_start", [0.0, 0.25, 0.5, 0.75, 1.0]),
        ("step=1e-3,5e-4", "step", [1e-3, 5e-4]),
    ],
)
def test_grid_specifications(spec, name, values):
    got_name, got = parse_grid(spec)
    assert got_name == name and np.allclose(got, values, rtol=1e-15, atol=0)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("spring.c", "expected NAME=VALUES"),
        ("spring.c=1:2:x", "must be an integer >= 2"),
        ("spring.c=0:2:3:log", "needs lo, hi > 0"),
        ("spring.c=1,nan", "is not a finite number"),
        ("stepsize=1,2", "neither 'instance.variable'"),
    ],
)
def test_bad_grid_specifications_are_named(spec, message):
    with pytest.raises(StudyError, match=message):
        parse_grid(spec)


def test_ranges_and_runs_refuse_what_cannot_be_sampled():
    assert parse_range("gap.c=1e3:1e6:log") == ("gap.c", (1e3, 1e6, True))
    with pytest.raises(StudyError, match="lo = 2.0 must be below hi = 1.0"):
        parse_range("gap.c=2:1")
    with pytest.raises(StudyError, match="runs 0 and 2 are the same run"):
        explicit([{"a.x": 1.0}, {"a.x": 2.0}, {"a.x": 1}])
    with pytest.raises(StudyError, match="valid are random, lhs, sobol, halton"):
        samples(4, {"a.x": (0, 1)}, method="grid")


def test_names_are_checked_against_the_model_and_its_fmus(fmus):
    def study(runs, metrics=("final:mass.v",), **kw):
        return Study(impact, runs, metrics, stop_time=0.01, fmus=fmus, **kw)

    with pytest.raises(StudyError, match="no instance 'spring'; its instances are wall, gap, mass"):
        study(grid({"spring.c": [1.0]}))
    with pytest.raises(
        StudyError,
        match=r"gap \(ElastoGap\) has no variable 'k'; its parameters and inputs: c, d, ",
    ):
        study(grid({"gap.k": [1.0]}))
    with pytest.raises(
        StudyError, match=r"gap \(ElastoGap\) computes 'f' \(an output\), it cannot be set"
    ):
        study(grid({"gap.f": [1.0]}))
    with pytest.raises(
        StudyError, match="mass \\(Mass\\) has no variable 'vel'; its outputs: s, v, a"
    ):
        study(grid({"gap.c": [1.0]}), ["max:mass.vel"])
    with pytest.raises(StudyError, match="the options of every run are step, start_time"):
        study(grid({"gap.c": [1.0]}), options={"tolerance": 1e-3})
    with pytest.raises(
        StudyError, match="needs the FMU 'Mass', not among the fmus given \\(Fixed, ElastoGap\\)"
    ):
        Study(
            impact,
            grid({"gap.c": [1.0]}),
            stop_time=0.01,
            fmus={n: fmus[n] for n in ("Fixed", "ElastoGap")},
        )
    ok = study(grid({"gap.c": [1.0], "mass.v_start": [-2.0]}))
    assert ok.units == {"gap.c": "N/m", "mass.v_start": "m/s"} and ok.metrics[0].unit == "m/s"


# ---- metrics ---------------------------------------------------------------------------------

# a non-uniform time grid not starting at 0 (an adaptive run's): steps 0.1, 0.4, 1.5 s
METRIC_T = [1.0, 1.1, 1.5, 3.0]
METRIC_Y = [1.0, 3.0, -5.0, 4.0]


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("final", 4.0),
        ("initial", 1.0),
        ("max", 4.0),
        ("min", -5.0),
        ("absmax", 5.0),
        ("ptp", 9.0),
        # trapezoidal time average: (0.1*(1 + 3)/2 + 0.4*(3 - 5)/2 + 1.5*(-5 + 4)/2)/2.0
        # = (0.2 - 0.4 - 0.75)/2 = -0.475 (the plain sample mean would be 0.75)
        ("mean", -0.475),
    ],
)
def test_every_signal_metric_against_a_hand_computed_value(kind, expected):
    from contactfmu.cosim import Result
    from contactfmu.study import metrics

    assert set(metrics.KINDS) == {"final", "initial", "max", "min", "absmax", "ptp", "mean"}
    result = Result(["time", "mass.s", "mass.v"], np.column_stack([METRIC_T, METRIC_Y, METRIC_T]))
    metric = metrics.signal(kind, "mass.s")
    assert metric.name == f"{kind}(mass.s)" and metric.signals == ["mass.s"]
    assert metric(result) == pytest.approx(expected, rel=1e-14, abs=1e-15)
    parsed = metrics.parse_metric(f"{kind}:mass.s")
    assert parsed.kind == kind and parsed(result) == metric(result)
    # the other signal (the time itself): its own values
    other = {"final": 3.0, "initial": 1.0, "max": 3.0, "min": 1.0, "absmax": 3.0, "ptp": 2.0}
    # mean of t over [1, 3]: 2
    other["mean"] = 2.0
    assert metrics.signal(kind, "mass.v")(result) == pytest.approx(other[kind], rel=1e-14)


def test_mean_of_one_instant_or_a_zero_span_is_the_value():
    from contactfmu.study.metrics import KINDS

    mean = KINDS["mean"][0]
    assert mean(np.array([2.0]), np.array([7.0])) == 7.0
    assert mean(np.array([2.0, 2.0]), np.array([7.0, 9.0])) == 7.0
    # two points: the trapezoid is the average of the two, whatever the span
    assert mean(np.array([0.0, 5.0]), np.array([1.0, 2.0])) == pytest.approx(1.5)


# ---- execution -------------------------------------------------------------------------------


def test_cluster_rows_equal_the_serial_runs_bit_for_bit_and_an_fmu_error_is_a_row(
    cluster, fmus, tmp_path
):
    """ElastoGap c = -1 is refused by the FMU: its rows say so, the other runs go on. The restitution
    at c = 1e5, d = 20 is the closed form of the MSL law, 0.909008 (at 1e-4 s: +1.4e-4)."""
    runs = grid({"gap.c": [1e4, 1e5, -1.0], "gap.d": [5.0, 20.0]})
    study = Study(
        impact,
        runs,
        ["final:mass.v", "min:mass.s", Metric("rebound", rebound, ["mass.v"])],
        stop_time=0.03,
        fmus=fmus,
        options={"step": 1e-4},
    )
    serial = study.run(tmp_path / "serial.csv", workers=0, trajectories=True)
    parallel = study.run(tmp_path / "cluster.csv", client=cluster, trajectories=True)
    assert list(parallel["run_id"]) == [r.run_id for r in runs] == list(serial["run_id"])
    bad = parallel["gap.c"] == -1.0
    assert list(parallel["status"]) == ["ok"] * 4 + ["error"] * 2
    assert all(
        "Invalid parameter c = -1.0 N/m: valid range [0.0, inf)" in e
        for e in parallel.loc[bad, "error"]
    )
    assert parallel.loc[bad, "rebound"].isna().all() and (parallel.loc[~bad, "error"] == "").all()
    metrics = ["final(mass.v)", "min(mass.s)", "rebound"]
    assert np.array_equal(parallel[metrics].to_numpy(), serial[metrics].to_numpy(), equal_nan=True)
    assert len(set(parallel["worker"])) == 2 and set(parallel["worker"]).isdisjoint(
        serial["worker"]
    )
    for run_id in parallel.loc[~bad, "run_id"]:
        a, b = (read_csv(tmp_path / f"{n}.runs" / f"{run_id}.csv") for n in ("serial", "cluster"))
        assert a.names == b.names and np.array_equal(a.values, b.values)
    e = parallel.loc[(parallel["gap.c"] == 1e5) & (parallel["gap.d"] == 20.0), "rebound"].item()
    assert e == pytest.approx(closed_form_restitution(1.0, 1e5, 20.0)[0], rel=1e-3)
    # the file holds what was returned, exactly
    back = read_table(tmp_path / "cluster.csv")
    assert np.array_equal(back[metrics].to_numpy(), parallel[metrics].to_numpy(), equal_nan=True)


def test_a_killed_worker_loses_no_run(cluster, fmus, tmp_path):
    """The run with v_start = -1.3 kills its worker process (SIGKILL) the first time it runs: dask
    reschedules it and the queued runs of that worker; every run is one row, each executed once but
    the killed one twice."""
    speeds = [-0.6, -0.7, -0.8, -0.9, -1.0, -1.1, -1.2, -1.3, -1.4, -1.5]
    log, marker = tmp_path / "executions.log", tmp_path / "killed"
    study = Study(
        impact,
        grid({"mass.v_start": speeds}),
        [Metric("v0", Logged(log, (-1.3, str(marker))), ["mass.v"])],
        stop_time=0.02,
        fmus=fmus,
        options={"step": 1e-4},
    )
    table = study.run(tmp_path / "killed.csv", client=cluster)
    killed_pid = marker.read_text()
    assert list(table["mass.v_start"]) == speeds and table["run_id"].is_unique
    assert list(table["status"]) == ["ok"] * len(speeds)
    assert list(table["v0"]) == speeds
    done = executions(log)
    assert sorted(done) == sorted(speeds + [-1.3])
    assert table.loc[table["mass.v_start"] == -1.3, "worker"].item().split("/")[1] != killed_pid
    assert len(pd.read_csv(tmp_path / "killed.csv")) == len(speeds)


def test_a_resumed_study_repeats_no_run(cluster, fmus, tmp_path):
    """Runs in the output file (ok or error) are not executed again; "lost" ones and new ones are;
    another study (here: another stop time) is refused on the same file."""
    log, out = tmp_path / "executions.log", tmp_path / "study.csv"

    def study(speeds, stop=0.01):
        return Study(
            impact,
            grid({"mass.v_start": speeds}),
            [Metric("v0", Logged(log), ["mass.v"])],
            stop_time=stop,
            fmus=fmus,
            options={"step": 1e-4},
        )

    first = study([-1.0, -2.0, -3.0, -4.0]).run(out, client=cluster)
    assert sorted(executions(log)) == [-4.0, -3.0, -2.0, -1.0]
    again = study([-1.0, -2.0, -3.0, -4.0]).run(out, client=cluster)
    assert len(executions(log)) == 4
    assert again.equals(first)
    # an interrupted study: two rows written, one of them lost on the cluster
    lines = out.read_text().splitlines(keepends=True)
    lost = lines[2].replace(",ok,", ",lost,")
    assert lost != lines[2]
    out.write_text(lines[0] + lines[1] + lost)
    third = study([-1.0, -2.0, -3.0, -4.0]).run(out, scheduler=cluster.scheduler_info()["address"])
    assert sorted(executions(log)[4:]) == [-4.0, -3.0, -2.0]
    assert third.drop(columns=["wall_time", "worker"]).equals(
        first.drop(columns=["wall_time", "worker"])
    )
    more = study([-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]).run(out, client=cluster)
    assert (
        sorted(executions(log)[7:]) == [-6.0, -5.0]
        and len(more) == 6
        and len(pd.read_csv(out)) == 6
    )
    with pytest.raises(StudyError, match="holds another study \\(stop_time differs"):
        study([-1.0], stop=0.02).run(out, client=cluster)
    assert len(executions(log)) == 9


def test_workers_without_the_fmus_get_them_from_the_client(cluster, fmu_dir, tmp_path):
    """The FMUs of the study exist only in a folder that is gone when the runs start (copies with
    their own content: a zip comment): the workers write the bytes they received once into their
    local directory and run them; the results equal those of the original FMUs."""

    def cached(dask_worker):
        root = os.path.join(dask_worker.local_directory, "contactfmu-fmus")
        return sorted(
            os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
        )

    folder = tmp_path / "only_here"
    folder.mkdir()
    own = {}
    for name in ("Fixed", "ElastoGap", "Mass"):
        shutil.copy(fmu_dir / f"{name}.fmu", folder / f"{name}.fmu")
        with zipfile.ZipFile(folder / f"{name}.fmu", "a") as z:
            z.comment = f"study test {tmp_path.name}".encode()
        own[name] = folder / f"{name}.fmu"
    runs = grid({"gap.c": [3e4, 3e5], "gap.d": [10.0, 30.0]})
    moved = Study(impact, runs, ["final:mass.v"], stop_time=0.02, fmus=own, options={"step": 1e-4})
    shas = {f.name: f.sha for f in moved.files}
    shutil.rmtree(folder)
    table = moved.run(scheduler=cluster.scheduler_info()["address"])
    assert list(table["status"]) == ["ok"] * 4, table["error"].tolist()
    expected = {f"{sha}/{name}.fmu" for name, sha in shas.items()}
    pids, caches = cluster.run(os.getpid), cluster.run(cached)
    ran = [
        address
        for address, pid in pids.items()
        if f"{pid}" in {w.split("/")[1] for w in table["worker"]}
    ]
    assert ran
    for address in ran:  # one copy of each FMU per worker that ran the study's runs
        files = [f for f in caches[address] if f.split("/")[0] in shas.values()]
        assert sorted(files) == sorted(expected)
    original = {n: fmu_dir / f"{n}.fmu" for n in own}
    serial = Study(
        impact, runs, ["final:mass.v"], stop_time=0.02, fmus=original, options={"step": 1e-4}
    ).run(workers=0)
    assert np.array_equal(table["final(mass.v)"].to_numpy(), serial["final(mass.v)"].to_numpy())


def test_parquet_table_and_its_resume(fmus, tmp_path):
    log = tmp_path / "executions.log"
    study = Study(
        impact,
        grid({"mass.v_start": [-1.0, -2.0]}),
        [Metric("v0", Logged(log), ["mass.v"])],
        stop_time=0.005,
        fmus=fmus,
        options={"step": 1e-4},
    )
    table = study.run(tmp_path / "t.parquet", workers=0)
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert back.equals(table) and list(back["v0"]) == [-1.0, -2.0]
    assert not (tmp_path / "t.parquet.partial.csv").exists()
    assert study.run(tmp_path / "t.parquet", workers=0).equals(table) and len(executions(log)) == 2


class Failing(Logged):
    """Logged, but fails (raises) for the runs with the start speeds in `fail`: their rows are errors."""

    def __init__(self, log, fail):
        super().__init__(log)
        self.fail = tuple(fail)

    def __call__(self, result):
        v0 = super().__call__(result)
        if v0 in self.fail:
            raise ValueError(f"no rebound at {v0!r} m/s")
        return v0


def test_a_resume_keeps_error_rows_and_runs_lost_and_missing_ones_again(fmus, tmp_path):
    """docs/studies.md, Resume: rows with status ok or error are kept (an error row is the run's
    result, its message with it: the run is not executed again), lost rows and runs missing from
    the file are run again. Serial (workers=0): every execution is logged by the metric."""
    log, out = tmp_path / "executions.log", tmp_path / "study.csv"
    speeds = [-1.0, -2.0, -3.0, -4.0]

    def study(fail):
        return Study(
            impact,
            grid({"mass.v_start": speeds}),
            [Metric("v0", Failing(log, fail), ["mass.v"])],
            stop_time=0.005,
            fmus=fmus,
            options={"step": 1e-4},
        )

    first = study([-2.0]).run(out, workers=0)
    assert list(first["status"]) == ["ok", "error", "ok", "ok"]
    assert first["error"][1] == "metric v0: ValueError: no rebound at -2.0 m/s"
    assert np.isnan(first["v0"][1]) and sorted(executions(log)) == sorted(speeds)
    # resumed with a metric that would not fail any more: the error row is kept, nothing runs
    again = study([]).run(out, workers=0)
    assert len(executions(log)) == 4
    assert list(again["status"]) == ["ok", "error", "ok", "ok"]
    assert again["error"][1] == first["error"][1]
    assert again.drop(columns=["wall_time"]).equals(first.drop(columns=["wall_time"]))
    # an interrupted study: the error row kept, the row of -3.0 lost, that of -4.0 never written
    lines = out.read_text().splitlines(keepends=True)
    assert ",error," in lines[2]
    lost = lines[3].replace(",ok,", ",lost,")
    out.write_text(lines[0] + lines[1] + lines[2] + lost)
    third = study([]).run(out, workers=0)
    assert sorted(executions(log)[4:]) == [-4.0, -3.0]  # not -2.0 (error), not -1.0 (ok)
    assert list(third["status"]) == ["ok", "error", "ok", "ok"]
    assert list(third["v0"][[0, 2, 3]]) == [-1.0, -3.0, -4.0] and np.isnan(third["v0"][1])
    assert third["error"][1] == "metric v0: ValueError: no rebound at -2.0 m/s"
    assert len(read_table(out)) == 4 and list(read_table(out)["status"]).count("error") == 1
    # resume=False starts afresh: the error run runs again (and passes now)
    fresh = study([]).run(out, workers=0, resume=False)
    assert list(fresh["status"]) == ["ok"] * 4 and len(executions(log)) == 10


# ---- command line ----------------------------------------------------------------------------


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "contactfmu", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_command_line_study_writes_table_and_heat_map(cluster, fmu_dir, tmp_path):
    """contactfmu study on the restitution example's model, a 2 x 2 grid on the test's cluster: the
    table's rows equal the same study run serially through the API, bit for bit."""
    args = [
        "--grid",
        "gap.c=1e4:1e5:2:log",
        "--grid",
        "gap.d=2,20",
        "--metric",
        "final:mass.v",
        "--metric",
        "max:gap.lossPower",
        "--stop",
        "0.06",
        "--step",
        "1e-4",
        "--fmus",
        fmu_dir,
    ]
    run = cli(
        "study",
        "study_elastogap_restitution",
        *args,
        "--scheduler",
        cluster.scheduler_info()["address"],
        "--out",
        tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "study_elastogap_restitution_study: 4 runs (4 ok)" in run.stdout
    table = read_table(tmp_path / "study_elastogap_restitution_study.csv")
    png = (tmp_path / "study_elastogap_restitution_study.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000
    api = Study(
        "study_elastogap_restitution",
        grid({"gap.c": [1e4, 1e5], "gap.d": [2.0, 20.0]}),
        ["final:mass.v", "max:gap.lossPower"],
        stop_time=0.06,
        fmus=fmu_dir,
        options={"step": 1e-4},
    )
    serial = api.run(workers=0)
    assert list(table["run_id"]) == list(serial["run_id"])
    cols = ["final(mass.v)", "max(gap.lossPower)"]
    assert np.array_equal(table[cols].to_numpy(), serial[cols].to_numpy())
    # rebound of the 1 kg mass against the closed form of the MSL law, within 1e-3 (1.4e-4 at 1e-4 s)
    for (c, d), v in zip(zip(table["gap.c"], table["gap.d"]), table["final(mass.v)"]):
        assert v == pytest.approx(closed_form_restitution(1.0, c, d)[0], rel=1e-3)


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give either --grid NAME=VALUES"),
        (["--grid", "gap.c=1:2:2", "--metric", "final:mass.v"], "--stop T"),
        (
            ["--grid", "gap.k=1:2:2", "--metric", "final:mass.v", "--stop", "1"],
            "has no variable 'k'; its parameters",
        ),
        (
            ["--samples", "4", "--param", "gap.c=1:2", "--metric", "last:mass.v", "--stop", "1"],
            "expected KIND:instance.variable with KIND one of final, initial",
        ),
    ],
)
def test_command_line_names_bad_input(args, message, fmu_dir):
    run = cli("study", "study_elastogap_restitution", *args, "--fmus", fmu_dir)
    assert run.returncode == 2 and "contactfmu: error: " in run.stderr and message in run.stderr, (
        run.stderr
    )


def test_docs_study_snippet_runs_and_writes_into_an_ignored_folder(fmu_dir, tmp_path):
    """The study snippet of docs/studies.md ("A study in Python"), run where a user runs it (the
    repository root, FMUs in fmus/): 6 runs on its own LocalCluster of 2 workers, rebounds as the
    closed form of the MSL law."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "studies.md").read_text()
    section = page[page.index("## A study in Python") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    written = re.findall(r"run\(\"([^\"]+)\"", code)
    assert (
        written
        and subprocess.run(["git", "check-ignore", "-q", written[0]], cwd=root).returncode == 0
    )
    shutil.copytree(fmu_dir, tmp_path / "fmus")
    (tmp_path / "snippet.py").write_text(code)
    proc = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    table = read_table(tmp_path / written[0])
    assert list(table["status"]) == ["ok"] * 6 and table["worker"].nunique() == 2
    for c, d, e in zip(
        table["gap.c"], table["gap.d"], table["rebound"]
    ):  # measured up to +1.4e-3 at c = 1e6
        assert e == pytest.approx(closed_form_restitution(1.0, c, d)[0], rel=3e-3)


def test_a_run_whose_workers_keep_dying_is_lost_and_run_again_on_resume(fmus, tmp_path):
    """With no failure allowed (distributed.scheduler.allowed-failures = 0) the run that kills its
    worker is "lost" (KilledWorker), the others are ok; a resumed study runs only that one again."""
    import dask
    from distributed import Client, LocalCluster

    log, marker, out = tmp_path / "executions.log", tmp_path / "killed", tmp_path / "lost.csv"
    study = Study(
        impact,
        grid({"mass.v_start": [-1.0, -2.0, -3.0]}),
        [Metric("v0", Logged(log, (-2.0, str(marker))), ["mass.v"])],
        stop_time=0.01,
        fmus=fmus,
        options={"step": 1e-4},
    )
    folder = str(tmp_path / "dask")
    with dask.config.set(
        {"distributed.scheduler.allowed-failures": 0, "temporary-directory": folder}
    ):
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address="127.0.0.1:0",
                silence_logs=logging.CRITICAL,
                local_directory=folder,
            ) as c,
            Client(c) as client,
        ):
            first = study.run(out, client=client)
            assert list(first["status"]) == ["ok", "lost", "ok"]
            assert "KilledWorker" in first["error"][1] and np.isnan(first["v0"][1])
            again = study.run(out, client=client)
    assert list(again["status"]) == ["ok"] * 3 and list(again["v0"]) == [-1.0, -2.0, -3.0]
    assert sorted(executions(log)) == [-3.0, -2.0, -2.0, -1.0]


def test_tube_metric_is_the_verdict_of_the_msl_comparison(fmus):
    """tube(reference): 1 for the run that is the reference's own model (c = 1e5), 0 for a stiffer
    contact (c = 2e5: an earlier, higher rebound, far outside the 2e-3 tube)."""
    from contactfmu.study import tube

    system = impact({n: str(p) for n, p in fmus.items()})
    reference = system.simulate(0.02, step=1e-4, outputs=["mass.s", "mass.v"])
    study = Study(
        impact,
        grid({"gap.c": [1e5, 2e5]}),
        [tube(reference, ["mass.s", "mass.v"])],
        stop_time=0.02,
        fmus=fmus,
        options={"step": 1e-4},
    )
    assert list(study.run(workers=0)["tube"]) == [1.0, 0.0]
    with pytest.raises(StudyError, match="mass.a not in the reference"):
        tube(reference, ["mass.a"])
