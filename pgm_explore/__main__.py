"""``python -m pgm_explore``: the ``pgm-explore`` command."""

import sys

from pgm_explore.cli import main

# Guarded: pytest's --doctest-modules imports every module of the package.
if __name__ == "__main__":
    sys.exit(main())
