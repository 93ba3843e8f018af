"""Mutation testing of src/contactfmu/physics with mutmut (configured in pyproject.toml,
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
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
EQUIVALENT = ROOT / "mutation" / "equivalent.toml"
CARRIED = ROOT / "mutation" / "carried_over.toml"   # results of an earlier run for mutants not rerun
REPORT = ROOT / "mutation" / "REPORT.md"
TARGET = 0.90

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", 37: "type check",
          None: "not checked"}


def carried_over():
    """(prefixes, text) of mutant names whose result is carried over from an earlier run when this run
    did not check them (mutation/carried_over.toml: functions unchanged since that run, whose mutants
    take long; see its comment), or ((), None)."""
    if not CARRIED.is_file():
        return (), None
    data = tomllib.loads(CARRIED.read_text())
    return tuple(data.get("prefixes", ())), data.get("text")


def read_results():
    """{module: {mutant name: status}} from mutmut's .meta files; a mutant this run did not check whose
    name starts with a prefix of mutation/carried_over.toml has the status "killed (carried over)"."""
    prefixes, _ = carried_over()
    out = {}
    for meta in sorted((MUTANTS / "src").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        codes = data.get("exit_code_by_key", {})
        if not codes:
            continue
        module = meta.relative_to(MUTANTS / "src").as_posix()[:-len(".py.meta")].replace("/", ".")
        out[module] = {name: ("carried" if code is None and name.startswith(prefixes) else
                              STATUS.get(code, f"suspicious ({code})")) for name, code in codes.items()}
    return out


def diff_of(name):
    r = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=ROOT, capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))]
    return " / ".join(ln.strip() for ln in lines)[:300]


def write_report(results, elapsed=None, jobs=None, note=None):
    explained, accepted = {}, {}
    carried_text = carried_over()[1]
    for path in sorted(EQUIVALENT.parent.glob("equivalent*.toml")):
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
        rows.append(f"| {module} | {c['killed']} | {c['timeout']} | {c['carried']} | {c['survived']} | {c['no tests']} "
                    f"| {n - killed - c['survived'] - c['no tests']} | {n} "
                    f"| {100.0 * killed / n:.1f} % |")
        survivors += [(module, name, st) for name, st in sorted(statuses.items())
                      if st not in ("killed", "timeout", "carried")]
    n = total["all"]
    score = (total["killed"] + total["timeout"] + total["carried"]) / n if n else 0.0
    equivalent = sum(1 for _, name, _ in survivors if name in explained)
    kept = sum(1 for _, name, _ in survivors if name in accepted and name not in explained)
    unexplained = [(m, name, st) for m, name, st in survivors if name not in explained and name not in accepted]
    lines = [
        "# Mutation testing report: src/contactfmu/physics",
        "",
        f"Written by `python mutation/run.py` (mutmut, configuration in pyproject.toml `[tool.mutmut]`) on "
        f"{datetime.date.today().isoformat()}"
        + (f", run time {elapsed / 60:.0f} min with {jobs} workers." if elapsed else "."),
        *([note, ""] if note else []),
        "Tests run against the mutants: those that call the physics directly (the FMU-building tests are "
        "deselected by mutation/pytest_plugin.py). Killed = a test failed (or mutmut's CPU-time limit hit: "
        "timeout, counted as killed).",
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
        f"Target: at least {100 * TARGET:.0f} % killed, every survivor explained. "
        f"Survivors: {len(survivors)}, explained as equivalent: {equivalent}, accepted (a change no documented "
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
    REPORT.write_text("\n".join(lines) + "\n")
    print(f"score {100 * score:.1f} % ({total['killed'] + total['timeout'] + total['carried']}/{n}); "
          f"{len(unexplained)} unexplained survivors; report: {REPORT.relative_to(ROOT)}")
    return score >= TARGET and not unexplained


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="reuse mutants/ and its cached results")
    ap.add_argument("--report", action="store_true", help="only rewrite the report from mutants/")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel mutmut workers")
    ap.add_argument("--note", help="a paragraph put at the top of the report (what this run covered)")
    ap.add_argument("names", nargs="*", help="mutant names or globs to (re)run, e.g. 'contactfmu.physics.ode*'")
    args = ap.parse_args()
    os.chdir(ROOT)
    elapsed = None
    if not args.report:
        if not args.keep and MUTANTS.exists():
            shutil.rmtree(MUTANTS)
        start = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *args.names])
        elapsed = time.monotonic() - start
        if r.returncode:
            sys.exit(f"mutmut run failed (exit status {r.returncode})")
    ok = write_report(read_results(), elapsed, args.jobs, args.note)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
