"""Build the FMUs: bundle each slave with the physics it runs, under module names unique to
that FMU version, package it with pythonfmu, put the status shim in front of pythonfmu's
native library, and validate the result.

Layout of a built FMU (linux64):

    modelDescription.xml                       written by the slave base (fmi/model_description.py)
    binaries/linux64/<Model>.so                contactfmu status shim (fmi/fmi2_status_shim.c)
    binaries/linux64/<Model>_pythonfmu.so      pythonfmu's export library, loaded by the shim
    binaries/linux64/<Model>_libpython.txt     the building Python (version, libpython, prefix):
                                               where the shim looks for libpython (python_record),
                                               and the FMU's GUID, which fmi2Instantiate checks
    resources/cfmu_<model>_<hash>_slave.py     entry script named in slavemodule.txt
    resources/cfmu_<model>_<hash>.zip          the Python packages, imported from this archive (archive()):
        cfmu_<model>_<hash>/                   conventions.py, fmi/*.py, mechanics/*.py, components/translational.py,
                                               components/<Model>/*.py (not spec.py)
        pythonfmu/                             pythonfmu's Python side (bundled by pythonfmu)
        **/<module>.pyc                        the bytecode of every .py beside it (see bytecode())
    documentation/index.html, figure.png       the component's page (contactfmu.pages)
    terminalsAndIcons/terminalsAndIcons.xml    a terminal per flange (fmi/terminals.py), if it has flanges

<hash> is taken over every bundled source file, so two versions of one FMU loaded into one
process never share a module name (pythonfmu finds slave modules by name, process-wide).
Only linux64 binaries are shipped: the shim is compiled here with the system C compiler, and
pythonfmu's win64 library alone would report errors as fmi2Fatal.
"""

import hashlib
import importlib.util
import io
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from . import components, pages, validation
from .fmi import terminals
from .fmi.shim import DEFINES, PLATFORM, PLATFORM3

PACKAGE = Path(__file__).resolve().parent
SHIM_SOURCE = PACKAGE / "fmi" / "fmi2_status_shim.c"
SHIM3_SOURCE = PACKAGE / "fmi" / "fmi3_status_shim.c"
SHIM3_MODES = (
    PACKAGE / "fmi" / "fmi3_modes.h"
)  # the FMI 3.0 state machine, included by SHIM3_SOURCE
# what both shims share, compiled into each
SHIM_COMMON = (PACKAGE / "fmi" / "shim_common.c", PACKAGE / "fmi" / "shim_common.h")
# the libraries and the Python archive are stored in the FMU, not deflated: an importer unzips
# them without inflating (about 4 ms per FMU of the 2-core machine), for an FMU of about 0.9 MB
# instead of 0.33 MB
STORED = zipfile.ZIP_STORED


PACKAGE_MARKER = b'"""Bundled by contactfmu.build."""\n'  # an __init__.py made for the bundle


def _bundle_sources(name):
    """(relative path in the bundled package, source file or None for an empty package marker)
    of everything FMU `name` runs: the shared conventions, the generic FMI layer, the mechanics, the translational
    vocabulary and the component's own modules (its spec is the master's, not bundled)."""
    home = components.home(name)
    files = [
        ("__init__.py", None),
        ("conventions.py", PACKAGE / "conventions.py"),
        ("components/__init__.py", None),
        ("components/translational.py", components.HOME / "translational.py"),
    ]
    for layer in ("fmi", "mechanics"):
        files += [(f"{layer}/{p.name}", p) for p in sorted((PACKAGE / layer).glob("*.py"))]
    files += [
        (f"components/{name}/{p.name}", p) for p in sorted(home.glob("*.py")) if p.name != "spec.py"
    ]
    return files


