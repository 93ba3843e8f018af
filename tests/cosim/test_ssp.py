"""The SSP 1.0 export (cosim/ssp.py) of a System, read back without libcosim: the components with
the connectors their connections use and their parameters (typed: Real, Integer, Boolean), the
flange connections as the master copies them (s, v, a to the compliant flange, its force to the
inertial flange's .f, .f2, ...; a rod as a LinearTransformation on s only), the signal connections,
the units with their SI exponents, the DefaultExperiment with the OSP step, the package's files and
every refusal. libcosim running such packages: tests/test_libcosim.py."""

import shutil
import zipfile
from xml.etree import ElementTree

import pytest

from contactfmu.cosim import CosimError, System
from contactfmu.cosim.ssp import NS, connections, export_ssp, system_structure


def _system(fmu_dir):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu", s0=0.5)
    s.add("spring", fmu_dir / "Spring.fmu", c=100.0, s_rel0=1)
    s.add("mass", fmu_dir / "Mass.fmu", m=2.0, s_start=3.5)
    s.add("sine", fmu_dir / "Sine.fmu", amplitude=4.0)
    s.add("force", fmu_dir / "Force.fmu")
    s.add("stop", fmu_dir / "EndStop.fmu", mode=1, friction=True)
    s.connect("wall.flange", "spring.flange_a", rod=2.0)
    s.connect("spring.flange_b", "mass.flange_a")
    s.connect("sine.y", "force.f")
    s.connect("force.flange", "mass.flange_b")
    return s


def _motion(a, b, off=0.0):
    """s (with the rod's offset), v, a of inertial flange a to compliant flange b."""
    return [(f"{a}.s", f"{b}.s", off), (f"{a}.v", f"{b}.v", 0.0), (f"{a}.a", f"{b}.a", 0.0)]


def test_connections_copy_motion_to_the_compliant_flange_and_force_back(fmu_dir):
    assert connections(_system(fmu_dir)) == [
        *_motion("wall.flange", "spring.flange_a", 2.0),
        ("spring.flange_a.f", "wall.flange.f", 0.0),
        *_motion("mass.flange_a", "spring.flange_b"),
        ("spring.flange_b.f", "mass.flange_a.f", 0.0),
        *_motion("mass.flange_b", "force.flange"),
        ("force.flange.f", "mass.flange_b.f", 0.0),
        ("sine.y", "force.f", 0.0),
    ]


def test_several_elements_on_a_flange_use_the_numbered_force_inputs(fmu_dir):
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    for k in range(4):
        s.add(f"spring{k}", fmu_dir / "Spring.fmu")
        s.connect("wall.flange", f"spring{k}.flange_a")
    forces = [c for c in connections(s) if c[1].startswith("wall.")]
    assert forces == [
        (f"spring{k}.flange_a.f", f"wall.flange.{f}", 0.0)
        for k, f in enumerate(["f", "f2", "f3", "f4"])
    ]
    s.add("spring4", fmu_dir / "Spring.fmu")
    s.connect("wall.flange", "spring4.flange_a")
    with pytest.raises(CosimError) as e:
        connections(s)
    assert str(e.value) == (
        "wall.flange carries 5 compliant elements (spring0.flange_a, spring1.flange_a, "
        "spring2.flange_a, spring3.flange_a, spring4.flange_a); an SSP input takes one connection "
        "and an inertial flange has 4 force inputs (.f, .f2 .. .f4): connect further elements "
        "through a rod to another flange of the body"
    )


def test_an_element_without_acceleration_input_gets_none(fmu_dir):
    """The acceleration is passed only where both flanges declare an .a (System.passes_acceleration)."""
    s = System()
    s.add("wall", fmu_dir / "Fixed.fmu")
    s.add("gap", fmu_dir / "ElastoGap.fmu")
    s.add("mass", fmu_dir / "Mass.fmu")
    s.connect("wall.flange", "gap.flange_a")
    s.connect("gap.flange_b", "mass.flange_a")
    conns = connections(s)
    has_a = "flange_a.a" in s.instances["gap"].variables
    assert (("wall.flange.a", "gap.flange_a.a", 0.0) in conns) == has_a
    assert ("mass.flange_a.s", "gap.flange_b.s", 0.0) in conns


def _root(data):
    head = b'<?xml version="1.0" encoding="UTF-8"?>\n<ssd:SystemStructureDescription '
    assert data.startswith(head)
    return ElementTree.fromstring(data)


