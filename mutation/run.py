"""Mutation testing of the physics (src/contactfmu/mechanics/ and each
src/contactfmu/components/<Name>/law.py) with mutmut (configured in pyproject.toml,
[tool.mutmut]); writes mutation/REPORT.md.

    python -m pip install -e ".[test,mutation]" && python mutation/run.py

Runs from the repository root. mutmut copies src/ and tests/ into mutants/ (git-ignored) and
never changes src/ itself. By default the previous mutants/ is removed first (a full, fresh run);
--keep reuses its cached results (only new or changed mutants run). --report only rewrites the
report from mutants/. --jobs sets mutmut's parallel workers (default: the number of CPUs).
Survivors are explained in mutation/equivalent*.toml (one file per module or group; mutant name ->
reason): in [equivalent] a mutant that behaves identically, in [accepted] one whose change no
documented statement or tolerance constrains (an exact iteration cap, a nudge below a tolerance); a survivor without
an entry is listed as UNEXPLAINED and the script exits with status 1, as it does when fewer
than 90 % of the mutants of physics/ are killed.

--slaves mutates the slave layer (each src/contactfmu/components/<Name>/slave.py and
components/translational.py) instead (no score target; the report states
the score): mutmut reads [tool.mutmut] from the pyproject.toml of its working directory, so the run
takes place in mutation-slaves/ (git-ignored), a copy of src/, tests/ and mutation/ with a
pyproject.toml whose only_mutate is the slave layer and whose tests are the in-process slave
tests (SLAVES_TESTS: tests/fmi/test_slaves_inprocess.py and the components' test_*_slave.py, no FMU
build). Report: mutation/REPORT_SLAVES.md, survivors
explained in mutation/equivalent_slaves*.toml.

    python mutation/run.py --slaves --jobs 1 'contactfmu.components.Spring.slave.*'

--cosim, --study and --fmi mutate the co-simulation master (src/contactfmu/cosim/), the parameter
studies (src/contactfmu/study/) and the generic FMI layer (src/contactfmu/fmi/) the same way, each in
its own working directory (mutation-cosim/, mutation-study/, mutation-fmi/) with its own test
selection (PROFILES) and report (mutation/REPORT_COSIM.md, REPORT_STUDY.md, REPORT_FMI.md), survivors
explained in mutation/equivalent_<profile>*.toml, with the physics' bar: at least 90 % killed,
every survivor explained. The master and the studies run FMUs: their tests need the built FMUs
(fixture fmu_dir), which are built once, from the unmutated source, into <work>/fmus/ and handed to
every test session (CONTACTFMU_MUTATION_FMUS, mutation/pytest_plugin.py); their code is not in the
FMUs, so the prebuilt FMUs are the same for every mutant. The FMI layer runs inside the FMUs under a
renamed package, where no mutant is selected: like the slaves, it is tested in-process.

    python mutation/run.py --cosim --jobs 1 'contactfmu.cosim.compare.*'
    python mutation/run.py --study --jobs 1 'contactfmu.study.metrics.*'
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
EQUIVALENT = ROOT / "mutation" / "equivalent.toml"
CARRIED = ROOT / "mutation" / "carried_over.toml"  # results of an earlier run for mutants not rerun
REPORT = ROOT / "mutation" / "REPORT.md"
TARGET = 0.90
SLAVES_REPORT = ROOT / "mutation" / "REPORT_SLAVES.md"
SLAVES_TESTS = [  # the slave classes driven in-process (no FMU build)
    "tests/fmi/test_slaves_inprocess.py",
    "tests/components/ElastoGap/test_elastogap_slave.py",
    "tests/components/TranslationalHardstop/test_translational_hardstop_slave.py",
    "tests/components/supporting/test_supporting_slaves.py",
]
COSIM_TESTS = [  # the master's tests by unit, the tube comparison, the masters' common behaviour
    "tests/cosim/",
    "tests/test_compare.py",
    "tests/test_any_master.py",
    "tests/test_stiff_coupling.py",
]
# the metrics' unit tests, alone against the metrics' mutants (mutation/pytest_plugin.py, UNIT_TESTS)
# (and the runs', the table's, the plot's, a run's execution's, the cluster's and the Study class's
# unit tests alone against theirs)
STUDY_TESTS = [
    "tests/study/test_study_metrics.py",
    "tests/study/test_study_runs.py",
    "tests/study/test_study_table.py",
    "tests/study/test_study_plot.py",
    "tests/study/test_study_execute.py",
    "tests/study/test_study_cluster.py",
    "tests/study/test_study_core.py",
    "tests/study/test_study.py",
]
# the FMI base class and its state codec, driven in-process (the codec also directly; the base
# class by probe slaves: tests/fmi/test_slave_base.py, its getters' and setters' batches:
# test_slave_getset.py), the variable table's unit tests, the model description writers (FMI 2.0
# and 3.0) of a probe slave and the terminals (the FMU-level tests among them need the built FMUs:
# deselected)
FMI_TESTS = [
    "tests/fmi/test_slave_base.py",
    "tests/fmi/test_slave_getset.py",
    "tests/fmi/test_state.py",
    "tests/fmi/test_variables.py",
    "tests/fmi/test_model_description.py",
    "tests/fmi/test_terminals.py",
    "tests/fmi/test_fmi3_inprocess.py",
    *SLAVES_TESTS,
]
PROFILES = {
    # name: (modules mutated (only_mutate), test selection, FMUs prebuilt for the tests, score target)
    "slaves": (
        ["src/contactfmu/components/*/slave.py", "src/contactfmu/components/translational.py"],
        SLAVES_TESTS,
        False,
        None,
    ),
    "cosim": (
        ["src/contactfmu/cosim/*.py", "src/contactfmu/cosim/algorithms/*.py"],
        COSIM_TESTS,
        True,
        TARGET,
    ),
    "study": (["src/contactfmu/study/*.py"], STUDY_TESTS, True, TARGET),
    "fmi": (["src/contactfmu/fmi/*.py"], FMI_TESTS, False, TARGET),
}
SUBJECTS = {
    "physics": "src/contactfmu/mechanics",
    "slaves": "src/contactfmu/components",
    "cosim": "src/contactfmu/cosim",
    "study": "src/contactfmu/study",
    "fmi": "src/contactfmu/fmi",
}


class Profile:
    """What a run mutates and where its results go: physics (default), the slave layer (--slaves),
    the master (--cosim), the studies (--study) or the FMI layer (--fmi)."""

    def __init__(self, name="physics"):
        self.name = name
        self.slaves = name == "slaves"
        self.physics = name == "physics"
        self.work = ROOT if self.physics else ROOT / f"mutation-{name}"
        self.mutants = self.work / "mutants"
        self.report = REPORT if self.physics else ROOT / "mutation" / f"REPORT_{name.upper()}.md"
        self.equivalent = "equivalent*.toml" if self.physics else f"equivalent_{name}*.toml"
        self.target = TARGET if self.physics else PROFILES[name][3]
        self.fmus = (self.work / "fmus") if not self.physics and PROFILES[name][2] else None
        self.subject = SUBJECTS[name]

    def explanation_files(self):
        files = sorted(EQUIVALENT.parent.glob(self.equivalent))
        if not self.physics:
            return files
        others = tuple(f"equivalent_{name}" for name in PROFILES)
        return [f for f in files if not f.name.startswith(others)]

    def env(self):
        """The environment of the mutmut run (the prebuilt FMUs, if the tests need them)."""
        env = dict(os.environ)
        if self.fmus is not None:
            env["CONTACTFMU_MUTATION_FMUS"] = str(self.fmus)
        return env


def prepare(profile, keep, fork=False):
    """mutation-<profile>/: a fresh copy of src/, tests/ and mutation/ and a pyproject.toml that points
    mutmut at the profile's modules and tests (and, if its tests run FMUs, the FMUs built once from
    the unmutated source into its fmus/); keep: reuse its mutants/ (mutmut reruns only the mutants
    whose function changed)."""
    work = profile.work
    only_mutate, tests, _, _ = PROFILES[profile.name]
    if not keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
    for name in ("src", "tests", "mutation"):
        if (work / name).exists():
            shutil.rmtree(work / name)
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    base = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    config = {
        "source_paths": ["src"],
        "only_mutate": only_mutate,
        "also_copy": ["mutation/"],
        "pytest_add_cli_args": base["pytest_add_cli_args"],
        "pytest_add_cli_args_test_selection": tests,
        "use_git_change_detection": False,
        "timeout_multiplier": base.get("timeout_multiplier", 3.0),
        "timeout_constant": base.get("timeout_constant", 0.5),
    }
    if profile.fmus is not None and not fork:
        # a test session that ran FMUs (pythonfmu, libcosim's threads, dask) is not safe to fork:
        # mutmut's default forks each mutant's worker from the process that ran the instrumented
        # first run, and one mutant in six died of SIGSEGV or SIGBUS (run again in a process of
        # its own, none did: mutation/recheck.py); a fork server that only imports and forks
        # keeps the workers clean (about 40 s per mutant here; --fork for the fast default)
        config["process_isolation"] = "forkserver"
    lines = [
        f"# written by mutation/run.py --{profile.name} (do not edit: rewritten on every run)",
        "[tool.mutmut]",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in config.items()]
    lines += ["", "[tool.pytest.ini_options]", 'testpaths = ["tests"]', ""]
    (work / "pyproject.toml").write_text("\n".join(lines))
    if profile.fmus is not None and not (keep and any(profile.fmus.glob("*.fmu"))):
        build = (
            "import sys; from contactfmu.build import build_all, build_all3; "
            "bad = {n: p for n, (_, p) in build_all(sys.argv[1], progress=None).items() if p}; "
            "bad.update({n + ' (FMI 3.0)': p for n, (_, p) in "
            "build_all3(sys.argv[1] + '/fmi3', progress=None).items() if p}); "
            "sys.exit(repr(bad) if bad else 0)"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        subprocess.run([sys.executable, "-c", build, str(profile.fmus)], env=env, check=True)


STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    -24: "timeout",
    # mutation/recheck.py: the tests died of a signal again in a process of their own (the mutant
    # crashes its host, which the tests detect)
    70: "killed",
    # the test process died of a signal (SIGSEGV, SIGBUS, SIGABRT): under mutmut's default fork,
    # the fork's, not the mutant's (run again in a process of its own, none crashed): not counted
    # as killed, not listed as survivors; check them again with mutation/recheck.py
    -11: "crashed",
    -7: "crashed",
    -6: "crashed",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    37: "type check",
    None: "not checked",
}


def carried_over(profile=None):
    """(prefixes, text) of mutant names whose result is carried over from an earlier run when this run
    did not check them (mutation/carried_over.toml: functions unchanged since that run, whose mutants
    take long; see its comment), or ((), None)."""
    if not CARRIED.is_file() or (profile is not None and not profile.physics):
        return (), None
    data = tomllib.loads(CARRIED.read_text())
    return tuple(data.get("prefixes", ())), data.get("text")


def read_results(profile):
    """{module: {mutant name: status}} from mutmut's .meta files; a mutant this run did not check whose
    name starts with a prefix of mutation/carried_over.toml has the status "killed (carried over)"."""
    prefixes, _ = carried_over(profile)
    out = {}
    for meta in sorted((profile.mutants / "src").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        codes = data.get("exit_code_by_key", {})
        if not codes:
            continue
        module = (
            meta.relative_to(profile.mutants / "src")
            .as_posix()[: -len(".py.meta")]
            .replace("/", ".")
        )
        out[module] = {
            name: (
                "carried"
                if code is None and name.startswith(prefixes)
                else STATUS.get(code, f"suspicious ({code})")
            )
            for name, code in codes.items()
        }
    return out


def diff_of(name, profile):
    r = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name],
        cwd=profile.work,
        capture_output=True,
        text=True,
    )
    lines = [
        ln
        for ln in r.stdout.splitlines()
        if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))
    ]
    return " / ".join(ln.strip() for ln in lines)[:300]


def write_report(profile, results, elapsed=None, jobs=None, note=None):
    """Write profile.report; modules none of whose mutants was checked (a partial run) are left out
    and named. Returns whether the run passes (physics: the target and every survivor explained;
    slaves: no target, every survivor explained)."""
    explained, accepted = {}, {}
    carried_text = carried_over(profile)[1]
    unchecked = sorted(
        m for m, st in results.items() if all(s == "not checked" for s in st.values())
    )
    results = {m: st for m, st in results.items() if m not in unchecked}
    for path in profile.explanation_files():
        data = tomllib.loads(path.read_text())
        explained.update(data.get("equivalent", {}))
        accepted.update(data.get("accepted", {}))
    rows, survivors = [], []
    total = collections.Counter()
    for module, statuses in results.items():
        c = collections.Counter(statuses.values())
        n = len(statuses)
        killed = c["killed"] + c["timeout"] + c["carried"]
        total.update(c)
        total["all"] += n
        rows.append(
            f"| {module} | {c['killed']} | {c['timeout']} | {c['carried']} | {c['survived']} | {c['no tests']} "
            f"| {n - killed - c['survived'] - c['no tests']} | {n} "
            f"| {100.0 * killed / n:.1f} % |"
        )
        survivors += [
            (module, name, st)
            for name, st in sorted(statuses.items())
            if st not in ("killed", "timeout", "carried", "crashed", "not checked")
        ]
    n = total["all"]
    score = (total["killed"] + total["timeout"] + total["carried"]) / n if n else 0.0
    equivalent = sum(1 for _, name, _ in survivors if name in explained)
    kept = sum(1 for _, name, _ in survivors if name in accepted and name not in explained)
    unexplained = [
        (m, name, st) for m, name, st in survivors if name not in explained and name not in accepted
    ]
    command = "python mutation/run.py" + ("" if profile.physics else f" --{profile.name}")
    killed = "Killed = a test failed (or mutmut's CPU-time limit hit: timeout, counted as killed)."
    selection = ", ".join(PROFILES[profile.name][1]) if not profile.physics else ""
    tests = {
        "physics": "Tests run against the mutants: those that call the physics directly (the "
        "FMU-building tests are deselected by mutation/pytest_plugin.py). ",
        "slaves": "Tests run against the mutants: tests/fmi/test_slaves_inprocess.py and the "
        "components' test_*_slave.py, which drive the slave classes in-process through their FMI "
        "methods (no FMU build). ",
        "fmi": f"Tests run against the mutants: {selection}, which drive the FMI base class (and its "
        "state codec, variable table) in-process through the slaves' FMI methods (inside a built FMU "
        "the package is renamed and no mutant is selected; the FMU-level tests are not run). ",
        "cosim": f"Tests run against the mutants: {selection}, with the FMUs built once from the "
        "unmutated source (the master's code is not in them). ",
        "study": f"Tests run against the mutants: {selection}, with the FMUs built once from the "
        "unmutated source (the studies' code is not in them); runs executed on dask workers of the "
        "tests' own clusters are not traced by mutmut, so a mutant counts as covered by the tests "
        "that call it in-process. ",
    }[profile.name] + killed
    target = (
        f"Target: at least {100 * profile.target:.0f} % killed, every survivor explained. "
        if profile.target
        else "No score target for the slave layer (the 90 % target is for physics/); "
        "every survivor should be explained. "
    )
    lines = [
        f"# Mutation testing report: {profile.subject}",
        "",
        f"Written by `{command}` (mutmut, configuration in pyproject.toml `[tool.mutmut]`) on "
        f"{datetime.date.today().isoformat()}"
        + (f", run time {elapsed / 60:.0f} min with {jobs} workers." if elapsed else "."),
        "",
        *([note, ""] if note else []),
        *(
            [f"Not run (no mutant of theirs checked): {', '.join(unchecked)}.", ""]
            if unchecked
            else []
        ),
        tests,
        *(["", f"Carried over (counted as killed): {carried_text}"] if total["carried"] else []),
        "",
        "| module | killed | timeout | carried over | survived | no tests | other | total | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        f"| **all** | {total['killed']} | {total['timeout']} | {total['carried']} | {total['survived']} | "
        f"{total['no tests']} | "
        f"{n - total['killed'] - total['timeout'] - total['carried'] - total['survived'] - total['no tests']} | {n} | "
        f"**{100.0 * score:.1f} %** |",
        "",
        *(
            [
                f"In the column other: {total['crashed']} crashed (the test process died of a "
                "signal; not counted as killed, not listed below) and "
                f"{total['not checked']} not checked (the run was stopped before them).",
                "",
            ]
            if total["crashed"] or total["not checked"]
            else []
        ),
        target
        + f"Survivors: {len(survivors)}, explained as equivalent: {equivalent}, accepted (a change no documented "
        f"statement or tolerance constrains, reason given): {kept}, unexplained: {len(unexplained)}.",
        "",
        "## Surviving mutants",
        "",
        "Each with mutmut's name (`python -m mutmut show NAME` prints the diff) and the reason it survives.",
        "",
    ]
    for module, name, st in survivors:
        if name in explained:
            text = f"equivalent: {explained[name]}"
        elif name in accepted:
            text = f"accepted: {accepted[name]}"
        else:
            text = "UNEXPLAINED"
        lines.append(f"* `{name}` ({st}): " + text)
    profile.report.write_text("\n".join(lines) + "\n")
    print(
        f"score {100 * score:.1f} % ({total['killed'] + total['timeout'] + total['carried']}/{n}); "
        f"{len(unexplained)} unexplained survivors; report: {profile.report.relative_to(ROOT)}"
    )
    return (profile.target is None or score >= profile.target) and not unexplained


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--keep", action="store_true", help="reuse mutants/ and its cached results")
    ap.add_argument(
        "--fork",
        action="store_true",
        help="profiles with FMUs: mutmut's default fork instead of its fork server (2 to 5 s per "
        "mutant instead of about 40 s; one mutant in six crashes, reported apart, not as killed)",
    )
    ap.add_argument("--report", action="store_true", help="only rewrite the report from mutants/")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel mutmut workers")
    ap.add_argument(
        "--note", help="a paragraph put at the top of the report (what this run covered)"
    )
    ap.add_argument(
        "--slaves",
        action="store_const",
        const="slaves",
        dest="profile",
        help="mutate the slave layer (components/*/slave.py; in mutation-slaves/; report "
        "mutation/REPORT_SLAVES.md) instead of physics/",
    )
    ap.add_argument(
        "--cosim",
        action="store_const",
        const="cosim",
        dest="profile",
        help="mutate the master (cosim/; in mutation-cosim/; report mutation/REPORT_COSIM.md)",
    )
    ap.add_argument(
        "--study",
        action="store_const",
        const="study",
        dest="profile",
        help="mutate the studies (study/; in mutation-study/; report mutation/REPORT_STUDY.md)",
    )
    ap.add_argument(
        "--fmi",
        action="store_const",
        const="fmi",
        dest="profile",
        help="mutate the FMI layer (fmi/; in mutation-fmi/; report mutation/REPORT_FMI.md)",
    )
    ap.add_argument(
        "names",
        nargs="*",
        help="mutant names or globs to (re)run, e.g. 'contactfmu.mechanics.ode*', "
        "with --slaves e.g. 'contactfmu.components.Spring.slave.*', with --cosim "
        "'contactfmu.cosim.compare.*'",
    )
    args = ap.parse_args()
    profile = Profile(args.profile or "physics")
    os.chdir(ROOT)
    elapsed = None
    if not args.report:
        if not profile.physics:
            prepare(profile, args.keep, args.fork)
        elif not args.keep and MUTANTS.exists():
            shutil.rmtree(MUTANTS)
        start = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *args.names],
            cwd=profile.work,
            env=profile.env(),
        )
        elapsed = time.monotonic() - start
        if r.returncode:
            sys.exit(f"mutmut run failed (exit status {r.returncode})")
    ok = write_report(profile, read_results(profile), elapsed, args.jobs, args.note)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
