#!/usr/bin/env python3
"""Shows that check_manifests.py catches what it is for: takes a rendered overlay (stdin) that passes,
breaks it one way at a time, as a careless edit would, and fails unless the check then fails with the
expected words. deploy/check.sh runs it on the dev overlay:

    kubectl kustomize deploy/k8s/overlays/dev | python3 deploy/k8s/check_manifests_test.py
"""
import copy
import os
import subprocess
import sys
import tempfile

import yaml

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_manifests.py")


def find(docs, kind, name=None):
    for d in docs:
        if d["kind"] == kind and (name is None or d["metadata"]["name"] == name or
                                  d["metadata"]["name"].startswith(name + "-") and kind == "Secret"):
            return d
    raise KeyError(f"{kind} {name}")


def container(docs, workload):
    kind = "DaemonSet" if workload == "node-agent" else "Deployment"
    return find(docs, kind, workload)["spec"]["template"]["spec"]["containers"][0]


def pod(docs, workload):
    kind = "DaemonSet" if workload == "node-agent" else "Deployment"
    return find(docs, kind, workload)["spec"]["template"]["spec"]


def volume_index(docs, workload, name):
    return next(i for i, v in enumerate(pod(docs, workload)["volumes"]) if v["name"] == name)


def env(docs, workload, name):
    return next(e for e in container(docs, workload)["env"] if e["name"] == name)


def set_env(docs, workload, name, value):
    """The workload's variable, now a plain value (whatever it was taken from before)."""
    e = env(docs, workload, name)
    e.clear()
    e.update(name=name, value=value)


def drop(items, pred):
    items[:] = [i for i in items if not pred(i)]


def policy(docs, name):
    return find(docs, "NetworkPolicy", name)["spec"]


def remove_doc(kind, name):
    return lambda docs: drop(docs, lambda d: d["kind"] == kind and d["metadata"]["name"] == name)


def set_config(key, value):
    return lambda docs: find(docs, "ConfigMap", "gpucloud-config")["data"].__setitem__(key, value)


