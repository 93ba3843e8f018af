"""What a non-Python FMI host needs to run contactfmu FMUs (``contactfmu env``).

Every contactfmu FMU is a pythonfmu FMU: its binary starts (or joins) a CPython interpreter in
the host process. pythonfmu's library is not linked against libpython, so in a host that is not
itself Python (a C/C++ tool, libcosim's command line, a Simulink S-function, ...):

* libpython must already be in the process with its symbols global: ``LD_PRELOAD`` it, or have
  the host ``dlopen`` it with ``RTLD_GLOBAL`` before it loads the FMU. Without it the FMU's
  ``fmi2Instantiate`` fails with "undefined symbol: _Py_NoneStruct" (logged by the FMU);
* the interpreter that starts there finds its standard library from a ``python3`` on ``PATH``
  (CPython's start-up search from the program name "python3"); that python must be the same
  version as the preloaded libpython (here the one this command runs under). ``PYTHONHOME`` set
  to its prefix is the alternative when PATH cannot be arranged.

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
        raise HostEnvError(f"{sys.executable} was built without a shared libpython (--enable-shared): a "
                           f"non-Python host cannot load pythonfmu FMUs with it; use a Python built with "
                           f"--enable-shared (Debian's python3, pyenv with PYTHON_CONFIGURE_OPTS=--enable-shared)")
    name = sysconfig.get_config_var("INSTSONAME") or sysconfig.get_config_var("LDLIBRARY")
    for d in (sysconfig.get_config_var("LIBDIR"), os.path.join(sys.base_prefix, "lib"),
              sysconfig.get_config_var("LIBPL")):
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    raise HostEnvError(f"{name} of {sys.executable} not found in {sysconfig.get_config_var('LIBDIR')}")


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
        env[key] = value + (os.pathsep if key == "PATH" else ":") + env[key] if env.get(key) else value
    return env


def shell_text():
    s = settings()
    v = f"{sys.version_info.major}.{sys.version_info.minor}"
    return "\n".join([
        f"# contactfmu FMUs run Python {v} inside the host process (pythonfmu). In a host that is not",
        "# Python (C/C++ tools, libcosim's cosim command line, ...) on this machine, set:",
        f'export LD_PRELOAD="{s["LD_PRELOAD"]}${{LD_PRELOAD:+:$LD_PRELOAD}}"',
        f'export PATH="{s["PATH"]}:$PATH"',
        f"# (or dlopen {os.path.basename(s['LD_PRELOAD'])} with RTLD_GLOBAL in the host before loading the FMU;",
        f"#  PYTHONHOME={sys.base_prefix} instead of PATH if no python{v} can come first on PATH)",
    ])