def test_the_system_structure(fmu_dir):
    data = system_structure(_system(fmu_dir), 2.0, 1e-3)
    root = _root(data)
    assert root.tag == f"{{{NS['ssd']}}}SystemStructureDescription"
    assert (root.get("name"), root.get("version")) == ("contactfmu", "1.0")
    (system,) = root.findall("ssd:System", NS)
    assert system.attrib == {
        "name": "contactfmu",
        "description": "Exported by contactfmu from a contactfmu.cosim.System",
    }
    comps = system.findall("ssd:Elements/ssd:Component", NS)
    assert [(c.get("name"), c.get("source"), c.get("type")) for c in comps] == [
        (n, f"resources/{f}.fmu", "application/x-fmu-sharedlibrary")
        for n, f in [
            ("wall", "Fixed"),
            ("spring", "Spring"),
            ("mass", "Mass"),
            ("sine", "Sine"),
            ("force", "Force"),
            ("stop", "EndStop"),
        ]
    ]

    def connectors(c):
        return [
            (x.get("name"), x.get("kind"), t.tag.split("}")[1], t.get("unit"))
            for x in c.findall("ssd:Connectors/ssd:Connector", NS)
            for t in x
        ]

    # the variables used by connections or given a value, in the order of the model description
    assert connectors(comps[0]) == [
        ("s0", "parameter", "Real", "m"),
        ("flange.f", "input", "Real", "N"),
        ("flange.s", "output", "Real", "m"),
        ("flange.v", "output", "Real", "m/s"),
        ("flange.a", "output", "Real", "m/s2"),
    ]
    assert connectors(comps[3]) == [  # unit "1" (or none) is left out
        ("amplitude", "parameter", "Real", None),
        ("y", "output", "Real", None),
    ]
    assert connectors(comps[5]) == [
        ("mode", "parameter", "Integer", None),
        ("friction", "parameter", "Boolean", None),
    ]

    def parameters(c):
        sets = c.findall(
            "ssd:ParameterBindings/ssd:ParameterBinding/ssd:ParameterValues/ssv:ParameterSet", NS
        )
        assert [(p.get("version"), p.get("name")) for p in sets] == [("1.0", "initialValues")]
        return [
            (p.get("name"), v.tag.split("}")[1], v.get("value"))
            for p in sets[0].findall("ssv:Parameters/ssv:Parameter", NS)
            for v in p
        ]

    assert parameters(comps[1]) == [("c", "Real", "100.0"), ("s_rel0", "Real", "1.0")]
    assert parameters(comps[5]) == [("mode", "Integer", "1"), ("friction", "Boolean", "true")]
    assert comps[4].find("ssd:ParameterBindings", NS) is None  # force: no values given
    conns = system.findall("ssd:Connections/ssd:Connection", NS)
    rows = [
        (c.get("startElement"), c.get("startConnector"), c.get("endElement"), c.get("endConnector"))
        for c in conns
    ]
    assert rows == [
        (a.split(".", 1)[0], a.split(".", 1)[1], b.split(".", 1)[0], b.split(".", 1)[1])
        for a, b, _ in connections(_system(fmu_dir))
    ]
    transforms = [[t.attrib for t in c] for c in conns]
    assert transforms[0] == [{"factor": "1.0", "offset": "2.0"}]  # the rod, on s only
    assert all(t == [] for t in transforms[1:])
    units = {u.get("name"): [b.attrib for b in u] for u in root.findall("ssd:Units/ssc:Unit", NS)}
    assert list(units) == ["N", "N/m", "kg", "m", "m/s", "m/s2"]  # sorted, only those used
    assert units["N"] == [{"kg": "1", "m": "1", "s": "-2"}]
    assert units["N/m"] == [{"kg": "1", "s": "-2"}]
    assert units["m/s"] == [{"m": "1", "s": "-1"}]
    assert [u.tag.split("}")[1] for u in root.find("ssd:Units", NS)] == ["Unit"] * 6
    assert [b.tag.split("}")[1] for b in root.find("ssd:Units/ssc:Unit", NS)] == ["BaseUnit"]
    (exp,) = root.findall("ssd:DefaultExperiment", NS)
    assert exp.attrib == {"startTime": "0.0", "stopTime": "2.0"}
    (ann,) = exp.findall("ssd:Annotations/ssc:Annotation", NS)
    assert ann.get("type") == "com.opensimulationplatform"
    assert ann.find("osp:Algorithm/osp:FixedStepAlgorithm", NS).attrib == {"baseStepSize": "0.001"}
    # indented, two spaces a level
    lines = data.decode().splitlines()
    assert (
        lines[2]
        == '  <ssd:System name="contactfmu" description="Exported by contactfmu from a contactfmu.cosim.System">'
    )
    assert lines[3] == "    <ssd:Elements>"
    assert lines[-1] == "</ssd:SystemStructureDescription>"
    assert '        <ssc:LinearTransformation factor="1.0" offset="2.0" />' in lines
    # every element on a line of its own, the document without a trailing newline
    assert sum(line.startswith("      <ssd:Component ") for line in lines) == 6
    assert sum(line.startswith("      <ssd:Connection ") for line in lines) == 13
    assert data.endswith(b"</ssd:DefaultExperiment>\n</ssd:SystemStructureDescription>")


