"""Generated systems with rigid EndStops (EndStopRigid: mode 1, m1/m2 the masses of its bodies) as
a co-simulation of the FMUs against the reference written from the documentation
(family.reference, rigid.py).

The systems: the first seed from 100 (chain of 3), 200 (chain of 5) and 300 (tree of 4) whose draw
among EndStopRigid, Spring, SpringDamper and ElastoGap links (Mass bodies: the reference holds rigid
contacts between Mass bodies) has a rigid EndStop, 0.5 s. The error is max |y - y_ref| over the
2 ms grid divided by the range of y_ref, for every body's position and velocity (build.errors).

Measured (2026-12-02): with fixed steps the chains converge to the reference at second order
(1 ms: 7.4e-2 and 1.3e-2 of the positions' range, 0.1 ms: 7.4e-4 and 1.3e-4). At the default
tolerance (rtol 1e-4) the adaptive master is 0.53, 0.36 and 0.55 off: it leaves the bodies of an
element that integrates its contact itself (a rigid EndStop given m1/m2) out of its error estimate
(docs/master.md), so the tolerance does not reach them. On the tree, an impact on a body that a
second rigid EndStop holds in permanent contact diverges (relative velocity -624 m/s within one
1e-5 s step, then 1e17 N s impulses): each element plans its own contact with the masses it was
given and takes the other's holding force for an outside force.
"""

import dataclasses
import functools

import numpy as np
import pytest

from contactfmu.cosim import CosimError
from contactfmu.family import build, generate, reference

KINDS = ("EndStopRigid", "Spring", "SpringDamper", "ElastoGap")
SPAN = 0.5
GRID = np.linspace(0.0, SPAN, 251)
RULES = {
    "chain of 3": ("chain", 3, 100),
    "chain of 5": ("chain", 5, 200),
    "tree of 4": ("tree", 4, 300),
}
# the documented family study: 15 of its 18 systems within 1e-2 of the range at rtol 1e-4
DEFAULT_BOUND = 1e-2


def first_with_rigid(topology, bodies, start):
    """The first seed from `start` whose system has an EndStopRigid link."""
    seed = start
    while not any(lk.kind == "EndStopRigid" for lk in draw(topology, bodies, seed).links):
        seed += 1
    return seed


def draw(topology, bodies, seed):
    spec = generate(seed, bodies, topology, links=KINDS, body_kinds=("Mass",))
    return dataclasses.replace(spec, stop_time=SPAN)


@functools.lru_cache(maxsize=None)
def case(name):
    """(spec, reference) of a system of RULES."""
    topology, bodies, start = RULES[name]
    spec = draw(topology, bodies, first_with_rigid(topology, bodies, start))
    return spec, reference.solve(spec, t_eval=GRID)


def worst(spec, ref, fmu_dir, **kwargs):
    """(worst position error, worst velocity error, fmi2DoStep calls per FMU) of a run."""
    names = build.signals(spec)
    result = build.system(spec, fmu_dir).simulate(
        SPAN, output_interval=GRID[1], outputs=names, **kwargs
    )
    errors = build.errors(result, ref, names)
    steps = result.steps or ()
    calls = sum(x.calls * (x.fmus or spec.fmus) for x in steps) / spec.fmus
    return (
        max(e for k, e in errors.items() if k.endswith(".s")),
        max(e for k, e in errors.items() if k.endswith(".v")),
        calls,
    )


def test_the_seeds_are_drawn_by_their_rule():
    seeds = [first_with_rigid(*rule) for rule in RULES.values()]
    assert seeds == [100, 200, 302]
    for name in RULES:
        spec = case(name)[0]
        rigid = [lk for lk in spec.links if lk.kind == "EndStopRigid"]
        assert rigid and all(lk.params["m1"] > 0.0 or lk.params["m2"] > 0.0 for lk in rigid)


@pytest.mark.parametrize("name", ["chain of 3", "chain of 5"])
def test_with_fixed_steps_the_chains_converge_to_the_reference_at_second_order(fmu_dir, name):
    """From 1 ms to 0.1 ms the error falls by 30x or more (second order: 100x; measured 100x)
    to within 2e-3 of each signal's range (measured: positions 7.4e-4 and 1.3e-4, velocities
    1.2e-3 and 2.9e-4): the FMUs' rigid EndStops and the reference agree."""
    spec, ref = case(name)
    coarse = worst(spec, ref, fmu_dir, step=1e-3)
    fine = worst(spec, ref, fmu_dir, step=1e-4)
    print(f"{name}: 1 ms {coarse[:2]}, 0.1 ms {fine[:2]}")
    assert max(fine[:2]) < 2e-3
    assert min(c / f for c, f in zip(coarse[:2], fine[:2])) > 30.0


@pytest.mark.xfail(
    strict=True,
    reason="the adaptive master leaves the bodies of a rigid EndStop given m1/m2 out of its error "
    "estimate: measured 0.53, 0.36, 0.55 of the positions' range at rtol 1e-4",
)
@pytest.mark.parametrize("name", list(RULES))
def test_at_the_default_tolerance_the_positions_are_within_1e_2_of_their_range(fmu_dir, name):
    spec, ref = case(name)
    position, velocity, calls = worst(spec, ref, fmu_dir)
    print(f"{name}: positions {position:.2e}, velocities {velocity:.2e}, {calls:.0f} per FMU")
    assert position < DEFAULT_BOUND


def test_the_tolerance_does_not_reach_bodies_that_only_rigid_end_stops_join(fmu_dir):
    """On the chain of 3 every body is at a rigid EndStop: rtol 1e-6 takes the same steps as 1e-4
    and gives the same result (the master leaves those bodies out of its error estimate)."""
    spec, ref = case("chain of 3")
    assert all(
        any(lk.kind == "EndStopRigid" and b.name in (lk.a, lk.b) for lk in spec.links)
        for b in spec.bodies
    )
    default = worst(spec, ref, fmu_dir)
    tight = worst(spec, ref, fmu_dir, rtol=1e-6, atol=1e-8)
    assert tight == default and default[0] > 0.1


@pytest.mark.xfail(strict=True, raises=CosimError, reason="an impact on a held body diverges")
def test_with_fixed_steps_the_tree_converges_to_the_reference(fmu_dir):
    """As the chains; but on the tree body 3 hits body 2 while body 2 is held in permanent contact
    with body 1 by a second rigid EndStop, and the co-simulation diverges there (at 0.1 ms the
    SpringDamper on body 2 reports non-finite inputs at t = 0.22 s)."""
    spec, ref = case("tree of 4")
    fine = worst(spec, ref, fmu_dir, step=1e-4)
    assert max(fine[:2]) < 2e-3
