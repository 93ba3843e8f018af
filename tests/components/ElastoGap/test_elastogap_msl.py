"""ElastoGap in the MSL examples: Translational.Examples.ElastoGap and PreLoad built from the
FMUs pass the Dymola reference results (src/contactfmu/refdata/README.md) within csv-compare's
tube, and the demo shows the three documented curves.
"""

import numpy as np
from fmu_subprocess import run_example

from contactfmu.cosim import compare, read_csv
from contactfmu.examples import REFDATA


def test_msl_elastogap_example_passes_the_reference_tube(fmu_dir, tmp_path):
    run_example("msl_elastogap", fmu_dir, tmp_path)
    signals = ["elastoGap1.v_rel", "elastoGap2.s_rel", "springDamper1.v_rel", "springDamper2.s_rel"]
    result = read_csv(tmp_path / "ElastoGap.csv")
    report = compare(result, read_csv(REFDATA / "ElastoGap" / "ElastoGap.csv"), signals)
    assert report.passed and len(report) == 4, str(report)
    assert {"mass1.s", "mass2.s"} <= set(result.names)
    assert (tmp_path / "ElastoGap.png").stat().st_size > 10000


def test_demo_shows_the_three_documented_curves(fmu_dir, tmp_path):
    run_example("elastogap_demo", fmu_dir, tmp_path)
    res = read_csv(tmp_path / "ElastoGapDemo.csv")
    f1, f2, f3, fmu = (res[n] for n in res.names[1:])
    assert f1.max() > 1.0  # 1: pulls at the end of contact
    first = np.argmax(f2 < 0)
    assert f2[first] < -100.0 and f2[first - 1] == 0.0  # 2: jumps at contact start
    assert f3.max() <= 0.0 and abs(f3[np.argmax(f3 < 0)]) < 1.0  # 3: never pulls, starts from 0
    assert np.max(np.abs(fmu - f3)) < 0.01 * np.max(np.abs(f3))  # the FMU reproduces curve 3
    assert (tmp_path / "ElastoGapDemo.png").stat().st_size > 10000


def test_msl_preload_from_fmus_passes_the_msl_reference_by_default(fmu_dir, tmp_path):
    """PreLoad as a user runs it (no arguments: the adaptive master at its default tolerance), the
    whole 100 s: the six comparison signals inside the 2e-3 tube of the MSL reference result
    (Dymola, refdata/PreLoad) on the experiment's 0.05 s grid, and the seven states inside the tube
    of the project's monolithic scipy model (--check). About 5 s of wall time."""
    proc = run_example("msl_preload", fmu_dir, tmp_path, "--check", timeout=900)
    assert "tube vs Dymola reference (2e-3): PASSED (6 of 6 passed)" in proc.stdout
    assert (
        "tube vs the project's monolithic reference (scipy, --check): PASSED (7 of 7 passed)"
        in proc.stdout
    )
    result = read_csv(tmp_path / "PreLoad.csv")
    assert result.names[1:] == [
        "friction.v_rel",
        "innerContactA.s_rel",
        "innerContactB.s_rel",
        "outerContactA.v_rel",
        "outerContactB.s_rel",
        "outerContactB.v_rel",
        "spool.s",
        "force.f",
    ]
    # the preload characteristic: the preload holds the spool (both inner contacts closed,
    # s_rel < s_rel0 = 1 mm) while the drive force is small, and a larger force opens one of them
    # (the transition measured at 28.6 .. 29.0 N, with the damper's hysteresis)
    late, f = result.time > 0.01, np.abs(result["force.f"])
    closed = (result["innerContactA.s_rel"] < 1e-3) & (result["innerContactB.s_rel"] < 1e-3)
    assert np.all(closed[late & (f < 20.0)]) and not np.any(closed[late & (f > 40.0)])
    assert np.any(late & (f < 20.0)) and np.any(late & (f > 40.0))
    assert (tmp_path / "PreLoad.png").stat().st_size > 10000
