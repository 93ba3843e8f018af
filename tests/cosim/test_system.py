"""The system (cosim.system): connections, rods, force sums, refusals of ill-formed systems, FMU errors
naming instance, time and log, the README's master snippet."""

from pathlib import Path

import numpy as np
import pytest
from cosim_systems import oscillator

from contactfmu.cosim import CosimError, System


def test_forces_of_several_elements_on_one_flange_add_up(fmu_dir):
    s = System()
    s.add("left", fmu_dir / "Fixed.fmu", s0=0.0)
    s.add("right", fmu_dir / "Fixed.fmu", s0=4.0)
    s.add("k1", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1.0)
    s.add("k2", fmu_dir / "Spring.fmu", c=300.0, s_rel0=1.0)
    s.add("damper", fmu_dir / "Damper.fmu", d=40.0)
    s.add("mass", fmu_dir / "Mass.fmu", m=1.0, s_start=1.0)
    s.connect("left.flange", "k1.flange_a")
    s.connect("left.flange", "damper.flange_a")
    s.connect("k1.flange_b", "mass.flange_a")
    s.connect("damper.flange_b", "mass.flange_a")
    s.connect("mass.flange_b", "k2.flange_a")
    s.connect("k2.flange_b", "right.flange")
    res = s.simulate(
        stop_time=3.0, step=1e-3, outputs=["mass.s", "left.f_support", "right.f_support"]
    )
    # equilibrium 100 (x - 1) = 300 (3 - x): x = 2.5; both springs pull their walls with 150 N
    assert res["mass.s"][-1] == pytest.approx(2.5, abs=1e-6)
    assert res["left.f_support"][-1] == pytest.approx(150.0, abs=1e-3)  # pulled towards the mass
    assert res["right.f_support"][-1] == pytest.approx(-150.0, abs=1e-3)


def test_two_inertial_elements_need_a_compliant_element_between(fmu_dir):
    s = System()
    s.add("m1", fmu_dir / "Mass.fmu")
    s.add("m2", fmu_dir / "Mass.fmu")
    s.add("wall", fmu_dir / "Fixed.fmu")
    with pytest.raises(CosimError, match="compliant element"):
        s.connect("m1.flange_b", "m2.flange_a")
    with pytest.raises(CosimError, match="compliant element"):
        s.connect("wall.flange", "m1.flange_a", rod=1.0)
    assert s.flange_edges == []


def test_a_node_without_an_inertial_element_is_refused(fmu_dir):
    s = System()
    s.add("k1", fmu_dir / "Spring.fmu")
    s.add("k2", fmu_dir / "Spring.fmu")
    s.connect("k1.flange_b", "k2.flange_a")
    with pytest.raises(CosimError, match="needs one inertial element"):
        s.simulate(stop_time=0.1, step=1e-3)


def test_unknown_flanges_and_bad_signals_are_refused(fmu_dir):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    s.add("sine", fmu_dir / "Sine.fmu")
    s.add("force", fmu_dir / "Force.fmu")
    with pytest.raises(CosimError, match="not a flange"):
        s.connect("mass.flange_c", "force.flange")
    with pytest.raises(CosimError, match="needs an output and an input"):
        s.connect("force.f", "sine.y")
    with pytest.raises(CosimError, match="has no variable 'mm'"):
        s.add("m2", fmu_dir / "Mass.fmu", mm=1.0)
    with pytest.raises(CosimError, match="not found"):
        s.add("x", fmu_dir / "Nothing.fmu")


def test_an_fmu_error_names_instance_time_and_log(fmu_dir):
    s = oscillator(fmu_dir)
    s.instances["spring"].values["c"] = -3.0
    with pytest.raises(CosimError) as exc:
        s.simulate(stop_time=0.1, step=1e-3)
    text = str(exc.value)
    assert (
        "spring (Spring.fmu)" in text and "fmi2ExitInitializationMode" in text and "t = 0 s" in text
    )
    assert "Invalid parameter c = -3.0 N/m" in text


def test_readme_master_snippet_runs_and_writes_into_an_ignored_folder(fmu_dir, tmp_path):
    """The README's master snippet ("A first co-simulation", repeated in docs/master.md "A system of
    FMUs"), run where a user runs it (the repository root, FMUs in fmus/)."""
    import re
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    snippets = []
    for page, heading in (
        ("README.md", "## A first co-simulation"),
        ("docs/master.md", "## A system of FMUs"),
    ):
        text = (root / page).read_text()
        snippets.append(
            re.search(r"```python\n(.*?)```", text[text.index(heading) :], re.S).group(1)
        )
    code = snippets[0]
    assert snippets[1] == code, "docs/master.md repeats the README's snippet: keep the two equal"
    written = re.findall(r"to_csv\(\"([^\"]+)\"\)", code)
    assert written, "the snippet writes a CSV"
    for path in written:
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=root)
        assert ignored.returncode == 0, (
            f"{path} is not ignored by git: the snippet would leave it in the clone"
        )
    shutil.copytree(fmu_dir, tmp_path / "fmus")
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    from contactfmu.cosim import read_csv

    res = read_csv(tmp_path / written[0])
    t = res.time
    assert np.max(np.abs(res["mass.s"] - (3 + 0.5 * np.cos(10 * t)))) < 1e-4  # the oscillator above


# ---- the system's parts, unit by unit (mutation/pytest_plugin.py UNIT_TESTS) -------------------


