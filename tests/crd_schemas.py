"""CustomResourceDefinition schemas as strict JSON Schemas, for the test validators.

A CRD's ``spec.versions[].schema.openAPIV3Schema`` is OpenAPI 3.0's schema
dialect plus Kubernetes extensions; jsonschema can check it after the changes
shared/design/VALIDATORS.md (3b) describes, which :func:`openapi_to_jsonschema`
makes:

* ``description``, ``example``, ``default``, ``format`` and the
  ``x-kubernetes-*`` annotations are dropped (``format: int32``/``int64``
  become the integer's range, the one format the API server enforces that a
  schema can state);
* ``nullable: true`` adds ``null`` to the type;
* ``x-kubernetes-int-or-string`` becomes ``anyOf: [integer, string]``;
* strictness: every object with ``properties`` and no
  ``x-kubernetes-preserve-unknown-fields`` gets ``additionalProperties: false``,
  as a strict client (``kubectl --validate=strict``) rejects the unknown fields
  the API server would otherwise prune silently.

The vendored files in tests/data/prometheus-operator/ and tests/data/keda/
were written by this module's command line (the READMEs there name the CRD
each came from)::

    python tests/crd_schemas.py CRD.yaml VERSION > KIND-TAG.schema.json

What a schema cannot say (CEL ``x-kubernetes-validations`` rules, list-map
key uniqueness, admission webhooks) is checked in code by the validators or
listed as unchecked in the READMEs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

JSON_SCHEMA_DIALECT = "http://json-schema.org/draft-04/schema#"
# OpenAPI 3.0's schema object is JSON Schema draft wright-00 (draft 5), whose
# keywords used by CRDs mean what they mean in draft 4 (exclusiveMinimum is a
# boolean, etc.), so the converted schemas are draft 4.
_DROPPED = ("description", "nullable", "default", "example", "format")
_INTEGER_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def openapi_to_jsonschema(node: Any, strict: bool = True) -> Any:
    """One CRD openAPIV3Schema node as a JSON Schema (draft 4) node."""
    if isinstance(node, list):
        return [openapi_to_jsonschema(n, strict) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties"):
            out[key] = {name: openapi_to_jsonschema(sub, strict) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = openapi_to_jsonschema(value, strict)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [openapi_to_jsonschema(sub, strict) for sub in value]
        elif key.startswith("x-kubernetes-") or key in _DROPPED:
            continue
        else:
            out[key] = json.loads(json.dumps(value))
    if node.get("type") == "integer" and node.get("format") in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[node["format"]]
        out.setdefault("minimum", low)
        out.setdefault("maximum", high)
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if node.get("x-kubernetes-int-or-string") and "type" not in out and "anyOf" not in out:
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        strict
        and out.get("type") == "object"
        and "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
        if node.get("x-kubernetes-embedded-resource"):
            for extra in ("apiVersion", "kind", "metadata"):
                out["properties"].setdefault(extra, {})
    return out


def crd_version_schema(crd: dict, version: str, strict: bool = True) -> dict:
    """The strict JSON Schema of one served version of a CRD object.

    ``apiVersion`` and ``kind`` become constants, and both plus ``metadata``
    are required (the API server requires them of every object)."""
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    for ver in crd["spec"]["versions"]:
        if ver["name"] == version:
            if not ver.get("served", True):
                raise ValueError(f"{kind} {version} is not served by this CRD")
            schema = openapi_to_jsonschema(ver["schema"]["openAPIV3Schema"], strict)
            break
    else:
        raise ValueError(f"the CRD of {kind} has no version {version!r}")
    schema["properties"]["apiVersion"] = {"enum": [f"{group}/{version}"]}
    schema["properties"]["kind"] = {"enum": [kind]}
    schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata"})
    return {"$schema": JSON_SCHEMA_DIALECT, "title": f"{kind} ({group}/{version}), strict", **schema}


def x_kubernetes_validations(node: Any, path: str = "") -> list[tuple[str, dict]]:
    """Every CEL rule of a CRD schema with the field path it sits on (for the
    READMEs and for the tests that the validators implement each one)."""
    found: list[tuple[str, dict]] = []
    if isinstance(node, dict):
        for rule in node.get("x-kubernetes-validations", []):
            found.append((path or "<root>", rule))
        for name, sub in (node.get("properties") or {}).items():
            found += x_kubernetes_validations(sub, f"{path}.{name}" if path else name)
        if isinstance(node.get("items"), dict):
            found += x_kubernetes_validations(node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            found += x_kubernetes_validations(node["additionalProperties"], f"{path}.*")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python tests/crd_schemas.py CRD.yaml VERSION > OUT.schema.json", file=sys.stderr)
        return 2
    crd_path, version = argv
    crds = [
        d for d in yaml.safe_load_all(Path(crd_path).read_text()) if d and d.get("kind") == "CustomResourceDefinition"
    ]
    if len(crds) != 1:
        print(f"{crd_path}: expected one CustomResourceDefinition, found {len(crds)}", file=sys.stderr)
        return 1
    print(json.dumps(crd_version_schema(crds[0], version), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
