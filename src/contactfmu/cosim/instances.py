"""An FMU loaded by the master: unzipped once per process (extracted), its messages collected per
instance name (callbacks, LOGS), and an :class:`Instance` of a System: its model description, its
variables and flanges by name, and its calls with their failure reported with the FMU's log."""

import os
import shutil
import tempfile
from ctypes import byref

from .. import conventions
from . import fmi3
from .errors import CosimError

LOGS = {}  # FMI instance name -> list of (status, message) of the running system
_CALLBACKS = []
_EXTRACTED = {}  # (FMU path, mtime, size) -> its unzip directory, for the life of the process
_EXTRACT_ROOT = []  # the folder of those directories (created on first use)


def extract_into(folder):
    """Unzip the FMUs of this process into `folder` from now on (made at the first unzip), not
    into a folder of the temporary directory removed at exit: for a process that does not end
    through atexit (a dask worker, stopped by its nanny), a folder its owner removes."""
    _EXTRACT_ROOT[:] = [str(folder)]


RUN_NEEDS = ("binaries/", "resources/")  # the folders of an FMU a run needs (extracted)


def extracted(path):
    """The FMU's unzip directory, extracted once per process and FMU file version, with what a
    run needs of it: the model description, the binaries and the resources, not the
    documentation, sources, terminals or icons (14.7 instead of 19.0 ms for PreLoad's 7 FMU
    types). pythonfmu's
    library can never be unloaded (GNU-unique symbols), so every fresh extraction would load
    another copy of it (about 300 kB, kept until the process ends); an unchanged FMU reuses
    the copy already loaded. The directories are removed when the process exits (an atexit
    handler, which contactfmu.examples.exit_now runs too)."""
    from fmpy import extract

    st = os.stat(path)
    key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    if key not in _EXTRACTED:
        if not _EXTRACT_ROOT:
            import atexit

            _EXTRACT_ROOT.append(tempfile.mkdtemp(prefix="contactfmu_"))
            atexit.register(shutil.rmtree, _EXTRACT_ROOT[0], True)
        unzipdir = os.path.join(_EXTRACT_ROOT[0], str(len(_EXTRACTED)))
        os.makedirs(unzipdir, exist_ok=True)
        _EXTRACTED[key] = extract(
            path,
            unzipdir=unzipdir,
            include=lambda m: m == "modelDescription.xml" or m.startswith(RUN_NEEDS),
        )
    return _EXTRACTED[key]


def callbacks():
    """One fmi2CallbackFunctions for all instances. fmpy's logger proxy (which formats the
    variadic message) keeps a single process-wide callback, so messages are dispatched by the
    instance name the FMU reports."""
    from fmpy.fmi2 import fmi2CallbackFunctions, fmi2CallbackLoggerTYPE
    from fmpy.logging import addLoggerProxy

    if not _CALLBACKS:

        def logger(env, name, status, category, message):
            key = name.decode("utf-8", "replace") if name else ""
            LOGS.setdefault(key, []).append((status, message.decode("utf-8", "replace")))

        _CALLBACKS.extend([logger, fmi2CallbackLoggerTYPE(logger)])
    # registered anew for every run: another user of fmpy may have taken the proxy's slot since
    cb = fmi2CallbackFunctions()
    cb.logger = _CALLBACKS[1]
    addLoggerProxy(byref(cb))
    _CALLBACKS.append(cb)  # keep it alive (FMUs hold a pointer to it)
    return cb


class Instance:
    """One FMU instance of a System."""

    def __init__(self, name, path, values):
        from fmpy import read_model_description

        self.name = name
        self.path = str(path)
        if not os.path.isfile(self.path):
            raise CosimError(f"{name}: FMU file {self.path} not found")
        try:
            self.md = read_model_description(self.path)
        except Exception as exc:
            raise CosimError(f"{name}: {self.path} is not a readable FMU: {exc}") from None
        if self.md.coSimulation is None:
            raise CosimError(f"{name}: {self.path} is not a Co-Simulation FMU")
        self.fmi3 = self.md.fmiVersion.startswith("3.")
        self.terminals = {}  # FMI 3.0: the flanges' terminals, {flange: {member: variable}}
        if self.fmi3:
            fmi3.normalize(self.md)
            try:
                self.terminals = fmi3.terminal_members(self.path)
            except Exception as exc:
                raise CosimError(f"{name}: the terminals of {self.path} cannot be read: {exc}")
        self.variables = {v.name: v for v in self.md.modelVariables}
        cs = self.md.coSimulation
        self.derivatives = (cs.maxOutputDerivativeOrder or 0) >= 1
        self.interpolates = bool(cs.canInterpolateInputs)
        self.values = dict(values)
        for key in self.values:
            var = self.var(key)
            if var.causality not in ("parameter", "input") and var.initial not in (
                "exact",
                "approx",
            ):
                hint = f"; set {key}_start" if f"{key}_start" in self.variables else ""
                article = "an" if var.causality[0] in "aeiou" else "a"
                raise CosimError(
                    f"{name}.{key} cannot be set: it is {article} {var.causality} computed by the FMU "
                    f"(initial = {var.initial}){hint}"
                )
        self.log = []
        self.slave = None
        self.unzipdir = None

    def discrete_outputs(self):
        """[(type, [vr, ...])] of the instance's discrete states, its outputs of each type of
        conventions.DISCRETE_TYPES (Integer, Boolean) that it has."""
        out = []
        for kind in conventions.DISCRETE_TYPES:
            vrs = [
                v.valueReference
                for v in self.md.modelVariables
                if v.causality == "output" and v.type == kind
            ]
            if vrs:
                out.append((kind, vrs))
        return out

    def var(self, name):
        try:
            return self.variables[name]
        except KeyError:
            raise CosimError(
                f"{self.name} ({self.md.modelName}) has no variable {name!r}; "
                f"it has: {', '.join(self.variables)}"
            ) from None

    def port(self, flange, what):
        """Name of a flange's position ('s'), velocity ('v'), acceleration ('a') or force ('f')
        variable. An FMI 3.0 FMU: the variable of that member of the flange's terminal (members
        s/v/a/f, or SimulationX's x/v/a/F); else by the naming conventions: MSL names
        <flange>.s/.v/.a/.f, or SimulationX names <flange>.x/.v/.a/.F."""
        members = self.terminals.get(flange)
        if members:
            member = conventions.PORT_ALIASES.get(what, what)
            variable = members.get(what) or members.get(member)
            if variable is not None:
                return variable
        return conventions.port(self.variables, flange, what)

    def flange_role(self, flange):
        """'motion' for an inertial flange (s out, f in), 'force' for a compliant one, or None."""
        s, f = (
            self.variables.get(self.port(flange, "s")),
            self.variables.get(self.port(flange, "f")),
        )
        if s is None or f is None:
            return None
        if s.causality == "output" and f.causality == "input":
            return "motion"
        if s.causality == "input" and f.causality == "output":
            return "force"
        return None

    def call(self, what, fn, t=None):
        """fn() (an fmpy call of this instance); its failure as the CosimError of fail()."""
        try:
            return fn()
        except Exception as exc:
            raise self.fail(what, exc, t) from None

    def fail(self, what, exc, t=None):
        at = "" if t is None else f" at t = {t:.9g} s"
        log = (
            "\n".join(f"  [{status}] {msg}" for status, msg in self.log[-20:]) or "  (no messages)"
        )
        return CosimError(
            f"{self.name} ({os.path.basename(self.path)}): {what} failed{at}: {exc}\n"
            f"FMU log:\n{log}"
        )
