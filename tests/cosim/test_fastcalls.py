"""The batched FMI calls (cosim/fastcalls.py) against stand-in FMUs whose ctypes-level functions
work on a table of values: the status check and its message, the state calls, the FMI function
each kind and direction binds, a Reader's and a Writer's buffers, value references, sums and
offsets, and a Program compiled batched (the fewest calls that deliver the same values in the
same order per instance, module docstring) and unbatched (one call per value)."""

import math
from ctypes import c_double

import pytest
from fmpy.fmi2 import fmi2Boolean, fmi2Integer, fmi2Real

from contactfmu.cosim import CosimError
from contactfmu.cosim import fastcalls as fc

NAMES = (
    "fmi2GetReal",
    "fmi2SetReal",
    "fmi2GetInteger",
    "fmi2SetInteger",
    "fmi2GetBoolean",
    "fmi2SetBoolean",
    "fmi2GetRealOutputDerivatives",
    "fmi2SetRealInputDerivatives",
)


class Fmu:
    """A stand-in instance: values by value reference, output = 2 * the input of the same
    number (vr 10 + k reads 2 * value[k]), every call logged as (function, vrs, values)."""

    def __init__(self, name, log, status=0):
        self.name, self.log, self.status = name, log, status
        self.values = {}
        self.slave = type("S", (), {})()
        self.slave.component = f"c-{name}"
        self.slave._functions = {n: self._make(n) for n in NAMES}
        for n in ("fmi2GetFMUstate", "fmi2SetFMUstate", "fmi2FreeFMUstate"):
            self.slave._functions[n] = self._state(n)

    def _make(self, name):
        def fn(c, vr, n, *rest):
            assert c == f"c-{self.name}"
            buf = rest[-1]
            vrs = [vr[i] for i in range(n)]
            assert len(rest) == (2 if "Derivatives" in name else 1)
            if len(rest) == 2:
                assert [rest[0][i] for i in range(n)] == [1] * n  # derivative order 1
            if "Get" in name:
                for i, v in enumerate(vrs):
                    buf[i] = self.values.get(v, 2 * self.values.get(v - 10, 0))
                self.log.append((self.name, name, vrs, [buf[i] for i in range(n)]))
            else:
                self.log.append((self.name, name, vrs, [buf[i] for i in range(n)]))
                for i, v in enumerate(vrs):
                    self.values[v] = buf[i]
            return self.status

        return fn

    def _state(self, name):
        def fn(c, state):
            assert c == f"c-{self.name}" and state is not None
            self.log.append((self.name, name))
            return self.status

        return fn

    def fail(self, what, exc, t=None):
        return CosimError(f"{self.name}: {what} failed at {t}: {exc}")


@pytest.mark.parametrize(
    "status, word", [(2, "discard"), (3, "error"), (4, "fatal"), (5, "pending"), (7, "?")]
)
def test_a_status_worse_than_warning_is_the_instances_error(status, word):
    inst = Fmu("a", [])
    fc.check(inst, "fmi2DoStep", 0, 1.0)
    fc.check(inst, "fmi2DoStep", 1, 1.0)  # a warning passes
    with pytest.raises(CosimError) as e:
        fc.check(inst, "fmi2DoStep", status, 1.5)
    assert (
        str(e.value)
        == f"a: fmi2DoStep failed at 1.5: fmi2DoStep failed with status {status} ({word})"
    )


def test_states_are_saved_restored_and_freed_per_instance():
    log = []
    a, b = Fmu("a", log), Fmu("b", log)
    states = fc.States([a, b])
    saved = states.save(0.5)
    assert len(saved) == 2 and saved[0] is not saved[1]
    states.restore(saved)
    states.free(saved)
    assert log == [
        ("a", "fmi2GetFMUstate"),
        ("b", "fmi2GetFMUstate"),
        ("a", "fmi2SetFMUstate"),
        ("b", "fmi2SetFMUstate"),
        ("a", "fmi2FreeFMUstate"),
        ("b", "fmi2FreeFMUstate"),
    ]
    b.status = 3
    for call, name in (
        (lambda: states.save(2.0), "fmi2GetFMUstate"),
        (lambda: states.restore(saved, 2.0), "fmi2SetFMUstate"),
        (lambda: states.free(saved, 2.0), "fmi2FreeFMUstate"),
    ):
        with pytest.raises(CosimError) as e:
            call()
        assert str(e.value) == f"b: {name} failed at 2.0: {name} failed with status 3 (error)"


