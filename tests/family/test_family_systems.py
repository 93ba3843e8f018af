"""The generated test systems (contactfmu.family.systems): drawn from a seed, reproducible, every
documented link and body kind among them, in chains, trees and loops, from 2 to 200 FMUs and
beyond, their parameters inside the ranges the module documents."""

import math
from collections import Counter

import pytest

from contactfmu.family import BODIES, DRAWN, LINKS, TOPOLOGIES, generate


def test_the_same_seed_gives_the_same_system_and_another_seed_another():
    a, b = generate(7, bodies=5), generate(7, bodies=5)
    assert a == b
    c = generate(8, bodies=5)
    assert [lk.params for lk in c.links] != [lk.params for lk in a.links]


def test_every_link_and_body_kind_and_topology_is_drawn():
    links, bodies = Counter(), Counter()
    for seed in range(12):
        for topology in TOPOLOGIES:
            spec = generate(seed, bodies=6, topology=topology)
            links.update(lk.kind for lk in spec.links)
            bodies.update(b.kind for b in spec.bodies)
    assert set(links) == set(DRAWN)
    assert set(bodies) == set(BODIES)
    assert min(links.values()) > 10  # each kind in many systems, not once by chance


def test_the_topologies_join_every_body_to_a_wall():
    for seed in range(5):
        chain = generate(seed, bodies=5, topology="chain")
        assert [(lk.a, lk.b) for lk in chain.links] == [
            ("wall0", "body1"),
            ("body1", "body2"),
            ("body2", "body3"),
            ("body3", "body4"),
            ("body4", "body5"),
            ("body5", "wall1"),
        ]
        tree = generate(seed, bodies=5, topology="tree")
        assert len(tree.links) == 5 and list(tree.walls) == ["wall0"]
        reached = {"wall0"}
        for lk in tree.links:  # each body hangs on a node placed before it
            assert lk.a in reached and lk.b not in reached
            reached.add(lk.b)
        assert reached == {"wall0"} | {b.name for b in tree.bodies}
        loop = generate(seed, bodies=5, topology="loop")
        assert [(lk.a, lk.b) for lk in loop.links[:6]] == [(lk.a, lk.b) for lk in chain.links]
        for lk in loop.links[6:]:
            assert int(lk.b[4:]) - int(lk.a[4:]) in (2, 3)
    extra = sum(len(generate(s, bodies=8, topology="loop").links) - 9 for s in range(10))
    assert extra > 10  # the loops: links beyond the chain's, between bodies 2 or 3 apart


def test_sizes_from_a_few_fmus_to_more_than_200():
    assert generate(0, bodies=1, topology="tree").fmus == 5  # wall, body, link, sine, force
    big = generate(0, bodies=97)
    assert big.fmus >= 200
    assert big.fmus == 2 + 97 + 98 + 2 * len(big.drives)


def test_every_link_rests_at_its_neutral_deflection():
    """A link's rest is the distance between its nodes at the start: its deflection is zero."""
    for topology in TOPOLOGIES:
        spec = generate(3, bodies=6, topology=topology)
        for lk in spec.links:
            assert spec.node(lk.b) - spec.node(lk.a) == pytest.approx(lk.rest, abs=1e-15)


def test_the_parameters_lie_in_their_documented_ranges():
    for seed in range(20):
        spec = generate(seed, bodies=6, topology="loop")
        for b in spec.bodies:
            assert 0.1 <= b.m <= 10.0
            if b.kind == "MassWithStopAndFriction":
                assert b.params["smin"] < b.x < b.params["smax"]
                assert b.params["F_Coulomb"] > 0.0
        for lk in spec.links:
            p = lk.params
            if lk.kind in ("Spring", "SpringDamper", "TranslationalHardstop", "ElastoGap"):
                assert 1e2 <= p["c"] <= 1e6
            if "d" in p:
                assert p["d"] > 0.0
            if lk.kind == "ElastoGapHertz":
                assert p["n"] == 1.5
                # the force at 1 mm of penetration is that of a stiffness of 1e2 .. 1e6 N/m
                assert 1e2 * 1e-3 <= p["c"] * 1e-3**1.5 <= 1e6 * 1e-3 * (1 + 1e-12)
            if lk.kind in ("ElastoGap", "ElastoGapHertz"):
                assert -5e-3 <= p["s_rel0"] <= 0.0
            if lk.kind == "TranslationalHardstop":
                assert 1e-3 <= p["b"] <= 1e-2
            if lk.kind == "EndStop":
                assert p["mode"] == 2 and p["l1"] > 0.0 and p["l2"] > 0.0
        for d in spec.drives:
            assert d.amplitude > 0.0 and 0.5 <= d.freq <= 5.0 and math.isfinite(d.phase)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(topology="ring"), "topology 'ring'"),
        (dict(bodies=0), "bodies = 0"),
        (dict(links=("Rope",)), "link kind 'Rope'"),
        (dict(body_kinds=("Wheel",)), "body kind 'Wheel'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        generate(1, **kwargs)


def test_end_stops_with_friction_are_drawn_when_asked():
    """EndStopFriction is drawn among the kinds given (not by default: DRAWN): an elastic EndStop
    with continuous friction, 0 < Fsl <= Fst, dvL of mm/s to cm/s, its transition shape (an
    advanced setting, so adv) Gevrey or tanh."""
    assert "EndStopFriction" in LINKS and "EndStopFriction" not in DRAWN
    drawn = [
        lk.params
        for seed in range(10)
        for lk in generate(seed, bodies=5, links=DRAWN + ("EndStopFriction",)).links
        if lk.kind == "EndStopFriction"
    ]
    assert len(drawn) > 3
    for p in drawn:
        assert p["friction"] is True and p["kindF"] == 1 and p["mode"] == 2 and p["adv"] is True
        assert 0.0 < p["Fsl"] <= p["Fst"] and 1e-3 <= p["dvL"] <= 2e-2
    assert {p["kindTrans"] for p in drawn} == {1, 2}


def test_rigid_end_stops_are_drawn_when_asked_with_the_masses_of_their_bodies():
    """EndStopRigid is drawn among the kinds given (not by default): a rigid EndStop (mode 1) with
    restitution by coefficient (kind 3, ci 0.3 .. 0.9), the elastic one's backlash, the documented
    tolerances given (adv), and m1/m2 the masses of the bodies at ctr1 (flange_b, node b) and ctr2
    (node a), 0 for a wall."""
    assert "EndStopRigid" in LINKS and "EndStopRigid" not in DRAWN
    drawn, walls = 0, 0
    for seed in range(6):
        for topology in TOPOLOGIES:
            spec = generate(seed, bodies=4, topology=topology, links=("EndStopRigid", "Spring"))
            mass = {b.name: b.m for b in spec.bodies}
            for lk in spec.links:
                if lk.kind != "EndStopRigid":
                    continue
                p = lk.params
                assert p["mode"] == 1 and p["kind"] == 3 and 0.3 <= p["ci"] <= 0.9
                assert 1e-3 <= p["l1"] <= 5e-3 and 1e-3 <= p["l2"] <= 5e-3
                assert p["adv"] is True and p["eps_dv"] == 1e-4 and p["eps_Fi"] == 1e-6
                assert p["m1"] == mass.get(lk.b, 0.0) and p["m2"] == mass.get(lk.a, 0.0)
                drawn += 1
                walls += lk.a in spec.walls or lk.b in spec.walls
    assert drawn > 20 and walls > 3