def test_an_instance_s_discrete_outputs_are_its_integer_and_boolean_outputs(fmu_dir):
    """Instance.discrete_outputs (the states whose changes are events, conventions.DISCRETE_TYPES):
    per type, Integer first, the outputs in the model description's order; none for a Mass."""
    s = System()
    s.add("gap", fmu_dir / "ElastoGap.fmu")
    s.add("stop", fmu_dir / "EndStop.fmu")
    s.add("mass", fmu_dir / "Mass.fmu")

    def named(inst):
        return [
            (kind, [inst.md.modelVariables[vr].name for vr in vrs])
            for kind, vrs in inst.discrete_outputs()
        ]

    assert named(s.instances["gap"]) == [("Boolean", ["contact", "interface.integrates"])]
    assert named(s.instances["stop"]) == [
        ("Integer", ["stop", "sf"]),
        ("Boolean", ["interface.integrates"]),
    ]
    assert s.instances["mass"].discrete_outputs() == []


def test_instance_names_are_unique_and_plain(fmu_dir):
    s = System()
    inst = s.add("mass", fmu_dir / "Mass.fmu", {"m": 2.0, "L": 1.0}, L=0.5)
    assert inst is s.instances["mass"] and inst.values == {"m": 2.0, "L": 0.5}  # kwargs win
    assert (inst.name, inst.path) == ("mass", str(fmu_dir / "Mass.fmu"))
    with pytest.raises(CosimError) as e:
        s.add("mass", fmu_dir / "Mass.fmu")
    assert str(e.value) == "instance name 'mass' is already used"
    with pytest.raises(CosimError) as e:
        s.add("a.b", fmu_dir / "Mass.fmu")
    assert str(e.value) == "instance name 'a.b' must not contain '.'"


def test_an_fmu_that_cannot_be_read_or_set_is_named(fmu_dir, tmp_path):
    (tmp_path / "junk.fmu").write_bytes(b"not a zip")
    s = System()
    with pytest.raises(CosimError) as e:
        s.add("x", tmp_path / "junk.fmu")
    assert str(e.value).startswith(f"x: {tmp_path / 'junk.fmu'} is not a readable FMU: ")
    with pytest.raises(CosimError) as e:
        s.add("y", tmp_path / "none.fmu")
    assert str(e.value) == f"y: FMU file {tmp_path / 'none.fmu'} not found"
    with pytest.raises(CosimError) as e:
        s.add("m", fmu_dir / "Mass.fmu", s=1.0)
    assert str(e.value) == (
        "m.s cannot be set: it is an output computed by the FMU (initial = calculated); set s_start"
    )
    with pytest.raises(CosimError) as e:
        s.add("m", fmu_dir / "Mass.fmu", a=1.0)  # no a_start
    assert (
        str(e.value)
        == "m.a cannot be set: it is an output computed by the FMU (initial = calculated)"
    )
    # parameters, inputs and start values can
    inst = s.add("m", fmu_dir / "Mass.fmu", m=1.0, **{"flange_a.f": 2.0})
    assert inst.values == {"m": 1.0, "flange_a.f": 2.0}
    with pytest.raises(CosimError) as e:
        inst.var("mm")
    assert str(e.value) == f"m (Mass) has no variable 'mm'; it has: {', '.join(inst.variables)}"
    assert inst.slave is None and inst.log == [] and inst.unzipdir is None


def test_what_an_instance_declares(fmu_dir):
    s = System()
    mass, spring, sine = (
        s.add("mass", fmu_dir / "Mass.fmu"),
        s.add("spring", fmu_dir / "Spring.fmu"),
        s.add("sine", fmu_dir / "Sine.fmu"),
    )
    # Mass takes input derivatives, publishes none; Spring publishes its force's derivative
    assert (mass.derivatives, mass.interpolates) == (False, True)
    assert (spring.derivatives, spring.interpolates) == (True, False)
    assert [mass.port("flange_a", w) for w in "svaf"] == [f"flange_a.{w}" for w in "svaf"]
    assert (mass.flange_role("flange_a"), spring.flange_role("flange_b")) == ("motion", "force")
    assert mass.flange_role("flange_c") is None and sine.flange_role("y") is None
    assert mass.flange_role("interface") is None


def test_a_failed_call_names_the_instance_the_time_and_the_log(fmu_dir):
    s = System()
    inst = s.add("mass", fmu_dir / "Mass.fmu")
    assert inst.call("x", lambda: 42) == 42
    with pytest.raises(CosimError) as e:
        inst.call("fmi2DoStep", lambda: 1 / 0, 0.1234567891234)
    assert str(e.value) == (
        "mass (Mass.fmu): fmi2DoStep failed at t = 0.123456789 s: division by zero\n"
        "FMU log:\n  (no messages)"
    )
    assert e.value.__cause__ is None and e.value.__suppress_context__
    inst.log = [(3, f"message {k}") for k in range(25)]
    text = str(inst.fail("fmi2GetReal", ValueError("bad")))
    assert text.startswith("mass (Mass.fmu): fmi2GetReal failed: bad\nFMU log:\n  [3] message 5\n")
    assert text.endswith("  [3] message 24") and text.count("\n") == 21  # the last 20 messages


def _names(links):
    return [
        (si.name, sf, [(ti.name, tf, off) for ti, tf, off in targets]) for si, sf, targets in links
    ]


