"""pytest plugin for the mutation runs (mutmut, mutation/run.py): loaded with -p mutation.pytest_plugin.

* Deselects the tests that need the built FMUs (fixture ``fmu_dir``): a build takes 20-60 s and
  bundles the package into the FMUs, so a mutant would cost a full rebuild; the physics is killed
  by the tests that call the physics (mechanics/, components/*/law.py) directly.
* Keeps mutmut's own process alive: tests/conftest.py ends a test process with os._exit after
  pytest reports (a guard against a pythonfmu shutdown crash, irrelevant without FMUs); mutmut
  runs pytest inside its own process, so that exit is cancelled here.
* Loosens the CPU-time bounds some tests assert (time.process_time() seen 20 times slower):
  mutmut's trampolines make every call of the mutated code several times slower; the values
  those tests check are unchanged, and a mutant that makes a bounded loop run away is still
  caught by mutmut's own CPU-time limit (reported as a timeout).
* Deselects the few slow rattle tests listed in SLOW (each 1-10 s under mutmut's
  instrumentation, together 35 s of the 40 s the selection takes per mutant of the mechanics modules'
  Piece/first_crossing): with them a full run takes hours on two cores. The behaviours they
  check (rattle envelopes) are covered by faster tests of the same functions; drop an entry to
  run it anyway.
* Runs only the module's own unit tests against the mutants named in UNIT_TESTS (a study's
  metrics: tests/study/test_study_metrics.py, not the studies of tests/study/test_study.py that also call them;
  the adaptive master's tuning, defaults and error estimate: tests/cosim/test_adaptive_control.py,
  not every adaptive run of the FMU tests; Result and its CSV, the driven inputs, a study's runs and
  its table: tests/cosim/test_results.py, test_manipulators.py, tests/study/test_study_runs.py,
  test_study_table.py, not every run or study that records, drives or writes them; likewise the
  observers, the system, the fixed-step algorithms, a study's plot, the execution of one run and
  the cluster: tests/cosim/test_observers.py, test_system.py, test_algorithms.py,
  tests/study/test_study_plot.py, test_study_execute.py, test_study_cluster.py; the Study class of
  study/__init__.py: tests/study/test_study_core.py).
* Drops the variable table every slave class caches (fmi.slave.Slave.variable_table: the table,
  the value reference maps, the getters' and setters' plans) before each test: mutmut runs a
  mutant's tests in a process forked from its own, which has run the selection once already, so
  every slave class used there has its table cached, and a mutant of the code that builds the
  table (or a plan) would never run. The first instance a test makes builds it anew.
* With CONTACTFMU_MUTATION_FMUS set (the --cosim and --study profiles of mutation/run.py: FMUs
  built once from the unmutated source, into that folder), the tests that need the FMUs are kept,
  and the build of the session fixture ``fmu_dir`` copies those FMUs instead of building them: the
  master's and the studies' code is not in the FMUs, a mutant of it changes nothing there.
"""

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

SLOWDOWN = 20.0
SLOW = (
    "tests/components/TranslationalHardstop/test_translational_hardstop_law.py::"
    "test_rattle_under_held_acceleration_follows_the_envelope",
    "tests/components/TranslationalHardstop/test_translational_hardstop_law.py::test_rattle_of_43000_changes_is_summed_quickly",
    "tests/components/TranslationalHardstop/test_translational_hardstop_law.py::"
    "test_rattle_cycles_summed_agree_with_event_by_event_reference[-0.1-0.0-0.5-times1-",
    (
        "tests/components/EndStop/test_endstop_bounces.py::"
        "test_endstop_long_damped_rigid_rattle_envelope_keeps_the_speed_and_momentum"
    ),
)


@pytest.fixture(autouse=True)
def _slow_clock(monkeypatch):
    real = time.process_time
    monkeypatch.setattr(time, "process_time", lambda: real() / SLOWDOWN)


@pytest.fixture(autouse=True)
def _fresh_slave_tables():
    """Every slave class (the package's, the tests' probes) builds its variable table anew in the
    test (see the module's docstring): its cache, _cached_table, is dropped."""
    module = sys.modules.get("contactfmu.fmi.slave")
    classes = [module.Slave] if module is not None else []
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if "_cached_table" in cls.__dict__:
            del cls._cached_table


PREBUILT = os.environ.get("CONTACTFMU_MUTATION_FMUS")
# tests that run the documentation's snippets or the examples from the repository (README.md, docs/,
# examples/), which mutmut's copy (mutants/) does not hold; they check those, not the mutated code
REPOSITORY = (
    "tests/cosim/test_system.py::test_readme_master_snippet_runs_and_writes_into_an_ignored_folder",
    "tests/study/test_study.py::test_docs_study_snippet_runs_and_writes_into_an_ignored_folder",
    "tests/study/test_study.py::test_command_line_study_writes_table_and_heat_map",  # examples/
)


