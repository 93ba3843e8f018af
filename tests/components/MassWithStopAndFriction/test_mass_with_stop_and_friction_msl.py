"""MassWithStopAndFriction in the MSL example Translational.Examples.Friction: the event times of
stop2 against the Dymola reference (src/contactfmu/refdata/Friction/events.csv).
"""

import numpy as np
import pytest
from fmu_subprocess import run_example

from contactfmu.cosim import read_csv


def test_msl_friction_example_event_times(fmu_dir, tmp_path):
    run_example("msl_friction", fmu_dir, tmp_path)
    res = read_csv(tmp_path / "Friction.csv")
    for name in ("stop1.s", "stop1.v", "stop1.f", "stop1.mode", "stop2.s", "stop2.v", "stop2.mode"):
        assert name in res.names
    events = sorted({t for t in res["stop2.lastEventTime"] if t >= 0})
    dymola = [
        0.0605969541,
        0.2011056,
        0.3416165,
        0.4821401,
        0.6226926,
        0.7633288,
        0.9042042,
        1.0459741,
    ]
    assert len(events) == len(dymola)
    assert events[0] == pytest.approx(dymola[0], abs=2e-6)  # stop impact
    assert np.max(np.abs(np.array(events) - dymola)) < 1e-4  # each stick/slip, finally sticks
    # sticks for good at Dymola's -0.24751585 m (src/contactfmu/refdata/Friction/events.csv): measured 2.4e-6 m
    # (1 ms steps; the converged monolithic value -0.24751399 is 5.6e-7 m away)
    assert res["stop2.s"][-1] == pytest.approx(-0.24751585, abs=2.5e-5)
    assert np.all(res["stop2.s"] >= -0.4)  # never passes its stop
    assert (tmp_path / "Friction.png").stat().st_size > 10000
