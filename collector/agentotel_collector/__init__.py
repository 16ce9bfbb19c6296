"""agentotel-collector: an OTLP receiver that writes the same Parquet store as the in-process exporter."""

__version__ = "0.1.0"
