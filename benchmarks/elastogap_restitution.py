"""Restitution of a 1 kg mass hitting an ElastoGap (c = 1e5 N/m, d = 20 N.s/m) at 1 m/s, split
across FMUs (Fixed -- ElastoGap -- Mass), against the monolithic reference, for communication
steps from 1e-5 s to 1e-3 s; with plain zero-order hold (values copied) and with the project's
first-order hold (exact force derivatives passed as input derivatives).

The contact starts inside a communication step (start gap 1.234567 mm), as it does in practice.
Prints a table and writes benchmarks/elastogap_restitution.json.
"""
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from contactfmu.build import ensure_fmus  # noqa: E402
from contactfmu.cosim import System  # noqa: E402
from contactfmu.monolithic import elastogap_impact  # noqa: E402

STEPS = [1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3]


def restitution(fmu, h, interpolate, gap=1.234567e-3):
    s = System(interpolate_inputs=interpolate)
    s.add("wall", fmu["Fixed"])
    s.add("gap", fmu["ElastoGap"], c=1e5, d=20.0)
    s.add("mass", fmu["Mass"], m=1.0, s_start=gap, v_start=-1.0)
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    t0 = time.perf_counter()
    res = s.simulate(0.03, h, output_interval=0.03, outputs=["mass.v"])
    return -res["mass.v"][-1] / -1.0, time.perf_counter() - t0


def main():
    fmu = ensure_fmus(ROOT / "fmus", ["Fixed", "ElastoGap", "Mass"])
    ref = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)
    e_ref = ref["restitution"]
    print(f"monolithic reference: restitution {e_ref:.6f}, contact time {ref['contact_time'] * 1e3:.3f} ms")
    print(f"{'step [s]':>9} {'h/T_c':>7} | {'plain (ZOH)':>12} {'error':>8} | {'FOH (derivs)':>12} {'error':>8} | wall [s]")
    rows = []
    for h in STEPS:
        e0, w0 = restitution(fmu, h, False)
        e1, w1 = restitution(fmu, h, True)
        rows.append({"step": h, "zoh": e0, "foh": e1, "zoh_error": e0 / e_ref - 1, "foh_error": e1 / e_ref - 1,
                     "wall_zoh": w0, "wall_foh": w1})
        print(f"{h:9.0e} {h / ref['contact_time']:7.4f} | {e0:12.4f} {100 * (e0 / e_ref - 1):+7.2f}% | "
              f"{e1:12.4f} {100 * (e1 / e_ref - 1):+7.2f}% | {w0:.2f} / {w1:.2f}")
    out = Path(__file__).with_suffix(".json")
    out.write_text(json.dumps({"reference": e_ref, "contact_time": ref["contact_time"], "rows": rows}, indent=1))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
