"""The FMU state codec: every attribute a slave set, encoded as JSON exactly (floats bit for
bit, tuples, dicts, and objects of the slave's own package rebuilt from their class), so a state
restores a fully working instance, also into another instance or process.

Serialized, a state is sealed (``seal``): a fixed header, the SHA-256 of the payload (the JSON)
in hex and a newline, then the payload. ``unseal`` checks all three, so bytes altered after
fmi2SerializeFMUstate (any flipped bit: header, checksum or payload) or truncated are refused,
never restored into a state nobody saved.

Generic: names no component and no physical domain. Only the standard library is imported
(this module runs inside the FMUs)."""

import hashlib
import struct
import sys

STATE_FORMAT = "contactfmu FMU state 2"
SEAL_HEADER = b"contactfmu FMU state, SHA-256 "
_DIGEST_LENGTH = 64  # hex characters of a SHA-256


class Unsealed(ValueError):
    """Bytes that are not a sealed state, or whose checksum does not match: the reason."""


def seal(payload):
    """The serialized state: header, SHA-256 of the payload (hex), newline, payload."""
    return SEAL_HEADER + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n" + payload


def unseal(data):
    """The payload of sealed bytes; Unsealed with the reason if the header is not the seal's or
    the checksum does not match the payload."""
    data = bytes(data)
    start = len(SEAL_HEADER) + _DIGEST_LENGTH + 1
    if not data.startswith(SEAL_HEADER):
        raise Unsealed(
            f"not a serialized FMU state of a contactfmu FMU (its {len(data)} bytes do not begin "
            f"with {SEAL_HEADER.decode()!r})"
        )
    payload = data[start:]
    if (
        len(data) < start
        or data[start - 1 : start] != b"\n"
        or hashlib.sha256(payload).hexdigest().encode("ascii") != data[len(SEAL_HEADER) : start - 1]
    ):
        raise Unsealed(
            "corrupted: not a serialized FMU state as fmi2SerializeFMUstate wrote it (the SHA-256 of "
            f"its {len(payload)} bytes of content is not the checksum it carries: bytes altered or "
            "truncated)"
        )
    return payload


_KEPT = frozenset((bool, int, float, str, type(None)))  # kept as they are in memory (nan too)
_KEPT_OR_TUPLE = _KEPT | {tuple}


def _is_kept(value):
    """A plain value, or a tuple of plain values: immutable, kept as it is by a state in memory."""
    kind = type(value)
    return kind in _KEPT or (kind is tuple and _KEPT.issuperset(map(type, value)))


def kept(attrs, skip=frozenset()):
    """A copy of attrs without the names in skip, if every value is kept as it is (_is_kept: what
    a slave's attributes are, but the physics objects some hold); else None. The fast path of
    fmi2GetFMUstate, taken once per attempted step by a master with rollback."""
    values = attrs.copy()
    for name in skip:
        values.pop(name, None)
    kinds = set(map(type, values.values()))
    if kinds <= _KEPT or (
        kinds <= _KEPT_OR_TUPLE
        and all(_KEPT.issuperset(map(type, v)) for v in values.values() if type(v) is tuple)
    ):
        return values
    return None


def encode_all(attrs, build, skip=frozenset()):
    """{name: encode(value)} of the attributes but those named in skip: a state in memory, whose
    plain values and tuples of plain values (nan too) are kept as they are: immutable, shared by
    the state (``jsonable`` encodes those tuples and nan's for fmi2SerializeFMUstate)."""
    return {k: v if _is_kept(v) else encode(v, build) for k, v in attrs.items() if k not in skip}


def jsonable(values):
    """encode_all's values as JSON (its tuples of plain values and its nan's encoded, their bits
    kept)."""
    return {
        k: encode(v, None) if type(v) is tuple or (type(v) is float and v != v) else v
        for k, v in values.items()
    }


def decode_all(values, build):
    """{name: decode(value)} of encode_all's result (in memory, or jsonable's through JSON)."""
    return {k: v if type(v) in _KEPT else decode(v, build) for k, v in values.items()}


def encode(value, build):
    """JSON-able copy of an attribute value that decode turns back into an equal value of the
    same types: None, bool, int, float (inf, nan, -0.0 too), str, list, tuple, dict, and objects
    and named tuples of classes in package ``build`` (the slave's own), rebuilt from their class
    and attributes (items)."""
    if isinstance(value, float) and value != value:
        # JSON writes every nan as NaN: its sign and payload bits are kept apart
        return {"__nan__": struct.pack("<d", value).hex()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v, build) for v in value]
    if isinstance(value, tuple):
        cls = type(value)
        if cls is not tuple and hasattr(cls, "_fields"):  # a named tuple: of the slave's classes
            if cls.__module__.split(".")[0] != build:
                raise TypeError(
                    f"cannot capture {cls.__module__}.{cls.__qualname__} in an FMU state"
                )
            return {
                "__namedtuple__": f"{cls.__module__}:{cls.__qualname__}",
                "items": [encode(v, build) for v in value],
            }
        return {"__tuple__": [encode(v, build) for v in value]}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, build), encode(v, build)] for k, v in value.items()]}
    cls = type(value)
    if callable(value) or cls.__module__.split(".")[0] != build:
        raise TypeError(f"cannot capture {cls.__module__}.{cls.__qualname__} in an FMU state")
    # the instance dict and the slots (a class without __slots__ below a slotted one has both)
    attrs = {name: getattr(value, name) for name in _slots(cls) if hasattr(value, name)}
    attrs.update(getattr(value, "__dict__", {}))
    return {
        "__object__": f"{cls.__module__}:{cls.__qualname__}",
        "attrs": {k: encode(v, build) for k, v in attrs.items()},
    }


def _slots(cls):
    for c in cls.__mro__:
        slots = c.__dict__.get("__slots__", ())
        names = (slots,) if isinstance(slots, str) else slots
        yield from (name for name in names if name not in ("__dict__", "__weakref__"))


def decode(value, build):
    """The value encode encoded; objects only of classes in package ``build`` (the slave's)."""
    if isinstance(value, list):
        return [decode(v, build) for v in value]
    if not isinstance(value, dict):
        return value
    if "__nan__" in value:
        return struct.unpack("<d", bytes.fromhex(value["__nan__"]))[0]
    if "__tuple__" in value:
        return tuple(decode(v, build) for v in value["__tuple__"])
    if "__dict__" in value:
        return {decode(k, build): decode(v, build) for k, v in value["__dict__"]}
    named = "__namedtuple__" in value
    name = value.get("__namedtuple__" if named else "__object__")
    module, _, qualname = str(name).partition(":")
    if module.split(".")[0] != build or module not in sys.modules:
        raise ValueError(f"class {name} is not part of this FMU")
    cls = sys.modules[module]
    for part in qualname.split("."):
        cls = getattr(cls, part)
    if not isinstance(cls, type):
        raise ValueError(f"{name} is not a class")
    if named:
        if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise ValueError(f"{name} is not a named tuple")
        return cls(*(decode(v, build) for v in value["items"]))
    obj = cls.__new__(cls)
    for key, item in value["attrs"].items():
        object.__setattr__(obj, key, decode(item, build))
    return obj
