"""The master's error type and its warning, in a module of their own so that every part of the master
can raise them without importing another."""


class CosimError(RuntimeError):
    """An FMU call failed, or the system is not well formed."""


class ToleranceWarning(UserWarning):
    """The adaptive master kept a step of the smallest size whose error is above the tolerance."""
