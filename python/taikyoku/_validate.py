"""Argument checks shared by the Python side of the package (env, vector, multiagent, selfplay,
render): one place that decides what an integer, a real number, a flag or a choice is, and
words the error the same way everywhere.

Every check returns the value converted to a plain Python type or raises
:class:`taikyoku.TaikyokuError` (a ValueError) whose message names the argument, its valid
range and the value given, e.g. ``games must be an integer in [1, 9223372036854775807], not 1.5``.

- Integers: ``int`` and numpy integers (``np.int64``, ``np.uint8``, ...) and anything else with
  ``__index__``; never ``bool`` (``True`` is an int to Python, but a flag to a reader), floats
  (even integral ones: ``5.0``), strings or 0-d/1-element arrays of floats.
- Reals: ints, floats and numpy numbers, never ``bool``, NaN or infinities.
- Flags: ``bool`` and ``np.bool_`` only (a string like ``"no"`` is truthy: refusing it is the
  only safe answer).
"""

from __future__ import annotations

import math
import numbers
import operator
import os
from typing import Any, List, Optional, Sequence, Type

import numpy as np

from taikyoku._core import TaikyokuError

__all__ = [
    "boolean",
    "choice",
    "integer",
    "optional_integer",
    "path",
    "real",
    "show",
    "string_list",
    "U32_MAX",
    "I64_MAX",
    "U64_MAX",
    "F32_MAX",
]

U32_MAX = 2**32 - 1
I64_MAX = 2**63 - 1
U64_MAX = 2**64 - 1
F32_MAX = float(np.finfo(np.float32).max)

_SHOW_LIMIT = 60


def show(value: Any) -> str:
    """``repr(value)``, cut to a readable length (an error must not echo a 1 MB string)."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__} object>"
    if len(text) > _SHOW_LIMIT:
        text = f"{text[: _SHOW_LIMIT - 15]}...({len(text)} characters)"
    return text


def _number(x: object) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range(low: Optional[float], high: Optional[float], left: str = "[") -> str:
    if low is not None and high is not None:
        return f" in {left}{_number(low)}, {_number(high)}]"
    if low is not None:
        return f" {'>' if left == '(' else '>='} {_number(low)}"
    if high is not None:
        return f" <= {_number(high)}"
    return ""


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def integer(
    name: str,
    value: Any,
    low: Optional[int] = None,
    high: Optional[int] = None,
    *,
    error: Type[Exception] = TaikyokuError,
) -> int:
    """``value`` as an ``int`` within ``[low, high]`` (either bound may be None)."""
    if type(value) is int:  # the common case first (a bool's type is bool); messages only on error
        number = value
    else:
        if _is_bool(value) or isinstance(value, (float, np.floating, complex, str, bytes)):
            raise error(f"{name} must be an integer{_range(low, high)}, not {show(value)} ({type(value).__name__})")
        try:
            number = operator.index(value)
        except TypeError:
            raise error(
                f"{name} must be an integer{_range(low, high)}, not {show(value)} ({type(value).__name__})"
            ) from None
    if (low is not None and number < low) or (high is not None and number > high):
        raise error(f"{name} must be an integer{_range(low, high)}, not {number}")
    return number


def optional_integer(name: str, value: Any, low: Optional[int] = None, high: Optional[int] = None) -> Optional[int]:
    """None, or an integer as :func:`integer` checks it."""
    if value is None:
        return None
    return integer(name, value, low, high)


def real(
    name: str,
    value: Any,
    low: Optional[float] = None,
    high: Optional[float] = None,
    *,
    low_open: bool = False,
) -> float:
    """``value`` as a finite ``float`` within ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    wanted = f"{name} must be a finite number{_range(low, high, '(' if low_open else '[')}"
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise _wrong_type(wanted, value)
    number = float(value)
    if not math.isfinite(number):
        raise TaikyokuError(f"{wanted}, not {number}")
    if low is not None and (number < low or (low_open and number == low)):
        raise TaikyokuError(f"{wanted}, not {show(value)}")
    if high is not None and number > high:
        raise TaikyokuError(f"{wanted}, not {show(value)}")
    return number


def _wrong_type(wanted: str, value: Any) -> TaikyokuError:
    """The error for a value of the wrong kind altogether (its type is named too)."""
    return TaikyokuError(f"{wanted}, not {show(value)} ({type(value).__name__})")


def boolean(name: str, value: Any) -> bool:
    """``value`` as a ``bool``: only True/False (or numpy's) are flags."""
    if not _is_bool(value):
        raise _wrong_type(f"{name} must be True or False", value)
    return bool(value)


def choice(name: str, value: Any, options: Sequence[Any]) -> Any:
    """``value`` if it is one of ``options`` (strings compared as strings; None, True... by identity)."""
    listed = ", ".join(repr(o) for o in options)
    known = any(value is o or (isinstance(value, str) and isinstance(o, str) and value == o) for o in options)
    if not known:
        raise TaikyokuError(f"unknown {name} {show(value)} (use one of {listed})")
    return str(value) if isinstance(value, str) else value


def string_list(name: str, value: Any) -> List[str]:
    """A list of strings from a sequence of them (``None`` gives ``[]``; a lone string is refused,
    since ``list("abc")`` would silently read it as three names)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)):
        raise TaikyokuError(f"{name} must be a list of names, not the string {show(value)}: write [{show(value)}]")
    try:
        items = list(value)
    except TypeError:
        raise _wrong_type(f"{name} must be a list of names", value) from None
    for item in items:
        if not isinstance(item, str):
            raise _wrong_type(f"{name} must be a list of names (strings); one item is", item)
    return [str(item) for item in items]


def path(name: str, value: Any) -> str:
    """A file-system path as a non-empty ``str`` (str, bytes or os.PathLike)."""
    try:
        text = os.fspath(value)
    except TypeError:
        raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}") from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text == "":
        raise TaikyokuError(f"{name} must name a directory, not '' (write '.' to mean the current directory)")
    if "\x00" in text:
        raise TaikyokuError(f"{name} contains a NUL character: {show(text)}")
    return text
