"""The implicit scheme (cosim.algorithms.fixed.Implicit, cosim.coupling.ImplicitCoupling): backward Euler on the
interface with the inertia the bodies declare, stable stiff contacts at large steps, Newton on nonlinear elements."""

import copy
import math

import numpy as np
import pytest

from contactfmu import conventions
from contactfmu.cosim import CosimError, System
from contactfmu.cosim.algorithms.adaptive import Adaptive, AdaptiveAlgorithm
from contactfmu.cosim.coupling import Exchange
from contactfmu.cosim.implicit import declared_inertia, implicit_coupling, solve


@pytest.mark.parametrize("m", [0.5, 3.0])
def test_implicit_coupling_uses_the_inertia_the_body_declares(fmu_dir, m):
    """Wall -- Spring (c) -- Mass (m) in scheme="implicit": backward Euler on the interface with the
    mass the Mass FMU declares by its output interface.m (conventions.INERTIA, read in
    initialization mode). The recursion written out: the held spring force at the step's end for the
    motion it causes, m*y = -c*(s + h*v + h^2/2*y), then s += h*v + h^2/2*y, v += h*y. A master
    that took another inertia would follow another recursion (both masses are tested)."""
    c, h, s0 = 1e4, 1e-2, 0.1  # h*sqrt(c/m) = 1.4 and 0.58: the spring is stiff for the step
    sys = System()
    sys.add("wall", fmu_dir / "Fixed.fmu")
    sys.add("spring", fmu_dir / "Spring.fmu", c=c)
    sys.add("mass", fmu_dir / "Mass.fmu", m=m, s_start=s0)
    sys.connect("wall.flange", "spring.flange_a")
    sys.connect("spring.flange_b", "mass.flange_a")
    r = sys.simulate(0.2, h, scheme="implicit", outputs=["mass.s", "mass.v", "mass.interface.m"])
    assert np.all(r["mass.interface.m"] == m)
    s, v, expected = s0, 0.0, [s0]
    for _ in range(len(r.time) - 1):
        y = -c * (s + h * v) / (m + c * h * h / 2)
        s, v = s + h * v + h * h / 2 * y, v + h * y
        expected.append(s)
    assert np.max(np.abs(r["mass.s"] - np.array(expected))) < 1e-12


def plate(fmu_dir, element, rod=0.0, **params):
    """A 10 g plate pressed by a constant 65 N against a stiff element on a wall (PreLoad's
    plates: c = 1e6 N/m, d = 250 N.s/m): explicit coupling is unstable above 2*m/d = 8e-5 s. With
    a rod: the element joined to the wall by it, the plate starting at its end."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("contact", fmu_dir / f"{element}.fmu", **params)
    s.add("plate", fmu_dir / "Mass.fmu", m=0.01, s_start=rod, v_start=0.0)
    s.add("push", fmu_dir / "Force.fmu", f=-65.0)
    s.connect("wall.flange", "contact.flange_a", rod=rod)
    s.connect("contact.flange_b", "plate.flange_a")
    s.connect("push.flange", "plate.flange_b")
    return s


@pytest.mark.parametrize("element", ["SpringDamper", "ElastoGap"])
def test_implicit_scheme_is_stable_and_settles_at_the_static_penetration(fmu_dir, element):
    params = dict(c=1e6, d=250.0) if element == "SpringDamper" else dict(c=1e6, d=250.0, s_rel0=0.0)
    r = plate(fmu_dir, element, **params).simulate(
        0.05, 1e-3, outputs=["plate.s", "plate.v"], scheme="implicit"
    )
    assert r["plate.s"][-1] == pytest.approx(
        -65.0 / 1e6, rel=1e-13
    )  # c*|s| = 65 N; measured 7.5e-15
    assert abs(r["plate.v"][-1]) < 2e-14  # measured 1.4e-15 m/s
    assert np.all(np.isfinite(r["plate.s"])) and np.max(np.abs(r["plate.s"])) < 2 * 65.0 / 1e6


def test_explicit_coupling_of_the_same_plate_is_unstable(fmu_dir):
    """The default Gauss-Seidel coupling of the same plate at 1 ms: h*d/m = 25, each step
    multiplies the error about 600-fold."""
    r = plate(fmu_dir, "SpringDamper", c=1e6, d=250.0).simulate(0.05, 1e-3, outputs=["plate.s"])
    assert abs(r["plate.s"][-1]) > 1e100


def test_implicit_newton_follows_the_elastogap_regions(fmu_dir):
    """Released from 1 mm inside the gap contact, the plate is pushed out: the bounded damper
    (f = 0 while separating fast) and the contact's end are regions the linearization at the
    step's start does not see; the Newton iteration on the element finds them. The plate ends at
    rest at the static penetration whatever the step."""
    for h in (1e-3, 5e-3):
        s = plate(fmu_dir, "ElastoGap", c=1e6, d=250.0)
        s.instances["plate"].values.update(s_start=-1e-3)
        r = s.simulate(1.0, h, outputs=["plate.s", "contact.f"], scheme="implicit")
        assert r["plate.s"][-1] == pytest.approx(
            -6.5e-5, rel=5e-12
        )  # measured 7.5e-15 (1 ms), 4.3e-13 (5 ms)
        assert np.all(r["contact.f"] <= 0.0)  # the ElastoGap never pulls


class Reads:
    """Stands for fmpy's FMU2Slave in declared_inertia: getReal from a table, or failing."""

    def __init__(self, values, fail=False):
        self.values, self.fail, self.calls = values, fail, []

    def getReal(self, vrs):
        self.calls.append(list(vrs))
        if self.fail:
            raise RuntimeError("getReal failed")
        return [self.values[vr] for vr in vrs]


