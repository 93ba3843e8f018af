"""The FMU state codec: every attribute a slave set, encoded as JSON exactly (floats bit for
bit, tuples, dicts, and objects of the slave's own package rebuilt from their class), so a state
restores a fully working instance, also into another instance or process.

Generic: names no component and no physical domain. Only the standard library is imported
(this module runs inside the FMUs)."""

import sys

STATE_FORMAT = "contactfmu FMU state 2"


def encode(value, build):
    """JSON-able copy of an attribute value that decode turns back into an equal value of the
    same types: None, bool, int, float (inf, nan, -0.0 too), str, list, tuple, dict, and objects
    of classes in package ``build`` (the slave's own objects), rebuilt from
    their class and attributes."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v, build) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, build) for v in value]}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, build), encode(v, build)] for k, v in value.items()]}
    cls = type(value)
    if callable(value) or cls.__module__.split(".")[0] != build:
        raise TypeError(f"cannot capture {cls.__module__}.{cls.__qualname__} in an FMU state")
    attrs = getattr(value, "__dict__", None)
    if attrs is None:
        attrs = {name: getattr(value, name) for name in _slots(cls) if hasattr(value, name)}
    return {
        "__object__": f"{cls.__module__}:{cls.__qualname__}",
        "attrs": {k: encode(v, build) for k, v in attrs.items()},
    }


def _slots(cls):
    for c in cls.__mro__:
        slots = c.__dict__.get("__slots__", ())
        yield from (slots,) if isinstance(slots, str) else slots


def decode(value, build):
    """The value encode encoded; objects only of classes in package ``build`` (the slave's)."""
    if isinstance(value, list):
        return [decode(v, build) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode(v, build) for v in value["__tuple__"])
    if "__dict__" in value:
        return {decode(k, build): decode(v, build) for k, v in value["__dict__"]}
    name = value.get("__object__")
    module, _, qualname = str(name).partition(":")
    if module.split(".")[0] != build or module not in sys.modules:
        raise ValueError(f"class {name} is not part of this FMU")
    cls = sys.modules[module]
    for part in qualname.split("."):
        cls = getattr(cls, part)
    if not isinstance(cls, type):
        raise ValueError(f"{name} is not a class")
    obj = cls.__new__(cls)
    for key, item in value["attrs"].items():
        object.__setattr__(obj, key, decode(item, build))
    return obj
