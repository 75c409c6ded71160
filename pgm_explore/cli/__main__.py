"""``python -m pgm_explore.cli``: the ``pgm-explore`` command, as ``python -m pgm_explore`` runs it."""

from pgm_explore.cli import command

# Guarded: pytest's --doctest-modules imports every module of the package.
if __name__ == "__main__":
    command()
