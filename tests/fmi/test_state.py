"""The FMU state codec (contactfmu.fmi.state) in-process, against what its docstrings promise:

* encode/decode: "a JSON-able copy of an attribute value that decode turns back into an equal value
  of the same types: None, bool, int, float (inf, nan, -0.0 too), str, list, tuple, dict, and
  objects of classes in package ``build``", rebuilt from their class and attributes (``__dict__``
  or ``__slots__``), and nothing else: other objects and callables are refused when captured,
  classes outside the package (or not loaded) when restored;
* seal/unseal: "a fixed header, the SHA-256 of the payload (the JSON) in hex and a newline, then
  the payload"; bytes altered after serialization (any flipped bit: header, checksum or payload),
  truncated or extended are refused with the reason (Unsealed, a ValueError), never restored.

Inside a built FMU the package is renamed, where mutmut selects no mutant: these tests are the
ones the mutation runs (mutation/run.py --fmi) see. The slave's own package is played here by a
package registered for the test, ``cfmu_fake`` (as an FMU's ``cfmu_<model>_<hash>``).
"""

import dataclasses
import json
import math
import struct
import sys
import types
import typing

import pytest

from contactfmu.fmi.state import (
    SEAL_HEADER,
    Unsealed,
    decode,
    decode_all,
    encode,
    encode_all,
    jsonable,
    kept,
    seal,
    unseal,
)

BUILD = "cfmu_fake"
# SHA-256 test vectors of FIPS 180-2 (the empty message and "abc")
SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# ---- the slave's own package: classes whose objects a state may hold -------------------------


class Point:
    __module__ = "cfmu_fake.objects"

    def __init__(self, x, y):
        self.x = x
        self.y = y


class NeedsArguments:
    """Its __init__ cannot run without arguments (decode must not call it)."""

    __module__ = "cfmu_fake.objects"

    def __init__(self, a):
        raise AssertionError("decode called __init__")


class Outer:
    __module__ = "cfmu_fake.objects"

    class Inner:
        __module__ = "cfmu_fake.objects"


class Record(typing.NamedTuple):
    x: float
    state: object


Record.__module__ = "cfmu_fake.objects"


class SlotBase:
    __module__ = "cfmu_fake.objects"
    __slots__ = "zeta"  # a single slot named by a string, not a tuple


class Slotted(SlotBase):
    __module__ = "cfmu_fake.objects"
    __slots__ = ("alpha", "beta")


@dataclasses.dataclass(frozen=True)
class Frozen:
    """Refuses attribute assignment (decode sets the attributes past __setattr__)."""

    a: float
    b: tuple


Frozen.__module__ = "cfmu_fake.sub.deep"


class Unslotted(Slotted):
    """A subclass without __slots__ of a slotted class: an instance dict beside the slots."""

    __module__ = "cfmu_fake.objects"


class DeclaredDict:
    """Slots that name the instance dict and the weak reference slot themselves."""

    __module__ = "cfmu_fake.objects"
    __slots__ = ("gamma", "__dict__", "__weakref__")


class CallableThing:
    __module__ = "cfmu_fake.objects"

    def __call__(self):
        return 1


class Foreign:
    """A class of another package whose name only begins like the slave's."""

    __module__ = "cfmu_fake_other.objects"

    def __init__(self):
        self.x = 1.0


def helper():
    """A function, not a class, of the slave's package."""


helper.__module__ = "cfmu_fake.objects"


@pytest.fixture(autouse=True)
def fake_package(monkeypatch):
    """Registers cfmu_fake (with cfmu_fake.objects, cfmu_fake.sub.deep) and cfmu_fake_other."""
    modules = {}
    for name in ("cfmu_fake", "cfmu_fake.objects", "cfmu_fake.sub", "cfmu_fake.sub.deep"):
        modules[name] = types.ModuleType(name)
        monkeypatch.setitem(sys.modules, name, modules[name])
    objects = modules["cfmu_fake.objects"]
    for cls in (
        Point,
        Record,
        NeedsArguments,
        Outer,
        SlotBase,
        Slotted,
        Unslotted,
        CallableThing,
        DeclaredDict,
    ):
        setattr(objects, cls.__name__, cls)
    objects.helper = helper
    modules["cfmu_fake.sub.deep"].Frozen = Frozen
    other = types.ModuleType("cfmu_fake_other.objects")
    other.Foreign = Foreign
    monkeypatch.setitem(sys.modules, "cfmu_fake_other", types.ModuleType("cfmu_fake_other"))
    monkeypatch.setitem(sys.modules, "cfmu_fake_other.objects", other)