# (what a careless edit does, the edit, words the check must print)
CASES = [
    ("a service is not scraped", remove_doc("ServiceMonitor", "metrics-service"),
     "Service metrics-service: no ServiceMonitor scrapes it"),
    ("billing's pods are scraped twice",
     lambda d: find(d, "ServiceMonitor", "billing-service")["spec"]["selector"].pop("matchExpressions"),
     "scrapes billing-service's pods more than once"),
    ("the scrape sends no token",
     lambda d: find(d, "ServiceMonitor", "node-agent")["spec"]["endpoints"][0].pop("authorization"),
     "ServiceMonitor node-agent scrape token: Secret None"),
    ("a workload has no wait for its Secrets", lambda d: pod(d, "metrics-service").pop("initContainers"),
     "no init container wait-for-secrets to wait for Secret metrics-service-tls"),
    ("a Certificate's Secret is a required volume",
     lambda d: pod(d, "billing-service")["volumes"][volume_index(d, "billing-service", "tls")]["secret"].pop("optional"),
     "Secret billing-service-tls must be an optional volume"),
    ("the wait does not look at the OIDC Secret",
     lambda d: drop(pod(d, "scheduler-service")["initContainers"][0]["volumeMounts"], lambda m: m["name"] == "oidc"),
     "wait-for-secrets must mount Secret gpucloud-oidc"),
    ("a scaled Deployment loses its PodDisruptionBudget", remove_doc("PodDisruptionBudget", "billing-service"),
     "Deployment billing-service: 1 replicas and no PodDisruptionBudget"),
    ("a scaled Deployment's replicas may share a node",
     lambda d: find(d, "Deployment", "scheduler-service")["spec"].update(replicas=2)
     or pod(d, "scheduler-service").pop("topologySpreadConstraints"),
     "Deployment scheduler-service: its replicas must spread over nodes"),
    ("a workload runs as root",
     lambda d: container(d, "billing-service")["securityContext"].update(runAsUser=0),
     "securityContext.runAsUser must be 185, is 0"),
    ("a workload's root filesystem is writable",
     lambda d: container(d, "node-agent")["securityContext"].pop("readOnlyRootFilesystem"),
     "securityContext.readOnlyRootFilesystem must be True"),
    ("a workload keeps its capabilities",
     lambda d: container(d, "scheduler-service")["securityContext"].pop("capabilities"),
     "securityContext.capabilities must drop ALL"),
    ("a workload has no /tmp of its own",
     lambda d: drop(container(d, "metrics-service")["volumeMounts"], lambda m: m["mountPath"] == "/tmp"),
     "/tmp must be an emptyDir it mounts"),
    ("a workload's KafkaUser is gone", remove_doc("KafkaUser", "billing"),
     "GPUCLOUD_KAFKA_USER (billing) must name a rendered KafkaUser"),
    ("a workload logs in with another's password",
     lambda d: env(d, "scheduler-service", "GPUCLOUD_KAFKA_PASSWORD")["valueFrom"]["secretKeyRef"].update(name="billing"),
     "GPUCLOUD_KAFKA_PASSWORD must come from Secret scheduler"),
    ("two workloads share a KafkaUser",
     lambda d: env(d, "metrics-service", "GPUCLOUD_KAFKA_USER").update(value="billing")
     or env(d, "metrics-service", "GPUCLOUD_KAFKA_PASSWORD")["valueFrom"]["secretKeyRef"].update(name="billing"),
     "KafkaUser billing is shared"),
    ("the bootstrap is the plaintext listener", set_config("KAFKA_BOOTSTRAP_SERVERS", "gpucloud-kafka-bootstrap:9092"),
     "must be gpucloud-kafka-bootstrap:9093"),
    ("Kafka without TLS and SASL", set_config("GPUCLOUD_KAFKA_SECURITY_PROTOCOL", "PLAINTEXT"),
     "GPUCLOUD_KAFKA_SECURITY_PROTOCOL must be SASL_SSL"),
    ("the cluster CA is not mounted",
     lambda d: drop(container(d, "node-agent")["volumeMounts"], lambda m: m["name"] == "kafka-ca"),
     "GPUCLOUD_KAFKA_TRUSTSTORE=/etc/gpucloud/kafka-ca/ca.crt is not in a Secret it mounts"),
    ("a KafkaUser without ACLs",
     lambda d: find(d, "KafkaUser", "billing")["spec"].pop("authorization"),
     "KafkaUser billing: authorization must be simple"),
    ("a Certificate's Secret renamed, the pod not",
     lambda d: find(d, "Certificate", "metrics-service")["spec"].update(secretName="metrics-tls"),
     "does not serve it"),
    ("the keystore is not mounted",
     lambda d: drop(container(d, "billing-service")["volumeMounts"], lambda m: m["name"] == "tls"),
     "GPUCLOUD_TLS_KEYSTORE=/etc/gpucloud/tls/keystore.p12 is not in a Secret it mounts"),
    ("the keystore's password from the wrong key",
     lambda d: env(d, "scheduler-service", "GPUCLOUD_TLS_KEYSTORE_PASSWORD")["valueFrom"]["secretKeyRef"].update(key="pasword"),
     "has no key pasword"),
    ("a probe over plaintext",
     lambda d: container(d, "billing-service")["readinessProbe"]["httpGet"].pop("scheme"),
     "readinessProbe must use scheme HTTPS"),
    ("the tls profile off", set_config("QUARKUS_PROFILE", "prod"), "speaks plaintext"),
    ("a Certificate for the wrong namespace",
     lambda d: find(d, "Certificate", "node-agent")["spec"]["dnsNames"].__setitem__(1, "node-agent.elsewhere"),
     "Certificate node-agent: dnsNames must be"),
    ("a keystore Java cannot read",
     lambda d: find(d, "Certificate", "scheduler-service")["spec"]["keystores"]["pkcs12"].pop("profile"),
     "Modern2023"),
    ("a Service still pointing at the old port name",
     lambda d: find(d, "Service", "metrics-service")["spec"]["ports"][0].update(targetPort="http"),
     "targetPort http is not a port of metrics-service"),
    ("CloudNativePG names a Secret by its unhashed name",
     lambda d: find(d, "Cluster", "gpucloud-db")["spec"]["managed"]["roles"][1]["passwordSecret"].update(name="gpucloud-db-billing"),
     "Secret gpucloud-db-billing is neither rendered nor made"),
    ("two services share a database role",
     lambda d: [env(d, "billing-service", k)["valueFrom"]["secretKeyRef"].update(
         name=find(d, "Secret", "gpucloud-db-scheduler")["metadata"]["name"]) for k in ("GPUCLOUD_DB_USER", "GPUCLOUD_DB_PASSWORD")],
     "database role gpucloud_scheduler is shared"),
    ("the database certificate unchecked", set_config("GPUCLOUD_DB_SSL_MODE", "require"),
     "GPUCLOUD_DB_SSL_MODE must be verify-full"),
    ("PostgreSQL takes plaintext", lambda d: find(d, "Cluster", "gpucloud-db")["spec"]["postgresql"].pop("pg_hba"),
     "pg_hba must begin with `hostnossl all all all reject`"),
    ("the OIDC provider in the ConfigMap", set_config("GPUCLOUD_OIDC_URL", "https://issuer.example"),
     "GPUCLOUD_OIDC_URL belongs in a Secret"),
    ("no default deny", remove_doc("NetworkPolicy", "default-deny"), "no default deny"),
    ("a workload no policy selects", remove_doc("NetworkPolicy", "node-agent"),
     "DaemonSet node-agent: no NetworkPolicy admits its port 8084"),
    ("the node agent may reach PostgreSQL",
     lambda d: policy(d, "node-agent")["egress"].append(
         {"to": [{"podSelector": {"matchLabels": {"cnpg.io/cluster": "gpucloud-db"}}}], "ports": [{"protocol": "TCP", "port": 5432}]}),
     "DaemonSet node-agent: NetworkPolicy node-agent lets it reach"),
    ("the node agent may reach anything", lambda d: policy(d, "node-agent")["egress"].append({}),
     "lets it reach every destination"),
    ("metrics-service open to every source", lambda d: policy(d, "metrics-service")["ingress"][0].pop("from"),
     "admits every source"),
    ("a port no policy admits",
     lambda d: policy(d, "billing-service")["ingress"][0]["ports"][0].update(port=8080),
     "no NetworkPolicy admits its port 8082"),
    ("the brokers do not admit a workload",
     lambda d: drop(policy(d, "kafka-cluster")["ingress"], lambda r: any("matchExpressions" in p.get("podSelector", {}) for p in r.get("from", []))),
     "no NetworkPolicy lets it into the Kafka brokers' pods"),
    ("no DNS", remove_doc("NetworkPolicy", "dns"), "reach DNS on UDP 53"),
    ("the brokers cut off from each other", remove_doc("NetworkPolicy", "kafka-cluster"),
     "the Kafka brokers' pods cannot reach each other"),
    ("the agents' token for another audience",
     lambda d: pod(d, "node-agent")["volumes"].__getitem__(volume_index(d, "node-agent", "enrolment-token"))
     ["projected"]["sources"][0]["serviceAccountToken"].update(audience="gpucloud"),
     "its enrolment token's audience gpucloud is not the one scheduler-service accepts"),
    ("a day-long enrolment token",
     lambda d: pod(d, "node-agent")["volumes"].__getitem__(volume_index(d, "node-agent", "enrolment-token"))
     ["projected"]["sources"][0]["serviceAccountToken"].update(expirationSeconds=86400),
     "must live at most an hour"),
    ("the credential on the node's disk",
     lambda d: env(d, "node-agent", "GPUCLOUD_ENROLMENT_CREDENTIAL").update(value="/var/lib/gpucloud/spool/credential"),
     "must be in an emptyDir it mounts"),
    ("billing takes agents' records unsigned",
     lambda d: drop(container(d, "billing-service")["env"], lambda e: e["name"] == "GPUCLOUD_ENROLMENT_KEY"),
     "billing-service: reads the agents' records but has no GPUCLOUD_ENROLMENT_KEY"),
    ("the agents run as the namespace's default service account",
     lambda d: pod(d, "node-agent").pop("serviceAccountName"),
     "runs as service account default, but scheduler-service enrols node-agent"),
    ("the agents enrol at a service that does not mint",
     lambda d: env(d, "node-agent", "GPUCLOUD_ENROLMENT_URL").update(value="https://billing-service:8082/enrolment"),
     "GPUCLOUD_ENROLMENT_URL names billing-service, not the Service of a workload that enrols agents"),
    ("the enrolment over plaintext",
     lambda d: env(d, "node-agent", "GPUCLOUD_ENROLMENT_URL").update(value="http://scheduler-service:8081/enrolment"),
     "GPUCLOUD_ENROLMENT_URL must be https://"),
    ("the agents cannot reach the scheduler",
     lambda d: drop(policy(d, "node-agent")["egress"], lambda r: any(
         p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") == "scheduler-service"
         for p in r.get("to", []))),
     "no NetworkPolicy lets it reach the scheduler's enrolment"),
    ("the scheduler reads the issuer without a token of its own",
     lambda d: pod(d, "scheduler-service").update(automountServiceAccountToken=False),
     "GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER_TOKEN_FILE must be its service account's own file"),
    ("the agents share one Kafka login again",
     lambda d: container(d, "node-agent")["env"].extend([
         {"name": "GPUCLOUD_KAFKA_USER", "value": "scheduler"},
         {"name": "GPUCLOUD_KAFKA_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "scheduler", "key": "password"}}}]),
     "GPUCLOUD_KAFKA_USER is set, but an agent that enrols logs in as the KafkaUser the scheduler makes for its node"),
    ("the scheduler makes no KafkaUsers for the agents",
     lambda d: drop(container(d, "scheduler-service")["env"], lambda e: e["name"] == "GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE"),
     "reaches the broker with the login its enrolment answers, but scheduler-service makes no KafkaUsers"),
    ("the scheduler makes the agents' users in another cluster than they reach",
     lambda d: env(d, "scheduler-service", "GPUCLOUD_ENROLMENT_KAFKA_USERS_CLUSTER").update(value="other"),
     "KAFKA_BOOTSTRAP_SERVERS gpucloud-kafka-bootstrap:9093 must be other-kafka-bootstrap:9093"),
    ("the scheduler's Role for the KafkaUsers is gone", remove_doc("Role", "scheduler-kafka-users"),
     "no Role bound to its service account scheduler-service lets it create kafkausers.kafka.strimzi.io"),
    ("the Role is bound to another service account",
     lambda d: find(d, "RoleBinding", "scheduler-kafka-users")["subjects"][0].update(name="billing-service"),
     "no Role bound to its service account scheduler-service lets it get secrets"),
    ("the Role forgets the secrets",
     lambda d: drop(find(d, "Role", "scheduler-kafka-users")["rules"], lambda r: "secrets" in r["resources"]),
     "no Role bound to its service account scheduler-service lets it create secrets"),
    ("the Role lets the scheduler list and delete",
     lambda d: find(d, "Role", "scheduler-kafka-users")["rules"][1]["verbs"].extend(["list", "delete"]),
     "Role scheduler-kafka-users: grants scheduler-service more than create and get"),
    ("the Role grants every resource",
     lambda d: find(d, "Role", "scheduler-kafka-users")["rules"][0].update(resources=["*"]),
     "Role scheduler-kafka-users: grants scheduler-service more than create and get"),
    ("the KafkaUsers' rights become cluster-wide",
     lambda d: d.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": "scheduler-kafka-users"},
                         "rules": find(d, "Role", "scheduler-kafka-users")["rules"]})
     or find(d, "RoleBinding", "scheduler-kafka-users")["roleRef"].update(kind="ClusterRole"),
     "the KafkaUsers' rights must be a Role of its namespace"),
    ("the agents get a token for the Kubernetes API",
     lambda d: pod(d, "node-agent").pop("automountServiceAccountToken")
     or find(d, "ServiceAccount", "node-agent").pop("automountServiceAccountToken"),
     "mounts a token for the Kubernetes API it does not use"),
]


# Secrets made out of band (overlays/prod): the dev overlay without its rendered OIDC Secret (with it, for the
# last case), and a list of what is made out of band that is wrong in one way each.
OUT_OF_BAND_CASES = [
    ("a key the workloads read is not listed", "gpucloud-oidc: [url]\n", "Secret gpucloud-oidc has no key audience"),
    ("the list is not a map of names to keys", "- gpucloud-oidc\n", "must map each Secret's name to the list of its keys"),
    ("a rendered Secret is listed too", "gpucloud-oidc: [url, audience]\n", "is rendered and also listed"),
]


def external_db(docs):
    """The dev overlay as components/external-postgres makes it: no CloudNativePG, the database's address and CA
    from Secret gpucloud-db-external (rendered here, as dev renders its placeholders), egress to it by ipBlock."""
    drop(docs, lambda d: (d["kind"], d["metadata"]["name"]) in {("Cluster", "gpucloud-db"),
         ("ScheduledBackup", "gpucloud-db-nightly"), ("NetworkPolicy", "postgres-cluster")})
    namespace = find(docs, "Deployment", "scheduler-service")["metadata"]["namespace"]
    docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gpucloud-db-external", "namespace": namespace},
                 "stringData": {"host": "db.example.net", "port": "5432", "ca.crt": "-----BEGIN CERTIFICATE-----"}})
    data = find(docs, "ConfigMap", "gpucloud-config")["data"]
    data.pop("PGHOST")
    data.pop("PGPORT")
    for workload in ("scheduler-service", "billing-service"):
        for key, skey in (("PGHOST", "host"), ("PGPORT", "port")):
            container(docs, workload)["env"].append(
                {"name": key, "valueFrom": {"secretKeyRef": {"name": "gpucloud-db-external", "key": skey}}})
        pod(docs, workload)["volumes"][volume_index(docs, workload, "db-ca")]["secret"]["secretName"] = "gpucloud-db-external"
        policy(docs, workload)["egress"][1]["to"] = [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
    return docs


# A database gpucloud does not run: the dev overlay in external_db's form, broken one way at a time.
EXTERNAL_DB_CASES = [
    ("the external database's port from elsewhere than its address",
     lambda d: env(d, "billing-service", "PGPORT")["valueFrom"]["secretKeyRef"].update(name="gpucloud-db-billing", key="username"),
     "PGPORT must come from Secret gpucloud-db-external, as PGHOST does"),
    ("the external database's CA from another Secret",
     lambda d: pod(d, "scheduler-service")["volumes"][volume_index(d, "scheduler-service", "db-ca")]["secret"].update(secretName="gpucloud-db-scheduler", items=[{"key": "password", "path": "ca.crt"}]),
     "GPUCLOUD_DB_CA must come from Secret gpucloud-db-external"),
    ("no egress to the external database",
     lambda d: policy(d, "billing-service")["egress"].pop(1),
     "no NetworkPolicy lets it reach its database outside the cluster (5432)"),
    ("the CloudNativePG Cluster left in, used by nobody",
     lambda d: d.append({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "gpucloud-db"},
                         "spec": {"postgresql": {"pg_hba": ["hostnossl all all all reject"]}, "backup": {}}}),
     "Cluster gpucloud-db: no workload uses it"),
    ("the external database without TLS",
     lambda d: container(d, "scheduler-service")["env"].append({"name": "GPUCLOUD_DB_SSL_MODE", "value": "disable"}),
     "GPUCLOUD_DB_SSL_MODE must be verify-full"),
]