def test_the_fmi_function_of_each_kind_and_direction():
    inst = Fmu("a", [])
    f = inst.slave._functions
    for kind, direction, derivative, name in [
        ("Real", "Get", False, "fmi2GetReal"),
        ("Real", "Set", False, "fmi2SetReal"),
        ("Integer", "Get", False, "fmi2GetInteger"),
        ("Enumeration", "Set", False, "fmi2SetInteger"),
        ("Boolean", "Get", False, "fmi2GetBoolean"),
        ("Real", "Get", True, "fmi2GetRealOutputDerivatives"),
        ("Real", "Set", True, "fmi2SetRealInputDerivatives"),
    ]:
        assert fc._function(kind, direction, derivative) == name
        # a function that is not a ctypes one (the stand-in's, an FMI 3.0 adapter, a counting
        # wrapper) is called as it is, with the plain handle and counts
        assert fc.bound(inst, name) == (f[name], "c-a", int)


def test_a_ctypes_function_is_called_without_its_argument_conversion(fmu_dir):
    """fastcalls.bound: fmpy's fmi2GetReal as a pointer to the same C function without argtypes,
    called with the handle as a c_void_p and the count as a c_size_t, gives what fmpy's getReal
    gives; and a Reader, Writer and States made of it work on a real FMU."""
    from ctypes import byref, c_size_t, c_void_p

    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave, fmi2FMUstate, fmi2ValueReference

    path = str(fmu_dir / "Mass.fmu")
    md = read_model_description(path)
    slave = FMU2Slave(
        guid=md.guid,
        unzipDirectory=extract(path),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName="m",
    )
    slave.instantiate()
    try:
        slave.setupExperiment(startTime=0.0)
        slave.enterInitializationMode()
        slave.exitInitializationMode()
        vr = {v.name: v.valueReference for v in md.modelVariables}
        inst = type("I", (), {"name": "m", "slave": slave})()
        fn, c, count = fc.bound(inst, "fmi2GetReal")
        assert fn is not slave._functions["fmi2GetReal"] and fn.argtypes in (None, ())
        assert isinstance(c, c_void_p) and c.value == slave.component and count is c_size_t
        setter = fc.Writer(inst, [vr["flange_a.f"]], [([], 2.5)])
        setter(0.0)
        slave.doStep(0.0, 0.1)
        reader = fc.Reader(inst, [vr["s"], vr["v"], vr["a"]])
        # m = 1 kg pushed by flange_a.f = 2.5 N for 0.1 s from rest: a = -f/m, v = a*t, s = a*t^2/2
        assert list(reader(0.1)) == pytest.approx([-0.0125, -0.25, -2.5], rel=1e-12)
        assert list(reader(0.1)) == slave.getReal([vr["s"], vr["v"], vr["a"]])
        states = fc.States([inst])
        saved = states.save()
        slave.doStep(0.1, 0.1)
        states.restore(saved)
        assert list(reader(0.1)) == pytest.approx([-0.0125, -0.25, -2.5], rel=1e-12)
        states.free(saved)
        # the bare pointer is the same C function: called by hand like fmpy's
        values = (fmi2Real * 1)()
        assert fn(c, (fmi2ValueReference * 1)(vr["v"]), count(1), values) == 0
        assert values[0] == slave.getReal([vr["v"]])[0]
        state = fmi2FMUstate()
        get_state, c2, _ = fc.bound(inst, "fmi2GetFMUstate")
        assert get_state(c2, byref(state)) == 0 and state.value
        assert fc.bound(inst, "fmi2FreeFMUstate")[0](c2, byref(state)) == 0
    finally:
        slave.terminate()
        slave.freeInstance()


def test_a_reader_fills_its_buffer_with_one_call():
    log = []
    inst = Fmu("a", log)
    inst.values = {1: 1.5, 2: -2.0}
    reader = fc.Reader(inst, [2, 1], "Real")
    assert (reader.name, reader.n, list(reader.vr), reader.order) == (
        "fmi2GetReal",
        2,
        [2, 1],
        None,
    )
    assert isinstance(reader.buf[0], float) and reader.buf._type_ is fmi2Real
    assert list(reader(0.0)) == [-2.0, 1.5]
    assert log == [("a", "fmi2GetReal", [2, 1], [-2.0, 1.5])]
    assert fc.Reader(inst, [1], "Integer").buf._type_ is fmi2Integer
    assert fc.Reader(inst, [1], "Boolean").buf._type_ is fmi2Boolean
    deriv = fc.Reader(inst, [1, 2], derivative=True)
    assert deriv.name == "fmi2GetRealOutputDerivatives" and list(deriv.order) == [1, 1]
    deriv(0.0)
    inst.status = 1  # a warning passes
    reader(3.0)
    inst.status = 2
    with pytest.raises(
        CosimError,
        match=r"a: fmi2GetReal failed at 3.0: fmi2GetReal failed with status 2 \(discard\)",
    ):
        reader(3.0)


def test_a_writer_sets_sums_of_buffer_entries_plus_offsets():
    log = []
    inst = Fmu("a", log)
    src = (c_double * 3)(1.0, 2.0, 4.0)
    other = (c_double * 1)(8.0)
    writer = fc.Writer(
        inst, [5, 6, 7], [(((src, 0), (src, 2)), 0.5), (((other, 0),), 0.0), ((), -1.0)]
    )
    assert (writer.name, writer.n, list(writer.vr), writer.order) == (
        "fmi2SetReal",
        3,
        [5, 6, 7],
        None,
    )
    writer(0.0)
    assert log == [("a", "fmi2SetReal", [5, 6, 7], [5.5, 8.0, -1.0])]
    src[0] = 10.0  # read again at the next point: the new value
    writer(0.1)
    assert log[-1][3] == [14.5, 8.0, -1.0]
    # every value one entry plus its offset: the same sums (offset first: -0.0 + -0.0 is -0.0,
    # 0.0 + -0.0 is 0.0, as the motion exchange's -0.0 + v keeps v)
    negative = (c_double * 1)(-0.0)
    copies = fc.Writer(
        inst,
        [8, 9, 10],
        [(((src, 2),), 0.5), (((negative, 0),), -0.0), (((negative, 0),), 0.0)],
    )
    copies(0.2)
    assert log[-1] == ("a", "fmi2SetReal", [8, 9, 10], [4.5, -0.0, 0.0])
    assert [math.copysign(1.0, x) for x in log[-1][3][1:]] == [-1.0, 1.0]
    src[2] = 6.0
    copies(0.3)
    assert log[-1][3][0] == 6.5
    deriv = fc.Writer(inst, [5], [(((src, 1),), 0.0)], derivative=True)
    assert deriv.name == "fmi2SetRealInputDerivatives" and list(deriv.order) == [1]
    deriv(0.0)
    assert log[-1] == ("a", "fmi2SetRealInputDerivatives", [5], [2.0])
    inst.status = 1  # a warning passes
    writer(1.0)
    inst.status = 2
    with pytest.raises(CosimError) as e:
        writer(1.5)
    assert (
        str(e.value) == "a: fmi2SetReal failed at 1.5: fmi2SetReal failed with status 2 (discard)"
    )


def test_grouped_keeps_the_first_seen_order():
    a, b = Fmu("a", []), Fmu("b", [])
    assert fc.grouped([(a, 1, 2), (b, 3), (a, 4)]) == {"a": (a, [(1, 2), (4,)]), "b": (b, [(3,)])}


