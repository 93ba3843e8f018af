"""Flange terminals: every FMU with flanges carries terminalsAndIcons/terminalsAndIcons.xml
(FMI 3.0 "Terminals and Icons", allowed in an FMI 2.0 FMU), one terminal per flange with the
members s, v, a (signal) and f (inflow where the FMU outputs the force, outflow where it takes
it), valid under fmpy's copy of the FMI 3.0 schema; a link made by the FMI 3.0 rule (negate a
flow only between two members of the same flow kind) is a plain copy and moves bodies the right
way; the checks the build runs catch what they are for."""

import re
import zipfile
from xml.etree import ElementTree

import pytest
from fmpy import read_model_description
from lxml import etree
from slave_driver import Driver

from contactfmu.components import NAMES
from contactfmu.components.EndStop.slave import EndStop
from contactfmu.components.Force.slave import Force
from contactfmu.components.Mass.slave import Mass
from contactfmu.components.Spring.slave import Spring
from contactfmu.components.translational import MSL_FLANGE, TERMINAL_KINDS
from contactfmu.fmi import terminals
from contactfmu.pages import slave_class
from contactfmu.validation import terminal_problems, terminals_schema

FLANGED = [n for n in NAMES if getattr(slave_class(n), "FLANGES", None)]
FLOWS = (terminals.INFLOW, terminals.OUTFLOW)


def _flange_groups(names):
    """Prefixes p with a position (p.s or SimulationX p.x) and a force (p.f or p.F) variable."""
    prefixes = {n.rsplit(".", 1)[0] for n in names if "." in n}
    return {
        p for p in prefixes if ({f"{p}.s", f"{p}.x"} & names) and ({f"{p}.f", f"{p}.F"} & names)
    }


def test_the_library_has_flanged_and_flangeless_fmus():
    assert {"Mass", "Spring", "EndStop", "Fixed", "Force", "ElastoGap"} <= set(FLANGED)
    assert "Sine" in NAMES and "Sine" not in FLANGED


@pytest.mark.parametrize("name", NAMES)
def test_every_flange_of_the_variable_table_is_a_terminal(name):
    cls = slave_class(name)
    names = {v.name for v in cls.variable_table()}
    assert {t.name for t in cls.terminals()} == _flange_groups(names)


@pytest.mark.parametrize("name", FLANGED)
def test_the_built_terminals_file_is_schema_valid_xml_as_the_slave_declares(fmu_dir, name):
    with zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z:
        data = z.read(terminals.PATH)
    assert data.startswith(b"<?xml") and b"\0" not in data
    document = etree.fromstring(data)
    assert terminals_schema().validate(document), terminals_schema().error_log
    assert document.get("fmiVersion") == "3.0"
    assert data == terminals.to_bytes(slave_class(name).terminals())
    md = read_model_description(str(fmu_dir / f"{name}.fmu"))
    assert terminal_problems(data, {v.name: v.causality for v in md.modelVariables}) == []


def test_an_fmu_without_flanges_has_no_terminals_file(fmu_dir):
    with zipfile.ZipFile(fmu_dir / "Sine.fmu") as z:
        assert not [n for n in z.namelist() if n.startswith("terminalsAndIcons/")]


@pytest.mark.parametrize("name", FLANGED)
def test_members_exist_with_the_causality_their_kind_implies(fmu_dir, name):
    md = read_model_description(str(fmu_dir / f"{name}.fmu"))
    variables = {v.name: v for v in md.modelVariables}
    with zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z:
        root = etree.fromstring(z.read(terminals.PATH))
    found = root.findall("Terminals/Terminal")
    assert [t.get("name") for t in found] == list(slave_class(name).FLANGES)
    for terminal in found:
        assert terminal.get("matchingRule") == "plug"
        connector = slave_class(name).FLANGES[terminal.get("name")]
        assert terminal.get("terminalKind") == TERMINAL_KINDS.get(connector, connector)
        assert f"({connector})" in terminal.get("description")
        members = terminal.findall("TerminalMemberVariable")
        assert [m.get("memberName") for m in members] == ["s", "v", "a", "f"]
        kinds = {m.get("memberName"): m.get("variableKind") for m in members}
        causality = {
            m.get("memberName"): variables[m.get("variableName")].causality for m in members
        }
        units = {m.get("memberName"): variables[m.get("variableName")].unit for m in members}
        assert units == {"s": "m", "v": "m/s", "a": "m/s2", "f": "N"}
        for m in members:  # named after the flange: <terminal>.<s|x, v, a, f|F>
            assert re.fullmatch(rf"{terminal.get('name')}\.[svaxfF]", m.get("variableName"))
        assert kinds["s"] == kinds["v"] == kinds["a"] == "signal"
        # a flange is motion in and force out (compliant element, source) or the other way round
        assert causality["s"] == causality["v"] == causality["a"] != causality["f"]
        assert kinds["f"] == {"output": "inflow", "input": "outflow"}[causality["f"]]