KAFKA_WORKLOADS = ("scheduler-service", "billing-service", "metrics-service", "node-agent")
STRIMZI_KINDS = {"Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser"}


def external_kafka(docs):
    """The dev overlay as components/external-kafka makes it: nothing of Strimzi's, the brokers' address and CA from
    Secret gpucloud-kafka-external and each login's password from its Secret (rendered here, as dev renders its
    placeholders), the agents as node-agents, egress to the brokers by ipBlock."""
    drop(docs, lambda d: d["kind"] in STRIMZI_KINDS or (d["kind"], d["metadata"]["name"]) in {
         ("NetworkPolicy", "kafka-cluster"), ("Role", "scheduler-kafka-users"), ("RoleBinding", "scheduler-kafka-users")})
    namespace = find(docs, "Deployment", "scheduler-service")["metadata"]["namespace"]
    secrets = {"gpucloud-kafka-external": {"bootstrap": "kafka.example.net:9093", "ca.crt": "-----BEGIN CERTIFICATE-----"}}
    secrets.update({user: {"password": "p" * 32} for user in ("scheduler", "billing", "metrics", "node-agents")})
    for name, data in secrets.items():
        docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
                     "stringData": data})
    find(docs, "ConfigMap", "gpucloud-config")["data"].pop("KAFKA_BOOTSTRAP_SERVERS")
    for workload in KAFKA_WORKLOADS:
        container(docs, workload)["env"].append({"name": "KAFKA_BOOTSTRAP_SERVERS", "valueFrom": {
            "secretKeyRef": {"name": "gpucloud-kafka-external", "key": "bootstrap"}}})
        pod(docs, workload)["volumes"][volume_index(docs, workload, "kafka-ca")]["secret"]["secretName"] = "gpucloud-kafka-external"
        policy(docs, workload)["egress"][0]["to"] = [{"ipBlock": {"cidr": "0.0.0.0/0"}}]
    drop(container(docs, "scheduler-service")["env"], lambda e: e["name"].startswith("GPUCLOUD_ENROLMENT_KAFKA_USERS_"))
    container(docs, "node-agent")["env"] += [{"name": "GPUCLOUD_KAFKA_USER", "value": "node-agents"}, {
        "name": "GPUCLOUD_KAFKA_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "node-agents", "key": "password"}}}]
    return docs


# A broker gpucloud does not run: the dev overlay in external_kafka's form, broken one way at a time.
EXTERNAL_KAFKA_CASES = [
    ("an agent with a login of its own name",
     lambda d: env(d, "node-agent", "GPUCLOUD_KAFKA_USER").update(value="agent-gpu-1"),
     "but every agent logs in as node-agents"),
    ("a service logging in as the agents",
     lambda d: (env(d, "metrics-service", "GPUCLOUD_KAFKA_USER").update(value="node-agents"),
                env(d, "metrics-service", "GPUCLOUD_KAFKA_PASSWORD")["valueFrom"]["secretKeyRef"].update(name="node-agents")),
     "GPUCLOUD_KAFKA_USER node-agents is the node agents' login, not a service's"),
    ("a password from another login's Secret",
     lambda d: env(d, "billing-service", "GPUCLOUD_KAFKA_PASSWORD")["valueFrom"]["secretKeyRef"].update(name="scheduler"),
     "GPUCLOUD_KAFKA_PASSWORD must come from Secret billing key password"),
    ("the brokers' CA from another Secret",
     lambda d: pod(d, "node-agent")["volumes"][volume_index(d, "node-agent", "kafka-ca")]["secret"].update(secretName="scheduler", items=[{"key": "password", "path": "ca.crt"}]),
     "GPUCLOUD_KAFKA_TRUSTSTORE must come from Secret gpucloud-kafka-external"),
    ("no egress to the broker",
     lambda d: policy(d, "metrics-service")["egress"].pop(0),
     "no NetworkPolicy lets it reach its broker outside the cluster (9093)"),
    ("one service still on Strimzi's brokers",
     lambda d: set_env(d, "billing-service", "KAFKA_BOOTSTRAP_SERVERS", "gpucloud-kafka-bootstrap:9093"),
     "reach Strimzi's brokers, the rest a broker gpucloud does not run"),
    ("a KafkaUser left in",
     lambda d: d.append({"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaUser", "metadata": {"name": "billing", "labels": {"strimzi.io/cluster": "gpucloud"}},
                         "spec": {"authentication": {"type": "scram-sha-512"}, "authorization": {"type": "simple", "acls": [{}]}}}),
     "KafkaUser billing: rendered, but every workload reaches a broker gpucloud does not run"),
    ("the scheduler still making KafkaUsers",
     lambda d: container(d, "scheduler-service")["env"].append({"name": "GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE", "value": "$(POD_NAMESPACE)"}),
     "makes a KafkaUser for each agent it enrols"),
    ("the scheduler's right to make KafkaUsers left in",
     lambda d: d.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "scheduler-kafka-users"},
                         "rules": [{"apiGroups": ["kafka.strimzi.io"], "resources": ["kafkausers"], "verbs": ["create", "get"]}]}),
     "Role scheduler-kafka-users: grants rights on KafkaUsers"),
]


