"""agentotel-collector: an OTLP receiver that writes the same Parquet store as the in-process exporter.

Run it with `agentotel-collector --dir DIR` (see `--help`), or embed it::

    from agentotel_collector import Collector
    with Collector(dir="traces", http=("127.0.0.1", 4318), grpc=None):
        ...
"""

from ._collector import Collector
from ._settings import Settings

__all__ = ["Collector", "Settings"]
__version__ = "0.1.0"
