#!/usr/bin/env python3
"""Generate agentotel/semconv.py and semconv/ATTRIBUTES.md from the YAML registry in semconv/registry/.

    python semconv/generate.py          # write both files
    python semconv/generate.py --check  # exit 1 when either file is stale

The registry is the one place attribute names, types, payload columns and promoted store columns are
written down; the store schema, the exporter and the collector all read the generated module.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REGISTRY = HERE / "registry"
PY_OUT = ROOT / "agentotel" / "semconv.py"
MD_OUT = HERE / "ATTRIBUTES.md"

# Attribute type → the Arrow type of a promoted column holding it.
_ARROW_TYPES = {"string": "string", "int": "int64", "double": "float64", "boolean": "bool", "string[]": "list<string>"}


def load_groups() -> list[dict]:
    groups: list[dict] = []
    for path in sorted(REGISTRY.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        groups.extend(data.get("groups", []))
    return groups


def collect(groups: list[dict]) -> tuple[dict[str, dict], list[dict], list[dict]]:
    attributes: dict[str, dict] = {}
    spans: list[dict] = []
    metrics: list[dict] = []
    for group in groups:
        if group["type"] == "attribute_group":
            for attr in group["attributes"]:
                if attr["id"] in attributes:
                    raise SystemExit(f"attribute {attr['id']} is defined twice")
                for key in ("type", "brief", "stability", "examples"):
                    if key not in attr:
                        raise SystemExit(f"attribute {attr['id']} has no {key}")
                attributes[attr["id"]] = attr
        elif group["type"] == "span":
            spans.append(group)
        elif group["type"] == "metric_group":
            metrics.extend(group["metrics"])
    for span in spans:
        for ref in span["attributes"]:
            if ref["ref"] not in attributes:
                raise SystemExit(f"span group {span['id']} references unknown attribute {ref['ref']}")
    return attributes, spans, metrics


def constant_name(attr_id: str) -> str:
    return attr_id.upper().replace(".", "_")


def _annotation(attr: dict) -> dict:
    return (attr.get("annotations") or {}).get("agentotel") or {}


def render_python(attributes: dict[str, dict], spans: list[dict], metrics: list[dict]) -> str:
    out = [
        '"""Attribute names agentotel emits and reads.',
        "",
        "GENERATED from semconv/registry/*.yaml - do not edit; regenerate with `python semconv/generate.py`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final, Mapping",
        "",
    ]
    for attr_id, attr in attributes.items():
        out.append(f'{constant_name(attr_id)}: Final = "{attr_id}"')
        doc = attr["brief"].strip().replace('"""', "'''")
        if attr.get("note"):
            doc += " " + attr["note"].strip().replace('"""', "'''")
        out.append(f'"""{doc} ({attr["type"]}, {attr["stability"]})"""')
        out.append("")
    out.append("# Metric instrument names.")
    for metric in metrics:
        out.append(f'METRIC_{constant_name(metric["id"])}: Final = "{metric["id"]}"')
        out.append(f'"""{metric["brief"].strip()} ({metric["instrument"]}, {metric["unit"]})"""')
        out.append("")

    out.append("ATTRIBUTE_TYPES: Final[Mapping[str, str]] = {")
    for attr_id, attr in attributes.items():
        out.append(f'    {constant_name(attr_id)}: "{attr["type"]}",')
    out.append("}")
    out.append('"""Every registered attribute with its registry type (string, int, double, boolean, string[])."""')
    out.append("")
    out.append("PROMOTED_COLUMNS: Final[Mapping[str, tuple[str, str]]] = {")
    for attr_id, attr in attributes.items():
        column = _annotation(attr).get("column")
        if column:
            out.append(f'    {constant_name(attr_id)}: ("{column}", "{_ARROW_TYPES[attr["type"]]}"),')
    out.append("}")
    out.append('"""Attribute -> (store column, Arrow type): typed copies of these attributes in the span row."""')
    out.append("")
    out.append("PAYLOAD_COLUMNS: Final[Mapping[str, str]] = {")
    for attr_id, attr in attributes.items():
        payload = _annotation(attr).get("payload")
        if payload:
            if payload not in ("input", "output"):
                raise SystemExit(f"attribute {attr_id}: payload must be input or output")
            out.append(f'    {constant_name(attr_id)}: "{payload}",')
    out.append("}")
    out.append(
        '"""Payload attribute -> the store column (input or output) it moves to. A span carries at most one of each."""'
    )
    out.append("")
    out.append("SPAN_ATTRIBUTES: Final[Mapping[str, tuple[str, ...]]] = {")
    for span in spans:
        refs = ", ".join(constant_name(ref["ref"]) for ref in span["attributes"])
        out.append(f'    "{span["id"]}": ({refs},),')
    out.append("}")
    out.append('"""Span group id -> the attributes it references, from semconv/registry/spans.yaml."""')
    out.append("")
    return "\n".join(out)


def _requirement(level) -> str:
    if isinstance(level, dict):
        (key, value), = level.items()
        return f"{key}: {value}"
    return str(level)


def render_markdown(attributes: dict[str, dict], spans: list[dict], metrics: list[dict]) -> str:
    out = [
        "# agentotel attributes",
        "",
        "GENERATED from `semconv/registry/*.yaml` - do not edit; regenerate with `python semconv/generate.py`.",
        "",
        "| attribute | type | stability | store | brief |",
        "|---|---|---|---|---|",
    ]
    for attr_id, attr in attributes.items():
        ann = _annotation(attr)
        store = f"column `{ann['column']}`" if ann.get("column") else f"payload `{ann['payload']}`" if ann.get("payload") else "attributes"
        brief = attr["brief"].strip().replace("|", "\\|")
        out.append(f"| `{attr_id}` | {attr['type']} | {attr['stability']} | {store} | {brief} |")
    for span in spans:
        out += ["", f"## {span['id']} ({span['span_kind']})", "", span["brief"].strip(), "",
                "| attribute | requirement |", "|---|---|"]
        for ref in span["attributes"]:
            out.append(f"| `{ref['ref']}` | {_requirement(ref['requirement_level'])} |")
    out += ["", "## Metrics", "", "| metric | instrument | unit | brief |", "|---|---|---|---|"]
    for metric in metrics:
        out.append(f"| `{metric['id']}` | {metric['instrument']} | {metric['unit']} | {metric['brief'].strip()} |")
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    attributes, spans, metrics = collect(load_groups())
    outputs = {PY_OUT: render_python(attributes, spans, metrics), MD_OUT: render_markdown(attributes, spans, metrics)}
    stale = [path for path, text in outputs.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)} (run python semconv/generate.py)", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(outputs[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
