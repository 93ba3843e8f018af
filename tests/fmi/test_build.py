"""Every FMU builds, validates, declares what docs/conventions.md and docs/fmus.md state, and is self-contained."""

import ast
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from xml.etree import ElementTree

import pytest
from fmpy import read_model_description
from fmpy.validation import validate_fmu

from contactfmu.components import NAMES
from contactfmu.validation import problems as validate


@pytest.mark.parametrize("name", NAMES)
def test_fmu_validates_without_problems(fmu_dir, name):
    path = fmu_dir / f"{name}.fmu"
    assert validate_fmu(str(path)) == []
    assert validate(path) == []


@pytest.mark.parametrize("name", NAMES)
def test_model_description_is_complete(fmu_dir, name):
    with zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z:
        root = ElementTree.fromstring(z.read("modelDescription.xml"))
    units = {u.get("name") for u in root.iter("Unit")}
    variables = root.find("ModelVariables")
    assert root.find("DefaultExperiment") is not None
    for sv in variables:
        real = sv.find("Real")
        if real is not None:
            assert real.get("unit") in units, sv.get("name")
        assert sv.get("variability") and sv.get("description"), sv.get("name")
    outputs = [i + 1 for i, sv in enumerate(variables) if sv.get("causality") == "output"]
    unknowns = root.find("ModelStructure/Outputs")
    assert [int(u.get("index")) for u in unknowns] == outputs
    assert all(u.get("dependencies") is not None for u in unknowns)
    cs = root.find("CoSimulation")
    assert cs.get("canGetAndSetFMUstate") == "true" and cs.get("canSerializeFMUstate") == "true"


def test_output_dependencies_follow_the_physics(fmu_dir):
    md = read_model_description(str(fmu_dir / "SpringDamper.fmu"))
    deps = {u.variable.name: sorted(d.name for d in u.dependencies) for u in md.outputs}
    assert deps["f"] == ["flange_a.s", "flange_a.v", "flange_b.s", "flange_b.v"]
    assert deps["s_rel"] == ["flange_a.s", "flange_b.s"]
    md = read_model_description(str(fmu_dir / "Mass.fmu"))
    deps = {u.variable.name: sorted(d.name for d in u.dependencies) for u in md.outputs}
    assert deps["s"] == [] and deps["v"] == []  # states: no feed-through
    forces = sorted(f"{fl}.f{k}" for fl in ("flange_a", "flange_b") for k in ("", "2", "3", "4"))
    assert deps["a"] == forces  # m*a = -(sum of the flange_a inputs) - (sum of the flange_b inputs)
    assert deps["interface.m"] == []  # the declared inertia: no feed-through
    initial = {u.variable.name for u in md.initialUnknowns}
    assert initial == {
        "s",
        "v",
        "a",
        "flange_a.s",
        "flange_a.v",
        "flange_a.a",
        "flange_b.s",
        "flange_b.v",
        "flange_b.a",
        "interface.m",
    }


def test_integer_and_boolean_variables_get_a_variability(tmp_path):
    """pythonfmu writes Integer/Boolean variables without variability; the base does not."""
    from contactfmu.fmi.slave import Slave
    from contactfmu.fmi.variables import inp, out, parameter

    class Probe(Slave):
        VARIABLES = [
            parameter("n", 2, "1", "an Integer parameter", min=1),
            parameter("flag", False, None, "a Boolean parameter"),
            inp("k", 0, None, "an Integer input"),
            out("mode", None, "an Integer output", kind="Integer"),
            out("on", None, "a Boolean output", kind="Boolean"),
        ]

        def step(self, t, h):
            pass

    root = Probe(instance_name="probe").to_xml()
    (tmp_path / "modelDescription.xml").write_bytes(ElementTree.tostring(root))
    md = read_model_description(
        str(tmp_path), validate=True, validate_variable_names=True, validate_model_structure=True
    )
    by_name = {v.name: v for v in md.modelVariables}
    assert (by_name["mode"].variability, by_name["on"].variability) == ("discrete", "discrete")
    assert (by_name["n"].variability, by_name["flag"].variability, by_name["k"].variability) == (
        "fixed",
        "fixed",
        "discrete",
    )


def packaged(fmu):
    """(package name, {path: bytes} of resources/<package>.zip, the FMU's member names)."""
    with zipfile.ZipFile(fmu) as z:
        package = z.read("resources/slavemodule.txt").decode().strip().removesuffix("_slave")
        members = z.namelist()
        archive = z.read(f"resources/{package}.zip")
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return package, {n: z.read(n) for n in z.namelist()}, members


@pytest.mark.parametrize("name", NAMES)
def test_bundled_code_imports_only_the_standard_library(fmu_dir, name):
    package, files, _ = packaged(fmu_dir / f"{name}.fmu")
    sources = {n: d.decode() for n, d in files.items() if n.endswith(".py")}
    assert package.startswith(f"cfmu_{name.lower()}_")
    assert f"{package}/components/{name}/slave.py" in sources
    allowed = set(sys.stdlib_module_names) | {"pythonfmu", package}
    for path, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            assert set(roots) <= allowed, f"{path} imports {roots}"