def test_the_declared_inertia_is_the_real_output_interface_m(fmu_dir):
    """docs/master.md, conventions.INERTIA: a body's inertia is the Real output interface.m, read
    by fmi2GetReal; an FMU whose interface.m is not a Real output (a parameter, an Integer output)
    or that has none declares no inertia; a failed read is the instance's CosimError naming the
    call (Mass.fmu with stand-in FMI calls)."""
    mass = System().add("mass", fmu_dir / "Mass.fmu")
    var = mass.variables[conventions.INERTIA]
    mass.slave = Reads({var.valueReference: 2.5})
    assert declared_inertia(mass) == 2.5
    assert mass.slave.calls == [[var.valueReference]]
    for causality, kind in (("parameter", "Real"), ("input", "Real"), ("output", "Integer")):
        other = copy.copy(var)
        other.causality, other.type = causality, kind
        mass.variables[conventions.INERTIA] = other
        assert declared_inertia(mass) is None
    del mass.variables[conventions.INERTIA]
    assert declared_inertia(mass) is None
    assert mass.slave.calls == [[var.valueReference]]  # none of these read
    mass.variables[conventions.INERTIA] = var
    mass.slave = Reads({}, fail=True)
    with pytest.raises(CosimError) as e:
        declared_inertia(mass)
    assert str(e.value).startswith("mass (Mass.fmu): fmi2GetReal failed: getReal failed\n")


def test_the_newton_probe_sets_the_element_s_motion_with_the_rod_offset(fmu_dir):
    """The plate of the stable implicit scheme above, its ElastoGap (nonlinear: evaluated at the
    predicted end state) joined to the wall by a rod: the probe sets the element's flange where
    the exchange does, the wall's position plus the rod. The plate settles at the static
    penetration from the rod's end, rod - 65 N / c."""
    rod = 0.5
    s = plate(fmu_dir, "ElastoGap", rod, c=1e6, d=250.0, s_rel0=0.0)
    r = s.simulate(0.05, 1e-3, outputs=["plate.s", "plate.v"], scheme="implicit")
    # measured 3.3e-16 m (3 units in the last place of 0.5) and 4.1e-12 m/s: at 0.5 m, the rounding
    # of the positions is c*1.1e-16 = 1.1e-10 N of force
    assert r["plate.s"][-1] == pytest.approx(rod - 65.0 / 1e6, abs=2e-15)
    assert abs(r["plate.v"][-1]) < 4e-11
    assert np.max(np.abs(r["plate.s"] - rod)) < 2 * 65.0 / 1e6


# ---- the composite coupling (Bathe's TR-BDF2) against its own recursion -----------------------

# wall_a (0) -- s1 -- body 0 -- s2 -- body 1 -- s3 -- wall_b (0.3), a sine force on body 0:
# (instance, FMU, c, d, s_rel0, flange_a end, flange_b end), an end a body index or a wall position
ELEMENTS = [
    ("s1", "Spring", 2e4, 0.0, 0.1, 0.0, 0),
    ("s2", "SpringDamper", 5e3, 3.0, 0.08, 0, 1),
    ("s3", "Spring", 1e4, 0.0, 0.1, 1, 0.3),
]
BODIES = [("b0", 0.5, 0.11, 0.3), ("b1", 2.0, 0.2, -0.2)]  # (instance, m, s_start, v_start)
SINE = (2.0, 2.0, 0.3)  # amplitude [N], f [Hz], phase [rad]


