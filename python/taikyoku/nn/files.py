"""Network files: :func:`save`, :func:`load`, and the weights shipped in the package (:func:`pretrained`)."""

from __future__ import annotations

import errno
import importlib.resources
import os
from pathlib import Path
from typing import Any, List, Optional, Union

import torch

from taikyoku import _core
from taikyoku.nn.network import PolicyValueNet

#: The version of the files :func:`save` writes (the ``"format"`` key). Files without it (written
#: by ``examples/closed_loop.py`` before it existed) read as version 0, the same layout.
SAVE_FORMAT = 1
_CONFIG_KEYS = ("channels", "blocks", "head_channels", "variant", "options")

PathLike = Union[str, "os.PathLike[str]"]


def save(net: PolicyValueNet, path: PathLike, half: bool = False) -> None:
    """Writes ``net`` to ``path`` as ``{"format": 1, "config": net.config, "state_dict": ...}``.

    The config rebuilds the network (:func:`load` does, for any variant); the weights are saved
    from the CPU, so the file loads on a machine without the GPU it trained on. The file is written
    next to ``path`` first and then renamed over it, so an interrupted save never leaves half a network.
    ``half``: floating-point tensors stored in float16 (half the size; :func:`load` gives them back
    as the network's float32), as the shipped weights are.
    """
    if not isinstance(net, PolicyValueNet):
        raise TypeError(f"save() writes a PolicyValueNet, not {type(net).__name__}")
    target = Path(path)
    state = {name: tensor.detach().cpu() for name, tensor in net.state_dict().items()}
    if half:
        state = {name: t.half() if t.is_floating_point() else t for name, t in state.items()}
    partial = target.with_name(target.name + ".partial")
    torch.save({"format": SAVE_FORMAT, "config": dict(net.config), "state_dict": state}, partial)
    os.replace(partial, target)


def load(
    path: PathLike, variant: Optional[str] = None, map_location: Union[str, torch.device] = "cpu"
) -> PolicyValueNet:
    """The :class:`PolicyValueNet` saved in ``path`` (by :func:`save`, or any ``{"config",
    "state_dict"}`` dict), in eval mode, on ``map_location``.

    Reads with ``torch.load(weights_only=True)``: a file can hold tensors and plain values only,
    never code. ``variant``: the variant the caller will play; a network of another variant is
    refused, naming both. Raises ``OSError`` when the file is missing or unreadable and
    ``taikyoku.TaikyokuError`` when it is not a taikyoku network, was written by a newer taikyoku,
    or holds weights that do not fit its own config.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(errno.ENOENT, f"no network file at {source}", str(source))
    if source.is_dir():
        raise _core.TaikyokuError(f"{source} is a directory, not a network file (taikyoku.nn.save writes one)")
    try:
        saved = torch.load(source, map_location=map_location, weights_only=True)
    except OSError:
        raise
    except Exception as e:  # torch reports a foreign file with many exception types
        raise _core.TaikyokuError(
            f"{source} is not a taikyoku network file (torch.load(weights_only=True) refused it: {type(e).__name__}: {e})"
        ) from e
    if not isinstance(saved, dict) or "config" not in saved or "state_dict" not in saved:
        found = f"a dict with keys {sorted(map(str, saved))[:8]}" if isinstance(saved, dict) else type(saved).__name__
        raise _core.TaikyokuError(
            f"{source} holds no taikyoku network: expected a dict with 'config' and 'state_dict' (taikyoku.nn.save "
            f"writes one), found {found}"
        )
    version = saved.get("format", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise _core.TaikyokuError(f"{source}: its format {version!r} is not a version number")
    if version > SAVE_FORMAT:
        raise _core.TaikyokuError(
            f"{source} has format {version}, this taikyoku reads up to {SAVE_FORMAT}: load it with a newer taikyoku"
        )
    config, state = saved["config"], saved["state_dict"]
    if not isinstance(config, dict) or not isinstance(state, dict):
        raise _core.TaikyokuError(f"{source}: 'config' and 'state_dict' must be dicts")
    unknown = sorted(str(k) for k in config if k not in _CONFIG_KEYS)
    if unknown:
        raise _core.TaikyokuError(
            f"{source}: config has keys PolicyValueNet does not take ({', '.join(unknown)}; it takes {', '.join(_CONFIG_KEYS)})"
        )
    own = config.get("variant", "taikyoku")
    if variant is not None and own != variant:
        raise _core.TaikyokuError(f"{source} holds a network for {own}, not for {variant}")
    try:
        net = PolicyValueNet(**config)
    except (TypeError, ValueError) as e:  # TaikyokuError (an unknown variant) is a ValueError
        raise _core.TaikyokuError(f"{source}: its config {config} does not build a PolicyValueNet: {e}") from e
    try:
        net.load_state_dict(state)
    except RuntimeError as e:
        first = str(e).strip().splitlines()
        raise _core.TaikyokuError(
            f"{source}: its state_dict does not fit its config {config}: {' '.join(line.strip() for line in first[:4])}"
        ) from e
    if isinstance(map_location, (str, torch.device)):
        net = net.to(map_location)
    return net.eval()


def _weights_dir() -> Any:
    """The package's ``weights`` directory (an ``importlib.resources`` Traversable)."""
    return importlib.resources.files("taikyoku") / "weights"


def pretrained_variants() -> List[str]:
    """The variants that :func:`pretrained` has weights for (``taikyoku/weights/<variant>.pt``)."""
    directory = _weights_dir()
    if not directory.is_dir():
        return []
    known = set(_core.variants())
    names = (
        entry.name[: -len(".pt")] for entry in directory.iterdir() if entry.name.endswith(".pt") and entry.is_file()
    )
    return sorted(name for name in names if name in known)


def pretrained(variant: str = "tenjiku", map_location: Union[str, torch.device] = "cpu") -> PolicyValueNet:
    """The network shipped with the package for ``variant`` (``taikyoku/weights/<variant>.pt``), in eval mode.

    Raises ``taikyoku.TaikyokuError`` for an unknown variant, or one without shipped weights
    (naming those that have some: :func:`pretrained_variants`).
    """
    known = _core.variants()
    if variant not in known:
        raise _core.TaikyokuError(f"unknown variant {variant!r} (variants: {', '.join(known)})")
    available = pretrained_variants()
    if variant not in available:
        have = ", ".join(available) if available else "none yet"
        raise _core.TaikyokuError(
            f"no pretrained network for {variant} ships with this taikyoku (variants with weights: {have}); "
            "train one (examples/train_from_dataset.py --save FILE.pt) and read it with taikyoku.nn.load"
        )
    with importlib.resources.as_file(_weights_dir() / f"{variant}.pt") as file:
        return load(file, variant=variant, map_location=map_location)