@pytest.mark.parametrize("standard", ["2.0", "3.0"])
def test_python_packages_are_one_archive(fmu_dir, fmu3_dir, standard):
    """build.archive: resources/ holds slavemodule.txt, the entry script and one archive with
    the FMU's Python packages (its own and pythonfmu's), so that extracting the FMU creates a
    dozen files, not one per module, its bytecode and its folder."""
    folder = fmu_dir if standard == "2.0" else fmu3_dir
    package, files, members = packaged(folder / "Mass.fmu")
    assert sorted(m for m in members if m.startswith("resources/")) == [
        f"resources/{package}.zip",
        f"resources/{package}_slave.py",
        "resources/slavemodule.txt",
    ]
    assert len(members) <= 12, members
    # the libraries and the archive stored, not deflated (build.STORED): unzipped without inflating
    with zipfile.ZipFile(folder / "Mass.fmu") as z:
        stored = {i.filename for i in z.infolist() if i.compress_type == zipfile.ZIP_STORED}
    assert f"resources/{package}.zip" in stored
    assert {m for m in members if m.endswith(".so")} <= stored and any(
        m.endswith(".so") for m in members
    )
    assert f"{package}/fmi/slave.py" in files and "pythonfmu/fmi2slave.py" in files
    with zipfile.ZipFile(folder / "Mass.fmu") as z:
        entry = z.read(f"resources/{package}_slave.py").decode()
    assert f"resources/{package}.zip (zipimport)" in entry and "{pkg}" not in entry
    # the namespace package mechanics/ (no __init__.py) is found by its folder's entry
    assert f"{package}/mechanics/" in files and f"{package}/mechanics/__init__.py" not in files


def test_module_names_are_unique_per_fmu(fmu_dir):
    modules = set()
    for name in NAMES:
        with zipfile.ZipFile(fmu_dir / f"{name}.fmu") as z:
            modules.add(z.read("resources/slavemodule.txt").decode().strip())
    assert len(modules) == len(NAMES)