def _copy(folder, out_dir, names):
    """{name: (path, [])} of the FMUs prebuilt in folder, copied into out_dir."""
    results = {}
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        path = os.path.join(out_dir, f"{name}.fmu")
        shutil.copyfile(os.path.join(folder, f"{name}.fmu"), path)
        results[name] = (Path(path), [])
    return results


def _copy_prebuilt(out_dir="fmus", names=None, progress=print, force=True):
    """contactfmu.build.build_all's result for the FMUs prebuilt in PREBUILT: copied, not built."""
    from contactfmu import components

    return _copy(PREBUILT, out_dir, names or components.NAMES)


def _copy_prebuilt3(out_dir, names=None, progress=print):
    """contactfmu.build.build_all3's result for the FMI 3.0 FMUs prebuilt in PREBUILT/fmi3."""
    from contactfmu import build

    return _copy(os.path.join(PREBUILT, "fmi3"), out_dir, names or build.FMI3_NAMES)


def pytest_configure(config):
    if PREBUILT:
        import contactfmu.build

        contactfmu.build.build_all = _copy_prebuilt
        contactfmu.build.build_all3 = _copy_prebuilt3


# mutants (by name prefix) checked by their module's own fast unit tests only: mutmut would also
# run every test that calls the mutated function, for a study's metric the serial and cluster
# studies of tests/study/test_study.py (about a minute per mutant); the unit tests check each metric
# against hand-computed values
# the adaptive master's tuning, its defaults and its error estimate are formulas of its documentation,
# checked by hand-computed values in tests/cosim/test_adaptive_control.py; every adaptive run of the
# FMU tests also calls them (several seconds to a minute per mutant)
ADAPTIVE = "contactfmu.cosim.algorithms.adaptive.x\u01c1"
UNIT_TESTS = {
    "contactfmu.study.metrics.": ("tests/study/test_study_metrics.py",),
    # Result and its CSV: every run of the FMU tests records one (and many write and read CSV files)
    "contactfmu.cosim.results.": ("tests/cosim/test_results.py",),
    # the driven inputs: every run with inputs=... (tests/cosim/test_execution.py) also calls them
    "contactfmu.cosim.manipulators.": ("tests/cosim/test_manipulators.py",),
    # the runs and the table of a study: every study of tests/study/test_study.py also makes and writes them
    "contactfmu.study.runs.": ("tests/study/test_study_runs.py",),
    "contactfmu.study.table.": ("tests/study/test_study_table.py",),
    # the plot, one run's execution and the cluster: every study of tests/study/test_study.py plots,
    # executes its runs and (the cluster tests) starts a LocalCluster; their unit tests check them
    # with stand-ins (a figure inspected before it is written, a stand-in System, a stand-in client)
    "contactfmu.study.plot.": ("tests/study/test_study_plot.py",),
    "contactfmu.study.execute.": ("tests/study/test_study_execute.py",),
    "contactfmu.study.cluster.": ("tests/study/test_study_cluster.py",),
    # the Study class and the rest of study/__init__.py (mutmut names its mutants
    # contactfmu.study.x_<function>__mutmut_N and contactfmu.study.x\u01c1<Class>\u01c1<method>__mutmut_N,
    # which no submodule's name starts with): every study of tests/study/test_study.py makes a Study and
    # runs it; tests/study/test_study_core.py drives it with a stand-in System, FMU files of a few bytes,
    # a stand-in run_all and a stand-in clock
    "contactfmu.study.x_": ("tests/study/test_study_core.py",),
    "contactfmu.study.x\u01c1": ("tests/study/test_study_core.py",),
    # the observers: every run records its outputs and reports its progress through them
    "contactfmu.cosim.observers.": ("tests/cosim/test_observers.py",),
    # the fixed-step algorithms, the FMUs' step calls and the choice of the algorithm: every run
    # of the FMU tests goes through them; tests/cosim/test_algorithms.py checks the communication
    # points and the calls of each scheme with stand-ins
    # the system: every test of the master builds one and runs it; tests/cosim/test_system.py checks
    # its topology, plan, refusals and life cycle (stand-in slaves where the FMI calls are counted)
    "contactfmu.cosim.system.": ("tests/cosim/test_system.py",),
    # the run loop: every run goes through it; test_execution.py checks its calls with stand-ins
    "contactfmu.cosim.execution.": ("tests/cosim/test_execution.py",),
    # the batched FMI calls: every exchange of every run; test_fastcalls.py checks them against
    # stand-in FMUs (calls, value references, buffers, sums, the batched program's calls in order)
    "contactfmu.cosim.fastcalls.": ("tests/cosim/test_fastcalls.py",),
    # libcosim runs of small systems (tests/test_libcosim.py, outside the selection, compares
    # every FMU and the MSL example)
    "contactfmu.cosim.libcosim.": ("tests/cosim/test_libcosim_run.py",),
    "contactfmu.cosim.algorithms.fixed.": ("tests/cosim/test_algorithms.py",),
    "contactfmu.cosim.algorithms.base.": ("tests/cosim/test_algorithms.py",),
    "contactfmu.cosim.algorithms.x_select": ("tests/cosim/test_algorithms.py",),
    "contactfmu.cosim.algorithms.__init__.x_select": ("tests/cosim/test_algorithms.py",),
    ADAPTIVE + "Adaptive\u01c1__post_init__": ("tests/cosim/test_adaptive_control.py",),
    ADAPTIVE + "AdaptiveAlgorithm\u01c1setup_": ("tests/cosim/test_adaptive_control.py",),
    ADAPTIVE + "AdaptiveAlgorithm\u01c1_error_": ("tests/cosim/test_adaptive_control.py",),
    # the rest of the adaptive master (its attempt, rollback, event bracketing, early returns, the
    # step loop): the controller with stand-in attempts, the adaptive runs of small systems against
    # closed forms and monolithic solutions, and the FMI 3.0 early returns; not the examples and
    # studies that also run it (a minute per mutant)
    "contactfmu.cosim.algorithms.adaptive.": (
        "tests/cosim/test_adaptive_control.py",
        "tests/cosim/test_adaptive.py",
        "tests/cosim/test_fmi3_master.py",
    ),
    # the master's FMI 3.0 face (fmpy's FMU3Slave behind the FMI 2.0 calls): the FMI 3.0 systems
    # against the FMI 2.0 ones bit for bit, the early returns, the terminals
    "contactfmu.cosim.fmi3.": ("tests/cosim/test_fmi3_master.py", "tests/cosim/test_fmi3_face.py"),
    # the value exchange and the implicit coupling: the exchange's calls and results, the implicit,
    # composite, Gauss-Seidel and Jacobi couplings of small systems against closed forms and
    # monolithic solutions (two free bodies with energy and momentum), the inertia-aware ElastoGap;
    # not every run of the FMU tests, which all exchange values
    "contactfmu.cosim.coupling.": (
        "tests/cosim/test_exchange.py",
        "tests/cosim/test_implicit.py",
        "tests/cosim/test_gauss_seidel.py",
        "tests/cosim/test_jacobi.py",
        "tests/cosim/test_free_bodies.py",
        "tests/test_stiff_coupling.py",
    ),
    "contactfmu.cosim.implicit.": (
        "tests/cosim/test_exchange.py",
        "tests/cosim/test_implicit.py",
        "tests/cosim/test_free_bodies.py",
        "tests/test_stiff_coupling.py",
    ),
}


