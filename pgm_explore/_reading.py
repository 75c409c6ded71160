"""Where :func:`pgm_explore.io.validate_file` used to live; it lives in :mod:`pgm_explore.io` now.

Kept for ``pgm_explore.widgets._app``, which imports it from here (widgets are another
helper's to change; the import there becomes ``from pgm_explore.io import validate_file``, and
then this module goes).
"""

from __future__ import annotations

from pgm_explore.io import validate_file

__all__ = ["validate_file"]
