"""Running a study's runs on dask.distributed.

One task per run (``execute``); a worker process that dies has its tasks rescheduled by dask on the
others (its nanny starts a new one), and the client takes each run's row exactly once, when its task
finishes (a run whose workers died ``distributed.scheduler.allowed-failures`` times, 3 by default,
becomes a row with status "lost"). The FMUs travel in a worker plugin: the scheduler keeps it and
hands it to every worker that joins, also one that replaces a dead worker, and its setup provides the
files once per worker process (execute.provide).
"""

import logging
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import dask
from distributed import Client, LocalCluster, as_completed
from distributed.diagnostics.plugin import WorkerPlugin

from ..cosim.instances import extract_into
from .execute import execute, provide
from .runs import StudyError


class FmuPlugin(WorkerPlugin):
    """Gives every worker the study's FMU files (execute.FmuFile with their bytes)."""

    def __init__(self, files):
        self.files = list(files)

    def setup(self, worker):
        # the worker's own folder, which dask removes when the worker closes (a worker stopped
        # by its nanny runs no atexit clean-up)
        extract_into(Path(worker.local_directory) / "contactfmu-unzip")
        provide(self.files, Path(worker.local_directory) / "contactfmu-fmus")


def local_cluster(workers, local_directory=None):
    """A LocalCluster of `workers` worker processes with one thread each (one FMU set per process); its
    scheduler's HTTP server (dashboard) on a free port of 127.0.0.1, never a fixed or outside one;
    the workers' folders and dask's lock files in local_directory (default: dask's,
    <tmp>/dask-scratch-space)."""
    where = {} if local_directory is None else {"temporary-directory": str(local_directory)}
    with dask.config.set(where):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
            local_directory=local_directory,
        )


def run_all(job, runs, files, on_row, workers=None, scheduler=None, client=None):
    """Execute `runs` on a cluster, calling on_row(run, row) as each finishes (in completion order).
    client: an existing distributed.Client; scheduler: the address of a running scheduler; else a
    LocalCluster of `workers` processes (default: one per CPU, at most one per run), closed at the end."""
    own_cluster = own_client = own_folder = None
    try:
        if client is None:
            if scheduler is not None:
                try:
                    client = own_client = Client(scheduler)
                except (OSError, TimeoutError) as exc:
                    raise StudyError(
                        f"cannot connect to the dask scheduler at {scheduler!r}: {exc}"
                    ) from None
            else:
                n = max(1, min(workers or os.cpu_count() or 1, len(runs)))
                # the workers' folders (and dask's lock files) in a folder removed at the end
                own_folder = tempfile.mkdtemp(prefix="contactfmu_dask_")
                own_cluster = local_cluster(n, own_folder)
                client = own_client = Client(own_cluster)
        plugin = f"contactfmu-fmus-{uuid.uuid4().hex[:12]}"
        client.register_plugin(FmuPlugin(files), name=plugin)
        try:
            token = uuid.uuid4().hex[:8]
            futures = {
                client.submit(
                    execute, job, run, key=f"contactfmu-run-{run.run_id}-{token}", pure=False
                ): run
                for run in runs
            }
            try:
                for future in as_completed(futures):
                    run = futures[future]
                    if future.status == "finished":
                        row = future.result()
                    else:
                        exc = future.exception()
                        row = {
                            "run_id": run.run_id,
                            "status": "lost",
                            "worker": "",
                            "error": f"{type(exc).__name__}: {exc}",
                        }
                    future.release()
                    on_row(run, row)
            except BaseException:
                client.cancel(list(futures))
                raise
        finally:
            try:
                client.unregister_worker_plugin(plugin)
            except Exception:
                pass
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
        if own_folder is not None:
            shutil.rmtree(own_folder, ignore_errors=True)
