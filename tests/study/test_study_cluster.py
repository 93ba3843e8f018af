"""Running a study's runs on a cluster (study/cluster.py) against a stand-in dask client, without
processes: one task per run with a key of its own, the rows taken in completion order, a lost run's
row, the FMU plugin registered and unregistered, the runs cancelled when taking rows fails, the
cluster's size, options and folder (dask's temporary directory while it starts, removed at the
end), the client and cluster closed when the study made them, and the error naming a scheduler that
cannot be reached. The real cluster is run by tests/study/test_study.py."""

import importlib
import logging
import shutil
from pathlib import Path
from types import SimpleNamespace

import dask
import pytest

from contactfmu.study.runs import StudyError

cluster = importlib.import_module("contactfmu.study.cluster")


class Future:
    def __init__(self, fn, args, key, result=None, exc=None):
        self.fn, self.args, self.key = fn, args, key
        self.status = "finished" if exc is None else "error"
        self._result, self._exc = result, exc
        self.released = False

    def result(self):
        return self._result

    def exception(self):
        return self._exc

    def release(self):
        self.released = True


class Client:
    """Stands for distributed.Client: submit returns a Future finished with outcome(run)."""

    def __init__(self, outcome, fail_unregister=False):
        self.outcome, self.fail_unregister = outcome, fail_unregister
        self.submitted, self.plugins, self.unregistered, self.cancelled = [], {}, [], None
        self.closed = False

    def submit(self, fn, job, run, key, pure):
        assert pure is False
        result, exc = self.outcome(run)
        f = Future(fn, (job, run), key, result, exc)
        self.submitted.append(f)
        return f

    def register_plugin(self, plugin, name):
        self.plugins[name] = plugin

    def unregister_worker_plugin(self, name):
        self.unregistered.append(name)
        if self.fail_unregister:
            raise RuntimeError("scheduler gone")

    def cancel(self, futures):
        self.cancelled = futures

    def close(self):
        self.closed = True


@pytest.fixture
def completion(monkeypatch):
    """as_completed: the futures in reverse order of submission."""
    monkeypatch.setattr(cluster, "as_completed", lambda futures: list(futures)[::-1])


def _runs(n):
    return [SimpleNamespace(run_id=k) for k in range(n)]


def test_one_task_per_run_rows_taken_in_completion_order(completion):
    client = Client(lambda run: ({"run_id": run.run_id, "status": "ok"}, None))
    rows = []
    cluster.run_all(
        "job", _runs(3), ["files"], lambda run, row: rows.append((run.run_id, row)), client=client
    )
    assert rows == [(k, {"run_id": k, "status": "ok"}) for k in (2, 1, 0)]
    assert [f.fn for f in client.submitted] == [cluster.execute] * 3
    assert [f.args[0] for f in client.submitted] == ["job"] * 3
    keys = [f.key for f in client.submitted]
    token = keys[0].rsplit("-", 1)[1]
    assert keys == [f"contactfmu-run-{k}-{token}" for k in range(3)] and len(token) == 8
    assert all(f.released for f in client.submitted)
    ((name, plugin),) = client.plugins.items()
    assert name.startswith("contactfmu-fmus-") and len(name) == len("contactfmu-fmus-") + 12
    assert isinstance(plugin, cluster.FmuPlugin) and plugin.files == ["files"]
    assert client.unregistered == [name]
    assert client.cancelled is None and not client.closed  # the caller's client stays open
    other = Client(lambda run: ({}, None))
    cluster.run_all("job", _runs(1), [], lambda run, row: None, client=other)
    assert other.submitted[0].key.rsplit("-", 1)[1] != token  # a token per study


def test_a_run_whose_task_failed_is_a_lost_row(completion):
    client = Client(
        lambda run: (
            (None, KeyError("worker died")) if run.run_id == 1 else ({"ok": run.run_id}, None)
        )
    )
    rows = {}
    cluster.run_all(
        "job", _runs(2), [], lambda run, row: rows.__setitem__(run.run_id, row), client=client
    )
    assert rows == {
        0: {"ok": 0},
        1: {"run_id": 1, "status": "lost", "worker": "", "error": "KeyError: 'worker died'"},
    }


def test_the_runs_are_cancelled_when_taking_a_row_fails_and_the_plugin_removed(completion):
    client = Client(lambda run: ({}, None), fail_unregister=True)

    def on_row(run, row):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cluster.run_all("job", _runs(2), [], on_row, client=client)
    assert client.cancelled == client.submitted
    assert len(client.unregistered) == 1  # its failure is not the study's