def test_nodes_carry_the_rod_offsets_from_their_inertial_flange(fmu_dir):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("k1", fmu_dir / "Spring.fmu")
    s.add("k2", fmu_dir / "Spring.fmu")
    s.add("mass", fmu_dir / "Mass.fmu")
    s.connect("wall.flange", "k1.flange_a", rod=2.0)  # k1.flange_a.s = wall.s + 2
    s.connect("k2.flange_a", "wall.flange", rod=0.5)  # wall.s = k2.flange_a.s + 0.5
    s.connect("k1.flange_b", "mass.flange_a", rod=1)
    s.connect("mass.flange_b", "k2.flange_b", rod=-0.25)
    assert s.flange_edges[2] == ("k1.flange_b", "mass.flange_a", 1.0)
    assert type(s.flange_edges[2][2]) is float
    assert _names(s.node_links()) == [
        ("wall", "flange", [("k1", "flange_a", 2.0), ("k2", "flange_a", -0.5)]),
        ("mass", "flange_a", [("k1", "flange_b", -1.0)]),
        ("mass", "flange_b", [("k2", "flange_b", -0.25)]),
    ]


def test_rods_around_a_loop_must_agree(fmu_dir):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    for k in range(3):
        s.add(f"k{k}", fmu_dir / "Spring.fmu")
    s.connect("mass.flange_a", "k0.flange_a", rod=1.0)
    s.connect("k0.flange_a", "k1.flange_a", rod=1.0)
    s.connect("mass.flange_a", "k1.flange_a", rod=2.0 * (1 + 1e-13))  # agrees within rounding
    with pytest.raises(CosimError) as e:
        s.connect("k1.flange_a", "mass.flange_a", rod=-2.1)
    assert str(e.value).endswith("form a loop with inconsistent lengths")
    assert str(e.value).startswith("rods around ")
    assert len(s.flange_edges) == 3  # the refused edge is not kept
    assert _names(s.node_links()) == [
        (
            "mass",
            "flange_a",
            [("k0", "flange_a", 1.0), ("k1", "flange_a", pytest.approx(2.0, rel=1e-12))],
        )
    ]


def test_the_refusals_of_connect_name_what_is_wrong(fmu_dir):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    s.add("m2", fmu_dir / "Mass.fmu")
    s.add("sine", fmu_dir / "Sine.fmu")
    s.add("force", fmu_dir / "Force.fmu")
    s.add("k", fmu_dir / "Spring.fmu")
    cases = [
        (
            ("mass.flange_c", "force.flange"),
            {},
            "mass.flange_c is not a flange of mass (Mass) and not a variable to connect to force.flange",
        ),
        (
            ("force.flange", "mass.s"),
            {},
            "mass.s is not a flange of mass (Mass) and not a variable to connect to force.flange",
        ),
        (
            ("force.f", "sine.y"),
            {},
            "signal connection force.f -> sine.y needs an output and an input (got input -> output)",
        ),
        (
            ("sine.y", "mass.s"),
            {},
            "signal connection sine.y -> mass.s needs an output and an input (got output -> output)",
        ),
        (
            ("sine.y", "force.f"),
            {"rod": 1.0},
            "signal connection sine.y -> force.f cannot have a rod",
        ),
        (
            ("mass.flange_a", "k.flange_a"),
            {"rod": float("inf")},
            "rod length inf of mass.flange_a -- k.flange_a must be finite",
        ),
        (
            ("mass.flange_a", "k.flange_a"),
            {"rod": float("nan")},
            "rod length nan of mass.flange_a -- k.flange_a must be finite",
        ),
        (
            ("mass", "k.flange_a"),
            {},
            "'mass': expected 'instance.flange' or 'instance.variable' with an instance of this "
            "system (mass, m2, sine, force, k)",
        ),
        (
            ("nobody.flange", "k.flange_a"),
            {},
            "'nobody.flange': expected 'instance.flange' or 'instance.variable' with an instance "
            "of this system (mass, m2, sine, force, k)",
        ),
        (
            ("mass.flange_b", "m2.flange_a"),
            {},
            "mass.flange_b and m2.flange_a would be rigidly connected: both are inertial elements "
            "(their flanges output motion and take the force as input). A compliant element (one "
            "that takes the motion of its flanges and outputs the force) is needed between them.",
        ),
    ]
    for args, kwargs, text in cases:
        with pytest.raises(CosimError) as e:
            s.connect(*args, **kwargs)
        assert str(e.value) == text
    assert s.flange_edges == [] and s.signals == []
    with pytest.raises(CosimError) as e:
        System().resolve("a.b")
    assert "(none yet)" in str(e.value)
    s.connect("sine.y", "force.f")
    assert s.signals == [("sine.y", "force.f")]


def test_a_node_of_compliant_flanges_only_is_named(fmu_dir):
    s = System()
    s.add("k1", fmu_dir / "Spring.fmu")
    s.add("k2", fmu_dir / "Spring.fmu")
    s.connect("k2.flange_a", "k1.flange_b")
    with pytest.raises(CosimError) as e:
        s.node_links()
    assert str(e.value) == (
        "flanges k1.flange_b, k2.flange_a are connected only to compliant elements: every node "
        "needs one inertial element (Mass, Fixed, ...) that gives its motion"
    )


def _vr(inst, name):
    return inst.var(name).valueReference