def through_json(value):
    """encode, JSON text (as fmi2SerializeFMUstate writes it), back, decode."""
    text = json.dumps(encode(value, BUILD))
    return decode(json.loads(text), BUILD)


def bits(x):
    return struct.pack("<d", x)


def same(a, b):
    """Equal values of the same types all the way down (floats bit for bit, NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bits(a) == bits(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (
            list(a) == list(b)
            and all(same(k, j) for k, j in zip(a, b))
            and all(same(a[k], b[k]) for k in a)
        )
    if type(a).__module__.startswith(BUILD):
        return same(attributes(a), attributes(b))
    return a == b


def attributes(obj):
    out = dict(getattr(obj, "__dict__", {}))
    for c in type(obj).__mro__:
        slots = c.__dict__.get("__slots__", ())
        for n in (slots,) if isinstance(slots, str) else slots:
            if hasattr(obj, n):
                out[n] = getattr(obj, n)
    return out


# ---- encode/decode: every supported type, exactly --------------------------------------------

FLOATS = [
    0.0,
    -0.0,
    1.0,
    0.1 + 0.2,  # 0.30000000000000004: not the shortest decimal of 0.3
    -2.5e-300,
    5e-324,  # the smallest denormal
    2.2250738585072014e-308,  # the smallest normal
    1.7976931348623157e308,
    math.pi,
    math.inf,
    -math.inf,
]


@pytest.mark.parametrize("x", FLOATS, ids=repr)
def test_float_round_trip_is_bit_exact(x):
    y = through_json(x)
    assert type(y) is float and bits(y) == bits(x)


def test_nan_round_trips_as_a_float_nan():
    y = through_json(math.nan)
    assert type(y) is float and math.isnan(y)
    assert bits(decode(encode(math.nan, BUILD), BUILD)) == bits(math.nan)


@pytest.mark.parametrize("pattern", ["fff8000000000000", "7ff8000000000001", "fff0000000000abc"])
def test_nan_keeps_its_sign_and_payload_through_json(pattern):
    """Module docstring: floats bit for bit, also serialized (JSON writes every nan as NaN, so a
    -nan used to come back as +nan)."""
    x = struct.unpack(">d", bytes.fromhex(pattern))[0]
    y = through_json(x)
    assert type(y) is float and bits(y) == bits(x)


def test_negative_zero_keeps_its_sign():
    y = through_json(-0.0)
    assert y == 0.0 and math.copysign(1.0, y) == -1.0


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -7,
        2**70,  # beyond 64 bits
        "",
        'text with \n, "quotes" and unicode ü',
        "__tuple__",  # a string that names a marker is still a string
    ],
    ids=["None", "True", "False", "0", "-7", "2**70", "empty", "text", "marker"],
)
def test_scalars_round_trip_with_their_type(value):
    y = through_json(value)
    assert type(y) is type(value) and y == value


def test_bool_is_not_turned_into_int_and_int_not_into_float():
    y = through_json([True, 1, 1.0, False, 0, 0.0])
    assert [type(v) for v in y] == [bool, int, float, bool, int, float]
    assert y == [True, 1, 1.0, False, 0, 0.0]


def test_list_tuple_and_dict_keep_their_types_nested():
    value = [
        (1, 2.5, "a"),
        [(), []],
        {"k": (1.0, -0.0), 3: [None], (1, 2): {"inner": (True,)}, None: "none key", 2.5: "float"},
        ((("deep",),),),
    ]
    y = through_json(value)
    assert same(y, value)
    assert type(y[0]) is tuple and type(y[1]) is list and type(y[1][0]) is tuple
    assert type(y[2]) is dict and (1, 2) in y[2] and 3 in y[2] and "3" not in y[2]


def test_dict_keeps_its_key_order_and_non_string_keys():
    value = {3: "c", 1: "a", "2": "b", (0,): "t"}
    y = through_json(value)
    assert list(y) == [3, 1, "2", (0,)]
    assert y == value


def test_dict_with_marker_like_keys_stays_a_dict():
    value = {"__tuple__": [1], "__dict__": 2, "__object__": "x:y", "attrs": {}}
    y = through_json(value)
    assert type(y) is dict and y == value and type(y["__tuple__"]) is list


def test_encoded_value_is_plain_json():
    """What encode returns is built from JSON types only (json.dumps takes it, with no default)."""
    value = {"t": (1, [2, (3,)]), "p": Point(1.5, (2,)), "s": Slotted()}
    text = json.dumps(encode(value, BUILD), allow_nan=True)
    assert same(decode(json.loads(text), BUILD), value)


def test_encode_does_not_change_its_argument():
    value = {"a": [1, (2, 3)], "p": Point([1.0], {"q": (4,)})}
    encode(value, BUILD)
    assert value["a"] == [1, (2, 3)] and value["p"].x == [1.0] and value["p"].y == {"q": (4,)}


# ---- objects of the slave's own package -----------------------------------------------------


def test_object_round_trip_rebuilds_class_and_attributes():
    p = Point(1.25, (math.inf, -0.0))
    p.extra = [Point(None, "s")]
    y = through_json(p)
    assert type(y) is Point and y is not p
    assert y.__dict__.keys() == {"x", "y", "extra"}
    assert bits(y.x) == bits(1.25) and same(y.y, (math.inf, -0.0))
    assert type(y.extra) is list and type(y.extra[0]) is Point
    assert y.extra[0].x is None and y.extra[0].y == "s"


def test_a_named_tuple_of_the_package_comes_back_with_its_class_and_fields():
    """A named tuple (a Coupler's Shadow and Prediction records) is rebuilt as itself, its items
    decoded (nan bits, nested objects); one of a class outside the package is refused."""
    r = Record(-math.nan, Point(1, (2.0,)))
    y = through_json({"r": r, "t": (r,)})
    assert type(y["r"]) is Record and type(y["t"][0]) is Record
    assert bits(y["r"].x) == bits(-math.nan) and type(y["r"].state) is Point
    assert y["r"].state.y == (2.0,)
    Foreign = typing.NamedTuple("Foreign", [("a", int)])
    with pytest.raises(TypeError, match="cannot capture"):
        encode(Foreign(1), BUILD)
    assert decode(encode((1, 2), BUILD), BUILD) == (1, 2)  # a plain tuple stays one
    with pytest.raises(ValueError, match="is not a named tuple"):
        decode({"__namedtuple__": "cfmu_fake.objects:Point", "items": [1, 2]}, BUILD)


def test_objects_inside_tuples_and_as_dict_keys_and_values():
    """The package's objects anywhere in a value: in tuples, as dict values and (hashable) keys."""
    key = Frozen(a=1.0, b=(2,))
    value = {"t": (Point(1, 2), (Point(3, 4),)), key: Point(5, 6), (key,): [key]}
    y = through_json(value)
    assert type(y["t"]) is tuple and type(y["t"][0]) is Point and type(y["t"][1][0]) is Point
    assert (y["t"][0].x, y["t"][1][0].y) == (1, 4)
    assert list(y)[1] == key and type(list(y)[1]) is Frozen and y[key].x == 5
    assert y[(key,)] == [key]


def test_object_is_rebuilt_without_calling_init():
    obj = NeedsArguments.__new__(NeedsArguments)
    obj.value = 3.5
    y = through_json(obj)
    assert type(y) is NeedsArguments and y.value == 3.5


def test_frozen_object_of_a_subpackage_is_restored():
    """A frozen dataclass (its __setattr__ raises) in cfmu_fake.sub.deep: decode sets the
    attributes past __setattr__ and finds the class by its full module name."""
    f = Frozen(a=2.5, b=(1, "x"))
    y = through_json(f)
    assert type(y) is Frozen and y == f and type(y.b) is tuple


def test_nested_class_is_found_by_its_qualified_name():
    inner = Outer.Inner()
    inner.v = -1
    encoded = encode(inner, BUILD)
    assert encoded["__object__"] == "cfmu_fake.objects:Outer.Inner"
    y = through_json(inner)
    assert type(y) is Outer.Inner and y.v == -1


def test_slotted_object_keeps_its_slots_from_every_class_of_its_mro():
    s = Slotted()
    s.alpha = (1.0, 2)
    s.beta = {"b": -0.0}
    s.zeta = Point(1, 2)  # the base's slot, named by a string
    y = through_json(s)
    assert type(y) is Slotted
    assert y.alpha == (1.0, 2) and type(y.alpha) is tuple
    assert math.copysign(1.0, y.beta["b"]) == -1.0
    assert type(y.zeta) is Point and (y.zeta.x, y.zeta.y) == (1, 2)


def test_unset_slot_stays_unset():
    s = Slotted()
    s.beta = 7
    assert encode(s, BUILD)["attrs"] == {"beta": 7}
    y = through_json(s)
    assert y.beta == 7 and not hasattr(y, "alpha") and not hasattr(y, "zeta")


def test_object_encoding_names_module_and_class():
    encoded = encode(Point(1, 2), BUILD)
    assert encoded == {"__object__": "cfmu_fake.objects:Point", "attrs": {"x": 1, "y": 2}}


# ---- refused when captured ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, name",
    [
        (Foreign(), "cfmu_fake_other.objects.Foreign"),  # another package, same prefix
        (1 + 2j, "builtins.complex"),
        ({1, 2}, "builtins.set"),
        (b"bytes", "builtins.bytes"),
        (math.sin, "builtins.builtin_function_or_method"),
        (helper, "cfmu_fake.objects.helper"),
        (CallableThing(), "cfmu_fake.objects.CallableThing"),  # of the package, but callable
        (Point, "cfmu_fake.objects.Point"),  # a class is callable
        (struct.Struct("<d"), "_struct.Struct"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_encode_refuses_what_it_cannot_restore(value, name):
    with pytest.raises(TypeError, match="cannot capture .* in an FMU state") as info:
        encode(value, BUILD)
    if not isinstance(value, type) and not isinstance(value, types.FunctionType):
        assert f"{type(value).__module__}.{type(value).__qualname__}" in str(info.value)
    assert "in an FMU state" in str(info.value)


@pytest.mark.parametrize("container", [list, tuple, lambda v: {"k": v}, lambda v: {v: 1}])
def test_encode_refuses_an_unsupported_value_inside_a_container(container):
    try:
        value = container([Foreign()])
    except TypeError:  # an unhashable key
        value = {("k",): Foreign()}
    with pytest.raises(TypeError, match="cfmu_fake_other.objects.Foreign"):
        encode(value, BUILD)


def test_encode_refuses_an_object_of_the_package_holding_a_foreign_one():
    p = Point(1, Foreign())
    with pytest.raises(TypeError, match="cfmu_fake_other.objects.Foreign"):
        encode(p, BUILD)


def test_encode_accepts_the_class_only_for_its_own_package():
    with pytest.raises(TypeError, match="cfmu_fake.objects.Point"):
        encode(Point(1, 2), "cfmu_other")
    with pytest.raises(TypeError, match="cfmu_fake.objects.Point"):
        encode(Point(1, 2), "objects")
    assert encode(Point(1, 2), "cfmu_fake")["attrs"] == {"x": 1, "y": 2}


# ---- refused when restored ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "cfmu_fake_other.objects:Foreign",  # another package, same prefix
        "builtins:dict",
        "os:system",
        "cfmu_fake.missing:Point",  # of the package, but not loaded
        None,  # no "__object__" at all
    ],
)
def test_decode_refuses_a_class_that_is_not_part_of_the_fmu(name):
    value = {"attrs": {"x": 1}} if name is None else {"__object__": name, "attrs": {"x": 1}}
    with pytest.raises(ValueError, match=f"class {name} is not part of this FMU"):
        decode(value, BUILD)


def test_decode_refuses_a_plain_json_object():
    with pytest.raises(ValueError, match="class None is not part of this FMU"):
        decode({"x": 1.0}, BUILD)


def test_decode_refuses_the_same_class_for_another_build():
    encoded = encode(Point(1, 2), BUILD)
    with pytest.raises(ValueError, match="class cfmu_fake.objects:Point is not part of this FMU"):
        decode(encoded, "cfmu_other")
    with pytest.raises(ValueError, match="is not part of this FMU"):
        decode(encoded, "objects")


def test_decode_refuses_a_name_that_is_not_a_class():
    with pytest.raises(ValueError, match="cfmu_fake.objects:helper is not a class"):
        decode({"__object__": "cfmu_fake.objects:helper", "attrs": {}}, BUILD)


@pytest.mark.parametrize("name", ["cfmu_fake.objects:Nothing", "cfmu_fake", "cfmu_fake.objects:"])
def test_decode_refuses_a_class_the_module_does_not_have(name):
    """No class part, or one the module lacks: an error (the slave refuses the state with it)."""
    with pytest.raises(AttributeError):
        decode({"__object__": name, "attrs": {}}, BUILD)


def test_decode_refuses_a_foreign_object_nested_in_containers():
    bad = {"__object__": "builtins:dict", "attrs": {}}
    for value in (
        [bad],
        {"__tuple__": [bad]},
        {"__dict__": [["k", bad]]},
        {"__dict__": [[bad, 1]]},
    ):
        with pytest.raises(ValueError, match="class builtins:dict is not part of this FMU"):
            decode(value, BUILD)
    with pytest.raises(ValueError, match="class builtins:dict is not part of this FMU"):
        decode({"__object__": "cfmu_fake.objects:Point", "attrs": {"x": bad}}, BUILD)


# ---- seal/unseal ------------------------------------------------------------------------------


def test_seal_is_header_sha256_hex_newline_payload():
    """Against the SHA-256 test vectors of FIPS 180-2."""
    assert SEAL_HEADER == b"contactfmu FMU state, SHA-256 "
    assert seal(b"abc") == SEAL_HEADER + SHA256_ABC.encode() + b"\nabc"
    assert seal(b"") == SEAL_HEADER + SHA256_EMPTY.encode() + b"\n"


@pytest.mark.parametrize(
    "payload",
    [b"", b"abc", b"\n", b"\n\n{}\n", bytes(range(256)), json.dumps({"a": [1.5, None]}).encode()],
    ids=["empty", "abc", "newline", "newlines", "binary", "json"],
)
def test_unseal_returns_the_payload_exactly(payload):
    assert unseal(seal(payload)) == payload
    assert type(unseal(seal(payload))) is bytes


def test_unseal_accepts_bytearray_and_memoryview():
    sealed = seal(b"abc")
    assert unseal(bytearray(sealed)) == b"abc" and type(unseal(bytearray(sealed))) is bytes
    assert unseal(memoryview(sealed)) == b"abc"


PAYLOAD = json.dumps({"format": "x", "values": {"v": 1.5}}).encode()


def _refused(data):
    """The reason unseal gives for data (it must refuse)."""
    with pytest.raises(Unsealed) as info:
        unseal(data)
    return str(info.value)


def test_unsealed_is_a_value_error():
    assert issubclass(Unsealed, ValueError)


def test_every_flipped_bit_is_refused_with_the_part_it_hit():
    sealed = seal(PAYLOAD)
    header = len(SEAL_HEADER)
    for i in range(len(sealed)):
        for b in range(8):
            data = bytearray(sealed)
            data[i] ^= 1 << b
            before = bytes(data)
            reason = _refused(data)
            assert bytes(data) == before  # nothing changed in what was handed over
            if i < header:
                assert reason == (
                    f"not a serialized FMU state of a contactfmu FMU (its {len(sealed)} bytes do "
                    "not begin with 'contactfmu FMU state, SHA-256 ')"
                )
            else:
                assert reason.startswith("corrupted: not a serialized FMU state as ")
                assert "bytes altered or truncated" in reason


def test_every_truncation_is_refused():
    sealed = seal(PAYLOAD)
    start = len(SEAL_HEADER) + 64 + 1
    for n in range(len(sealed)):
        reason = _refused(sealed[:n])
        if n < len(SEAL_HEADER):
            assert reason.startswith("not a serialized FMU state of a contactfmu FMU")
            assert f"its {n} bytes" in reason
        else:
            assert reason.startswith("corrupted:")
            assert f"of its {max(0, n - start)} bytes of content" in reason


def test_header_alone_and_checksum_without_newline_are_refused():
    digest = SHA256_EMPTY.encode()
    assert _refused(SEAL_HEADER).startswith("corrupted:")
    assert _refused(SEAL_HEADER + digest).startswith("corrupted:")  # no newline, empty payload
    assert _refused(SEAL_HEADER + digest[:-1] + b"\n").startswith("corrupted:")  # short checksum
    assert unseal(SEAL_HEADER + digest + b"\n") == b""


@pytest.mark.parametrize(
    "extra", [b"x", b"\n", b" ", b"\0", PAYLOAD], ids=["x", "newline", "space", "nul", "payload"]
)
def test_extended_state_is_refused(extra):
    sealed = seal(PAYLOAD)
    assert _refused(sealed + extra).startswith("corrupted:")
    assert _refused(extra + sealed).startswith("not a serialized FMU state")


def test_inserted_or_removed_byte_is_refused():
    sealed = seal(PAYLOAD)
    for i in range(len(SEAL_HEADER), len(sealed)):
        assert _refused(sealed[:i] + b"0" + sealed[i:]).startswith("corrupted:")
        assert _refused(sealed[:i] + sealed[i + 1 :]).startswith("corrupted:")


def test_checksum_of_another_payload_is_refused():
    other = seal(b"abd")
    assert _refused(other[:-3] + b"abc").startswith("corrupted:")
    # the checksum in capitals: the same number, but not what seal wrote
    upper = SEAL_HEADER + SHA256_ABC.upper().encode() + b"\nabc"
    assert _refused(upper).startswith("corrupted:")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        PAYLOAD,  # an unsealed state (the JSON alone)
        b"contactfmu FMU state, SHA-1 " + SHA256_ABC.encode() + b"\nabc",
        b"Contactfmu FMU state, SHA-256 " + SHA256_ABC.encode() + b"\nabc",
        b" " + SEAL_HEADER + SHA256_ABC.encode() + b"\nabc",
        b"\0refused state",
    ],
    ids=["empty", "unsealed", "sha1", "capital", "leading-space", "nul"],
)
def test_wrong_header_is_refused_and_says_what_it_expected(data):
    reason = _refused(data)
    assert reason == (
        f"not a serialized FMU state of a contactfmu FMU (its {len(data)} bytes do not begin "
        "with 'contactfmu FMU state, SHA-256 ')"
    )


