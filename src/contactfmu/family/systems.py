"""Test systems drawn from a seed: bodies joined by compliant elements and contacts, driven by a
sine force, with every parameter drawn over a realistic range.

A system is plain data (:class:`Spec`): nothing here runs an FMU or integrates anything. Positions
are along one axis; every body is a point (L = 0) resting at ``x`` at the start, and every link
joins two nodes (a body or a wall) through a rod that makes its deflection zero at the bodies'
resting positions: a link from node p to node q has s_rel = x_q - x_p - rest (flange_a on p,
flange_b on q, the rod ``-rest`` on q's side). So a spring is unstretched at rest, a gap is open
by ``gap`` and a stop has its backlash centred.

Topologies:

* ``chain``: wall, body 1, body 2, ..., body N, wall, a link between each neighbouring pair (wagons
  with buffers and couplers between two buffer stops);
* ``tree``: body 1 on the wall, every further body on a body drawn among the ones before it;
* ``loop``: the chain, plus links that join bodies two or three places apart (closed loops).

The link kinds (:data:`LINKS`) and body kinds (:data:`BODIES`) name the FMUs they become
("ElastoGapHertz" is an ElastoGap with n = 1.5, "EndStopFriction" an EndStop with friction,
"EndStopRigid" a rigid EndStop that is given the masses of its bodies, m1 and m2); a
system draws among :data:`DRAWN` unless it is given its kinds.
"""

import math
import random
from dataclasses import dataclass, field

LINKS = (
    "Spring",
    "Damper",
    "SpringDamper",
    "ElastoGap",  # n = 1
    "ElastoGapHertz",  # ElastoGap with n = 1.5 (Hertzian contact)
    "TranslationalHardstop",
    "EndStop",  # elastic end stops (mode 2)
    "EndStopFriction",  # elastic end stops with friction in the backlash (continuous transition)
    "EndStopRigid",  # rigid end stops (mode 1): impacts with restitution, permanent contact
)
# the kinds drawn by default: the studies' systems (benchmarks/family_results.json) stay the same
DRAWN = LINKS[:7]
BODIES = ("Mass", "MassWithStopAndFriction")
TOPOLOGIES = ("chain", "tree", "loop")
WALL = "wall"  # the nodes that do not move are named wall0, wall1

SPACING = 0.1  # m between neighbouring resting positions


@dataclass(frozen=True)
class Body:
    """A body: Mass or MassWithStopAndFriction (its friction and stop parameters in ``params``)."""

    name: str
    kind: str
    m: float
    x: float  # resting (start) position [m]
    v: float = 0.0  # start velocity [m/s]
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Link:
    """A compliant element or contact from node ``a`` (flange_a, ctr2) to node ``b`` (flange_b,
    ctr1); ``rest`` = x_b - x_a at rest; ``params`` the FMU's parameters by their documented names."""

    name: str
    kind: str
    a: str
    b: str
    rest: float
    params: dict


@dataclass(frozen=True)
class Drive:
    """A sine force on a body: f(t) = amplitude*sin(2*pi*freq*t + phase) + offset [N] (MSL
    Blocks.Sources.Sine into Translational.Sources.Force, pushing the body towards +s)."""

    name: str
    body: str
    amplitude: float
    freq: float
    phase: float
    offset: float = 0.0


@dataclass(frozen=True)
class Spec:
    """A generated system: walls {name: position}, bodies, links, drives, the simulated span."""

    seed: int
    topology: str
    walls: dict
    bodies: tuple
    links: tuple
    drives: tuple
    stop_time: float

    @property
    def fmus(self):
        """How many FMUs the system is made of (a drive is a Sine and a Force)."""
        return len(self.walls) + len(self.bodies) + len(self.links) + 2 * len(self.drives)

    def node(self, name):
        """Resting position of a node (wall or body)."""
        if name in self.walls:
            return self.walls[name]
        return next(b.x for b in self.bodies if b.name == name)

    def describe(self):
        """One line: topology, size, the kinds of its links and bodies."""
        kinds = sorted({link.kind for link in self.links})
        bodies = sorted({b.kind for b in self.bodies})
        return (
            f"seed {self.seed}: {self.topology} of {len(self.bodies)} bodies "
            f"({', '.join(bodies)}), {len(self.links)} links ({', '.join(kinds)}), "
            f"{self.fmus} FMUs, {self.stop_time} s"
        )