def _exchange(program, a, b, seen):
    """a's outputs 11, 12 to b's inputs 1, 2 (12 plus 1.0), b's output 11 back to a's input 3; a
    call of the master's own in between; a second read of a after nothing was set on it; a value
    of b set twice."""
    sa = program.read(a, [11, 12])
    more = program.read(a, [12])  # nothing set on a in between: joins the same call
    program.write(b, [1, 2], [((sa[0],), 0.0), ((sa[1],), 1.0)])
    program.write(b, [2], [((more[0], sa[0]), 0.0)])  # b.2 set again before b is read: the last
    sb = program.read(b, [11])
    program.call(lambda t: seen.append((t, sb[0].buf[sb[0].i])))
    program.write(a, [3], [((sb[0],), 0.0)])
    program.write(a, [13], [((), 7.0)], derivative=True)
    return program


def test_a_batched_program_makes_the_fewest_calls_in_the_listed_order():
    log, seen = [], []
    a, b = Fmu("a", log), Fmu("b", log)
    a.values = {1: 1.0, 2: 3.0}
    calls = _exchange(fc.Program(), a, b, seen).compile()
    assert [type(c).__name__ for c in calls] == [
        "Reader",
        "Writer",
        "Reader",
        "function",
        "Writer",
        "Writer",
    ]
    for c in calls:
        c(0.5)
    assert log == [
        ("a", "fmi2GetReal", [11, 12, 12], [2.0, 6.0, 6.0]),  # (a repeated vr is read twice)
        ("b", "fmi2SetReal", [1, 2], [2.0, 8.0]),  # b.2 set once, to its last value 6 + 2
        ("b", "fmi2GetReal", [11], [4.0]),
        ("a", "fmi2SetReal", [3], [4.0]),
        ("a", "fmi2SetRealInputDerivatives", [13], [7.0]),
    ]
    assert seen == [(0.5, 4.0)]


def test_the_unbatched_program_makes_one_call_per_value_and_delivers_the_same():
    log, seen = [], []
    a, b = Fmu("a", log), Fmu("b", log)
    a.values = {1: 1.0, 2: 3.0}
    calls = _exchange(fc.Program(batched=False), a, b, seen).compile()
    for c in calls:
        c(0.5)
    assert [(x[0], x[1], x[2]) for x in log] == [
        ("a", "fmi2GetReal", [11]),
        ("a", "fmi2GetReal", [12]),
        ("a", "fmi2GetReal", [12]),
        ("b", "fmi2SetReal", [1]),
        ("b", "fmi2SetReal", [2]),
        ("b", "fmi2SetReal", [2]),
        ("b", "fmi2GetReal", [11]),
        ("a", "fmi2SetReal", [3]),
        ("a", "fmi2SetRealInputDerivatives", [13]),
    ]
    assert b.values == {1: 2.0, 2: 8.0} and a.values[3] == 4.0 and a.values[13] == 7.0
    assert seen == [(0.5, 4.0)]


def test_a_read_after_a_write_on_the_same_instance_is_a_new_call():
    log = []
    a = Fmu("a", log)
    p = fc.Program()
    first = p.read(a, [11])
    p.write(a, [1], [((), 5.0)])
    second = p.read(a, [11])  # after the set: read anew, the write made first
    p.read(a, [12], kind="Integer")  # another function: a call of its own
    third = p.read(a, [11])  # joins the second read (nothing set since)
    for c in p.compile():
        c(0.0)
    assert log == [
        ("a", "fmi2GetReal", [11], [0.0]),
        ("a", "fmi2SetReal", [1], [5.0]),
        ("a", "fmi2GetReal", [11, 11], [10.0, 10.0]),  # the third read joined the second
        ("a", "fmi2GetInteger", [12], [0]),
    ]
    assert first[0].buf[first[0].i] == 0.0 and second[0].buf[second[0].i] == 10.0
    assert third[0].buf is second[0].buf and (second[0].i, third[0].i) == (0, 1)


