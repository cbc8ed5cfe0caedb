"""The variants this process knows, and their Gymnasium ids.

The built-in variants are compiled in; :func:`load_variant` adds one from its three files (a rules
file, a piece table and a setup: docs/PIECE_TABLE.md), after which its name works wherever a
built-in name does. Each variant's Gym id comes from its rules file (``gym-id``) and is registered
with Gymnasium: ``gymnasium.make(taikyoku.GYM_IDS[name])``.

A loaded variant lives in this process and in the processes forked from it. A process started
another way (``multiprocessing`` with ``spawn``, a Ray worker) calls :func:`load_variant` again;
:func:`taikyoku.distributed.selfplay` does so for its workers.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Tuple, Union

import gymnasium

from taikyoku import _core

#: Gymnasium id of each variant's environment (``gymnasium.make(id)``): the built-in variants',
#: and those of the variants loaded with :func:`load_variant` since.
GYM_IDS: Dict[str, str] = {}


def variant_info(variant: str) -> Dict[str, Any]:
    """What names and sizes a variant: ``name``, ``title`` (the rules file's ``title``),
    ``gym_id`` (the full Gymnasium id), ``built_in``, ``width``, ``height``, ``piece_types`` and
    ``pieces_per_side``."""
    info = _core.variant_info(variant)
    info["gym_id"] = f"taikyoku/{info['gym_id']}"
    return info


def load_variant(path: Union[str, os.PathLike[str]]) -> str:
    """Loads the variant of a rules file (``NAME.rules``, with ``NAME.pieces`` and ``NAME.setup``
    beside it) and returns its name, ``NAME`` in lower case.

    The name then works everywhere a built-in one does: ``Game(variant=name)``, ``Game.empty``,
    ``random_game``, the environments (and ``gymnasium.make(GYM_IDS[name])``), ``VectorEnv``,
    ``selfplay`` and the command line (``--variant path/to/NAME.rules``). Loading the same files
    again returns the name; a built-in name, a Gym id already taken or other files under a loaded
    name raise ``TaikyokuError``, as a bad file does (with its file and line); a file that cannot be
    read raises ``OSError``.
    """
    name: str = _core.load_variant(os.fspath(path))
    _register_gym_id(name)
    return name


def register_variant(name: str, texts: Tuple[str, str, str]) -> str:
    """Makes a variant known from the texts of its files ``(rules, pieces, setup)``, as
    :func:`load_variant` does after reading them (for worker processes; see :func:`variant_texts`)."""
    registered: str = _core.register_variant(name, *texts)
    _register_gym_id(registered)
    return registered


def variant_texts(variant: str) -> Tuple[str, str, str]:
    """The texts of a known variant's three files: ``(rules, pieces, setup)``."""
    return _core.variant_texts(variant)


def _register_gym_id(variant: str) -> None:
    """Adds ``variant``'s id to GYM_IDS and registers it with Gymnasium:
    ``gymnasium.make(id)`` builds a TaikyokuEnv, and ``gymnasium.make_vec(id, n)`` a native
    taikyoku.VectorEnv (its ``vector_entry_point``; ``vectorization_mode="sync"`` or ``"async"``
    runs n TaikyokuEnv instead). The variant is a keyword argument of both, so
    ``make(id, variant=...)`` may still choose another."""
    env_id = variant_info(variant)["gym_id"]
    GYM_IDS[variant] = env_id
    if env_id not in gymnasium.registry:
        gymnasium.register(
            id=env_id,
            entry_point="taikyoku.env:TaikyokuEnv",
            vector_entry_point="taikyoku.vector:VectorEnv",
            kwargs={"variant": variant},
        )


for _variant in _core.variants():
    _register_gym_id(_variant)
