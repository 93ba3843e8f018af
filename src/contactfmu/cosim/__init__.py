"""Co-simulation master on fmpy: System, results and the reference-result tube comparison."""
from .compare import compare, compare_files
from .results import Result, read_csv
from .errors import CosimError
from .system import System

__all__ = ["System", "CosimError", "Result", "read_csv", "compare", "compare_files"]
