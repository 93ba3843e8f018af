"""One home per FMU: ``components/<Name>/`` holds the component's law (``law.py``, where it has
one), its slave with the variable table (``slave.py``, class ``<Name>``), its spec (``spec.py``:
the documented parameters and the cross-check experiment) and its documentation page
(``README.md``, shipped in the FMU as ``documentation/index.html``). ``translational.py`` is the
vocabulary the slaves share (flanges as FMI variables).

The registry is found, not kept: every folder here with a ``slave.py`` is an FMU, named like the
folder. The FMU, its folder and its slave class carry one name."""

import importlib
from pathlib import Path

HOME = Path(__file__).resolve().parent
NAMES = tuple(sorted(p.parent.name for p in HOME.glob("*/slave.py")))


def home(name):
    """The folder of component `name`; a ValueError naming the known ones if there is none."""
    if name not in NAMES:
        raise ValueError(f"unknown FMU {name!r}; known: {', '.join(NAMES)}")
    return HOME / name


def spec(name):
    """The spec module of component `name` (documented parameters, cross-check experiment)."""
    home(name)
    return importlib.import_module(f"{__name__}.{name}.spec")