def test_corruption_reason_states_the_content_length():
    sealed = bytearray(seal(b"abcdefgh"))
    sealed[-1] ^= 1
    assert _refused(sealed) == (
        "corrupted: not a serialized FMU state as fmi2SerializeFMUstate wrote it (the SHA-256 of "
        "its 8 bytes of content is not the checksum it carries: bytes altered or truncated)"
    )


def test_sealed_state_round_trip_of_a_full_state():
    """What fmi2SerializeFMUstate and fmi2DeSerializeFMUstate do with the codec: encode every
    value, JSON, seal; unseal, JSON, decode: the same values and types come back."""
    values = {
        "t": 0.1 + 0.2,
        "flags": (True, False),
        "table": {1: [Point(-0.0, math.inf)], "s": Slotted()},
        "none": None,
    }
    values["table"]["s"].alpha = (2**64,)
    sealed = seal(json.dumps({k: encode(v, BUILD) for k, v in values.items()}).encode("utf-8"))
    back = json.loads(unseal(sealed).decode("utf-8"))
    restored = {k: decode(v, BUILD) for k, v in back.items()}
    assert same(restored, values)


def test_an_object_with_slots_and_an_instance_dict_keeps_both():
    obj = Unslotted()
    obj.alpha, obj.zeta, obj.extra = 1.5, (2, "z"), [3.0]
    back = through_json(obj)
    assert type(back) is Unslotted
    assert (back.alpha, back.zeta, back.extra) == (1.5, (2, "z"), [3.0])
    assert not hasattr(back, "beta")  # an unset slot stays unset