def run(docs, out_of_band=None):
    """Runs check_manifests.py on docs, with the out-of-band list's text (written to a file) when given."""
    text = yaml.safe_dump_all(docs, sort_keys=False)
    args = [sys.executable, CHECK, "test"]
    if out_of_band is not None:
        path = os.path.join(tempfile.mkdtemp(), "secrets-made-out-of-band.yaml")
        with open(path, "w") as f:
            f.write(out_of_band)
        args.append(path)
    return subprocess.run(args, input=text, capture_output=True, text=True)


def uncaught(docs, cases):
    """How many of cases (what, edit, words), each applied to a copy of docs, check_manifests.py lets through or
    fails without saying words; prints each."""
    missed = 0
    for what, edit, words in cases:
        broken = copy.deepcopy(docs)
        edit(broken)
        result = run(broken)
        if result.returncode == 0 or words not in result.stdout:
            missed += 1
            print(f"  FAIL check_manifests_test: {what}: expected a failure saying '{words}', got:\n{result.stdout}{result.stderr}")
    return missed


def main():
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    base = run(docs)
    if base.returncode != 0:
        print(base.stdout)
        print("  check_manifests_test: the overlay given must pass check_manifests.py first")
        return 1
    failures = uncaught(docs, CASES)
    without_oidc = [d for d in docs if not (d["kind"] == "Secret" and d["metadata"]["name"].startswith("gpucloud-oidc-"))]
    oidc_name = next(d["metadata"]["name"] for d in docs if d["kind"] == "Secret" and d["metadata"]["name"].startswith("gpucloud-oidc-"))
    for what, listed, words in OUT_OF_BAND_CASES:
        result = run(docs if "rendered" in what else without_oidc, listed.replace("gpucloud-oidc", oidc_name))
        if result.returncode == 0 or words.replace("gpucloud-oidc", oidc_name) not in result.stdout:
            failures += 1
            print(f"  FAIL check_manifests_test: {what}: expected a failure saying '{words}', got:\n{result.stdout}{result.stderr}")
    if run(without_oidc, f"{oidc_name}: [url, audience]\n").returncode != 0:
        failures += 1
        print("  FAIL check_manifests_test: the OIDC Secret listed as made out of band must pass")
    total = len(CASES) + len(OUT_OF_BAND_CASES) + 1
    for what, made, cases in (("a database", external_db, EXTERNAL_DB_CASES), ("a broker", external_kafka, EXTERNAL_KAFKA_CASES)):
        # the overlay with what gpucloud does not run must pass, and then fail each careless edit of it
        elsewhere = made(copy.deepcopy(docs))
        result = run(elsewhere)
        if result.returncode != 0:
            failures += 1
            print(f"  FAIL check_manifests_test: the overlay with {what} gpucloud does not run must pass:\n{result.stdout}")
        failures += uncaught(elsewhere, cases)
        total += 1 + len(cases)
    print(f"  check_manifests_test: {total - failures} of {total} careless edits caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