def test_every_msl_flange_has_one_terminal_kind_and_keeps_a_or_b_in_its_description(fmu_dir):
    """Flange_a and Flange_b terminals declare one terminalKind, MSL's Flange (the connector both
    extend: FMI 3.0 intends a terminalKind to define the members, and these are the same), the
    rule plug and the same member names: fmu-manipulation-toolbox's test for a terminal link
    (Terminal.__eq__: equal terminalKind and matchingRule; plug: equal memberNames) holds for
    every pair, a flange_b to a flange_a among them. EndStop keeps SimulationX's connector."""
    plugs = {}
    for name in FLANGED:
        with zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z:
            root = etree.fromstring(z.read(terminals.PATH))
        for t in root.findall("Terminals/Terminal"):
            members = tuple(
                sorted(m.get("memberName") for m in t.findall("TerminalMemberVariable"))
            )
            plugs[f"{name}.{t.get('name')}"] = (
                t.get("terminalKind"),
                t.get("matchingRule"),
                members,
            )
            connector = slave_class(name).FLANGES[t.get("name")]
            assert t.get("description").startswith(f"Flange {t.get('name')} ({connector}): ")
    msl = {k: v for k, v in plugs.items() if not k.startswith("EndStop.")}
    assert set(msl.values()) == {(MSL_FLANGE, "plug", ("a", "f", "s", "v"))}
    assert {"Spring.flange_b", "Mass.flange_a", "ElastoGap.flange_a", "Fixed.flange"} <= set(msl)
    assert plugs["Spring.flange_b"] == plugs["Mass.flange_a"]
    assert plugs["EndStop.ctr1"][0] == "_SimulationX_Mechanical Connector (linear)"


# ---- a link by the FMI 3.0 rule ----------------------------------------------------------------


def link(one, a, other, b):
    """Connect terminal `a` of Driver `one` to terminal `b` of Driver `other` by memberName (plug),
    as FMI 3.0 says: the output's value goes to the input, negated only if both members are flows
    of the same kind. Returns [(source driver, variable, target driver, variable, sign)]."""
    ta = {t.name: t for t in type(one.s).terminals()}[a]
    tb = {t.name: t for t in type(other.s).terminals()}[b]
    mb = {m.member: m for m in tb.members}
    assert set(mb) == {m.member for m in ta.members}  # plug: every member on both sides
    causality = {(d, v.name): v.causality for d in (one, other) for v in type(d.s).variable_table()}
    copies = []
    for ma in ta.members:
        pair = [(one, ma), (other, mb[ma.member])]
        if causality[(one, ma.variable)] != "output":
            pair.reverse()
        (src, m_src), (dst, m_dst) = pair
        assert causality[(src, m_src.variable)] == "output"
        assert causality[(dst, m_dst.variable)] == "input"
        sign = -1.0 if m_src.kind == m_dst.kind and m_src.kind in FLOWS else 1.0
        copies.append((src, m_src.variable, dst, m_dst.variable, sign))
    return copies


def inflow(driver, terminal, member):
    """The flow into the FMU of `driver` through member `member` of `terminal`, by its kind."""
    (m,) = [
        m
        for t in type(driver.s).terminals()
        if t.name == terminal
        for m in t.members
        if m.member == member
    ]
    return {"inflow": 1.0, "outflow": -1.0}[m.kind] * driver.get(m.variable)


def propagate(copies):
    for src, a, dst, b, sign in copies:
        dst.set(**{b.replace(".", "__"): sign * src.get(a)})


def test_a_stretched_spring_pulls_the_mass_back_through_its_terminals():
    spring = Driver(Spring, c=100.0, s_rel0=1.0)  # flange_a stays at its start values: s = 0
    mass = Driver(Mass, m=2.0, s_start=1.5)
    copies = link(spring, "flange_b", mass, "flange_a")
    assert all(sign == 1.0 for *_, sign in copies)  # a plain copy
    propagate([c for c in copies if c[0] is mass])  # motion to the spring
    propagate([c for c in copies if c[0] is spring])  # its force to the mass
    assert spring.get("flange_b.f") == pytest.approx(50.0)  # MSL: flange_b.f = c*(s_rel - s_rel0)
    assert mass.get("a") == pytest.approx(-25.0)  # pulled back towards the spring
    # the kinds say which way the force flows: into the spring (MSL flange_b.f, the force on it),
    # out of the mass; the flows at the node sum to zero (Kirchhoff), and the mass obeys MSL's
    # m*a = flange_a.f + flange_b.f, the forces into it
    assert inflow(spring, "flange_b", "f") == pytest.approx(50.0)
    assert inflow(spring, "flange_b", "f") + inflow(mass, "flange_a", "f") == 0.0
    assert 2.0 * mass.get("a") == pytest.approx(
        inflow(mass, "flange_a", "f") + inflow(mass, "flange_b", "f")
    )


