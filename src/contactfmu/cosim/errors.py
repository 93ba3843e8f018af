"""The master's one error type, in a module of its own so that every part of the master can raise it
without importing another."""


class CosimError(RuntimeError):
    """An FMU call failed, or the system is not well formed."""
