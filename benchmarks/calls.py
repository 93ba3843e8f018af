"""FMI calls of the master: how many fmi2GetReal, fmi2SetReal, fmi2DoStep, ... calls (and values) a
run makes, and the wall time of the MSL examples as a user runs them.

    python benchmarks/calls.py [--fmus DIR] [--out results.json] [EXAMPLE ...]

Each example (PreLoad, Friction, GenerationOfFMUs, ElastoGap; default all) is run twice in this
process as its script runs it (no --step: the adaptive master at the example's default): once
timed, with nothing in the way of the FMI calls, then once with every FMI function of every
instance counted (:class:`CallCounter`), which slows the run down and is not timed. Prints, per
example, the wall time, whether the example passes its reference (as its script checks it), the
accepted/rejected steps, for PreLoad and Friction the wall time of the project's monolithic scipy
solution of the same span timed in the same run and the ratio, and per FMI function the number of
calls and of values they carried (the value references of a get or set call). Goals: PreLoad
at most 1x its monolithic solution, Friction at most 10x, GenerationOfFMUs and ElastoGap under
1 s. Speed is reported, never asserted.
"""

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "examples"))

import msl_elastogap  # noqa: E402
import msl_friction  # noqa: E402
import msl_generation_of_fmus  # noqa: E402
import msl_preload  # noqa: E402

from contactfmu import monolithic  # noqa: E402
from contactfmu.cosim import system as cosim_system  # noqa: E402

# the FMI functions whose third argument is the number of value references (values carried)
_VALUES = {
    "fmi2GetReal",
    "fmi2SetReal",
    "fmi2GetInteger",
    "fmi2SetInteger",
    "fmi2GetBoolean",
    "fmi2SetBoolean",
    "fmi2GetRealOutputDerivatives",
    "fmi2SetRealInputDerivatives",
}


class CallCounter:
    """Counts the FMI calls of the instances it wraps: ``calls[name]`` and ``values[name]`` (value
    references carried by get/set calls), totals over the instances; ``per_instance[(instance, name)]``
    the calls of each instance. ``wrap(inst)`` replaces the ctypes functions of one instantiated
    fmpy FMU2Slave (``inst.slave._functions``, through which fmpy's wrapper and the master's bound
    calls both go) by counting ones; call it before the master binds them (right after
    instantiation: :func:`counting`)."""

    def __init__(self):
        self.calls = Counter()
        self.values = Counter()
        self.per_instance = Counter()

    def wrap(self, inst):
        functions = inst.slave._functions
        for name, function in list(functions.items()):
            functions[name] = self._counting(inst.name, name, function)

    def _counting(self, instance, name, function):
        calls, values, per_instance = self.calls, self.values, self.per_instance
        carries = name in _VALUES

        def call(*args):
            calls[name] += 1
            per_instance[(instance, name)] += 1
            if carries:
                values[name] += args[2]
            return function(*args)

        for attr in ("argnames", "argtypes", "restype"):  # what fmpy's wrapper reads
            setattr(call, attr, getattr(function, attr, None))
        return call

    def reset(self):
        self.calls.clear()
        self.values.clear()
        self.per_instance.clear()

    def table(self):
        """{FMI function: {"calls": n, "values": n}} (values: get/set calls only)."""
        return {
            name: {"calls": n, **({"values": self.values[name]} if name in _VALUES else {})}
            for name, n in sorted(self.calls.items())
        }


@contextmanager
def counting(counter=None):
    """Within the block, every System wraps its instances into ``counter`` (a new CallCounter by
    default, yielded) as soon as they are instantiated."""
    counter = counter or CallCounter()
    original = cosim_system.System.instantiate

    def instantiate(self, start_time, stop_time, *args, **kwargs):
        original(self, start_time, stop_time, *args, **kwargs)
        for inst in self.instances.values():
            counter.wrap(inst)

    cosim_system.System.instantiate = instantiate
    try:
        yield counter
    finally:
        cosim_system.System.instantiate = original


EXAMPLES = {
    "PreLoad": msl_preload,
    "Friction": msl_friction,
    "GenerationOfFMUs": msl_generation_of_fmus,
    "ElastoGap": msl_elastogap,
}


def run_example(name, fmu_dir, out):
    """(result, whether it passes its reference, wall time) of the example as its script runs it
    by default."""
    result, *reports, wall = EXAMPLES[name].run(out, None, fmu_dir)
    if name == "Friction":
        reports = [msl_friction.check_events(result)]
    return result, all(r.passed for r in reports if r is not None), wall


# the project's monolithic scipy solution of the same model and span (contactfmu.monolithic)
MONOLITHIC = {
    "PreLoad": lambda t: monolithic.preload(t, stop_time=t[-1]),
    "Friction": lambda t: monolithic.friction(t, stop_time=t[-1]),
}


def measure(name, fmu_dir, out):
    result, passed, wall = run_example(name, fmu_dir, out)
    with counting() as counter:
        counted, _, _ = run_example(name, fmu_dir, out)
    steps = result.steps or []
    res = {
        "wall": wall,
        "reference_passed": passed,
        "accepted": sum(s.accepted for s in steps),
        "rejected": sum(not s.accepted for s in steps),
        "same_result_counted": bool(
            result.names == counted.names and (result.data == counted.data).all()
        ),
        "fmi": counter.table(),
    }
    if name in MONOLITHIC:  # timed in this run, on the example's output times
        t0 = time.perf_counter()
        MONOLITHIC[name](result.time)
        res["monolithic_wall"] = time.perf_counter() - t0
        res["ratio_to_monolithic"] = wall / res["monolithic_wall"]
    return res


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", choices=[*EXAMPLES, []], help="default: all")
    parser.add_argument("--fmus", default=str(ROOT / "fmus"))
    parser.add_argument("--out", default=None, help="write the numbers to this JSON file")
    args = parser.parse_args(argv)
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.examples or list(EXAMPLES):
            r = res[name] = measure(name, args.fmus, tmp)
            ratio = (
                f", monolithic scipy {r['monolithic_wall']:.3f} s: ratio {r['ratio_to_monolithic']:.1f}"
                if "monolithic_wall" in r
                else ""
            )
            print(
                f"{name}: wall {r['wall']:.2f} s, {r['accepted']} accepted + {r['rejected']} "
                f"rejected steps, reference {'passed' if r['reference_passed'] else 'FAILED'}"
                f"{ratio}",
                flush=True,
            )
            for fn, n in r["fmi"].items():
                values = f", {n['values']} values" if "values" in n else ""
                print(f"   {fn:32s} {n['calls']:9d} calls{values}")
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    from contactfmu.examples import run_main

    run_main(main)  # leaves without the interpreter's finalization (pythonfmu), output flushed
