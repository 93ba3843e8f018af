"""pytest plugin for the mutation runs (mutmut, mutation/run.py): loaded with -p mutation.pytest_plugin.

* Deselects the tests that need the built FMUs (fixture ``fmu_dir``): a build takes 20-60 s and
  bundles the package into the FMUs, so a mutant would cost a full rebuild; the physics is killed
  by the tests that call src/contactfmu/physics directly.
* Keeps mutmut's own process alive: tests/conftest.py ends a test process with os._exit after
  pytest reports (a guard against a pythonfmu shutdown crash, irrelevant without FMUs); mutmut
  runs pytest inside its own process, so that exit is cancelled here.
* Loosens the CPU-time bounds some tests assert (time.process_time() seen 20 times slower):
  mutmut's trampolines make every call of the mutated code several times slower; the values
  those tests check are unchanged, and a mutant that makes a bounded loop run away is still
  caught by mutmut's own CPU-time limit (reported as a timeout).
"""
import time

import pytest

SLOWDOWN = 20.0


@pytest.fixture(autouse=True)
def _slow_clock(monkeypatch):
    real = time.process_time
    monkeypatch.setattr(time, "process_time", lambda: real() / SLOWDOWN)


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        (drop if "fmu_dir" in getattr(item, "fixturenames", ()) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    for plugin in session.config.pluginmanager.get_plugins():
        status = getattr(plugin, "_exit_status", None)
        if isinstance(status, list) and str(getattr(plugin, "__file__", "")).endswith("conftest.py"):
            status.clear()
