"""Check again, each in a fresh pytest process (no fork), the mutants of a mutmut run whose test
process died of a signal (SIGSEGV, SIGBUS, SIGABRT: mutation/run.py reports them as "crashed"),
and write the result into mutmut's results (the module's .meta file), as mutmut would.

    python mutation/recheck.py --cosim [--jobs 2] [--limit-minutes M] [--max-seconds S] [--survived]

mutmut forks each mutant's worker from the process that ran the instrumented first run; with FMUs
and libcosim loaded there, a sixth of the master's mutants died of a signal (nearly all pass or fail
normally when run again in a process of their own), and mutmut's fork server (process_isolation =
"forkserver") took about 40 s per mutant. Here each mutant runs as mutmut runs it (the mutated copy
in mutation-<profile>/mutants/, the mutant activated by MUTANT_UNDER_TEST, pytest -x with the tests
mutmut recorded as covering the mutated function, or the module's UNIT_TESTS files), in its own
process.

pytest's exit status is the result, as mutmut records it: 1 (a test failed: killed), 0
(survived), 5 (no test ran it); past its time limit (ten times its tests' first-run durations, at
least a minute, at most --max-seconds) it is a timeout (killed, as mutmut counts its CPU-time
limit). Tests that die of SIGSEGV, SIGBUS or SIGABRT again, in this process of their own, crash
by the mutant's making (e.g. a NULL pointer passed to an FMU's C function): killed, recorded as
70. Anything else (a pytest error) leaves it crashed. Each result is written as it comes, so a
stopped recheck keeps what it checked. Then rewrite the report:
python mutation/run.py --<profile> --report."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutation.pytest_plugin import UNIT_TESTS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CRASHED = (-11, -7, -6)
TIMEOUT = -24  # mutmut's code for its CPU-time limit (mutation/run.py: "timeout", killed)
# the tests died of a signal in a process of their own (not forked from a process that had run
# FMUs): the mutant crashes its host (e.g. a NULL pointer passed to an FMU's C function), which
# the tests detect: killed (mutation/run.py: "killed")
CRASHED_ALONE = 70
RECORDED = {1: "killed", 0: "survived", 5: "no tests", TIMEOUT: "timeout", CRASHED_ALONE: "killed"}


def mutants_with(mutants, codes=CRASHED):
    """[(meta file, mutant name)] of the mutants whose result is one of codes (the crashed ones)."""
    out = []
    for meta in sorted((mutants / "src").rglob("*.py.meta")):
        found = json.loads(meta.read_text()).get("exit_code_by_key", {})
        out += [(meta, name) for name, code in found.items() if code in codes]
    return out


def run_one(mutants, stats, name, fmus, max_seconds=600.0, test_seconds=None):
    """pytest's exit code for the mutant (TIMEOUT past its time limit). The tests: the module's
    own (UNIT_TESTS, whole files: mutmut's record of the tests that call a function is only
    updated for new tests when a run reuses its results), else those mutmut recorded."""
    function = name.split("__mutmut_")[0]
    tests = sorted(stats["tests_by_mangled_function_name"].get(function, []))
    for prefix, files in UNIT_TESTS.items():
        if name.startswith(prefix):
            tests = list(files)
            break
    durations = stats["duration_by_test"]
    estimate = sum(d for t, d in durations.items() if t.startswith(tuple(tests)))
    env = {**os.environ, "MUTANT_UNDER_TEST": name, "PYTHONPATH": "src"}
    if test_seconds:
        # a test that loops fails at this limit (mutation/pytest_plugin.py): a timeout, killed
        env["CONTACTFMU_MUTATION_TEST_SECONDS"] = str(test_seconds)
    if fmus:
        env["CONTACTFMU_MUTATION_FMUS"] = str(fmus)
    # a temporary folder of its own: pytest removes all but the last three of its numbered
    # folders, and a session running beside others lost its FMUs (a false kill)
    with tempfile.TemporaryDirectory(prefix="contactfmu_recheck_") as tmp:
        command = [sys.executable, "-m", "pytest", "--rootdir=.", "-x", "-q", "-p", "no:randomly"]
        command += ["-p", "mutation.pytest_plugin", "-p", "no:cacheprovider"]
        command += [f"--basetemp={tmp}/t", *tests]
        try:
            done = subprocess.run(
                command,
                cwd=mutants,
                env=env,
                capture_output=True,
                timeout=min(max_seconds, max(60.0, 10.0 * estimate)),
            )
        except subprocess.TimeoutExpired:
            return TIMEOUT
    return CRASHED_ALONE if done.returncode in CRASHED else done.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cosim", action="store_const", dest="profile", const="cosim")
    ap.add_argument("--study", action="store_const", dest="profile", const="study")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit-minutes", type=float, default=None, help="stop starting mutants after")
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=600.0,
        help="a mutant's time limit at most (a timeout is a kill, as mutmut counts it)",
    )
    ap.add_argument(
        "--survived",
        action="store_true",
        help="check the survivors (and those no test ran) again too (after a run that reused mutmut's "
        "results)",
    )
    ap.add_argument(
        "--only-survived",
        action="store_true",
        help="check only the survivors again (after tests were added)",
    )
    ap.add_argument(
        "--test-seconds",
        type=float,
        default=None,
        help="a test's time limit (a test past it fails: a timeout, killed); none by default",
    )
    ap.add_argument(
        "--dry-run",
        action="store_true",
        help="print the results, leave mutmut's results as they are",
    )
    ap.add_argument("names", nargs="*", help="only mutants whose name starts with one of these")
    args = ap.parse_args()
    if not args.profile:
        ap.error("name the profile: --cosim or --study")
    work = ROOT / f"mutation-{args.profile}"
    mutants = work / "mutants"
    fmus = work / "fmus" if (work / "fmus").is_dir() else None
    stats = json.loads((mutants / "mutmut-stats.json").read_text())
    alive = (0, 5, 33)  # survived, or no test ran it (mutmut's record; UNIT_TESTS may cover it)
    codes = alive if args.only_survived else CRASHED + (alive if args.survived else ())
    todo = mutants_with(mutants, codes)
    if args.names:
        todo = [(m, n) for m, n in todo if n.startswith(tuple(args.names))]
    stop = time.monotonic() + 60.0 * args.limit_minutes if args.limit_minutes else None
    results = {}
    lock = threading.Lock()

    def check(item):
        meta, name = item
        if stop is not None and time.monotonic() > stop:
            return
        code = run_one(mutants, stats, name, fmus, args.max_seconds, args.test_seconds)
        with lock:
            results[(meta, name)] = code
            if code in RECORDED and not args.dry_run:
                data = json.loads(meta.read_text())
                data["exit_code_by_key"][name] = code
                meta.write_text(json.dumps(data, indent=4))
            print(f"{len(results)}/{len(todo)} {name}: {code}", flush=True)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(check, todo))
    counts = {}
    for code in results.values():
        key = RECORDED.get(code, "crashed")
        counts[key] = counts.get(key, 0) + 1
    print(f"rechecked {len(results)} of {len(todo)}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