def python_record():
    """The text of <Model>_libpython.txt: the Python building the FMU, for the shim to load its
    libpython (and find its standard library) in a host that is not Python."""
    import sysconfig

    v = f"{sys.version_info.major}.{sys.version_info.minor}"
    lib = ""
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        names = [
            n
            for n in (sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LDLIBRARY"))
            if n
        ]
        dirs = [
            d
            for d in (
                sysconfig.get_config_var("LIBDIR"),
                os.path.join(sys.base_prefix, "lib"),
                sysconfig.get_config_var("LIBPL"),
            )
            if d
        ]
        found = [
            os.path.join(d, n) for n in names for d in dirs if os.path.isfile(os.path.join(d, n))
        ]
        lib = os.path.realpath(found[0]) if found else ""
    exe = getattr(sys, "_base_executable", None) or sys.executable
    return (
        "# written by contactfmu.build: the Python that built this FMU; the status shim loads its\n"
        "# libpython (after CONTACTFMU_LIBPYTHON) in a host that has none\n"
        f"version={v}\nlibpython={lib}\nprefix={sys.base_prefix}\nexecutable={exe}\n"
    )


def shim_record(token):
    """The text of <Model>_libpython.txt: the building Python (python_record) and the FMU's token
    (its GUID or instantiationToken), which the shim's instantiation checks."""
    return python_record() + f"token={token}\n"


def fmu_hash(name):
    """Hash of everything bundled into FMU `name` (sources, shim, pythonfmu version) and of how
    this module packages it."""
    import pythonfmu

    h = hashlib.sha256(pythonfmu.__version__.encode())
    for rel, src in _bundle_sources(name):
        h.update(rel.encode())
        if src is not None:
            h.update(src.read_bytes())
    for source in (SHIM_SOURCE, SHIM3_SOURCE, SHIM3_MODES, *SHIM_COMMON):
        h.update(source.read_bytes())
    h.update(python_record().encode())
    h.update(Path(__file__).read_bytes())  # how the FMU is packaged (its bytecode, ...)
    return h.hexdigest()[:10]


def package_name(name):
    return f"cfmu_{name.lower()}_{fmu_hash(name)}"


def compile_shim(dest, source=SHIM_SOURCE):
    """Compile the status shim (FMI 2.0, or `source` SHIM3_SOURCE: FMI 3.0) with what both shims
    share (shim_common.c) into `dest` (a shared library) with the system C compiler."""
    cc = os.environ.get("CC", "gcc")
    defines = [f"-D{key}={value}" for key, value in DEFINES.items()]
    cmd = [
        cc,
        "-std=c99",
        "-O2",
        "-fPIC",
        "-shared",
        "-fvisibility=hidden",
        *defines,
        "-o",
        str(dest),
        str(source),
        str(SHIM_COMMON[0]),
        "-ldl",
        "-lm",
        "-pthread",
    ]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise RuntimeError(
            f"C compiler '{cc}' not found: the FMU status shim needs one (set CC)"
        ) from None
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"compiling {source.name} failed:\n{exc.stderr}") from None
    return dest


def build_fmu(name, out_dir, shim=None):
    """Build FMU `name` (one of contactfmu.components.NAMES) into out_dir/<name>.fmu."""
    from pythonfmu.builder import FmuBuilder

    components.home(name)  # a ValueError naming the known FMUs
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pkg = package_name(name)
    dest = out_dir / f"{name}.fmu"
    with tempfile.TemporaryDirectory(prefix="contactfmu_build_") as tmp:
        tmp = Path(tmp)
        for rel, src in _bundle_sources(name):
            target = tmp / pkg / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if src is None:
                target.write_bytes(PACKAGE_MARKER)
            else:
                shutil.copy2(src, target)
        script = tmp / f"{pkg}_slave.py"
        script.write_text(
            ENTRY_SCRIPT.format(name=name, pkg=pkg, archive=ARCHIVE_PATH.format(pkg=pkg))
        )
        if shim is None:
            shim = compile_shim(tmp / "shim.so")
        raw = tmp / "raw" / f"{name}.fmu"
        raw.parent.mkdir()
        documentation = pages.write(name, tmp / "documentation").parent
        try:
            FmuBuilder.build_FMU(
                script,
                dest=raw,
                project_files=[tmp / pkg],
                documentation_folder=documentation,
                canGetAndSetFMUstate=True,
                canSerializeFMUstate=True,
            )
        finally:
            for key in [
                k for k in sys.modules if k == pkg or k.startswith(pkg + ".") or k == script.stem
            ]:
                del sys.modules[key]
        _install_shim(raw, dest, name, pkg, shim)
    return dest


