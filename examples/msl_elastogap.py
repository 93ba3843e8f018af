"""MSL Translational.Examples.ElastoGap rebuilt from FMUs (the MSL 4.1 example model).

Two masses between two fixed rods (flanges at -2 m and +2 m): mass1 between two SpringDampers
(c = 10 N/m, d = 1.5 N.s/m, s_rel0 = 1 m), mass2 between two ElastoGaps (c = 10 N/m,
d = 1.5 N.s/m, s_rel0 = 1.5 m: contact only for |s| > 0.5 m). Both start at s = 2 m at rest.
Writes ElastoGap.csv (elastoGap1.v_rel, elastoGap2.s_rel, springDamper1.v_rel,
springDamper2.s_rel, mass1.s, mass2.s) and ElastoGap.png, and compares with the Dymola
reference (tube, tolerance 2e-3).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from contactfmu import examples, plots  # noqa: E402
from contactfmu.cosim import System  # noqa: E402

NAME = "ElastoGap"
SIGNALS = ["elastoGap1.v_rel", "elastoGap2.s_rel", "springDamper1.v_rel", "springDamper2.s_rel"]


def build_system(fmu):
    s = System()
    s.add("fixed", fmu["Fixed"], s0=0.0)
    for k in "12":
        s.add(f"springDamper{k}", fmu["SpringDamper"], c=10.0, d=1.5, s_rel0=1.0)
        s.add(f"elastoGap{k}", fmu["ElastoGap"], c=10.0, d=1.5, s_rel0=1.5)
        s.add(f"mass{k}", fmu["Mass"], m=1.0, L=0.0, s_start=2.0, v_start=0.0)
    # rod1 (L = 2) from the fixed point to -2 m, rod2 (L = 2) to +2 m, as offsets
    s.connect("fixed.flange", "springDamper1.flange_a", rod=-2.0)
    s.connect("fixed.flange", "elastoGap1.flange_a", rod=-2.0)
    s.connect("fixed.flange", "springDamper2.flange_b", rod=2.0)
    s.connect("fixed.flange", "elastoGap2.flange_b", rod=2.0)
    s.connect("springDamper1.flange_b", "mass1.flange_a")
    s.connect("mass1.flange_b", "springDamper2.flange_a")
    s.connect("elastoGap1.flange_b", "mass2.flange_a")
    s.connect("mass2.flange_b", "elastoGap2.flange_a")
    return s


def run(out="results", step=None, fmu_dir=None):
    """Run the example; returns (result, tube report, wall time in s)."""
    fmu = examples.fmus(
        fmu_dir or examples.ROOT / "fmus", ["Fixed", "SpringDamper", "ElastoGap", "Mass"]
    )
    system = build_system(fmu)
    result, wall, out = examples.simulate(
        system,
        out,
        NAME,
        stop_time=5.0,
        step=step,
        output_interval=max(step or 0.0, 5e-3),
        outputs=SIGNALS + ["mass1.s", "mass2.s", "elastoGap1.f", "elastoGap2.f"],
    )
    report = examples.check(result, NAME, SIGNALS)
    plots.plot(
        result,
        out / f"{NAME}.png",
        [
            ("position [m]", ["mass1.s", "mass2.s"]),
            ("contact force [N]", ["elastoGap1.f", "elastoGap2.f"]),
            ("reference signals", SIGNALS),
        ],
        f"MSL ElastoGap example from FMUs ({examples.step_text(result, step)})",
        examples.reference(NAME),
    )
    return result, report, wall


def main(argv=None):
    args = examples.parse_args(__doc__.splitlines()[0], None, argv)
    result, report, wall = run(args.out, args.step, args.fmus)
    return examples.summarize(
        NAME, result, args.step, wall, args.out, ("tube vs Dymola reference (2e-3)", report)
    )


if __name__ == "__main__":
    examples.run_main(main)
