"""agentotel-collector: an OTLP receiver that writes the same Parquet store as the in-process exporter.

Run it with `agentotel-collector --dir DIR` (see `--help`), or embed it::

    from agentotel_collector import Collector
    with Collector(dir="traces", http=("127.0.0.1", 4318), grpc=None):
        ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._collector import Collector
    from ._settings import Settings

__all__ = ["Collector", "Settings"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported on first use, not with the package: `agentotel-collector` (`__main__`) sets Arrow's allocator
    # options before anything loads pyarrow, which `python -m` could not do if the package imported it first.
    if name == "Collector":
        from ._collector import Collector

        return Collector
    if name == "Settings":
        from ._settings import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
