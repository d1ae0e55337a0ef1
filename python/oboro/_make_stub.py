"""Regenerates python/oboro/_core.pyi, the type stub of the native module (developer tool).

    python -m oboro._make_stub [OUTPUT]

Runs nanobind's stub generator on oboro._core and replaces its import of the exception classes
(created at run time, so the generator sees them as imports from `oboro`) by their definitions.
The stub and python/oboro/py.typed make the package typed for mypy, pyright and IDEs.
"""

from __future__ import annotations

import pathlib
import re
import sys

_EXCEPTIONS = '''import builtins

__version__: str

class Error(Exception):
    """Base class of every error raised by oboro."""

class ParameterError(Error, builtins.ValueError):
    """Invalid, malformed or insecure parameters."""

class InvalidArgument(Error, builtins.ValueError):
    """An argument that is out of range or of the wrong size."""

class LevelMismatch(Error, builtins.ValueError):
    """Operands at different levels, or an operation impossible at the operand's level."""

class ScaleMismatch(Error, builtins.ValueError):
    """Operands whose scales differ, or a scale that cannot be reached."""

class ContextMismatch(Error, builtins.ValueError):
    """Objects that belong to different parameter sets or keys."""

class MissingKey(Error):
    """A key the operation needs is not there."""

class SerializationError(Error):
    """Bad, truncated or hostile serialized data."""

class ModulusOverflow(Error, builtins.OverflowError):
    """A decrypted result that has most likely wrapped around the modulus."""
'''


def generate() -> str:
    from nanobind.stubgen import StubGen  # type: ignore[import-not-found]

    import oboro._core as core

    sg = StubGen(core)
    sg.put(core)
    text = sg.get()
    text, count = re.subn(r"from oboro import \([^)]*\)\n", _EXCEPTIONS, text, count=1)
    if count != 1:
        raise RuntimeError("unexpected stub layout: the import of the exception classes was not found")
    return text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = pathlib.Path(argv[0]) if argv else pathlib.Path(__file__).with_name("_core.pyi")
    out.write_text(generate())
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
