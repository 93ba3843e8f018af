"""Optional settings for a non-Python FMI host (``contactfmu env``), for unusual installations.

Every contactfmu FMU is a pythonfmu FMU: its binary starts (or joins) a CPython interpreter in
the host process, and pythonfmu's library is not linked against libpython. The FMU's status shim
(src/contactfmu/fmi/fmi2_status_shim.c) therefore loads libpython itself, with global symbols, before it
loads pythonfmu's library: the one already in the process, else ``CONTACTFMU_LIBPYTHON``, else
the libpython of the Python that built the FMU (recorded in
``binaries/linux64/<Model>_libpython.txt``), else that version's sonames; and it points
``PYTHONHOME`` at that Python's prefix while the interpreter starts (unless the host set one).
A C host needs no set-up on the machine that built the FMUs or on one with the same Python.

Where that does not suffice (the FMUs copied to a machine whose Python lies elsewhere, a
relocated installation), the settings printed here still work: libpython preloaded
(``LD_PRELOAD``) and a ``python3`` of the same version first on ``PATH`` (the interpreter finds
its standard library from it; ``PYTHONHOME`` set to its prefix is the alternative), or just
``CONTACTFMU_LIBPYTHON`` naming the libpython.

The FMUs import only the standard library and the pythonfmu runtime they bundle, so any
installation of the same Python version works; nothing needs to be installed into it.
"""

import os
import shutil
import sys
import sysconfig


class HostEnvError(RuntimeError):
    """This Python cannot host pythonfmu FMUs outside a Python process."""


def libpython():
    """Path of this Python's shared libpython."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        raise HostEnvError(
            f"{sys.executable} was built without a shared libpython (--enable-shared): a "
            f"non-Python host cannot load pythonfmu FMUs with it; use a Python built with "
            f"--enable-shared (Debian's python3, pyenv with PYTHON_CONFIGURE_OPTS=--enable-shared)"
        )
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    for d in (
        sysconfig.get_config_var("LIBDIR"),
        os.path.join(sys.base_prefix, "lib"),
        sysconfig.get_config_var("LIBPL"),
    ):
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    raise HostEnvError(
        f"{name} of {sys.executable} not found in {sysconfig.get_config_var('LIBDIR')}"
    )


def python_dir():
    """Directory with a python3 of this version, for PATH."""
    d = os.path.dirname(sys.executable)
    if os.path.isfile(os.path.join(d, "python3")) or os.path.isfile(os.path.join(d, "python3.exe")):
        return d
    found = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}")
    if found:
        return os.path.dirname(found)
    raise HostEnvError(f"no python3 next to {sys.executable}")


def settings():
    """{variable: value} to add to a non-Python host's environment on this machine."""
    return {"LD_PRELOAD": libpython(), "PATH": python_dir()}


def environment(base=None):
    """A copy of `base` (default os.environ) with the settings applied (prepended)."""
    env = dict(os.environ if base is None else base)
    for key, value in settings().items():
        env[key] = (
            value + (os.pathsep if key == "PATH" else ":") + env[key] if env.get(key) else value
        )
    return env


def shell_text():
    s = settings()
    v = f"{sys.version_info.major}.{sys.version_info.minor}"
    return "\n".join(
        [
            f"# contactfmu FMUs run Python {v} inside the host process (pythonfmu) and find its libpython",
            '# themselves (docs/importers.md "Non-Python hosts"): these settings are optional, for unusual',
            "# installations. In a host that is not Python (C/C++ tools, libcosim's cosim, ...), set:",
            f'export LD_PRELOAD="{s["LD_PRELOAD"]}${{LD_PRELOAD:+:$LD_PRELOAD}}"',
            f'export PATH="{s["PATH"]}:$PATH"',
            f"# (or dlopen {os.path.basename(s['LD_PRELOAD'])} with RTLD_GLOBAL in the host before loading the FMU;",
            f"#  PYTHONHOME={sys.base_prefix} instead of PATH if no python{v} can come first on PATH;",
            f"#  or only CONTACTFMU_LIBPYTHON={s['LD_PRELOAD']} for the FMU to load that libpython)",
        ]
    )