def test_every_fmu_loads_and_steps_in_a_fresh_process_without_contactfmu(fmu_dir):
    """The FMUs run in a Python process in which the project cannot be imported."""
    script = textwrap.dedent(f"""
        import sys, importlib.abc, math
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "contactfmu" or name.startswith("contactfmu."):
                    raise ImportError("contactfmu is blocked in this process")
        sys.meta_path.insert(0, Block())
        sys.path = [p for p in sys.path if "contactfmu" not in p and not p.endswith("/src")]
        from fmpy import simulate_fmu
        for name in {NAMES!r}:
            res = simulate_fmu(r"{fmu_dir}/" + name + ".fmu", stop_time=0.01, output_interval=0.001)
            assert len(res) == 11, name
            for col in res.dtype.names:
                assert all(math.isfinite(float(x)) for x in res[col]), (name, col)
        assert not any(m == "contactfmu" or m.startswith("contactfmu.") for m in sys.modules)
        assert any(m.startswith("cfmu_mass_") for m in sys.modules)
        print("ok")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_no_invalid_memory_access_at_process_exit(fmu_dir, tmp_path):
    """A Python process that ran FMUs and exits normally touches no freed memory on the way out.
    pythonfmu 0.7.0 releases its interpreter state twice at exit (a static shared_ptr's destructor,
    then an ELF destructor on the freed block): the status shim releases it first (docs/known-issues.md,
    "Abort at interpreter exit (pythonfmu 0.7.0)"). Checked with valgrind's memcheck: no invalid
    access from the FMUs' libraries."""
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(f"""
        from fmpy import simulate_fmu
        for name in ("Spring", "Mass"):
            simulate_fmu(r"{fmu_dir}/" + name + ".fmu", stop_time=0.01, output_interval=0.001)
        print("ok")
    """)
    )
    binary = os.path.realpath(sys.executable)
    if not os.path.isfile(binary) or open(binary, "rb").read(2) == b"#!":
        pytest.skip(f"{sys.executable} is not an ELF binary valgrind can run")
    # the interpreter by the path it runs under (in a virtual environment a link to the base
    # binary, which finds the environment's packages only when started by that path)
    proc = subprocess.run(
        ["valgrind", "--error-limit=no", "--num-callers=30", sys.executable, str(script)],
        env=dict(os.environ, PYTHONMALLOC="malloc"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
    errors = re.split(
        r"(?m)^==\d+==\s*$", proc.stderr
    )  # valgrind's reports end with an empty "==pid==" line
    ours = [
        e
        for e in errors
        if "Invalid" in e
        and ("_pythonfmu.so" in e or "finalizePythonInterpreter" in e or "/binaries/linux64/" in e)
    ]
    assert not ours, ours[0][-3000:]


@pytest.mark.parametrize("standard", ["2.0", "3.0"])
def test_the_fmi_schema_checks_each_standards_model_description(
    fmu_dir, fmu3_dir, tmp_path, standard
):
    """validation.problems (the build's check, either standard) validate modelDescription.xml against
    the standard's XSD (fmpy's copy of fmi2ModelDescription.xsd, fmi3ModelDescription.xsd): the
    built Mass passes, a copy whose needsExecutionTool is no xs:boolean is named."""
    from contactfmu.validation import problems

    check, folder = problems, (fmu_dir if standard == "2.0" else fmu3_dir)
    built = folder / "Mass.fmu"
    assert check(built) == []
    bad = tmp_path / "Mass.fmu"
    with zipfile.ZipFile(built) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                data = data.replace(b'needsExecutionTool="true"', b'needsExecutionTool="maybe"', 1)
            zout.writestr(item, data)
    found = check(bad)
    assert any("needsExecutionTool" in p and "maybe" in p for p in found), found


@pytest.mark.parametrize("standard", ["2.0", "3.0"])
def test_every_bundled_module_ships_bytecode_that_matches_its_source(fmu_dir, fmu3_dir, standard):
    """build.bytecode: beside every Python source of the archive, a PEP 552 hash-checked pyc
    for the building Python (magic number, flags 0b11, the source's hash), whose code is the
    source's."""
    import importlib.util
    import marshal

    folder = fmu_dir if standard == "2.0" else fmu3_dir
    _, files, _ = packaged(folder / "Mass.fmu")
    sources = [n for n in files if n.endswith(".py")]
    assert any("/fmi/" in n for n in sources) and any("pythonfmu/" in n for n in sources)
    for name in sources:
        pyc = files[name[:-3] + ".pyc"]
        assert pyc[:4] == importlib.util.MAGIC_NUMBER, name
        assert int.from_bytes(pyc[4:8], "little") == 0b11, name
        assert pyc[8:16] == importlib.util.source_hash(files[name]), name
        code = compile(files[name], name, "exec", dont_inherit=True)
        assert marshal.loads(pyc[16:]).co_code == code.co_code, name


def test_instantiation_imports_the_shipped_bytecode(fmu_dir, tmp_path):
    """Python loads the FMU's modules from the shipped bytecode: instantiating the unzipped FMU
    (in a process of its own) compiles no module of the archive from its source but one whose
    source was edited (the check that makes the bytecode safe)."""
    unzipped = tmp_path / "Mass"
    with zipfile.ZipFile(fmu_dir / "Mass.fmu") as z:
        z.extractall(unzipped)
    package, files, _ = packaged(fmu_dir / "Mass.fmu")
    edited = f"{package}/fmi/slave.py"
    files[edited] += b"\n# edited\n"
    archive = unzipped / "resources" / f"{package}.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    script = textwrap.dedent(
        f"""
        import importlib.machinery, os
        from fmpy import read_model_description
        from fmpy.fmi2 import FMU2Slave
        import zipimport
        compiled = []
        to_code = zipimport._compile_source
        def compile_source(path, data):
            compiled.append(path)
            return to_code(path, data)
        zipimport._compile_source = compile_source
        md = read_model_description({str(unzipped / "modelDescription.xml")!r})
        s = FMU2Slave(guid=md.guid, unzipDirectory={str(unzipped)!r},
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="m")
        s.instantiate()
        s.freeInstance()
        print(repr([p for p in compiled if p.startswith({str(unzipped)!r})]), flush=True)
        os._exit(0)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], check=True, timeout=120, capture_output=True, text=True
    )
    # (compiled at each import: nothing writes bytecode into an archive)
    assert set(ast.literal_eval(run.stdout.strip().splitlines()[-1])) == {f"{archive}/{edited}"}


def test_ensure_fmus_validates_what_it_builds_and_takes_current_fmus_as_they_are(
    fmu_dir, tmp_path, monkeypatch
):
    """build.ensure_fmus (what the examples and studies call): an FMU out of date is built and
    validated; one that is current (built and validated from these very sources) is not
    validated again."""
    from pathlib import Path

    from contactfmu import build

    shutil.copy(fmu_dir / "Mass.fmu", tmp_path / "Mass.fmu")
    (tmp_path / "Fixed.fmu").write_bytes(b"not an FMU")  # out of date: rebuilt
    validated, validate = [], build.validation.problems
    monkeypatch.setattr(
        build.validation,
        "problems",
        lambda path: validated.append(Path(path).name) or validate(path),
    )
    paths = build.ensure_fmus(tmp_path, ["Mass", "Fixed"])
    assert validated == ["Fixed.fmu"]
    assert build.is_current(paths["Fixed"], "Fixed") and build.is_current(paths["Mass"], "Mass")
    assert (tmp_path / "Mass.fmu").read_bytes() == (fmu_dir / "Mass.fmu").read_bytes()
