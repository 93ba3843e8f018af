"""Run in a subprocess (a hang fails the test instead of hanging the suite): a snippet against an
FMU that reports each fmi2DoStep's CPU time (time.process_time) and results as JSON, or an
example script of examples/ as a user runs it.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent
EXAMPLES = TESTS.parent / "examples"


PRELUDE = """
import json, math, random, sys, time
sys.path.insert(0, {tests!r})
from fmu_helpers import Slave
FMU = {fmu_dir!r}
def timed(s, t, h):
    t0 = time.process_time()
    try:
        s.fmu.doStep(t, h)
        ok = True
    except Exception:
        ok = False
    return ok, time.process_time() - t0
"""


def run_in_subprocess(fmu_dir, body, timeout=60):
    code = PRELUDE.format(tests=str(TESTS), fmu_dir=str(fmu_dir)) + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_example(name, fmu_dir, out, *args, timeout=600):
    """Run examples/<name>.py with --out `out` and --fmus `fmu_dir` (and `args`); asserts that it
    exits with status 0 and returns the completed process (its stdout and stderr)."""
    proc = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / f"{name}.py"),
            "--out",
            str(out),
            "--fmus",
            str(fmu_dir),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc
