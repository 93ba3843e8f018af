"""Load one FMU with fmpy, with its log captured, and address variables by name."""

import itertools

import pytest
from fmpy import read_model_description
from fmpy.fmi2 import FMU2Slave

from contactfmu.cosim.instances import LOGS, callbacks, extracted

_names = itertools.count()


class Slave:
    def __init__(self, path, name=None, start_time=0.0):
        self.md = read_model_description(str(path))
        self.vars = {v.name: v for v in self.md.modelVariables}
        # the master's logger: one process-wide callback that is never freed (fmpy's logger proxy
        # keeps a single slot), dispatching by instance name
        name = name or f"slave{next(_names)}"
        self.log = LOGS[name] = []
        self.fmu = FMU2Slave(
            guid=self.md.guid,
            unzipDirectory=extracted(str(path)),  # once per FMU file, removed at exit
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        self.fmu.instantiate(callbacks=callbacks(), loggingOn=False)
        self.fmu.setupExperiment(startTime=start_time)

    def vr(self, names):
        return [self.vars[n].valueReference for n in names]

    def set(self, **values):
        """Set Real values; names with '.' are given with '__' (flange_a__f)."""
        for key, value in values.items():
            name = key.replace("__", ".")
            kind = self.vars[name].type
            setter = {
                "Real": self.fmu.setReal,
                "Integer": self.fmu.setInteger,
                "Boolean": self.fmu.setBoolean,
            }[kind]
            setter(self.vr([name]), [value])

    def get(self, *names):
        values = self.fmu.getReal(self.vr(names))
        return values[0] if len(names) == 1 else values

    def init(self, **values):
        self.set(**values)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        return self

    def errors(self):
        return [m for s, m in self.log if s >= 3]

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()


def slave_fixture(model, **defaults):
    """A pytest fixture: a function that makes initialized instances of <model>.fmu (parameters:
    defaults updated by its keywords), closed when the test ends."""

    @pytest.fixture
    def make_slaves(fmu_dir):
        made = []

        def make(**values):
            s = Slave(fmu_dir / f"{model}.fmu").init(**{**defaults, **values})
            made.append(s)
            return s

        yield make
        for s in made:
            s.close()

    return make_slaves