def test_an_end_stop_in_contact_pushes_the_mass_out_through_its_terminals():
    stop = Driver(EndStop, l1=0.01, k1=1e4, b1=0.0)  # ctr2 stays at x = 0
    mass = Driver(Mass, m=4.0, s_start=0.02)  # dx = ctr1.x - ctr2.x = 0.02 >= l1: stop 1 in contact
    copies = link(mass, "flange_b", stop, "ctr1")  # flange_b.s = ctr1.x, ..., ctr1.F = flange_b.f
    assert {(a, b) for _, a, _, b, _ in copies} == {
        ("flange_b.s", "ctr1.x"),
        ("flange_b.v", "ctr1.v"),
        ("flange_b.a", "ctr1.a"),
        ("ctr1.F", "flange_b.f"),
    }
    assert all(sign == 1.0 for *_, sign in copies)
    propagate([c for c in copies if c[0] is mass])
    propagate([c for c in copies if c[0] is stop])
    assert stop.get("ctr1.F") == pytest.approx(100.0)  # Fi = k1*(dx - l1)
    assert mass.get("a") == pytest.approx(-25.0)  # pushed back out of the stop


def test_a_force_source_pushes_the_mass_forward_through_its_terminals():
    source = Driver(Force)
    mass = Driver(Mass, m=0.5)
    copies = link(mass, "flange_a", source, "flange")
    assert all(sign == 1.0 for *_, sign in copies)
    source.set(f=3.0)
    propagate([c for c in copies if c[0] is source])
    assert mass.get("a") == pytest.approx(6.0)  # MSL Force: f acts on the body in +s


# ---- the checks catch what they are for ---------------------------------------------------------


def _mass_terminals():
    return etree.fromstring(terminals.to_bytes(Mass.terminals()))


CAUSALITIES = {v.name: v.causality for v in Mass.variable_table()}


def _problems(root):
    return terminal_problems(etree.tostring(root, xml_declaration=True), CAUSALITIES)


def test_the_mass_terminals_have_no_problems():
    assert _problems(_mass_terminals()) == []


def test_a_shared_library_stored_as_the_terminals_file_is_not_xml(fmu_dir):
    # pythonfmu3's --terminals option stores the FMU's binary under this name
    with zipfile.ZipFile(fmu_dir / "Mass.fmu") as z:
        binary = z.read("binaries/linux64/Mass.so")
    found = terminal_problems(binary, CAUSALITIES)
    assert len(found) == 1 and "is not XML" in found[0] and "ELF" in found[0]


def test_a_member_without_its_kind_is_a_schema_error():
    root = _mass_terminals()
    del root.find("Terminals/Terminal/TerminalMemberVariable").attrib["variableKind"]
    (found,) = _problems(root)
    assert "variableKind" in found


def test_an_unknown_variable_is_named():
    root = _mass_terminals()
    root.find("Terminals/Terminal/TerminalMemberVariable").set("variableName", "flange_a.x")
    assert _problems(root) == [
        f"{terminals.PATH}: terminal flange_a, member s: variable 'flange_a.x' does not exist"
    ]


@pytest.mark.parametrize("kind", ["inflow", "potential"])
def test_a_kind_that_does_not_fit_the_causality_is_named(kind):
    root = _mass_terminals()
    force = root.findall("Terminals/Terminal")[1].findall("TerminalMemberVariable")[3]
    assert force.get("variableName") == "flange_b.f" and force.get("variableKind") == "outflow"
    force.set("variableKind", kind)
    (found,) = _problems(root)
    assert (
        found
        == f"{terminals.PATH}: terminal flange_b, member f: "
        + {
            "inflow": "flange_b.f is an input, an inflow member must be output",
            "potential": "variableKind 'potential' is none of signal, inflow, outflow",
        }[kind]
    )
    motion = root.find("Terminals/Terminal/TerminalMemberVariable")  # flange_a.s, an output
    motion.set("variableKind", "outflow")
    assert any(
        "flange_a.s is an output, an outflow member must be input" in p for p in _problems(root)
    )


def test_repeated_member_and_terminal_names_are_named():
    root = _mass_terminals()
    first, second = root.findall("Terminals/Terminal")
    first.findall("TerminalMemberVariable")[1].set("memberName", "s")
    second.set("name", "flange_a")
    found = _problems(root)
    assert any("terminal flange_a, member s: memberName used twice" in p for p in found), found
    assert any("terminal flange_a declared twice" in p for p in found), found