def test_slots_naming_the_instance_dict_and_weakref_are_not_attributes():
    obj = DeclaredDict()
    obj.gamma, obj.extra = 2.5, "e"
    assert encode(obj, BUILD)["attrs"] == {"gamma": 2.5, "extra": "e"}
    back = through_json(obj)
    assert type(back) is DeclaredDict and (back.gamma, back.extra) == (2.5, "e")
    assert back.__dict__ == {"extra": "e"}


def test_encode_all_keeps_tuples_of_plain_values_and_jsonable_encodes_them():
    """In memory a state keeps a tuple of plain values (floats, nan too, int, bool, str, None) as it
    is (immutable: shared, not copied); jsonable encodes it for fmi2SerializeFMUstate, so that it
    comes back a tuple with its nan's bits; skip leaves attributes out."""
    flat = (1.5, -0.0, -math.nan, 3, True, "s", None)
    nested = (1.0, [2.0])
    encoded = encode_all({"flat": flat, "nested": nested, "infra": 1.0}, BUILD, {"infra"})
    assert list(encoded) == ["flat", "nested"]
    assert encoded["flat"] is flat and encoded["nested"] == encode(nested, BUILD)
    assert decode_all(encoded, BUILD)["flat"] is flat
    as_json = jsonable(encoded)
    assert as_json["flat"] == encode(flat, BUILD) and as_json["nested"] is encoded["nested"]
    back = decode_all(json.loads(json.dumps(as_json)), BUILD)
    assert type(back["flat"]) is tuple and same(back["flat"], flat)
    assert same(back["nested"], nested)


