#!/usr/bin/env python3
"""Checks rendered manifests (kubectl kustomize output on stdin) for the mistakes a schema check
would not catch and those it would, without a cluster: no offline Kubernetes schema validator is
available here (kubectl --dry-run=client needs the API server's OpenAPI document).

    kubectl kustomize --load-restrictor LoadRestrictionsNone deploy/k8s/overlays/dev | python3 deploy/k8s/check_manifests.py dev

Checks: every document has apiVersion, kind and metadata.name; each Deployment and DaemonSet selects
its own pod template, probes /q/health/live and /q/health/ready on a declared port, and sets memory
requests and limits; every referenced ConfigMap and Secret is rendered; each Service, PDB and HPA
points at a rendered workload; every KafkaTopic names its Strimzi cluster and has partitions.
"""
import sys
import yaml


def main(name):
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    errors = []
    by_kind = {}
    for d in docs:
        for field in ("apiVersion", "kind"):
            if not d.get(field):
                errors.append(f"a document lacks {field}: {str(d)[:80]}")
        if not d.get("metadata", {}).get("name"):
            errors.append(f"{d.get('kind')} without metadata.name")
        by_kind.setdefault(d.get("kind"), {})[d.get("metadata", {}).get("name")] = d
    config_maps = set(by_kind.get("ConfigMap", {}))
    secrets = set(by_kind.get("Secret", {}))
    workloads = {**by_kind.get("Deployment", {}), **by_kind.get("DaemonSet", {})}
    namespaces = {w["metadata"].get("namespace") for w in workloads.values()}

    for wname, w in workloads.items():
        where = f"{w['kind']} {wname}"
        spec = w["spec"]
        template_labels = spec["template"]["metadata"].get("labels", {})
        for k, v in spec["selector"]["matchLabels"].items():
            if template_labels.get(k) != v:
                errors.append(f"{where}: selector {k}={v} does not match its pod template")
        for c in spec["template"]["spec"]["containers"]:
            ports = {p["name"] for p in c.get("ports", [])}
            for probe, path in (("livenessProbe", "/q/health/live"), ("readinessProbe", "/q/health/ready")):
                get = c.get(probe, {}).get("httpGet", {})
                if get.get("path") != path:
                    errors.append(f"{where}/{c['name']}: {probe} must GET {path}, has {get.get('path')}")
                elif get.get("port") not in ports:
                    errors.append(f"{where}/{c['name']}: {probe} port {get.get('port')} is not a declared port")
            res = c.get("resources", {})
            if "memory" not in res.get("requests", {}) or "memory" not in res.get("limits", {}):
                errors.append(f"{where}/{c['name']}: memory request and limit required")
            for ref in c.get("envFrom", []):
                if "configMapRef" in ref and ref["configMapRef"]["name"] not in config_maps:
                    errors.append(f"{where}: ConfigMap {ref['configMapRef']['name']} is not rendered")
            for env in c.get("env", []):
                key_ref = env.get("valueFrom", {}).get("secretKeyRef")
                if key_ref and key_ref["name"] not in secrets:
                    errors.append(f"{where}: Secret {key_ref['name']} is not rendered")

    def selects_workload(selector, where):
        for w in workloads.values():
            labels = w["spec"]["template"]["metadata"].get("labels", {})
            if all(labels.get(k) == v for k, v in selector.items()):
                return
        errors.append(f"{where}: selector {selector} matches no rendered workload")

    for sname, s in by_kind.get("Service", {}).items():
        selects_workload(s["spec"]["selector"], f"Service {sname}")
    for pname, p in by_kind.get("PodDisruptionBudget", {}).items():
        selects_workload(p["spec"]["selector"]["matchLabels"], f"PodDisruptionBudget {pname}")
    for hname, h in by_kind.get("HorizontalPodAutoscaler", {}).items():
        if h["apiVersion"] != "autoscaling/v2":
            errors.append(f"HorizontalPodAutoscaler {hname}: use autoscaling/v2")
        target = h["spec"]["scaleTargetRef"]["name"]
        # An HPA in another namespace (the example's "inference") scales a workload that is not gpucloud's.
        if target not in workloads and h["metadata"].get("namespace") in namespaces:
            errors.append(f"HorizontalPodAutoscaler {hname}: target {target} is not rendered")
        if h["spec"]["minReplicas"] > h["spec"]["maxReplicas"]:
            errors.append(f"HorizontalPodAutoscaler {hname}: minReplicas above maxReplicas")
    for tname, t in by_kind.get("KafkaTopic", {}).items():
        if not t["metadata"].get("labels", {}).get("strimzi.io/cluster"):
            errors.append(f"KafkaTopic {tname}: label strimzi.io/cluster missing")
        if t["spec"].get("partitions", 0) < 1:
            errors.append(f"KafkaTopic {tname}: partitions must be at least 1")
    if "Cluster" not in by_kind:
        errors.append("no CloudNativePG Cluster rendered")

    for e in errors:
        print(f"  FAIL {name}: {e}")
    kinds = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_kind.items()))
    print(f"  {name}: {len(docs)} resources ({kinds}): {'ok' if not errors else str(len(errors)) + ' problems'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "manifests"))