def test_members_reads_every_terminal_s_member_names_and_variables():
    """terminals.members, what the master reads from an FMU's terminals file: {terminal name:
    {memberName: variableName}}, from the file's root element."""
    root = ElementTree.fromstring(terminals.to_bytes(Mass.terminals()))
    assert terminals.members(root) == {
        flange: {m: f"{flange}.{m}" for m in ("s", "v", "a", "f")}
        for flange in ("flange_a", "flange_b")
    }


@pytest.mark.parametrize("name", FLANGED)
def test_members_of_the_written_file_are_the_declared_ones(name):
    declared = slave_class(name).terminals()
    root = ElementTree.fromstring(terminals.to_bytes(declared))
    assert terminals.members(root) == {
        t.name: {m.member: m.variable for m in t.members} for t in declared
    }


def test_the_flow_rule_refuses_a_parameter_flow():
    with pytest.raises(ValueError, match="not a parameter"):
        terminals.flow_kind("parameter")


# ---- the writer and the checks, unit by unit ------------------------------------------------------


def test_the_file_is_utf8_with_its_declaration_and_defaults_to_plug_matching():
    members = [
        terminals.Member("p.s", "s", terminals.SIGNAL),
        terminals.Member("p.f", "f", "inflow"),
    ]
    data = terminals.to_bytes([terminals.Terminal("p", "", members)])
    assert data == (
        b"<?xml version='1.0' encoding='UTF-8'?>\n"
        b'<fmiTerminalsAndIcons fmiVersion="3.0">\n'
        b"  <Terminals>\n"
        b'    <Terminal name="p" matchingRule="plug">\n'  # no terminalKind, no description
        b'      <TerminalMemberVariable variableName="p.s" memberName="s" variableKind="signal" />\n'
        b'      <TerminalMemberVariable variableName="p.f" memberName="f" variableKind="inflow" />\n'
        b"    </Terminal>\n"
        b"  </Terminals>\n"
        b"</fmiTerminalsAndIcons>\n"
    )
    described = terminals.Terminal(
        "q", "Flange", members, description="a flange", matching_rule="bus"
    )
    (t,) = terminals.terminals_and_icons([described]).iter("Terminal")
    assert t.attrib == {
        "name": "q",
        "matchingRule": "bus",
        "terminalKind": "Flange",
        "description": "a flange",
    }


def _root(*members, version="3.0", rule="plug"):
    """An fmiTerminalsAndIcons element with one terminal T of (variable, member, kind) members."""
    root = ElementTree.Element("fmiTerminalsAndIcons", {"fmiVersion": version})
    t = ElementTree.SubElement(
        ElementTree.SubElement(root, "Terminals"), "Terminal", {"name": "T", "matchingRule": rule}
    )
    for variable, member, kind in members:
        attrib = {"variableName": variable, "variableKind": kind}
        if member is not None:
            attrib["memberName"] = member
        ElementTree.SubElement(t, "TerminalMemberVariable", attrib)
    return root


KINDS = {"y": "output", "u": "input", "p": "parameter", "c": "calculatedParameter", "l": "local"}


def test_the_version_and_a_missing_member_name_are_named():
    assert terminals.problems(_root(("y", "s", "signal"), version="2.0"), KINDS) == [
        "fmiVersion is '2.0', not '3.0'"
    ]
    assert terminals.problems(_root(("y", None, "signal"), rule="bus"), KINDS) == [
        "terminal T, member (no memberName): no memberName (bus matching)"
    ]
    assert terminals.problems(_root(("y", "s", "signal")), KINDS) == []


def test_every_member_is_checked_after_a_bad_one():
    # an unknown variable, then an unknown kind, then a flow of a parameter: each named
    root = _root(
        ("x", "a", "signal"), ("y", "b", "potential"), ("p", "c", "outflow"), ("l", "d", "signal")
    )
    assert terminals.problems(root, KINDS) == [
        "terminal T, member a: variable 'x' does not exist",
        "terminal T, member b: variableKind 'potential' is none of signal, inflow, outflow",
        "terminal T, member c: p is a parameter, an outflow member must be input",
        "terminal T, member d: l is a local, a signal member must be input or output or parameter "
        "or calculatedParameter",
    ]
    # signal members of the four causalities FMI 3.0 allows, inflow of an output, outflow of an input
    ok = _root(
        ("y", "a", "signal"),
        ("u", "b", "signal"),
        ("p", "c", "signal"),
        ("c", "d", "signal"),
        ("y", "e", "inflow"),
        ("u", "f", "outflow"),
    )
    assert terminals.problems(ok, KINDS) == []
