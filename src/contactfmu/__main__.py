"""python -m contactfmu: the contactfmu command line."""

from .cli import main

main()