def _loguniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def _link_params(rng, kind, mu, ma=math.inf, mb=math.inf):
    """The documented parameters of a link of `kind` between bodies of reduced mass mu [kg] (ma at
    flange_a, mb at flange_b, inf for a wall): stiffness 1e2 .. 1e6 N/m (soft to stiff), damping
    ratio 0.01 .. 1 (light to heavy)."""
    if kind == "EndStopRigid":
        # the elastic EndStop's backlash, restitution 0.3 .. 0.9 (kind 3), the documented
        # tolerances given explicitly (adv), and the inertias at ctr1 (flange_b) and ctr2 (0: wall)
        return {
            "mode": 1,
            "l1": rng.uniform(1e-3, 5e-3),
            "l2": rng.uniform(1e-3, 5e-3),
            "kind": 3,
            "ci": rng.uniform(0.3, 0.9),
            "adv": True,
            "eps_dv": 1e-4,
            "eps_Fi": 1e-6,
            "m1": 0.0 if math.isinf(mb) else mb,
            "m2": 0.0 if math.isinf(ma) else ma,
        }
    c = _loguniform(rng, 1e2, 1e6)
    d = 2.0 * _loguniform(rng, 0.01, 1.0) * math.sqrt(c * mu)
    if kind == "Spring":
        return {"c": c, "s_rel0": 0.0}
    if kind == "Damper":
        return {"d": d}
    if kind == "SpringDamper":
        return {"c": c, "d": d, "s_rel0": 0.0}
    if kind in ("ElastoGap", "ElastoGapHertz"):
        n = 1.0 if kind == "ElastoGap" else 1.5
        # c is f_ref/s_ref^n with s_ref = 1 m: keep the force at 1 mm of penetration that of c
        return {"c": c * 1e-3 ** (1.0 - n), "d": d, "s_rel0": -rng.uniform(0.0, 5e-3), "n": n}
    if kind == "TranslationalHardstop":
        return {"c": c, "d": d, "b": rng.uniform(1e-3, 1e-2)}
    if kind == "EndStop":
        d2 = 2.0 * _loguniform(rng, 0.01, 1.0) * math.sqrt(c * mu)
        return {
            "mode": 2,
            "l1": rng.uniform(1e-3, 5e-3),
            "l2": rng.uniform(1e-3, 5e-3),
            "k1": c,
            "k2": _loguniform(rng, 1e2, 1e6),
            "b1": d,
            "b2": d2,
        }
    if kind == "EndStopFriction":
        # friction forces up to half the weight of the reduced mass, a limit velocity difference
        # of mm/s to cm/s, a Gevrey or a tanh transition
        stop = _link_params(rng, "EndStop", mu)
        fst = rng.uniform(0.05, 0.5) * 9.81 * mu
        return {
            **stop,
            "friction": True,
            "kindF": 1,
            "Fst": fst,
            "Fsl": fst * rng.uniform(0.5, 1.0),
            "dvL": _loguniform(rng, 1e-3, 2e-2),
            "adv": True,  # (the transition shape is an advanced setting)
            "kindTrans": rng.choice((1, 2)),
        }
    raise ValueError(f"link kind {kind!r}: must be one of {', '.join(LINKS)}")