def test_the_plan_links_value_references_in_causal_order(fmu_dir):
    s = System()
    wall = s.add("wall", fmu_dir / "Fixed.fmu")
    k = s.add("k", fmu_dir / "Spring.fmu")
    gap = s.add("gap", fmu_dir / "ElastoGap.fmu")
    mass = s.add("mass", fmu_dir / "Mass.fmu")
    sine = s.add("sine", fmu_dir / "Sine.fmu")
    force = s.add("force", fmu_dir / "Force.fmu")
    s.connect("wall.flange", "k.flange_a", rod=1.5)
    s.connect("k.flange_b", "mass.flange_a")
    s.connect("gap.flange_a", "mass.flange_a")
    s.connect("sine.y", "force.f")
    s.connect("force.flange", "mass.flange_b")
    plan = s.plan()
    assert [(m.source.name, m.target.name, m.offset) for m in plan.motion] == [
        ("wall", "k", 1.5),
        ("mass", "k", 0.0),
        ("mass", "gap", 0.0),
        ("mass", "force", 0.0),
    ]
    m = plan.motion[0]
    assert (m.s, m.v, m.target_s, m.target_v) == (
        _vr(wall, "flange.s"),
        _vr(wall, "flange.v"),
        _vr(k, "flange_a.s"),
        _vr(k, "flange_a.v"),
    )
    a = plan.accel[0]
    assert (a.source, a.a, a.target, a.target_a) == (
        wall,
        _vr(wall, "flange.a"),
        k,
        _vr(k, "flange_a.a"),
    )
    assert len(plan.accel) == sum(
        s.passes_acceleration(si, sf, ti, tf) for si, sf, t in s.node_links() for ti, tf, _ in t
    )
    f = {(x.body.name, x.f): x for x in plan.forces}
    node = f[("mass", _vr(mass, "flange_a.f"))]
    assert node.sources == [(k, _vr(k, "flange_b.f")), (gap, _vr(gap, "flange_a.f"))]
    # the mass interpolates its inputs and the spring and the gap publish derivatives
    assert node.with_derivative is True
    assert f[("wall", _vr(wall, "flange.f"))].with_derivative is False  # Fixed: no interpolation
    (sig,) = plan.signals
    assert (sig.source, sig.output, sig.target, sig.input) == (
        sine,
        sine.var("y"),
        force,
        force.var("f"),
    )
    assert sig.with_derivative is True  # Sine publishes, Force interpolates
    held = s.plan(derivatives=False)
    assert not any(x.with_derivative for x in held.forces + held.signals)
    s.interpolate_inputs = False
    held = s.plan()
    assert not any(x.with_derivative for x in held.forces + held.signals)


def test_derivatives_need_every_source_and_the_receiver(fmu_dir):
    s = System()
    mass = s.add("mass", fmu_dir / "Mass.fmu")
    s.add("k", fmu_dir / "Spring.fmu")
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("m2", fmu_dir / "Mass.fmu")
    s.add("k2", fmu_dir / "Spring.fmu")
    s.connect("k.flange_b", "mass.flange_a")
    s.connect("wall.flange", "k.flange_a")
    s.connect("mass.flange_b", "k2.flange_a")
    s.connect("k2.flange_b", "m2.flange_a")
    mass.derivatives = (
        True  # as if the body published derivatives: nothing changes for its force input
    )
    k2 = s.instances["k2"]
    k2.derivatives = False  # one source without derivatives: m2's node is held
    by = {(x.body.name, x.f): x.with_derivative for x in s.plan().forces}
    assert by[("mass", _vr(mass, "flange_a.f"))] is True
    assert by[("m2", _vr(s.instances["m2"], "flange_a.f"))] is False


def test_a_signal_between_types_is_refused_and_integer_signals_have_no_derivative(fmu_dir):
    s = System()
    s.add("es", fmu_dir / "EndStop.fmu")
    s.add("force", fmu_dir / "Force.fmu")
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.connect("wall.flange", "es.ctr1")
    s.connect("es.stop", "force.f")
    with pytest.raises(CosimError) as e:
        s.plan()
    assert str(e.value) == "signal es.stop (Integer) -> force.f (Real): types differ"
    s.instances["force"].variables["f"].type = "Integer"  # as if the input were an Integer
    (sig,) = s.plan().signals
    assert sig.with_derivative is False  # both declare derivatives, but not for an Integer


_KEEP = []


class Slave:
    """Stands for fmpy's FMU2Slave: records the calls."""

    def __init__(self, fail=None, boolean=True):
        self.calls, self.fail, self.boolean = [], fail, boolean

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls.append((name, args))
            if self.fail == name:
                raise RuntimeError(f"{name} failed")
            if name == "getBoolean":
                return [self.boolean]

        return call


def test_values_are_set_with_the_call_of_their_type(fmu_dir):
    s = System()
    es = s.add("es", fmu_dir / "EndStop.fmu")
    es.slave = Slave()
    s._set_any(es, "l1", 1)
    s._set_any(es, "mode", 1.0)
    s._set_any(es, "friction", 1)
    es.variables["mode"].type = "Enumeration"
    s._set_any(es, "mode", 2.0)
    assert es.slave.calls == [
        ("setReal", ([_vr(es, "l1")], [1.0])),
        ("setInteger", ([_vr(es, "mode")], [1])),
        ("setBoolean", ([_vr(es, "friction")], [True])),
        ("setInteger", ([_vr(es, "mode")], [2])),
    ]
    assert [type(c[1][1][0]) for c in es.slave.calls] == [float, int, bool, int]
    es.variables["mode"].type = "String"
    with pytest.raises(CosimError) as e:
        s._set_any(es, "mode", "x")
    assert str(e.value) == "es.mode: type String is not supported"
    es.slave = Slave(fail="setReal")
    with pytest.raises(CosimError) as e:
        s._set_any(es, "l1", 0.5)
    assert str(e.value).startswith("es (EndStop.fmu): setting l1 = 0.5 failed: setReal failed")


