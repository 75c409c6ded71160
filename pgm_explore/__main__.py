"""``python -m pgm_explore``: the ``pgm-explore`` command."""

from pgm_explore.cli import command

# Guarded: pytest's --doctest-modules imports every module of the package.
if __name__ == "__main__":
    command()
