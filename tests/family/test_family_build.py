"""A generated system as a co-simulation of the project's FMUs (contactfmu.family.build)."""

import numpy as np
import pytest

from contactfmu.family import Body, Drive, Link, Spec, build


def spec_of(links):
    bodies = (Body("body1", "Mass", 2.0, 0.1), Body("body2", "Mass", 1.0, 0.2))
    return Spec(0, "chain", {"wall0": 0.0, "wall1": 0.3}, bodies, links, (), 0.1)


def test_every_link_becomes_its_fmu_with_its_documented_parameters(fmu_dir):
    links = (
        Link("a", "ElastoGapHertz", "wall0", "body1", 0.1, {"c": 3e4, "d": 2.0, "n": 1.5}),
        Link("b", "EndStop", "body1", "body2", 0.1, {"mode": 2, "l1": 1e-3, "l2": 2e-3}),
        Link("c", "Spring", "body2", "wall1", 0.1, {"c": 100.0, "s_rel0": 0.0}),
    )
    spec = spec_of(links)
    assert build.fmu_names(spec) == ["ElastoGap", "EndStop", "Fixed", "Mass", "Spring"]
    system = build.system(spec, fmu_dir)
    assert system.instances["a"].md.modelName == "ElastoGap"
    # the rods make every deflection zero at rest: no force at the start
    result = system.simulate(0.01, step=1e-3, outputs=["a.s_rel", "b.dx", "c.f", "body2.s"])
    assert result["a.s_rel"][0] == pytest.approx(0.0, abs=1e-15)
    assert result["b.dx"][0] == pytest.approx(0.0, abs=1e-15)
    assert np.max(np.abs(result["c.f"])) < 1e-12  # (the rods' rounding: 3e-17 m)
    assert np.max(np.abs(result["body2.s"] - 0.2)) < 1e-15


def test_a_drive_pushes_its_body_towards_plus_s(fmu_dir):
    body = Body("body1", "Mass", 2.0, 0.0)
    spec = Spec(0, "tree", {}, (body,), (), (Drive("drive1", "body1", 4.0, 1.0, 0.5 * np.pi),), 0.1)
    result = build.system(spec, fmu_dir).simulate(0.01, step=1e-4, outputs=["body1.a"])
    assert result["body1.a"][0] == pytest.approx(4.0 / 2.0, rel=1e-12)  # cos(0) = 1, m = 2


def test_missing_fmus_are_named(tmp_path):
    spec = spec_of((Link("a", "Spring", "wall0", "body1", 0.1, {"c": 1.0}),))
    with pytest.raises(FileNotFoundError, match="Fixed.fmu: build the FMUs first"):
        build.system(spec, tmp_path)