def test_the_life_cycle_calls_every_instance_and_names_a_failure(fmu_dir):
    s = System()
    a, b = s.add("a", fmu_dir / "Mass.fmu"), s.add("b", fmu_dir / "Mass.fmu")
    a.slave, b.slave = Slave(), Slave()
    s.enter_initialization(0.5)
    s.exit_initialization(0.5)
    s.terminate(2.0)
    for inst in (a, b):
        assert [c[0] for c in inst.slave.calls] == [
            "enterInitializationMode",
            "exitInitializationMode",
            "terminate",
        ]
    b.slave = Slave(fail="terminate")
    with pytest.raises(CosimError) as e:
        s.terminate(2.0)
    assert str(e.value).startswith(
        "b (Mass.fmu): fmi2Terminate failed at t = 2 s: terminate failed"
    )
    b.slave = Slave(fail="enterInitializationMode")
    with pytest.raises(
        CosimError, match=r"b \(Mass.fmu\): fmi2EnterInitializationMode failed at t = 0.5 s"
    ):
        s.enter_initialization(0.5)
    b.slave = Slave(fail="exitInitializationMode")
    with pytest.raises(CosimError, match=r"fmi2ExitInitializationMode failed at t = 0.5 s"):
        s.exit_initialization(0.5)
    # free: every instance, whatever fails
    freed_a = a.slave
    b.slave = Slave(fail="freeInstance")
    s.free()
    assert a.slave is None and b.slave is None
    assert freed_a.calls[-1][0] == "freeInstance"
    s.free()  # nothing left to free


def _fmu2slave(fail=None):
    """A stand-in for fmpy's FMU2Slave class: records what it was made with and its calls with
    their keywords; the call named `fail` raises."""

    class FMU2Slave:
        def __init__(self, **kwargs):
            self.made, self.calls = kwargs, []

        def __getattr__(self, name):
            def call(*args, **kwargs):
                self.calls.append((name, args, kwargs))
                if name == fail:
                    raise RuntimeError(f"{name} refused")

            return call

    return FMU2Slave


def test_instantiate_gives_each_fmu_its_name_the_callbacks_the_experiment_and_its_values(
    fmu_dir, monkeypatch
):
    """System.instantiate: every FMU made under its instance name, instantiated with the one
    callback structure of the run (callbacks(): its messages dispatched to the instance's log),
    its experiment set up from the start to the stop time, then its values set; a failed call
    named with the instance."""
    import fmpy.fmi2

    from contactfmu.cosim import system

    cb = object()
    monkeypatch.setattr(system, "callbacks", lambda: cb)
    monkeypatch.setattr(fmpy.fmi2, "FMU2Slave", _fmu2slave())
    s = System()
    mass = s.add("mass", fmu_dir / "Mass.fmu", m=2.0)
    s.instantiate(0.5, 2.0)
    assert mass.slave.made == dict(
        guid=mass.md.guid,
        unzipDirectory=mass.unzipdir,
        modelIdentifier="Mass",
        instanceName="mass",
    )
    (name, args, kwargs), *rest = mass.slave.calls
    assert (name, args, kwargs["callbacks"]) == ("instantiate", (), cb)
    assert rest == [
        ("setupExperiment", (), dict(startTime=0.5, stopTime=2.0)),
        ("setReal", ([_vr(mass, "m")], [2.0]), {}),
    ]
    assert system.LOGS["mass"] is mass.log
    for call in ("instantiate", "setupExperiment"):
        monkeypatch.setattr(fmpy.fmi2, "FMU2Slave", _fmu2slave(fail=call))
        with pytest.raises(CosimError) as e:
            s.instantiate(0.0, 1.0)
        assert str(e.value).startswith(f"mass (Mass.fmu): {call} failed: {call} refused\n")


def test_integrating_instances_are_read_in_initialization_mode(fmu_dir):
    s = System()
    gap, es, mass = (
        s.add("gap", fmu_dir / "ElastoGap.fmu"),
        s.add("es", fmu_dir / "EndStop.fmu"),
        s.add("mass", fmu_dir / "Mass.fmu"),
    )
    gap.slave, es.slave, mass.slave = Slave(boolean=True), Slave(boolean=False), Slave()
    assert s.integrating() == {"gap"}
    assert gap.slave.calls == [("getBoolean", ([_vr(gap, "interface.integrates")],))]
    assert mass.slave.calls == []  # it declares no such output
    es.variables["interface.integrates"].causality = "parameter"
    es.slave = Slave(boolean=True)
    assert s.integrating() == {"gap"} and es.slave.calls == []
    es.variables["interface.integrates"].causality = "output"
    es.variables["interface.integrates"].type = "Integer"
    assert s.integrating() == {"gap"} and es.slave.calls == []


