"""Co-simulation master on fmpy: System, results and the reference-result tube comparison."""

from .compare import compare, compare_files
from .errors import CosimError, ToleranceWarning
from .results import Result, read_csv
from .system import System

__all__ = [
    "System",
    "CosimError",
    "ToleranceWarning",
    "Result",
    "read_csv",
    "compare",
    "compare_files",
]