def _unit_tests_only():
    """The unit tests that alone check the mutant under test (UNIT_TESTS), or None."""
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    for prefix, tests in UNIT_TESTS.items():
        if mutant.startswith(prefix):
            return tests
    return None


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    only = _unit_tests_only()
    for item in items:
        slow = item.nodeid.startswith(SLOW + REPOSITORY)
        fixtures = getattr(item, "fixturenames", ())
        needs_fmus = ("fmu_dir" in fixtures or "fmu3_dir" in fixtures) and not PREBUILT
        other = only is not None and not item.nodeid.startswith(only)
        (drop if slow or needs_fmus or other else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if os.environ.get("MUTANT_UNDER_TEST"):
        # the fastest tests first: mutmut stops at the first failure (-x), so a mutant that a
        # quick test kills does not wait for the slow ones
        durations = _durations()
        items.sort(key=lambda item: durations.get(item.nodeid, 0.0))


def _durations():
    """{test node id: seconds} of mutmut's instrumented first run (mutmut-stats.json in mutants/,
    the working directory of the mutant's test session), or {}."""
    try:
        return json.loads(Path("mutmut-stats.json").read_text())["duration_by_test"]
    except (OSError, ValueError, KeyError):
        return {}


# mutation/recheck.py's limit per test (CONTACTFMU_MUTATION_TEST_SECONDS): a mutant that makes a
# test loop fails that test there (a timeout, which mutmut counts as killed) instead of holding the
# whole run to its limit
TEST_SECONDS = float(os.environ.get("CONTACTFMU_MUTATION_TEST_SECONDS") or 0.0)


class MutantTimeout(Exception):
    """A test ran past mutation/recheck.py's limit per test."""


def _past_limit(signum, frame):
    raise MutantTimeout(f"the test ran past {TEST_SECONDS} s (CONTACTFMU_MUTATION_TEST_SECONDS)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if TEST_SECONDS > 0.0:
        signal.signal(signal.SIGALRM, _past_limit)
        signal.setitimer(signal.ITIMER_REAL, TEST_SECONDS)
    try:
        yield
    finally:
        if TEST_SECONDS > 0.0:
            signal.setitimer(signal.ITIMER_REAL, 0.0)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    for plugin in session.config.pluginmanager.get_plugins():
        status = getattr(plugin, "_exit_status", None)
        if isinstance(status, list) and str(getattr(plugin, "__file__", "")).endswith(
            "conftest.py"
        ):
            status.clear()