def test_start_time_name_and_sources(fmu_dir):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    root = _root(
        system_structure(s, 3, 0.5, start_time=1, name="demo", sources={"mass": "resources/x.fmu"})
    )
    assert root.get("name") == "demo" and root.find("ssd:System", NS).get("name") == "demo"
    assert root.find(".//ssd:Component", NS).get("source") == "resources/x.fmu"
    assert root.find("ssd:DefaultExperiment", NS).attrib == {"startTime": "1.0", "stopTime": "3.0"}
    # nothing connected, nothing given: no connectors, bindings, connections or units
    assert root.find(".//ssd:Component", NS).find("ssd:Connectors", NS) is None
    assert root.find(".//ssd:Connections", NS) is None and root.find("ssd:Units", NS) is None


@pytest.mark.parametrize(
    "stop, step, start, text",
    [
        (1.0, 0.0, 0.0, "communication step 0.0 s must be > 0"),
        (1.0, float("inf"), 0.0, "communication step inf s must be > 0"),
        (1.0, float("nan"), 0.0, "communication step nan s must be > 0"),
        (1.0, 0.1, 1.0, "stop_time 1.0 must be greater than start_time 1.0"),
        (0.5, 0.1, 1.0, "stop_time 0.5 must be greater than start_time 1.0"),
    ],
)
def test_the_experiment_is_checked(fmu_dir, stop, step, start, text):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    with pytest.raises(CosimError) as e:
        system_structure(s, stop, step, start)
    assert str(e.value) == text


def test_the_package_holds_the_structure_and_each_fmu_file_once(fmu_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(fmu_dir / "Mass.fmu", other / "Mass.fmu")
    s = System()
    s.add("m1", fmu_dir / "Mass.fmu")
    s.add("m2", fmu_dir / "Mass.fmu")  # the same file: one copy
    s.add("m3", other / "Mass.fmu")  # another file of the same name
    s.add("m4", other / "Mass.fmu")
    path = export_ssp(s, tmp_path / "out" / "deeper" / "pkg.ssp", 1.0, 0.1)
    assert path == tmp_path / "out" / "deeper" / "pkg.ssp"  # its folders made
    with zipfile.ZipFile(path) as z:
        assert z.namelist() == ["SystemStructure.ssd", "resources/Mass.fmu", "resources/Mass_2.fmu"]
        assert z.getinfo("SystemStructure.ssd").compress_type == zipfile.ZIP_DEFLATED
        assert z.read("resources/Mass_2.fmu") == (other / "Mass.fmu").read_bytes()
        root = _root(z.read("SystemStructure.ssd"))
    assert root.get("name") == "pkg"  # the file's stem
    sources = {c.get("name"): c.get("source") for c in root.iterfind(".//ssd:Component", NS)}
    assert sources == {
        "m1": "resources/Mass.fmu",
        "m2": "resources/Mass.fmu",
        "m3": "resources/Mass_2.fmu",
        "m4": "resources/Mass_2.fmu",
    }
    named = export_ssp(s, tmp_path / "n.ssp", 1.0, 0.1, start_time=0.5, name="given")
    with zipfile.ZipFile(named) as z:
        root = _root(z.read("SystemStructure.ssd"))
    assert root.get("name") == "given"
    assert root.find("ssd:DefaultExperiment", NS).get("startTime") == "0.5"


def test_a_package_must_end_in_ssp(fmu_dir, tmp_path):
    s = System()
    s.add("mass", fmu_dir / "Mass.fmu")
    with pytest.raises(CosimError) as e:
        export_ssp(s, tmp_path / "x.zip", 1.0, 0.1)
    assert str(e.value) == f"{tmp_path / 'x.zip'}: an SSP package must end in .ssp"
    assert not (tmp_path / "x.zip").exists()


def test_a_false_boolean_and_a_value_on_another_causality(fmu_dir):
    """A Boolean parameter false is "false"; a variable given a value whose causality is none of
    input, output, parameter (a local, an FMU of another tool) becomes a parameter connector."""
    s = System()
    s.add("stop", fmu_dir / "EndStop.fmu", friction=False)
    s.instances["stop"].variables["friction"].causality = "local"
    root = _root(system_structure(s, 1.0, 0.1))
    connector = root.find(".//ssd:Connector", NS)
    assert (connector.get("name"), connector.get("kind")) == ("friction", "parameter")
    assert root.find(".//ssv:Parameter/ssv:Boolean", NS).get("value") == "false"