def test_encode_all_is_encode_of_each_value_and_decode_all_its_inverse():
    """encode_all/decode_all (the slave's whole state): the same as encode/decode of each value,
    plain values (floats, nan too, bool, int, str, None) kept as they are; through JSON after
    jsonable, which encodes the nan's, every value comes back with its bits."""
    attrs = {
        "x": 1.5,
        "neg0": -0.0,
        "inf": -math.inf,
        "nan": -math.nan,
        "flag": True,
        "n": 7,
        "name": "s",
        "none": None,
        "pair": (1.0, [2.0, {"k": math.nan}]),
        "point": Point(0.5, [1, 2]),
    }
    encoded = encode_all(attrs, BUILD)
    assert list(encoded) == list(attrs)
    for k in ("x", "neg0", "inf", "nan", "flag", "n", "name", "none"):
        assert encoded[k] is attrs[k]
    assert encoded["pair"] == encode(attrs["pair"], BUILD)
    assert encoded["point"] == encode(attrs["point"], BUILD)
    assert jsonable(encoded)["nan"] == encode(-math.nan, BUILD) == {"__nan__": "000000000000f8ff"}
    back = decode_all(json.loads(json.dumps(jsonable(encoded))), BUILD)
    assert list(back) == list(attrs) and all(same(back[k], attrs[k]) for k in attrs)


