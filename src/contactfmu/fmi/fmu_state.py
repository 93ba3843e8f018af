"""The FMU states of a slave (included in fmi.slave.Slave, see _including): every attribute the slave set, taken
exactly (state.kept, state.encode), restored after its checks, serialized sealed (SHA-256)."""

import json

from . import state as state_codec
from . import state_check

_STR = frozenset((str,))  # the type of every name a state may set
_PACKAGE = __name__.split(".")[0]  # the package bundled into the FMU (or contactfmu)


class CapturedState(dict):
    """An FMU state as Slave._get_fmu_state took it, every value kept as it is (state.kept: plain
    values and tuples of them, immutable, with the attribute names of the instance): restored
    by fmi2SetFMUstate without decoding or checks. Of this module only, so of this build: a
    state of another build, or one fmi2DeSerializeFMUstate made (a plain dict), is checked."""


class FmuStates:
    """fmi2GetFMUstate .. fmi2DeSerializeFMUstate of fmi.slave.Slave."""

    @classmethod
    def _build(cls):
        """The package the slave was built in (in an FMU cfmu_<model>_<hash>: one FMU version):
        this module's, whatever module the class itself is in (an FMI 3.0 FMU's entry script
        defines it)."""
        return _PACKAGE

    def _get_fmu_state(self):
        """Every attribute the slave set (not pythonfmu's, not the base's infrastructure),
        encoded exactly (state.encode), with the model and build it belongs to: a CapturedState
        where every value is kept as it is (state.kept)."""
        try:
            values = state_codec.kept(self.__dict__, self._infra)
            state = CapturedState if values is not None else dict
            return state(
                format=state_codec.STATE_FORMAT,
                model=self.modelName,
                build=self._build(),
                values=values
                if values is not None
                else state_codec.encode_all(self.__dict__, self._build(), self._infra),
            )
        except Exception as exc:
            reason = f"fmi2GetFMUstate: the state of {self.modelName} cannot be captured: {exc}"
            self._refuse(reason)
            return {"__invalid__": reason}

    @classmethod
    def _state_problem(cls, state):
        """Why ``state`` is not a state of this FMU, or None."""
        if isinstance(state, dict) and "__invalid__" in state:
            return str(state["__invalid__"])
        if not (
            isinstance(state, dict)
            and state.get("format") == state_codec.STATE_FORMAT
            and isinstance(state.get("values"), dict)
        ):
            return "not an FMU state of a contactfmu FMU"
        model = cls.model_name or cls.__name__
        if state.get("model") != model:
            return f"a state of {state.get('model')}, not of {model}"
        if state.get("build") != cls._build():
            return f"a state of another build of {model} ({state.get('build')}; this FMU: {cls._build()})"
        return None

    def _set_fmu_state(self, state):
        """Restore every attribute of the state (and drop those the state does not have): the
        instance continues exactly as the one the state came from, whatever it was before. A
        state it cannot use is refused and the instance left as it was."""
        try:
            if type(state) is CapturedState and state["model"] == self.modelName:
                values, attrs = state["values"], self.__dict__
                attrs.update(values)
                if len(attrs) != len(values) + len(self._infra):  # attributes set since
                    for key in attrs.keys() - values.keys() - self._infra:
                        delattr(self, key)
                return
            problem = self._state_problem(state)
            if problem is None:
                try:
                    values = state_codec.decode_all(state["values"], self._build())
                    if not values.keys().isdisjoint(self._infra) or not _STR.issuperset(
                        map(type, values)
                    ):
                        raise ValueError("it sets attributes that are not state")
                except Exception as exc:
                    problem = f"the state cannot be restored: {exc}"
            if problem:
                self._refuse(f"fmi2SetFMUstate refused: {problem}; the instance is left as it was")
                return
            for key in self.__dict__.keys() - values.keys() - self._infra:
                delattr(self, key)
            self.__dict__.update(values)
        except Exception:
            self._crash("fmi2SetFMUstate")

    @staticmethod
    def _fmu_state_to_bytes(state):
        """JSON of the state, sealed with its SHA-256 (state.seal). A state that cannot be used
        (an unusable fmi2DeSerializeFMUstate result) serializes as a NUL byte followed by the
        reason: the status shim reports it."""
        try:
            if isinstance(state, dict) and "__invalid__" in state:
                return b"\0" + str(state["__invalid__"]).encode("utf-8", "replace")
            if isinstance(state.get("values"), dict):  # (its tuples, kept as they are in memory)
                state = {**state, "values": state_codec.jsonable(state["values"])}
            return state_codec.seal(json.dumps(state).encode("utf-8"))
        except Exception as exc:  # cannot log here: no instance
            return (
                b"\0"
                + f"fmi2SerializeFMUstate: the FMU state cannot be serialized: {exc}".encode(
                    "utf-8"
                )
            )

    @classmethod
    def _fmu_state_from_bytes(cls, data):
        """The state of serialized bytes; bytes that are not a state of this FMU, altered since
        fmi2SerializeFMUstate (their SHA-256 checksum does not match), or whose contents are no
        state of this slave (state_check: types, ranges, non-finite values, shapes) give a state
        marked invalid with the reason (see _fmu_state_to_bytes)."""
        try:
            state = json.loads(state_codec.unseal(data).decode("utf-8"))
            problem = cls._state_problem(state)
            if problem is None:
                values = state_codec.decode_all(state["values"], cls._build())
                problem = state_check.problem(cls, values)
                if problem:
                    problem = f"its contents are not a state of {cls.model_name or cls.__name__}: {problem}"
        except state_codec.Unsealed as exc:
            problem = str(exc)
        except Exception as exc:
            problem = (
                f"not a serialized FMU state of a contactfmu FMU ({type(exc).__name__}: {exc})"
            )
        if problem:
            return {"__invalid__": f"fmi2DeSerializeFMUstate refused: {problem}"}
        return state