ENTRY_SCRIPT = '''"""Entry script of {name}.fmu (generated by contactfmu.build)."""
import ctypes
import sys

# pythonfmu 0.7.0 executes this file at every fmi2Instantiate (to find the slave class) and then
# releases a reference to this module's globals that it never took (Py_DECREF on the borrowed
# result of PyModule_GetDict). Without this balancing reference, a second instance of the same
# FMU in one process finds a freed module dictionary.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(globals()))

# It also inserts the FMU's resources folder at the front of sys.path at every fmi2Instantiate:
# keep one entry, or the host's sys.path grows by one per instance (and a failing import in the
# host walks them all).
if sys.path and sys.path[0] in sys.path[1:]:
    del sys.path[0]
{archive}
from {pkg}.components.{name}.slave import {name}  # noqa: E402
'''

# the FMU's Python packages (its own and pythonfmu's) are one archive beside the entry script
ARCHIVE_PATH = """
# This FMU's Python packages (its own and pythonfmu's) are imported from the archive
# resources/{pkg}.zip (zipimport): one file to unzip instead of about 60.
_archive = __file__[: -len("_slave.py")] + ".zip"
if _archive not in sys.path:
    sys.path.insert(0, _archive)
del _archive
"""


def bytecode(path, source):
    """The bytecode of the Python source `source` (bytes) at `path`, for the building Python:
    hash-checked (PEP 552), so it is valid wherever the FMU is unzipped (an unzip gives files
    new modification times, which would invalidate a timestamp pyc) and the source is compiled
    instead if it changed. A host of another Python version ignores it (another magic number)
    and compiles the source, as without it. Without it, an FMU would compile its modules at
    every first instantiation in a process: 21 ms for a Mass, 48 ms for the first FMU (the FMI
    layer and pythonfmu), about 0.12 s of PreLoad's 1.0 s."""
    code = compile(source, path, "exec", dont_inherit=True)
    flags = 0b11  # hash-based, checked against the source
    return (
        importlib.util.MAGIC_NUMBER
        + flags.to_bytes(4, "little")
        + importlib.util.source_hash(source)
        + marshal.dumps(code)
    )


def _packaged(arcname):
    """The path inside the archive of an FMU member that belongs to a Python package under
    resources/ (the bundled package, pythonfmu's), or None (a file of resources/ itself: the entry
    script, slavemodule.txt; or a member outside resources/)."""
    if not arcname.startswith("resources/"):
        return None
    rel = arcname[len("resources/") :]
    return rel if "/" in rel else None


def archive(members, pkg):
    """(member name, bytes) of resources/<pkg>.zip: the Python packages an FMU runs, [(path,
    bytes)], each source with its bytecode beside it (<module>.pyc, where zipimport looks for
    it; see bytecode). Extracting an FMU then creates one file for them instead of a source, a
    pyc and a folder or two per module: the 72 members of a Mass, 33 ms to unzip on the 2-core
    machine's disk, become 12. Stored, not compressed: an import reads it without inflating (and
    the FMU stores it as it is, STORED)."""
    buffer = io.BytesIO()
    folders = sorted(
        {str(parent) + "/" for path, _ in members for parent in Path(path).parents[:-1]}
    )
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        for folder in folders:  # zipimport finds a namespace package (mechanics/) by its entry
            z.writestr(folder, b"")
        for path, data in sorted(members):
            z.writestr(path, data)
            if path.endswith(".py"):
                z.writestr(path[:-3] + ".pyc", bytecode(f"resources/{pkg}.zip/{path}", data))
    return f"resources/{pkg}.zip", buffer.getvalue()