def test_a_state_holds_a_copy_of_a_tuple_holding_a_list():
    """A tuple is kept by reference only if every item is plain: a list inside one is copied by
    the state (kept refuses the fast path, encode_all encodes it), so changing the list after the
    state was taken does not change the state."""
    shared = [2.0, 3.0]
    attrs = {"x": 1.0, "t": (1.0, shared)}
    assert kept(attrs) is None
    state = encode_all(attrs, BUILD)
    shared[0] = -7.0
    assert decode_all(state, BUILD)["t"] == (1.0, [2.0, 3.0])
    assert decode_all(json.loads(json.dumps(jsonable(state))), BUILD)["t"] == (1.0, [2.0, 3.0])


def test_kept_copies_a_state_of_plain_values_alone():
    """kept (fmi2GetFMUstate's fast path): a copy without the skipped names where every value is
    plain (nan too) or a tuple of plain values, the values themselves shared; None as soon as one
    is not (a list, a nested tuple, an object), for encode_all to encode."""
    flat = (1.5, -math.nan, 3, True, "s", None)
    attrs = {"x": 1.5, "nan": -math.nan, "flat": flat, "none": None, "infra": [1.0]}
    values = kept(attrs, {"infra"})
    assert list(values) == ["x", "nan", "flat", "none"] and values is not attrs
    assert all(values[k] is attrs[k] for k in values)
    assert list(attrs) == ["x", "nan", "flat", "none", "infra"]  # the attributes untouched
    assert kept(attrs) is None  # the list
    assert kept({"x": 1.0, "pair": (1.0, (2.0,))}) is None
    assert kept({"x": 1.0, "point": Point(0.5, [1, 2])}) is None
    assert kept({}) == {}
    assert kept({"x": 1.0}, {"absent"}) == {"x": 1.0}  # a name to skip need not be there