def generate(seed, bodies=4, topology="chain", links=DRAWN, body_kinds=BODIES, stop_time=1.0):
    """The system of `seed`: `bodies` bodies (1 .. 1000) in `topology` (TOPOLOGIES), their links
    drawn among the kinds `links`, their bodies among `body_kinds` (a MassWithStopAndFriction one
    time in five where allowed), a sine force on the first body (and on one body in ten beyond),
    simulated for `stop_time` s. The same arguments give the same system."""
    if topology not in TOPOLOGIES:
        raise ValueError(f"topology {topology!r}: must be one of {', '.join(TOPOLOGIES)}")
    if not (isinstance(bodies, int) and 1 <= bodies <= 1000):
        raise ValueError(f"bodies = {bodies!r}: must be an integer in [1, 1000]")
    for kind in links:
        if kind not in LINKS:
            raise ValueError(f"link kind {kind!r}: must be one of {', '.join(LINKS)}")
    for kind in body_kinds:
        if kind not in BODIES:
            raise ValueError(f"body kind {kind!r}: must be one of {', '.join(BODIES)}")
    if not links or "Mass" not in body_kinds:
        raise ValueError("at least one link kind and the body kind Mass are needed")
    rng = random.Random(f"contactfmu.family {seed} {bodies} {topology}")

    masses = [_loguniform(rng, 0.1, 10.0) for _ in range(bodies)]
    walls = {"wall0": 0.0}
    pairs = []  # (a, b) node indices; 0 is wall0, 1..N the bodies, N + 1 wall1
    if topology == "tree":
        place = [0.0] + [0.0] * bodies
        for k in range(1, bodies + 1):
            parent = 0 if k == 1 else rng.randrange(1, k)
            place[k] = place[parent] + SPACING
            pairs.append((parent, k))
    else:
        place = [SPACING * k for k in range(bodies + 2)]
        walls["wall1"] = place[-1]
        pairs = [(k, k + 1) for k in range(bodies + 1)]
        if topology == "loop":
            for k in range(1, bodies + 1):
                for span in (2, 3):
                    if k + span <= bodies and rng.random() < 0.35:
                        pairs.append((k, k + span))

    def name(k):
        if k == 0:
            return "wall0"
        if k == bodies + 1:
            return "wall1"
        return f"body{k}"

    def mass(k):
        return masses[k - 1] if 1 <= k <= bodies else math.inf

    body_list = []
    for k in range(1, bodies + 1):
        kind = (
            "MassWithStopAndFriction"
            if ("MassWithStopAndFriction" in body_kinds and rng.random() < 0.2)
            else "Mass"
        )
        params = {}
        if kind == "MassWithStopAndFriction":
            g = 9.81 * masses[k - 1]  # friction forces of the order of the weight
            params = {
                "F_prop": rng.uniform(0.0, 2.0) * masses[k - 1],
                "F_Coulomb": rng.uniform(0.05, 0.3) * g,
                "F_Stribeck": rng.uniform(0.0, 0.3) * g,
                "fexp": rng.uniform(0.5, 5.0),
                "smin": place[k] - rng.uniform(0.01, 0.05),
                "smax": place[k] + rng.uniform(0.01, 0.05),
            }
        body_list.append(Body(name(k), kind, masses[k - 1], place[k], 0.0, params))

    link_list = []
    for i, (a, b) in enumerate(pairs):
        kind = rng.choice(links)
        ma, mb = mass(a), mass(b)
        mu = 1.0 / (1.0 / ma + 1.0 / mb)
        link_list.append(
            Link(
                f"link{i + 1}",
                kind,
                name(a),
                name(b),
                place[b] - place[a],
                _link_params(rng, kind, mu, ma, mb),
            )
        )

    # the drive: a force that moves the bodies by some mm to cm against the median stiffness
    stiffness = sorted(p.get("c", p.get("k1", 1e3)) for p in (lk.params for lk in link_list))
    scale = stiffness[len(stiffness) // 2] * _loguniform(rng, 2e-3, 2e-2)
    driven = [1] + [k for k in range(2, bodies + 1) if rng.random() < 0.1]
    drives = tuple(
        Drive(
            f"drive{k}",
            name(k),
            scale * rng.uniform(0.5, 1.0),
            _loguniform(rng, 0.5, 5.0),
            rng.uniform(0.0, 2.0 * math.pi),
        )
        for k in driven
    )
    return Spec(seed, topology, walls, tuple(body_list), tuple(link_list), drives, stop_time)