def three_springs(fmu_dir, reverse):
    """ELEMENTS and BODIES, s2 with its flanges swapped (flange_a on body 1) if reverse."""
    s = System()
    s.add("wall_a", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("wall_b", fmu_dir / "Fixed.fmu", s0=0.3)
    for name, m, s0, v0 in BODIES:
        s.add(name, fmu_dir / "Mass.fmu", m=m, L=0.0, s_start=s0, v_start=v0)
    for name, fmu, c, d, rest, a, b in elements(reverse):
        s.add(name, fmu_dir / f"{fmu}.fmu", c=c, s_rel0=rest, **(dict(d=d) if d else {}))
        for flange, end in (("flange_a", a), ("flange_b", b)):
            node = f"{BODIES[end][0]}.flange_a" if isinstance(end, int) else None
            if node is None:
                node = "wall_a.flange" if end == 0.0 else "wall_b.flange"
            s.connect(node, f"{name}.{flange}")
    amplitude, f, phase = SINE
    s.add("sine", fmu_dir / "Sine.fmu", amplitude=amplitude, f=f, phase=phase)
    s.add("force", fmu_dir / "Force.fmu")
    s.connect("sine.y", "force.f")
    s.connect("force.flange", "b0.flange_b")
    return s


def elements(reverse):
    if not reverse:
        return ELEMENTS
    (name, fmu, c, d, rest, a, b) = ELEMENTS[1]
    return [ELEMENTS[0], (name, fmu, c, d, -rest, b, a), ELEMENTS[2]]


def composite_recursion(reverse, big, n):
    """The bodies' positions after each of n output steps of length big, each two composite steps
    (the adaptive master's step doubling: the two half steps kept) of H = big/2, as the
    ImplicitCoupling docstring writes them, with h = H/2, x, v the bodies' motion, M their masses,
    f(x, v) the elements' forces on them (linear: f(x + dx, v + dv) = f(x, v) - K*dx - D*dv) and
    e the sine force held as its value and rate at the stage's start give it:
    stage 1, the trapezoidal rule: M*a = (f(x0, v0) + f(x1, v1))/2 + e(t0) + h/2*e'(t0) with
    x1 = x0 + h*v0 + h^2/2*a, v1 = v0 + h*a; stage 2, three-point backward Euler: M*a2 =
    f(x2, v2) + e(t1) + h*e'(t1), v2 = (H*a2 - v0 + 4*v1)/3, x2 = (H*v2 - x0 + 4*x1)/3."""
    els = elements(reverse)
    nb = len(BODIES)
    M = np.diag([m for _, m, _, _ in BODIES])
    K, D = np.zeros((nb, nb)), np.zeros((nb, nb))
    for _, _, c, d, _, a, b in els:
        ends = [e for e in (a, b) if isinstance(e, int)]
        for i in ends:
            K[i, i] += c
            D[i, i] += d
        if len(ends) == 2:
            K[a, b] -= c
            K[b, a] -= c
            D[a, b] -= d
            D[b, a] -= d

    def f(x, v):
        out = np.zeros(nb)
        for _, _, c, d, rest, a, b in els:
            sa, va = (x[a], v[a]) if isinstance(a, int) else (a, 0.0)
            sb, vb = (x[b], v[b]) if isinstance(b, int) else (b, 0.0)
            tension = c * (sb - sa - rest) + d * (vb - va)
            if isinstance(a, int):
                out[a] += tension
            if isinstance(b, int):
                out[b] -= tension
        return out

    amplitude, freq, phase = SINE
    w = 2.0 * math.pi * freq

    def e(t, lead):  # the sine force on body 0 and lead*its rate
        out = np.zeros(nb)
        out[0] = amplitude * (math.sin(w * t + phase) + lead * w * math.cos(w * t + phase))
        return out

    x = np.array([s0 for _, _, s0, _ in BODIES])
    v = np.array([v0 for _, _, _, v0 in BODIES])
    H, t, out = big / 2.0, 0.0, [x]
    h = H / 2.0
    for k in range(2 * n):
        t = k * H
        a = np.linalg.solve(M + h * h / 4 * K + h / 2 * D, f(x, v) - h / 2 * K @ v + e(t, h / 2))
        x1, v1 = x + h * v + h * h / 2 * a, v + h * a
        sigma = (H * (4.0 * v1 - v) / 3.0 - x + 4.0 * x1) / 3.0
        rho = (4.0 * v1 - v) / 3.0
        a2 = np.linalg.solve(M + H * H / 9 * K + H / 3 * D, f(sigma, rho) + e(t + h, h))
        v2 = (H * a2 - v + 4.0 * v1) / 3.0
        x, v = (H * v2 - x + 4.0 * x1) / 3.0, v2
        if k % 2:
            out.append(x)
    return np.array(out)


@pytest.mark.parametrize("reverse", [False, True], ids=["s2-forward", "s2-reversed"])
def test_the_composite_coupling_follows_its_recursion(fmu_dir, reverse):
    """Two bodies (0.5 and 2 kg) between walls on three elements (stiff for the 10 ms steps:
    h*omega = 2 .. 2.8), one of them a spring-damper between the bodies (both its ends move: the
    cross terms of the linear system), a sine force with its derivative on the lighter body (the
    other forces' mean and end values of the stages): the adaptive master held to 10 ms steps,
    every one composite, against the recursion its docstring defines (composite_recursion), with
    the element between the bodies either way round."""
    big, n = 1e-2, 20
    r = three_springs(fmu_dir, reverse).simulate(
        n * big,
        output_interval=big,
        scheme=AdaptiveAlgorithm(Adaptive(h0=big, hmax=big, rtol=1e3, atol=1e3)),
        outputs=["b0.s", "b1.s"],
    )
    assert all(x.implicit and x.accepted for x in r.steps) and len(r.time) == n + 1
    expected = composite_recursion(reverse, big, n)
    got = np.stack([r["b0.s"], r["b1.s"]], axis=1)
    assert np.abs(got - expected).max() < 1e-14


def test_an_element_with_a_flange_off_the_nodes_is_left_out_and_the_next_is_coupled(fmu_dir):
    """implicit_coupling couples the compliant elements with interface outputs whose both flanges
    are on nodes: a Spring with its flange_b connected to nothing (no motion to give it) is left
    out, and the Spring after it in the system, between the wall and the mass, is coupled."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("loose", fmu_dir / "Spring.fmu", c=1e3)
    s.add("spring", fmu_dir / "Spring.fmu", c=1e4)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=0.1)
    s.connect("wall.flange", "loose.flange_a")
    s.connect("wall.flange", "spring.flange_a")
    s.connect("spring.flange_b", "mass.flange_a")
    s.instantiate(0.0, 1.0)
    s.enter_initialization(0.0)
    try:
        coupled = implicit_coupling(s, s.plan())
        assert [e.inst.name for e in coupled.elements] == ["spring"]
        assert [(e.end_a.body, e.end_b.body) for e in coupled.elements] == [(None, "mass")]
        assert list(coupled.bodies) == ["mass"]
    finally:
        s.free()


@pytest.mark.parametrize(
    "a, b, x",
    [
        ([[1.0, 1.0], [1.0, 2.0]], [3.0, 5.0], [1.0, 2.0]),  # the first elimination factor is 1
        ([[4.0, 2.0, 0.0], [2.0, 5.0, 2.0], [0.0, 2.0, 5.0]], [8.0, 18.0, 19.0], [1.0, 2.0, 3.0]),
        ([[2.0, -1.0], [-1.0, 2.0]], [0.0, 3.0], [1.0, 2.0]),  # the coupling's sign pattern
    ],
)
def test_the_small_symmetric_positive_definite_solve(a, b, x):
    """implicit.solve: the solution of a symmetric positive definite a*x = b (Gaussian elimination
    without pivoting), against solutions worked by hand (a*x = b, entries exact in binary)."""
    assert solve([row[:] for row in a], b[:]) == pytest.approx(x, rel=1e-15, abs=1e-15)


def test_the_composite_correction_goes_into_the_body_s_first_force_input(fmu_dir):
    """Exchange(composite=True): the coupling sets each coupled body's force through a correction
    term in the slot of the body's first force input; every other input is the sum of its
    connected outputs. Before the coupling the exchange is the Gauss-Seidel one: the elements get
    the accelerations the present forces give, those of the explicit exchange, at the first
    exchange (no correction made yet) and at the next one too (the correction of the last
    exchange is not part of the present forces; with it, s1 got -301.698 instead of -301.818 m/s^2).
    ELEMENTS and BODIES: the lighter body's first input, flange_a.f, takes s1 and s2, its
    flange_b.f the sine force alone."""
    s = three_springs(fmu_dir, False)
    s.instantiate(0.0, 1.0)
    s.enter_initialization(0.0)
    try:

        def get(instance, name):
            inst = s.instances[instance]
            return inst.slave.getReal([inst.var(name).valueReference])[0]

        plan = s.plan()
        assert [(f.body.name, [ti.name for ti, _ in f.sources]) for f in plan.forces][1:] == [
            ("b0", ["s1", "s2"]),
            ("b1", ["s2", "s3"]),
            ("wall_b", ["s3"]),
            ("b0", ["force"]),
        ]
        accelerations = [
            (e, f"{fl}.a") for e in ("s1", "s2", "s3") for fl in ("flange_a", "flange_b")
        ]
        Exchange(plan).gauss_seidel(0.0, 5e-3)
        present = [get(*a) for a in accelerations]
        coupling = implicit_coupling(s, plan)
        exchange = Exchange(plan, coupling, composite=True)
        for stage in (1, 2):
            coupling.stage = stage
            exchange.gauss_seidel(0.0, 5e-3)
            assert [get(*a) for a in accelerations] == present
            assert exchange.correction["b0"][0] != 0.0
            assert get("b0", "flange_b.f") == get("force", "flange.f")
    finally:
        s.free()
