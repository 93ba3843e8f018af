#!/usr/bin/env python3
"""Build every FMU into fmus/ (or --out DIR), validate each, co-simulate the showcase example
(MSL GenerationOfFMUs from FMUs: CSV and PNG into results/) and print a summary.

Exit status 0 only if every FMU is valid and the showcase passes its reference tube."""

import argparse
import runpy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "src"))

try:
    from contactfmu import examples
    from contactfmu.build import build_all
    from contactfmu.components import NAMES
except ModuleNotFoundError as missing:  # run before the project's install step
    sys.exit(
        f"build_fmus.py: {missing.name} is not installed in {sys.executable}: install the project "
        f"first (python -m pip install -e ., the README's first command)"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", default=str(ROOT / "fmus"), help="directory for the FMUs (default: fmus/)"
    )
    parser.add_argument(
        "--results", default=str(ROOT / "results"), help="showcase output (default: results/)"
    )
    parser.add_argument("--no-showcase", action="store_true", help="only build and validate")
    parser.add_argument(
        "--cross-check",
        default=None,
        help="directory for the FMI cross-check files (default: <out>/cross-check)",
    )
    parser.add_argument(
        "--update-docs",
        "--update-readme",
        dest="update_docs",
        action="store_true",
        help="regenerate the FMU reference in docs/fmus.md from the built model descriptions "
        "(--update-readme: the former name)",
    )
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    print(f"Building {len(NAMES)} FMUs into {args.out}")
    results = build_all(args.out)
    t_build2 = time.perf_counter() - t0
    print(f"Building {len(NAMES)} FMI 3.0 FMUs into {Path(args.out) / 'fmi3'}")
    results3 = build_all(Path(args.out) / "fmi3", standard="3.0")
    invalid = {name: problems for name, (_, problems) in results.items() if problems}
    invalid3 = {name: problems for name, (_, problems) in results3.items() if problems}
    t_build = time.perf_counter() - t0

    if args.update_docs:
        from contactfmu.docs import PAGE, update_docs

        changed = update_docs(ROOT / PAGE, [path for path, _ in results.values()])
        print(f"{PAGE.as_posix()} FMU reference {'updated' if changed else 'already current'}")

    crosscheck_dirs = []
    if not invalid:
        from contactfmu import crosscheck

        t1 = time.perf_counter()
        target = Path(args.cross_check or Path(args.out) / "cross-check")
        crosscheck_dirs = crosscheck.write_all(
            [path for path, _ in results.values()], target, progress=None
        )
        print(
            f"FMI cross-check files ({time.perf_counter() - t1:.1f} s): "
            f"{target}/fmus/2.0/cs/linux64/contactfmu/<version>/<Model>/"
        )

    showcase = None
    if not args.no_showcase and not invalid:
        example = runpy.run_path(str(ROOT / "examples" / "msl_generation_of_fmus.py"))
        print(
            "Showcase: MSL Translational.Examples.GenerationOfFMUs (spring-damper and spring parts) from FMUs"
        )
        result, report, wall = example["run"](
            args.results, None, args.out
        )  # the master's default steps
        showcase = (report, wall, result)

    print("\nSummary")
    print(
        f"  FMUs: {len(results) - len(invalid)} of {len(results)} valid ({t_build2:.1f} s) in {args.out}"
    )
    for name, problems in invalid.items():
        print(f"    {name}: " + "; ".join(problems))
    print(
        f"  FMI 3.0 FMUs: {len(results3) - len(invalid3)} of {len(results3)} valid "
        f"({t_build - t_build2:.1f} s) in {Path(args.out) / 'fmi3'}"
    )
    for name, problems in invalid3.items():
        print(f"    {name}: " + "; ".join(problems))
    if crosscheck_dirs:
        print(
            f"  Cross-check: <Model>_in.csv, _ref.csv, _ref.opt for {len(crosscheck_dirs)} FMUs in "
            f"{crosscheck_dirs[0].parent}"
        )
    if showcase:
        report, wall, result = showcase
        print(
            f"  Showcase: GenerationOfFMUs, {examples.step_text(result, None)}, wall time {wall:.2f} s, "
            f"{args.results}/GenerationOfFMUs.csv and .png"
        )
        print(
            f"  Tube vs Dymola reference (tolerance 2e-3): "
            f"{sum(r.passed for r in report.values())} of {len(report)} signals passed"
        )
    print(f"  Total time {time.perf_counter() - t0:.1f} s")
    ok = not invalid and not invalid3 and (showcase is None or showcase[0].passed)
    return 0 if ok else 1


if __name__ == "__main__":
    from contactfmu.examples import run_main

    run_main(main)