def _fresh_extraction(fmu_dir, tmp_path, monkeypatch):
    """A copy of Mass.fmu in tmp_path, with the module's extraction state emptied and atexit's
    registrations recorded (not made): (the copy, the list of registrations)."""
    import atexit
    import shutil

    from contactfmu.cosim import instances

    registered = []
    monkeypatch.setattr(instances, "_EXTRACTED", {})
    monkeypatch.setattr(instances, "_EXTRACT_ROOT", [])
    monkeypatch.setattr(atexit, "register", lambda *args: registered.append(args))
    path = tmp_path / "Mass.fmu"
    shutil.copyfile(fmu_dir / "Mass.fmu", path)
    return path, registered


def test_an_fmu_file_is_extracted_once_per_process_and_version(fmu_dir, tmp_path, monkeypatch):
    """Into one folder per process (contactfmu_..., removed at exit), a directory per FMU version,
    with what a run needs: the model description, the binaries and the resources, not the
    documentation or the terminals."""
    import shutil

    from contactfmu.cosim import instances

    path, registered = _fresh_extraction(fmu_dir, tmp_path, monkeypatch)
    first = instances.extracted(path)
    assert instances.extracted(str(path)) == first
    assert sorted(p.name for p in Path(first).iterdir()) == [
        "binaries",
        "modelDescription.xml",
        "resources",
    ]
    assert (Path(first) / "binaries" / "linux64" / "Mass.so").is_file()
    assert (Path(first) / "resources" / "slavemodule.txt").is_file()
    assert Path(first).parent == Path(instances._EXTRACT_ROOT[0])
    with open(path, "ab") as fh:  # another version of the file: extracted anew
        fh.write(b"\0")
    assert instances.extracted(path) != first
    (root,) = instances._EXTRACT_ROOT
    assert Path(root).name.startswith("contactfmu_") and Path(root).is_dir()
    assert registered == [(shutil.rmtree, root, True)]  # once
    shutil.rmtree(root)


def test_fmu_messages_are_dispatched_by_instance_name(monkeypatch):
    from contactfmu.cosim import instances

    monkeypatch.setattr(instances, "_CALLBACKS", [])  # as in a fresh process
    monkeypatch.setattr(instances, "LOGS", {})
    cb = instances.callbacks()
    assert len(instances._CALLBACKS) == 3 and instances._CALLBACKS[2] is cb
    logger = instances._CALLBACKS[0]
    logger(None, b"probe", 3, b"logStatusError", b"it failed \xff")
    logger(None, None, 1, b"logAll", b"no name")
    logger(None, b"pr\xffbe", 2, b"logAll", b"bad name")  # a name that is no UTF-8
    assert instances.LOGS["probe"] == [(3, "it failed \ufffd")]
    assert instances.LOGS == {
        "probe": [(3, "it failed \ufffd")],
        "": [(1, "no name")],
        "pr\ufffdbe": [(2, "bad name")],
    }
    _KEEP.extend(instances._CALLBACKS)  # fmpy's proxy may still point at them after the test
    assert instances.callbacks() is not cb  # a structure per run, one logger for all
    assert instances._CALLBACKS[0] is logger and instances._CALLBACKS[-1] is not cb


def test_which_values_can_be_set_follows_causality_and_initial(fmu_dir, monkeypatch):
    """A value can be set on a parameter or an input, or on a variable with initial exact or
    approx (a start value); otherwise the error names the causality with its article. The FMU is
    read by a stand-in of fmpy's reader that changes some declarations (as another tool's FMU
    might declare them)."""
    import fmpy

    real = fmpy.read_model_description

    def read(path):
        md = real(path)
        v = {x.name: x for x in md.modelVariables}
        v["s"].initial = "exact"  # an output with a start value
        v["v"].initial = "approx"
        v["a"].causality, v["a"].initial = "calculatedParameter", "calculated"
        v["interface.m"].causality, v["interface.m"].initial = "local", "calculated"
        v["m"].initial = None  # a parameter, an input without initial
        v["flange_a.f"].initial = None
        return md

    monkeypatch.setattr(fmpy, "read_model_description", read)
    s = System()
    inst = s.add("b", fmu_dir / "Mass.fmu", s=1.0, v=2.0, m=3.0, **{"flange_a.f": 4.0})
    assert inst.values == {"s": 1.0, "v": 2.0, "m": 3.0, "flange_a.f": 4.0}
    with pytest.raises(CosimError) as e:
        s.add("c", fmu_dir / "Mass.fmu", a=1.0)
    assert str(e.value) == (
        "c.a cannot be set: it is a calculatedParameter computed by the FMU (initial = calculated)"
    )
    with pytest.raises(CosimError) as e:
        s.add("d", fmu_dir / "Mass.fmu", **{"interface.m": 1.0})
    assert (
        str(e.value)
        == "d.interface.m cannot be set: it is a local computed by the FMU (initial = calculated)"
    )


def test_a_model_exchange_fmu_is_refused(fmu_dir, tmp_path):
    import zipfile

    src, dst = fmu_dir / "Mass.fmu", tmp_path / "Mass.fmu"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                text = data.decode()
                start = text.index("<CoSimulation")
                end = text.index("/>", start) + 2
                text = text[:start] + '<ModelExchange modelIdentifier="Mass"/>' + text[end:]
                data = text.encode()
            zout.writestr(item, data)
    with pytest.raises(CosimError) as e:
        System().add("me", dst)
    assert str(e.value) == f"me: {dst} is not a Co-Simulation FMU"


