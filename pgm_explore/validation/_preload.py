"""What the forkserver of local workers imports for ``validate``: python-jsonschema, ready to explain.

A worker explains each message that does not conform with python-jsonschema (:mod:`._explain`),
so the forkserver the workers are forked from imports it once, before it forks them
(``pgm_explore._engine``), instead of each worker at its first such message. Where Jupyter is
installed, python-jsonschema's ``format`` checks include ``rfc3987_syntax``, which builds its lark
grammars as it is imported: 0.8 of the 0.95 s that ``import jsonschema`` took here, on the path of
every command that starts workers, for the ``iri`` and ``iri-reference`` formats that no
PGM-AUA schema uses (``tests/test_preload.py`` holds them to that).

So :func:`import_jsonschema` imports python-jsonschema with ``rfc3987_syntax`` deferred: while
python-jsonschema is imported, ``rfc3987_syntax`` is a stand-in whose ``is_valid_syntax`` imports
the real module at its first call and hands on to it. python-jsonschema registers its ``iri``
checks as always and they answer as always (the same function, called with the same values),
in the forkserver and in whatever it forks: the grammars are built by the first ``iri`` check,
not by the import. Once python-jsonschema is imported the stand-in is gone: an ``import
rfc3987_syntax`` anywhere gets the real module. This runs in the forkserver (imported there by
name, as a preload module) and in a process that is the command's own
(``pgm_explore.validation._schema.own_process``); a user's program or kernel imports
python-jsonschema as it is, and a process that imported it already, or that does not have
``rfc3987_syntax``, just imports it.

(pytest's ``--doctest-modules`` imports this module too, which imports python-jsonschema the
same way there.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["import_jsonschema"]

_DEFERRED = "rfc3987_syntax"


def _deferred_module() -> types.ModuleType:
    """The stand-in for ``rfc3987_syntax``: its ``is_valid_syntax`` (what python-jsonschema
    imports of it) and any other name come from the real module, imported when first asked."""
    module = types.ModuleType(_DEFERRED, "rfc3987_syntax, imported at its first use (pgm_explore.validation._preload)")
    real: list[Callable[..., Any]] = []

    def is_valid_syntax(*args: Any, **kwargs: Any) -> Any:
        if not real:
            real.append(importlib.import_module(_DEFERRED).is_valid_syntax)
        return real[0](*args, **kwargs)

    def __getattr__(name: str) -> Any:  # PEP 562: a name the stand-in has not
        # (The import system asks a module for __path__ and the like: the stand-in has none,
        # and while it stands in, importing the module by name would give the stand-in again.)
        if name.startswith("__") or sys.modules.get(_DEFERRED) is module:
            raise AttributeError(name)
        return getattr(importlib.import_module(_DEFERRED), name)

    module.is_valid_syntax = is_valid_syntax  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def import_jsonschema() -> None:
    """Import python-jsonschema with ``rfc3987_syntax`` imported at its first use (see above)."""
    if "jsonschema" in sys.modules or _DEFERRED in sys.modules or importlib.util.find_spec(_DEFERRED) is None:
        importlib.import_module("jsonschema")  # (imported already, or nothing to defer)
        return
    stand_in = _deferred_module()
    sys.modules[_DEFERRED] = stand_in
    try:
        importlib.import_module("jsonschema")
    finally:
        if sys.modules.get(_DEFERRED) is stand_in:
            del sys.modules[_DEFERRED]


import_jsonschema()
