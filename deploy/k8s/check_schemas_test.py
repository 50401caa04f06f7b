#!/usr/bin/env python3
"""Shows that check_schemas.py catches what it is for: takes a rendered overlay (stdin) that passes, breaks one
object one way at a time (an unknown field, a wrong type, a missing required field, a value no enum allows, a kind
with no schema), and fails unless the check then fails with the expected message, naming the object and the
field. deploy/check.sh runs it on the dev overlay:

    kubectl kustomize deploy/k8s/overlays/dev | python3 deploy/k8s/check_schemas_test.py
"""
import copy
import os
import subprocess
import sys

import yaml

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_schemas.py")


def find(docs, kind, name):
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def scheduler(docs):
    return find(docs, "Deployment", "scheduler-service")


def scheduler_container(docs):
    return scheduler(docs)["spec"]["template"]["spec"]["containers"][0]


def an_unknown_kind(docs):
    docs.append({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "gpucloud-dev"}})


# (what, the edit, the words the check must then print)
CASES = [
    ("a misspelt container field",
     lambda docs: scheduler_container(docs).__setitem__("resourcez", {}),
     "Deployment gpucloud-dev/scheduler-service: spec.template.spec.containers[0].resourcez: unknown field"),
    ("replicas as a string",
     lambda docs: scheduler(docs)["spec"].__setitem__("replicas", "2"),
     'Deployment gpucloud-dev/scheduler-service: spec.replicas: must be number, is string "2"'),
    ("a port that is a list",
     lambda docs: scheduler_container(docs)["ports"][0].__setitem__("containerPort", [8081]),
     "spec.template.spec.containers[0].ports[0].containerPort: must be number, is array"),
    ("a container without its image's name",
     lambda docs: scheduler_container(docs).pop("name"),
     "Deployment gpucloud-dev/scheduler-service: spec.template.spec.containers[0].name: missing required field"),
    ("a KafkaUser rule with v1beta2's single operation",
     lambda docs: find(docs, "KafkaUser", "scheduler")["spec"]["authorization"]["acls"][0].__setitem__("operation", "Read"),
     "KafkaUser gpucloud-dev/scheduler: spec.authorization.acls[0].operation: unknown field"),
    ("a KafkaUser rule without operations",
     lambda docs: find(docs, "KafkaUser", "scheduler")["spec"]["authorization"]["acls"][0].pop("operations"),
     "KafkaUser gpucloud-dev/scheduler: spec.authorization.acls[0].operations: missing required field"),
    ("a listener authentication Strimzi does not know",
     lambda docs: find(docs, "Kafka", "gpucloud")["spec"]["kafka"]["listeners"][0]["authentication"].__setitem__("type", "scram-sha-256"),
     "Kafka gpucloud-dev/gpucloud: spec.kafka.listeners[0].authentication.type: must be one of"),
    ("a KafkaTopic at v1beta2",
     lambda docs: docs[[d["kind"] for d in docs].index("KafkaTopic")].__setitem__("apiVersion", "kafka.strimzi.io/v1beta2"),
     "no schema for apiVersion kafka.strimzi.io/v1beta2 kind KafkaTopic"),
    ("a ScheduledBackup with a misspelt field",
     lambda docs: find(docs, "ScheduledBackup", "gpucloud-db-nightly")["spec"].__setitem__("schedul", "@daily"),
     "ScheduledBackup gpucloud-dev/gpucloud-db-nightly: spec.schedul: unknown field"),
    ("a Certificate's dnsNames as one string",
     lambda docs: next(d for d in docs if d["kind"] == "Certificate" and d["spec"].get("dnsNames"))["spec"].__setitem__("dnsNames", "a.b"),
     "spec.dnsNames: must be array, is string"),
    ("a ClusterRoleBinding (no namespace) with an unknown field",
     lambda docs: next(d for d in docs if d["kind"] == "ClusterRoleBinding").__setitem__("rules", []),
     "ClusterRoleBinding gpucloud-dev-scheduler-issuer-discovery: rules: unknown field"),
    ("a kind no schema describes", an_unknown_kind,
     "Widget gpucloud-dev/w: no schema for apiVersion example.com/v1 kind Widget"),
]


def run(docs):
    return subprocess.run([sys.executable, CHECK, "dev"], input=yaml.safe_dump_all(docs), capture_output=True, text=True)


def main():
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    base = run(docs)
    if base.returncode != 0:
        print(base.stdout + base.stderr)
        print("  check_schemas_test: the overlay given must pass check_schemas.py first")
        return 1
    failures = 0
    for what, edit, words in CASES:
        broken = copy.deepcopy(docs)
        edit(broken)
        result = run(broken)
        if result.returncode == 0 or words not in result.stdout:
            failures += 1
            print(f"  FAIL check_schemas_test: {what}: expected a failure saying '{words}', got:\n{result.stdout}{result.stderr}")
    print(f"  check_schemas_test: {len(CASES) - failures} of {len(CASES)} schema errors caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