def test_flange_roles_need_both_variables_with_opposite_causalities(fmu_dir):
    s = System()
    mass, k = s.add("mass", fmu_dir / "Mass.fmu"), s.add("k", fmu_dir / "Spring.fmu")
    del mass.variables["flange_a.f"]  # a position without a force: no flange
    assert mass.flange_role("flange_a") is None
    mass.variables["flange_b.f"].causality = "output"  # motion out and force out
    assert mass.flange_role("flange_b") is None
    k.variables["flange_a.f"].causality = "input"  # motion in and force in
    assert k.flange_role("flange_a") is None
    assert k.flange_role("flange_b") == "force"


def test_the_acceleration_needs_both_flanges(fmu_dir):
    s = System()
    mass, k = s.add("mass", fmu_dir / "Mass.fmu"), s.add("k", fmu_dir / "Spring.fmu")
    assert s.passes_acceleration(mass, "flange_a", k, "flange_b")
    del k.variables["flange_b.a"]
    assert not s.passes_acceleration(mass, "flange_a", k, "flange_b")
    k2 = s.add("k2", fmu_dir / "Spring.fmu")
    del mass.variables["flange_a.a"]
    assert not s.passes_acceleration(mass, "flange_a", k2, "flange_b")


def test_the_loop_tolerance_scales_with_the_rod_length(fmu_dir):
    """1e-12 * (1 + |L|): long rods may disagree by more in absolute terms, short ones by less."""
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    s.add("k0", fmu_dir / "Spring.fmu")
    s.add("k1", fmu_dir / "Spring.fmu")
    s.connect("mass.flange_a", "k0.flange_a", rod=1000.0)
    s.connect("k0.flange_a", "k1.flange_a", rod=1000.0)
    s.connect("mass.flange_a", "k1.flange_a", rod=2000.0 + 2e-10)  # within 1e-12 * 1001
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    s.add("k0", fmu_dir / "Spring.fmu")
    s.add("k1", fmu_dir / "Spring.fmu")
    s.connect("mass.flange_a", "k0.flange_a", rod=0.5)
    s.connect("k0.flange_a", "k1.flange_a", rod=0.5)
    with pytest.raises(CosimError, match="inconsistent lengths"):
        s.connect("mass.flange_a", "k1.flange_a", rod=1.0 + 2.2e-12)  # beyond 1e-12 * 1.5


def test_a_failed_set_or_get_names_the_call(fmu_dir):
    s = System()
    es = s.add("es", fmu_dir / "EndStop.fmu")
    es.slave = Slave(fail="setInteger")
    with pytest.raises(CosimError) as e:
        s._set_any(es, "mode", 1)
    assert str(e.value).startswith("es (EndStop.fmu): setting mode = 1 failed: setInteger failed")
    es.slave = Slave(fail="setBoolean")
    with pytest.raises(CosimError) as e:
        s._set_any(es, "friction", True)
    assert str(e.value).startswith(
        "es (EndStop.fmu): setting friction = True failed: setBoolean failed"
    )
    es.slave = Slave(fail="getBoolean")
    with pytest.raises(CosimError) as e:
        s.integrating()
    assert str(e.value).startswith("es (EndStop.fmu): fmi2GetBoolean failed: getBoolean failed")


def test_the_fmu_log_comes_with_the_error_and_the_start_time_is_set(fmu_dir):
    s = oscillator(fmu_dir)
    s.instances["spring"].values["c"] = -3.0
    with pytest.raises(CosimError) as e:
        s.simulate(stop_time=0.1, step=1e-3)
    log = str(e.value).split("FMU log:\n", 1)[1]
    assert "Invalid parameter c = -3.0 N/m" in log  # the FMU's own message, by the callback
    # the experiment starts where asked: the FMUs step from there
    r = oscillator(fmu_dir).simulate(stop_time=1.02, step=1e-2, start_time=1.0, outputs=["mass.s"])
    assert list(r.time) == pytest.approx([1.0, 1.01, 1.02]) and r["mass.s"][0] == 3.5


def test_simulate_hands_its_keywords_to_the_algorithm_and_the_run(fmu_dir):
    s = oscillator(fmu_dir)
    seen = []
    r = s.simulate(
        0.02,
        step=1e-3,
        output_interval=1e-2,
        outputs=["mass.a"],
        inputs={"mass.flange_b.f": lambda t: 10.0},
        progress=seen.append,
        scheme="jacobi",
    )
    assert r.names == ["time", "mass.a"] and list(r.time) == pytest.approx([0.0, 0.01, 0.02])
    assert r["mass.a"][0] == pytest.approx(-100.0 * 0.5 - 10.0)  # the driven input acts
    assert len(seen) == 20 and seen[-1] == pytest.approx(0.02)
    # jacobi: an output read right after the step still reflects the previous inputs; the
    # Gauss-Seidel run differs from it
    gs = s.simulate(0.02, step=1e-3, output_interval=1e-2, outputs=["mass.a"])
    assert gs["mass.a"][1] != r["mass.a"][1]
    for kwargs, text in (
        ({"rtol": 1e-6}, "rtol=1e-06 given with scheme 'gauss-seidel'"),
        ({"atol": 1e-9}, "atol=1e-09 given with scheme 'gauss-seidel'"),
    ):
        with pytest.raises(CosimError, match=text):
            s.simulate(0.02, step=1e-3, **kwargs)
    with pytest.raises(CosimError, match="scheme 'jacobi' needs a communication step"):
        s.simulate(0.02, scheme="jacobi")
    adaptive = s.simulate(0.02, rtol=1e-5, atol=1e-7, outputs=["mass.s"])
    assert adaptive.steps and adaptive.steps[0].h <= 0.02