def test_a_local_cluster_of_one_worker_per_cpu_at_most_one_per_run(monkeypatch, completion):
    made = []

    class Cluster:
        def __init__(self, **kwargs):
            self.kwargs, self.closed = kwargs, False
            made.append(self)

        def close(self):
            self.closed = True

    clients = []

    def client_of(arg):
        c = Client(lambda run: ({}, None))
        c.arg = arg
        clients.append(c)
        return c

    monkeypatch.setattr(cluster, "LocalCluster", Cluster)
    monkeypatch.setattr(cluster, "Client", client_of)
    monkeypatch.setattr(cluster.os, "cpu_count", lambda: 3)
    for workers, runs, n in [
        (None, 5, 3),
        (None, 2, 2),
        (4, 10, 4),
        (8, 2, 2),
        (None, 0, 1),
        (0, 5, 3),
    ]:
        cluster.run_all("job", _runs(runs), [], lambda run, row: None, workers=workers)
        folder = made[-1].kwargs.pop("local_directory")
        assert made[-1].kwargs == {
            "n_workers": n,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": "127.0.0.1:0",
            "silence_logs": logging.ERROR,
        }
        # the workers' folders in one of the temporary directory's, removed at the end
        assert Path(folder).name.startswith("contactfmu_dask_") and not Path(folder).exists()
        assert made[-1].closed and clients[-1].closed and clients[-1].arg is made[-1]
    monkeypatch.setattr(cluster.os, "cpu_count", lambda: None)
    cluster.run_all("job", _runs(4), [], lambda run, row: None)
    assert made[-1].kwargs["n_workers"] == 1


def test_dask_keeps_its_lock_files_in_the_clusters_folder_while_it_starts(monkeypatch):
    """local_cluster(n, folder): dask's temporary-directory (where it puts its lock files) is the
    folder while the LocalCluster is made, and dask's own setting again afterwards; without a
    folder dask's setting is left as it is."""
    seen = []

    class Cluster:
        def __init__(self, **kwargs):
            seen.append((dask.config.get("temporary-directory", None), kwargs["local_directory"]))

    monkeypatch.setattr(cluster, "LocalCluster", Cluster)
    before = dask.config.get("temporary-directory", None)
    cluster.local_cluster(2, "/scratch/a")
    cluster.local_cluster(2, Path("/scratch/b"))
    cluster.local_cluster(2)
    assert seen == [
        ("/scratch/a", "/scratch/a"),
        ("/scratch/b", Path("/scratch/b")),
        (before, None),
    ]
    assert dask.config.get("temporary-directory", None) == before


def test_the_clusters_folder_gone_before_the_end_is_no_error(monkeypatch, completion):
    """The folder of the study's own cluster is removed at the end; that it is gone already (or
    cannot be removed) does not fail the study, whose rows are all taken."""

    class Cluster:
        def __init__(self, **kwargs):
            self.folder = kwargs["local_directory"]

        def close(self):
            shutil.rmtree(self.folder)

    monkeypatch.setattr(cluster, "LocalCluster", Cluster)
    monkeypatch.setattr(cluster, "Client", lambda arg: Client(lambda run: ({"ok": 1}, None)))
    rows = []
    cluster.run_all("job", _runs(2), [], lambda run, row: rows.append(row), workers=1)
    assert rows == [{"ok": 1}, {"ok": 1}]


def test_a_scheduler_address_is_connected_to_and_the_client_closed(monkeypatch, completion):
    clients = []

    def client_of(arg):
        c = Client(lambda run: ({}, None))
        c.arg = arg
        clients.append(c)
        return c

    monkeypatch.setattr(cluster, "Client", client_of)
    monkeypatch.setattr(cluster, "LocalCluster", None)  # not made
    cluster.run_all("job", _runs(1), [], lambda run, row: None, scheduler="tcp://h:8786")
    (c,) = clients
    assert c.arg == "tcp://h:8786" and c.closed


@pytest.mark.parametrize("exc", [OSError("refused"), TimeoutError("timed out")])
def test_a_scheduler_that_cannot_be_reached_is_named(monkeypatch, exc):
    def client_of(arg):
        raise exc

    monkeypatch.setattr(cluster, "Client", client_of)
    with pytest.raises(StudyError) as e:
        cluster.run_all("job", _runs(1), [], lambda run, row: None, scheduler="tcp://h:1")
    assert str(e.value) == f"cannot connect to the dask scheduler at 'tcp://h:1': {exc}"
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_the_plugin_provides_the_files_and_unzips_in_the_workers_directory(monkeypatch):
    """The FMUs and their unzip directories in the worker's folder, which dask removes when the
    worker closes (a worker stopped by its nanny runs no atexit clean-up)."""
    seen, unzip = [], []
    monkeypatch.setattr(cluster, "provide", lambda files, cache: seen.append((files, cache)))
    monkeypatch.setattr(cluster, "extract_into", unzip.append)
    plugin = cluster.FmuPlugin(iter(["a", "b"]))
    assert plugin.files == ["a", "b"]
    plugin.setup(SimpleNamespace(local_directory="/w/dask"))
    assert seen == [(["a", "b"], Path("/w/dask") / "contactfmu-fmus")]
    assert unzip == [Path("/w/dask") / "contactfmu-unzip"]