def _install_shim(raw, dest, name, pkg, shim):
    """Copy the pythonfmu-built FMU, with the status shim as the model's binary, the Python
    packages in one archive (see archive) and the slave's terminals (if it has any) in
    terminalsAndIcons/terminalsAndIcons.xml."""
    declared = pages.slave_class(name).terminals()
    lib = f"binaries/{PLATFORM}/{name}.so"
    tmp_dest = dest.with_suffix(".fmu.part")
    packaged = []
    with zipfile.ZipFile(raw) as zin, zipfile.ZipFile(tmp_dest, "w", zipfile.ZIP_DEFLATED) as zout:
        names = zin.namelist()
        if lib not in names:
            raise RuntimeError(f"pythonfmu produced no {lib}")
        for item in names:
            if item.startswith("binaries/") and not item.startswith(f"binaries/{PLATFORM}/"):
                continue  # see module docstring
            if item.endswith("/") or "/__pycache__/" in item:
                continue  # folders are implied; bytecode is the archive's own
            data = zin.read(item)
            if rel := _packaged(item):
                packaged.append((rel, data))
            elif item == lib:
                zout.writestr(f"binaries/{PLATFORM}/{name}_pythonfmu.so", data, STORED)
                zout.write(shim, lib, STORED)
                guid = ElementTree.fromstring(zin.read("modelDescription.xml")).get("guid")
                zout.writestr(f"binaries/{PLATFORM}/{name}_libpython.txt", shim_record(guid))
            elif item != terminals.PATH:
                zout.writestr(item, data)
        zout.writestr(*archive(packaged, pkg), STORED)
        if declared:
            zout.writestr(terminals.PATH, terminals.to_bytes(declared))
    os.replace(tmp_dest, dest)


# ---- FMI 3.0 (every FMU) ---------------------------------------------------------------------

ENTRY_SCRIPT3 = '''"""Entry script of {name}.fmu, FMI 3.0 (generated by contactfmu.build)."""
import sys

# pythonfmu3's library inserts the resources folder at the front of sys.path at every instantiation:
# keep one entry
if sys.path and sys.path[0] in sys.path[1:]:
    del sys.path[0]
{archive}
from {pkg}.components.{name}.slave import {name} as Slave  # noqa: E402
from {pkg}.fmi.fmi3 import Fmi3Slave  # noqa: E402


class {name}(Fmi3Slave, Slave):
    """{name} answering pythonfmu3's library (fmi/fmi3.py)."""
'''


def fmi3_class(name):
    """The FMI 3.0 slave class of component `name`: fmi3.Fmi3Slave before its slave class."""
    from .fmi.fmi3 import Fmi3Slave

    return type(name, (Fmi3Slave, pages.slave_class(name)), {})


def fmi3_package_name(name):
    return f"cfmu3_{name.lower()}_{fmu_hash(name)}"


def build_fmu3(name, out_dir, shim=None):
    """Build the FMI 3.0 co-simulation FMU of component `name` into out_dir/<name>.fmu, from the
    same slave class as the FMI 2.0 one: the model description of fmi/model_description3.py,
    the FMI 3.0 status shim (fmi/fmi3_status_shim.c; `shim`: compiled already) as <name>.so in
    front of pythonfmu3's native library (the package must be installed) as
    <name>_pythonfmu3.so, the record of the building Python and the token as
    <name>_libpython.txt (as in FMI 2.0), the bundled code under a package name of its own (cfmu3_...),
    pythonfmu's Python side (the slave base derives from its Fmi2Slave), the documentation and
    the terminals."""
    import pythonfmu
    import pythonfmu3

    components.home(name)
    library = Path(pythonfmu3.__file__).parent / "resources" / "binaries" / PLATFORM3
    library = library / "libpythonfmu-export.so"
    if not library.is_file():
        raise RuntimeError(f"pythonfmu3 {pythonfmu3.__version__} has no {PLATFORM3} library")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pkg = fmi3_package_name(name)
    dest = out_dir / f"{name}.fmu"
    cls = fmi3_class(name)
    md = cls(instance_name="build", resources=str(out_dir)).to_xml()
    from xml.etree.ElementTree import indent, tostring

    indent(md)
    part = dest.with_suffix(".fmu.part")
    with tempfile.TemporaryDirectory(prefix="contactfmu_build3_") as tmp:
        if shim is None:
            shim = compile_shim(Path(tmp) / "shim3.so", SHIM3_SOURCE)
        documentation = pages.write(name, Path(tmp) / "documentation").parent
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", tostring(md, encoding="UTF-8", xml_declaration=True))
            z.write(shim, f"binaries/{PLATFORM3}/{name}.so", STORED)
            z.write(library, f"binaries/{PLATFORM3}/{name}_pythonfmu3.so", STORED)
            token = md.get("instantiationToken")
            z.writestr(f"binaries/{PLATFORM3}/{name}_libpython.txt", shim_record(token))
            z.writestr("resources/slavemodule.txt", f"{pkg}_slave")
            z.writestr(
                f"resources/{pkg}_slave.py",
                ENTRY_SCRIPT3.format(name=name, pkg=pkg, archive=ARCHIVE_PATH.format(pkg=pkg)),
            )
            packaged = [
                (f"{pkg}/{rel}", PACKAGE_MARKER if src is None else src.read_bytes())
                for rel, src in _bundle_sources(name)
            ]
            packaged += [
                (f"pythonfmu/{src.name}", src.read_bytes())
                for src in sorted(Path(pythonfmu.__file__).parent.glob("*.py"))
            ]
            z.writestr(*archive(packaged, pkg), STORED)
            for f in sorted(documentation.rglob("*")):
                if f.is_file():
                    z.write(f, f"documentation/{f.relative_to(documentation).as_posix()}")
            declared = cls.terminals()
            if declared:
                z.writestr(terminals.PATH, terminals.to_bytes(declared))
    os.replace(part, dest)
    return dest


