#!/usr/bin/env python3
"""Validates every object of a rendered overlay (kubectl kustomize output on stdin) against the schemas vendored
in deploy/schemas/, offline: the check an API server's schema validation (kubectl apply --validate=strict) would
make, without a cluster.

    kubectl kustomize deploy/k8s/overlays/dev | python3 deploy/k8s/check_schemas.py dev

Each error names the object and the field: `Deployment gpucloud/scheduler-service:
spec.template.spec.containers[0].resourcez: unknown field`. It fails on an unknown field, a value of the wrong type
or not among a field's allowed values, a missing required field, and an object whose apiVersion and kind no
vendored schema describes (vendor it first: deploy/schemas/README.md).

The schemas are a subset of OpenAPI v3 as Kubernetes uses it (deploy/schemas/README.md says where each comes
from): type, properties, additionalProperties, required, items, enum, x-kubernetes-int-or-string,
x-kubernetes-preserve-unknown-fields, anyOf and oneOf, and $ref to a definition of the same file
(`#/definitions/NAME`) or of deploy/schemas/kubernetes.json (`kubernetes:NAME`). An object schema with properties
is closed unless it says additionalProperties or x-kubernetes-preserve-unknown-fields. A null value counts as
absent, as the API server takes it.
"""
import glob
import json
import os
import re
import sys

import yaml

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas")
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


class Schemas:
    """The vendored schema files: each kind's root schema and the definitions its $refs reach."""

    def __init__(self, directory=SCHEMAS):
        self.kinds, self.files = {}, {}
        for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
            with open(path) as f:
                doc = json.load(f)
            name = os.path.splitext(os.path.basename(path))[0]
            self.files[name] = doc.get("definitions", {})
            for gvk, schema in doc.get("kinds", {}).items():
                if gvk in self.kinds:
                    raise ValueError(f"{path}: {gvk} is described by another schema file too")
                self.kinds[gvk] = (name, schema)

    def resolve(self, schema, file):
        """A $ref's target and the file its own $refs are relative to."""
        seen = 0
        while "$ref" in schema:
            ref = schema["$ref"]
            if ref.startswith("#/definitions/"):
                target = self.files[file].get(ref[len("#/definitions/"):])
            elif ref.startswith("kubernetes:"):
                file, target = "kubernetes", self.files.get("kubernetes", {}).get(ref[len("kubernetes:"):])
            else:
                target = None
            if target is None:
                raise ValueError(f"deploy/schemas/{file}.json: unresolved $ref {ref}")
            schema, seen = target, seen + 1
            if seen > 50:
                raise ValueError(f"deploy/schemas/{file}.json: $ref loop at {ref}")
        return schema, file


def json_type(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def field(path, key):
    key = str(key)
    if IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def shown(value):
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def validate(schemas, value, schema, file, path, errors):
    """Appends (path, message) for each way value breaks schema."""
    schema, file = schemas.resolve(schema, file)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = []
            for branch in schema[key]:
                found = []
                validate(schemas, value, branch, file, path, found)
                branches.append(found)
            matching = sum(1 for b in branches if not b)
            if matching == 0:
                errors.append((path, f"matches none of {key}: " + "; or ".join(
                    ", ".join(f"{p or '(the object)'}: {m}" for p, m in b) for b in branches)))
            elif key == "oneOf" and matching > 1:
                errors.append((path, f"matches {matching} of oneOf, must match one"))
    if schema.get("x-kubernetes-int-or-string"):
        if json_type(value) not in ("integer", "string"):
            errors.append((path, f"must be an integer or a string, is {json_type(value)} {shown(value)}"))
        return
    wanted = schema.get("type")
    got = json_type(value)
    if wanted and not (got == wanted or (wanted == "number" and got == "integer")):
        errors.append((path, f"must be {wanted}, is {got} {shown(value)}"))
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append((path, f"must be one of {', '.join(shown(v) for v in schema['enum'])}, is {shown(value)}"))
    if got == "array" and "items" in schema:
        for i, item in enumerate(value):
            if item is not None:
                validate(schemas, item, schema["items"], file, f"{path}[{i}]", errors)
    if got == "object":
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if value.get(name) is None:
                errors.append((field(path, name), "missing required field"))
        extra = schema.get("additionalProperties")
        open_ = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True or (extra is None and not props)
        for name, item in value.items():
            if item is None:
                continue
            if name in props:
                validate(schemas, item, props[name], file, field(path, name), errors)
            elif isinstance(extra, dict):
                validate(schemas, item, extra, file, field(path, name), errors)
            elif not open_:
                errors.append((field(path, name), "unknown field"))


def check(docs, schemas):
    """The errors of every document, each `Kind namespace/name: path: message`."""
    errors = []
    for d in docs:
        if not isinstance(d, dict):
            errors.append(f"a document that is not an object: {shown(d)}")
            continue
        meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        who = f"{d.get('kind')} " + (f"{meta['namespace']}/" if meta.get("namespace") else "") + str(meta.get("name"))
        gvk = f"{d.get('apiVersion')}/{d.get('kind')}"
        if gvk not in schemas.kinds:
            errors.append(f"{who}: no schema for apiVersion {d.get('apiVersion')} kind {d.get('kind')} in deploy/schemas "
                          "(vendor it: deploy/schemas/README.md)")
            continue
        file, schema = schemas.kinds[gvk]
        found = []
        validate(schemas, d, schema, file, "", found)
        errors += [f"{who}: {path or '(the object)'}: {message}" for path, message in found]
    return errors


def main(name, directory=SCHEMAS):
    """Prints the overlay's schema errors and returns 1 when there are any."""
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d is not None]
    errors = check(docs, Schemas(directory))
    for e in errors:
        print(f"  FAIL {name}: {e}")
    print(f"  {name}: {len(docs)} resources against deploy/schemas: {'ok' if not errors else str(len(errors)) + ' problems'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2] or ["manifests"]))
