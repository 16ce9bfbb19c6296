"""Findings moved to `agentotel.analysis.detectors` (the analysis layer the query views and cases share);
this name stays for code that imported them from here."""

from agentotel.analysis.detectors import (  # noqa: F401 - re-exported
    KINDS,
    LAYERS,
    SEVERITIES,
    Finding,
    Policy,
    Thresholds,
    argument_problems,
    detect,
    findings,
    findings_table,
    format_findings,
    tool_schemas,
    totals,
)

__all__ = ["Finding", "Thresholds", "Policy", "LAYERS", "SEVERITIES", "KINDS", "detect", "findings", "findings_table",
           "format_findings", "totals"]