def test_writes_through_another_function_keep_their_order_and_a_call_flushes_them():
    log = []
    a, b = Fmu("a", log), Fmu("b", log)
    p = fc.Program()
    p.write(a, [1], [((), 1.0)])
    p.write(a, [2], [((), 2.0)], derivative=True)
    p.write(a, [3], [((), 3.0)])  # after a write through another function: a call of its own
    p.write(b, [1], [((), 4.0)])
    p.call(lambda t: log.append(("call", t)))
    p.write(b, [2], [((), 5.0)])
    for c in p.compile():
        c(1.0)
    assert [tuple(x[:3]) for x in log] == [
        ("a", "fmi2SetReal", [1]),
        ("a", "fmi2SetRealInputDerivatives", [2]),
        ("a", "fmi2SetReal", [3]),
        ("b", "fmi2SetReal", [1]),
        ("call", 1.0),
        ("b", "fmi2SetReal", [2]),
    ]


def test_a_slot_is_bound_to_its_readers_buffer():
    slot = fc.Slot()
    assert (slot.buf, slot.i) == (None, 0)
    assert fc._resolved(slot) == (None, 0)
    assert fc._resolved(("buffer", 3)) == ("buffer", 3)


def test_a_program_reads_output_derivatives_with_their_own_call():
    log = []
    a = Fmu("a", log)
    a.values = {11: 1.0, 12: 2.0}
    p = fc.Program()
    values = p.read(a, [11])
    rates = p.read(a, [12], derivative=True)
    for c in p.compile():
        c(0.0)
    assert log == [
        ("a", "fmi2GetReal", [11], [1.0]),
        ("a", "fmi2GetRealOutputDerivatives", [12], [2.0]),
    ]
    assert values[0].buf is not rates[0].buf


def test_join_reads_an_output_with_the_last_read_after_which_nothing_it_depends_on_is_set():
    """Program.join (an observed output read with a read made anyway): with the instance's last
    read after which no input the output depends on is set (input derivatives do not count), in
    that read's call; with every input (depends None) after the instance's last write; None where
    none is left (an input it depends on set after every read of the instance, or a call of the
    master's own after the read: it may set anything)."""
    log = []
    a, b = Fmu("a", log), Fmu("b", log)
    a.values = {1: 1.5, 2: 2.5, 4: 4.5}
    p = fc.Program()
    first = p.read(a, [11])  # a.11 = 2*a.1
    p.write(a, [2], [((), 5.0)])
    (second,) = p.read(a, [12])  # a.12 = 2*a.2, after a.2 = 5
    p.write(a, [3], [((), 6.0)])
    p.write(a, [1], [((), 9.0)], derivative=True)  # a derivative: no output changes
    by_first = p.join(a, 14, depends={2})  # a.2 set after the first read
    by_second = p.join(a, 14, depends={4})
    assert by_first is by_second  # (a value joined once)
    assert p.join(a, 12, depends={2}) is second  # already read there: that read's slot
    assert p.join(a, 13, depends={3}) is None  # a.3 set after every read of a
    assert p.join(a, 13) is None  # every input: a.3 too
    assert p.join(b, 11) is None  # b is never read
    calls = p.compile()
    for call in calls:
        call(0.0)
    assert log[0] == ("a", "fmi2GetReal", [11], [3.0])
    assert log[2] == ("a", "fmi2GetReal", [12, 14], [10.0, 9.0])  # one call, as before
    assert len(log) == 5 and first[0].buf is not by_second.buf
    assert by_second.buf[by_second.i] == 9.0
    log.clear()
    p = fc.Program()
    p.read(b, [11])
    p.read(a, [11])  # another instance's read and write after b's: not b's
    p.write(a, [4], [((), 1.0)])
    joined = p.join(b, 12)  # nothing set on b after its read
    assert p.join(a, 14, depends={4}) is None  # a.4 set after a's read
    for call in p.compile():
        call(0.0)
    assert log[0] == ("b", "fmi2GetReal", [11, 12], [0.0, 0.0])  # with b's read
    assert log[1] == ("a", "fmi2GetReal", [11], [18.0])  # (a.1 = 9.0 from above)
    assert joined.buf[joined.i] == 0.0 and len(log) == 3
    p.call(lambda t: None)
    assert p.join(b, 13) is None  # a call may set anything
