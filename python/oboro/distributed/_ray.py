"""Ray, imported once for the package, with the error that says how to get it.

oboro.distributed is an optional part of oboro: Ray is large and most users of oboro never need
a cluster, so it is the extra ``oboro[ray]`` rather than a dependency. Every module of the
package imports ``ray`` from here, so that a missing Ray fails at ``import oboro.distributed``
with one message, not later inside a task.
"""

from __future__ import annotations

INSTALL_HINT = "pip install 'oboro[ray]'"

try:
    import ray
except ImportError as e:  # ModuleNotFoundError, or an import blocked on purpose (sys.modules["ray"] = None)
    raise ImportError(
        f"oboro.distributed runs on Ray, which is not installed in this Python: {INSTALL_HINT} "
        f"(or pip install ray). The rest of oboro works without it."
    ) from e

__all__ = ["INSTALL_HINT", "ray"]
