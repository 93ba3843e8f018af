"""The commands on FMUs: build, validate, info."""

import textwrap
import time
from pathlib import Path

from .. import components, validation
from .common import read_fmu

# Parameters of each component's documentation (stateSelect, a Modelica translator directive,
# is left out of every FMU; co-simulation extras such as m_a/m_b, m1/m2, s_start/v_start are not
# listed because the documentation does not have them).


# ---- build -----------------------------------------------------------------------------------


def cmd_build(args):
    from .. import crosscheck
    from ..build import build_all

    t0 = time.perf_counter()
    results = {}
    if args.fmi in ("2", "both"):
        print(f"Building FMI 2.0 FMUs into {args.out}")
        results = build_all(args.out)
    bad = {n: p for n, (_, p) in results.items() if p}
    if results and not bad and not args.no_cross_check:
        target = Path(args.out) / "cross-check"
        dirs = crosscheck.write_all([p for p, _ in results.values()], target, progress=None)
        print(f"Cross-check files for {len(dirs)} FMUs in {dirs[0].parent}")
    counts = [f"{len(results) - len(bad)} of {len(results)} FMI 2.0 FMUs valid"] if results else []
    if args.fmi in ("3", "both"):
        print(f"Building FMI 3.0 FMUs into {Path(args.out) / 'fmi3'}")
        results3 = build_all(Path(args.out) / "fmi3", standard="3.0")
        bad3 = [n for n, (_, p) in results3.items() if p]
        counts.append(f"{len(results3) - len(bad3)} of {len(results3)} FMI 3.0 FMUs valid")
        bad.update(dict.fromkeys(bad3))
    print(f"{', '.join(counts)} ({time.perf_counter() - t0:.1f} s)")
    return 1 if bad else 0


# ---- validate --------------------------------------------------------------------------------


def cmd_validate(args):
    failed = 0
    for path in args.fmu:
        md = read_fmu(path)
        problems = validation.validate(path, md)
        known = (
            ""
            if md.modelName in components.NAMES
            else " (not a contactfmu model: documented parameters not checked)"
        )
        if problems:
            failed += 1
            print(f"{path}: {len(problems)} problem(s){known}")
            for p in problems:
                print(f"  - {p}")
        else:
            print(
                f"{path}: valid ({md.modelName}, FMI {md.fmiVersion}: fmpy validation, units, "
                f"documented parameters, state round trip){known}"
            )
    return 1 if failed else 0


# ---- info ------------------------------------------------------------------------------------


def cmd_info(args):
    mds = [read_fmu(path) for path in args.fmu]  # every file checked before anything is printed
    for k, md in enumerate(mds):
        if k:
            print()
        print_info(md)
    return 0


def print_info(md):
    cs = md.coSimulation
    de = md.defaultExperiment
    print(
        f"{md.modelName}  (FMI {md.fmiVersion} Co-Simulation, {md.generationTool or 'unknown tool'})"
    )
    print(textwrap.fill(md.description or "", 100))
    print(f"GUID {md.guid}")
    if de:
        print(f"DefaultExperiment: {de.startTime} to {de.stopTime} s, step {de.stepSize} s")
    if cs:
        print(
            f"canGetAndSetFMUstate {cs.canGetAndSetFMUstate}, canSerializeFMUstate {cs.canSerializeFMUstate}, "
            f"canInterpolateInputs {cs.canInterpolateInputs}, maxOutputDerivativeOrder {cs.maxOutputDerivativeOrder}"
        )
    rows = [("name", "causality", "type", "unit", "start", "range", "description")]
    for v in md.modelVariables:
        lo, hi = getattr(v, "min", None), getattr(v, "max", None)
        rng = (
            f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
            if (lo or hi) is not None
            else ""
        )
        rows.append(
            (
                v.name,
                v.causality,
                v.type,
                v.unit or "",
                "" if v.start is None else str(v.start),
                rng,
                v.description or "",
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(6)]
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:6], widths)) + "  " + r[6])
        if k == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 11)