# the recipe of each standard: (build one FMU, the status shim's source, the bundled package's name)
RECIPES = {
    "2.0": (build_fmu, SHIM_SOURCE, package_name),
    "3.0": (build_fmu3, SHIM3_SOURCE, fmi3_package_name),
}


def is_current(path, name, standard="2.0"):
    """True if the FMU at `path` bundles the current sources of `name`."""
    try:
        with zipfile.ZipFile(path) as z:
            return f"resources/{RECIPES[standard][2](name)}_slave.py" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def build_all(
    out_dir="fmus", names=None, progress=print, force=True, check_current=True, standard="2.0"
):
    """Build (and validate) the FMUs of FMI `standard` ("2.0" or "3.0") into out_dir; returns
    {name: (path, problems)}. force=False: only those missing or out of date (is_current);
    check_current=False: an FMU that is current is not validated again (it was when it was
    built: its problems are [])."""
    if standard not in RECIPES:
        raise ValueError(f"FMI standard {standard!r}: one of {', '.join(RECIPES)}")
    build, source, _ = RECIPES[standard]
    names = list(names or components.NAMES)
    out_dir = Path(out_dir)
    results = {}
    with tempfile.TemporaryDirectory(prefix="contactfmu_shim_") as tmp:
        shim = None
        for name in names:
            path = out_dir / f"{name}.fmu"
            if force or not is_current(path, name, standard):
                if shim is None:
                    shim = compile_shim(Path(tmp) / "shim.so", source)
                build(name, out_dir, shim=shim)
                action = "built" if standard == "2.0" else f"built (FMI {standard})"
            else:
                action = "current"
            checked = action != "current" or check_current
            problems = validation.problems(path) if checked else []
            results[name] = (path, problems)
            if progress:
                progress(
                    f"  {name + '.fmu':<30} {action}, "
                    + (
                        "valid"
                        if not problems
                        else f"{len(problems)} problem(s): " + "; ".join(problems)
                    )
                )
    return results


def ensure_fmus(out_dir="fmus", names=None):
    """Build the FMUs that are missing or out of date, and validate them; return {name: path}.
    Raises on problems. The FMUs that are current are taken as they are (validated when they were
    built): fmpy's validation of PreLoad's 7 took 0.25 to 0.38 s of every example run."""
    results = build_all(out_dir, names, progress=None, force=False, check_current=False)
    bad = {n: p for n, (_, p) in results.items() if p}
    if bad:
        raise RuntimeError("invalid FMUs: " + "; ".join(f"{n}: {p}" for n, p in bad.items()))
    return {n: path for n, (path, _) in results.items()}