def test_fmus_are_extracted_into_the_folder_given_from_then_on(fmu_dir, tmp_path, monkeypatch):
    """extract_into: the FMUs are unzipped into that folder (made at the first unzip), not into
    a temporary folder removed at exit (no atexit handler)."""
    from contactfmu.cosim import instances

    path, registered = _fresh_extraction(fmu_dir, tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)  # a relative folder stays in the test's
    folder = tmp_path / "worker" / "unzip"
    instances.extract_into(folder)
    assert not folder.exists()
    unzipped = Path(instances.extracted(path))
    assert unzipped.parent == folder and (unzipped / "modelDescription.xml").is_file()
    assert registered == []


def _fmi3_copy(src, dest, terminals):
    """A copy of the FMI 3.0 FMU whose terminalsAndIcons.xml is terminals(its text)."""
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "terminalsAndIcons/terminalsAndIcons.xml":
                data = terminals(data.decode()).encode()
            zout.writestr(item, data)
    return dest


def test_an_fmi3_fmu_is_read_with_fmi2_type_names_and_its_flanges_by_its_terminals(
    fmu_dir, fmu3_dir, tmp_path
):
    """docs/fmi3.md, "In the project's master": System.add takes an FMI 3.0 FMU, its variable
    types named as FMI 2.0 names them; its flanges are found by its terminals (`mass.left`: the
    members s, v, a, f of the terminal `left`, whatever the variables are called), an FMI 2.0
    FMU's by the naming conventions; System.instantiate puts it behind cosim.fmi3.Fmi3Slave."""
    from contactfmu.cosim.fmi3 import Fmi3Slave

    mass3 = _fmi3_copy(
        fmu3_dir / "Mass.fmu",
        tmp_path / "Mass.fmu",
        lambda text: text.replace('Terminal name="flange_a"', 'Terminal name="left"'),
    )
    s = System()
    mass, mass2 = s.add("mass", mass3), s.add("mass2", fmu_dir / "Mass.fmu")
    stop = s.add("stop", fmu3_dir / "EndStop.fmu")
    # fmi3 Float64, Int32, Boolean: the FMI 2.0 names
    assert [stop.var(n).type for n in ("l1", "mode", "friction")] == ["Real", "Integer", "Boolean"]
    assert mass.var("m").type == "Real"
    assert [mass.port("left", w) for w in "svaf"] == [f"flange_a.{w}" for w in "svaf"]
    assert mass.flange_role("left") == "motion" and mass2.flange_role("left") is None
    # SimulationX's member names: x for s, F for f
    simx = _fmi3_copy(
        fmu3_dir / "Mass.fmu",
        tmp_path / "MassX.fmu",
        lambda text: (
            text.replace('Terminal name="flange_a"', 'Terminal name="left"')
            .replace('memberName="s"', 'memberName="x"')
            .replace('memberName="f"', 'memberName="F"')
        ),
    )
    massx = System().add("massx", simx)
    assert [massx.port("left", w) for w in "svaf"] == [f"flange_a.{w}" for w in "svaf"]
    # EndStop's terminals name SimulationX's variables ctr1.x, .v, .a, .F
    assert [stop.port("ctr1", w) for w in "svaf"] == ["ctr1.x", "ctr1.v", "ctr1.a", "ctr1.F"]
    try:
        s.instantiate(0.0, 1.0)
        assert isinstance(mass.slave, Fmi3Slave) and isinstance(stop.slave, Fmi3Slave)
        assert not isinstance(mass2.slave, Fmi3Slave)
        # instantiated under the instance's name (fmpy's default: the model identifier)
        assert (mass.slave.fmu.instanceName, stop.slave.fmu.instanceName) == ("mass", "stop")
    finally:
        s.free()


def test_an_fmi3_fmus_error_names_instance_time_and_log(fmu_dir, fmu3_dir):
    """As for an FMI 2.0 FMU (test_an_fmu_error_names_instance_time_and_log): the FMI 3.0 Mass
    refuses m = 0 at the end of initialization mode and logs why, to its instance's log."""
    s = System()
    s.add("mass", fmu3_dir / "Mass.fmu", m=0.0)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0)
    s.add("fixed", fmu_dir / "Fixed.fmu")
    s.connect("fixed.flange", "spring.flange_a")
    s.connect("spring.flange_b", "mass.flange_a")
    with pytest.raises(CosimError) as exc:
        s.simulate(stop_time=0.1, step=1e-3)
    text = str(exc.value)
    assert text.startswith("mass (Mass.fmu): fmi2ExitInitializationMode failed at t = 0 s: ")
    assert text.endswith("FMU log:\n  [3] Invalid parameter m = 0.0 kg: valid range (0.0, inf)")


def test_an_fmi3_fmu_whose_terminals_cannot_be_read_is_named(fmu3_dir, tmp_path):
    path = _fmi3_copy(fmu3_dir / "Mass.fmu", tmp_path / "Mass.fmu", lambda text: "<Terminals")
    with pytest.raises(CosimError) as e:
        System().add("mass", path)
    assert str(e.value).startswith(f"mass: the terminals of {path} cannot be read: ")
