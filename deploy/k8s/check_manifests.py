#!/usr/bin/env python3
"""Checks rendered manifests (kubectl kustomize output on stdin) for the mistakes a schema check would not
catch, without a cluster: what the objects mean together (references, TLS, logins, NetworkPolicies). Whether
each object is well formed (no unknown field, right types, required fields) is check_schemas.py's part, against
the schemas vendored in deploy/schemas; deploy/check.sh runs both.

    kubectl kustomize deploy/k8s/overlays/dev | python3 deploy/k8s/check_manifests.py dev
    kubectl kustomize deploy/k8s/overlays/prod | python3 deploy/k8s/check_manifests.py prod \
        deploy/k8s/overlays/prod/secrets-made-out-of-band.yaml

The optional second argument lists Secrets made out of band (name: [keys]): they count as existing with
those keys, and their values (never rendered) are not checked.

Checks:
  structure: every document has apiVersion, kind and metadata.name; each Deployment and DaemonSet
    selects its own pod template, probes /q/health/live and /q/health/ready on a declared port, and sets
    memory requests and limits, and runs restricted (uid and gid 185, non-root, read-only root filesystem, no
    privilege escalation, every capability dropped, /tmp an emptyDir); each Service, PDB and HPA points at a rendered workload; a Deployment of several replicas (or with an
    HPA) has a PDB and spreads over nodes; and a Service's
    targetPort is a port its workload declares; every KafkaTopic names its Strimzi cluster and has partitions.
  references: every Secret and ConfigMap a workload names (env, envFrom, volumes) or a custom resource
    names (a Certificate's keystore password, an Issuer's CA, CloudNativePG's role secrets) exists, with the
    key asked for: rendered, or made by an operator from a rendered resource (Strimzi: a Secret per
    KafkaUser and the cluster CA's; cert-manager: each Certificate's; CloudNativePG: the cluster's CA);
    no generated Secret value ends in a newline; no ConfigMap holds a password or the OIDC provider.
  TLS (docs/security.md, "Kubernetes"): every workload runs the `tls` profile; its probes use HTTPS on
    QUARKUS_HTTP_SSL_PORT, a declared port; GPUCLOUD_TLS_KEYSTORE is keystore.p12 of the Certificate that
    names the workload's Service (name, name.NS, name.NS.svc, name.NS.svc.cluster.local), mounted, with that
    Certificate's keystore password; every Certificate is mounted by the workload its Service selects, and
    its issuer is rendered (or a ClusterIssuer).
  Kafka: every workload that reaches the broker logs in over SASL_SSL on the TLS listener (9093) as a
    rendered KafkaUser (scram-sha-512, simple authorization), with the password from that user's Secret,
    trusting the cluster CA it mounts; no two workloads share a user. A node agent that enrols has no login
    in its manifest (no GPUCLOUD_KAFKA_USER or _PASSWORD): the workload it enrols at makes its KafkaUser
    (GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE its own namespace; the agent reaches that cluster's listener and
    trusts its CA) through a Role bound to its service account that grants create and get on
    kafkausers.kafka.strimzi.io and secrets, and nothing more (no other verb, resource or ClusterRole).
  PostgreSQL: every workload that has a database logs in as a role of its own, from a basic-auth Secret
    whose username is a role the Cluster manages, with verify-full TLS against the mounted CloudNativePG CA;
    the Cluster refuses plaintext (hostnossl reject) and its roles are not superusers; it backs up to an object
    store whose credentials Secret exists with the keys named, and a ScheduledBackup takes its base backups.
    A database gpucloud does not run (components/external-postgres): PGHOST, PGPORT and the CA come from one
    Secret (made out of band), TLS is still verify-full, no Cluster is rendered that nothing uses, and the
    workload's NetworkPolicy lets it reach port 5432 outside the cluster (an ipBlock).
  A broker gpucloud does not run (components/external-kafka): every workload takes the brokers' address and CA
    from one Secret (made out of band) and logs in as its own login from the Secret of that name, every node agent
    as node-agents; the scheduler makes no KafkaUsers and may not; nothing of Strimzi's is rendered (no Kafka,
    KafkaNodePool, KafkaTopic, KafkaUser); no workload reaches Strimzi's brokers while others go elsewhere; each
    workload's NetworkPolicy lets it reach port 9093 outside the cluster (an ipBlock).
  OIDC: GPUCLOUD_OIDC_URL comes from a Secret.
  Prometheus Operator: every ServiceMonitor selects rendered Services, each scraped once (every non-headless
    Service of a workload is), over https at /q/metrics on a port of the Service, with a CA and a scrape token
    from Secrets that exist with those keys.
  Missing Secrets: the OIDC Secret and every Certificate's Secret a workload mounts are optional volumes that
    its init container wait-for-secrets mounts and waits for, so that the pod waits, not ready, with a log
    that names the Secret, instead of failing without saying why.
  Enrolment (docs/security.md, "Enrolment on Kubernetes"): every workload that reads agents' records (a
    Deployment with a KafkaUser) mounts the enrolment key from one Secret, the same for all; a node agent with
    GPUCLOUD_ENROLMENT_URL posts to a rendered Service whose workload serves enrolment (an issuer set, the key
    mounted, its own service account's token and CA for the issuer), sends a projected serviceAccountToken of that
    workload's audience living at most an hour, runs as the service account the subject names (which exists, and
    mounts no API token), checks the scheduler against a CA it mounts, and keeps its credential in an emptyDir.
  NetworkPolicies: a default deny of ingress and egress for every pod of the namespace; every workload
    is selected by a policy that admits each of its ports, and by nothing that admits another; only the
    API's front doors (scheduler, billing) take traffic from anywhere; each workload's egress is exactly
    what it uses (DNS; the brokers if it has a KafkaUser; PostgreSQL if it has a role; 443 if it has an OIDC
    provider; the API server, 443 and 6443, if it verifies enrolment tokens; the scheduler's port if it enrols),
    and the brokers' and PostgreSQL's pods admit it there; those pods may reach each other.
"""
import base64
import sys
from urllib.parse import urlparse

import yaml

# The API's front doors: the only workloads anything may reach (users' clients, ingress controllers).
FRONT_DOORS = {"scheduler-service", "billing-service"}
# The TLS listener Strimzi's clients use (docs/security.md, "Kubernetes"), and the port components/external-kafka
# lets the workloads reach outside the cluster.
KAFKA_TLS_PORT = 9093
# The node agents' one login on a broker gpucloud does not run (contracts KafkaAccess.SHARED_AGENTS).
SHARED_AGENTS = "node-agents"
PROBES = ("startupProbe", "livenessProbe", "readinessProbe")


# What every container runs with (docs/security.md, "Kubernetes"), pod and container securityContext merged.
RESTRICTED = {"runAsNonRoot": True, "runAsUser": 185, "runAsGroup": 185, "readOnlyRootFilesystem": True,
              "allowPrivilegeEscalation": False}


def labels_match(selector, labels):
    """A Kubernetes label selector (matchLabels and matchExpressions) against a set of labels."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        op, key, values = e["operator"], e["key"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def main(name, out_of_band_file=None):
    """Prints the overlay's errors and returns 1 when there are any, 0 when its manifests pass every check."""
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
    config_maps = by_kind.get("ConfigMap", {})
    workloads = {**by_kind.get("Deployment", {}), **by_kind.get("DaemonSet", {})}
    services = by_kind.get("Service", {})
    certificates = by_kind.get("Certificate", {})
    kafka_users = by_kind.get("KafkaUser", {})
    pg_clusters = by_kind.get("Cluster", {})
    policies = by_kind.get("NetworkPolicy", {})
    namespaces = {w["metadata"].get("namespace") for w in workloads.values()}
    namespace = next(iter(namespaces)) if len(namespaces) == 1 else None

    # ---- Secrets: rendered, or made by an operator from something rendered; name -> keys (None: any)
    secrets = {}
    secret_values = {}
    for sname, s in by_kind.get("Secret", {}).items():
        values = {k: base64.b64decode(v).decode("utf-8", "replace") for k, v in (s.get("data") or {}).items()}
        values.update(s.get("stringData") or {})
        secrets[sname] = set(values)
        secret_values[sname] = values
        for k, v in values.items():
            if v.endswith("\n"):
                errors.append(f"Secret {sname}: {k} ends in a newline (read from a file? use an env file, KEY=VALUE)")
    made_by = {}
    out_of_band = set()
    if out_of_band_file:
        with open(out_of_band_file) as f:
            listed = yaml.safe_load(f) or {}
        if not isinstance(listed, dict) or not all(isinstance(k, list) for k in listed.values()):
            errors.append(f"{out_of_band_file}: must map each Secret's name to the list of its keys")
            listed = {}
        for sname, keys in listed.items():
            if sname in secrets:
                errors.append(f"Secret {sname} is rendered and also listed in {out_of_band_file} as made out of band")
            secrets[sname] = set(keys)
            made_by[sname] = "the cluster's operator, out of band"
            out_of_band.add(sname)
    kafka_clusters = set()
    for uname, u in kafka_users.items():
        secrets[uname] = {"password", "sasl.jaas.config"}
        made_by[uname] = f"KafkaUser {uname}"
        kafka_clusters.add(u["metadata"].get("labels", {}).get("strimzi.io/cluster"))
    for t in by_kind.get("KafkaTopic", {}).values():
        kafka_clusters.add(t["metadata"].get("labels", {}).get("strimzi.io/cluster"))
    for c in kafka_clusters - {None}:
        secrets[f"{c}-cluster-ca-cert"] = {"ca.crt", "ca.p12", "ca.password"}
        made_by[f"{c}-cluster-ca-cert"] = f"Strimzi's Kafka cluster {c}"
    for cname, c in certificates.items():
        keys = {"tls.crt", "tls.key", "ca.crt"}
        pkcs12 = c["spec"].get("keystores", {}).get("pkcs12", {})
        if pkcs12.get("create"):
            keys |= {"keystore.p12", "truststore.p12"}
        secrets[c["spec"]["secretName"]] = keys
        made_by[c["spec"]["secretName"]] = f"Certificate {cname}"
    for pname in pg_clusters:
        secrets[f"{pname}-ca"] = {"ca.crt", "ca.key"}
        made_by[f"{pname}-ca"] = f"CloudNativePG's cluster {pname}"

    def secret_ref(where, sname, key=None):
        if sname not in secrets:
            errors.append(f"{where}: Secret {sname} is neither rendered nor made by an operator from a rendered resource")
        elif key is not None and key not in secrets[sname]:
            errors.append(f"{where}: Secret {sname} has no key {key} (it has {', '.join(sorted(secrets[sname]))})")

    def config_map_ref(where, cname, key=None):
        if cname not in config_maps:
            errors.append(f"{where}: ConfigMap {cname} is not rendered")
        elif key is not None and key not in (config_maps[cname].get("data") or {}):
            errors.append(f"{where}: ConfigMap {cname} has no key {key}")

    for cname, c in config_maps.items():
        for key in c.get("data") or {}:
            if "PASSWORD" in key.upper() or key == "GPUCLOUD_OIDC_URL":
                errors.append(f"ConfigMap {cname}: {key} belongs in a Secret")

    # ---- workloads: structure, references, and what each uses
    uses = {}  # workload -> {"kafka_user", "db_user", "db_cluster", "kafka_cluster", "oidc", "ports"}
    def waits_for(where, pod, sname):
        """A Secret the service cannot start without: an optional volume wait-for-secrets mounts and names."""
        init = next((c for c in pod.get("initContainers", []) if c["name"] == "wait-for-secrets"), None)
        vols = [v for v in pod.get("volumes", []) if v.get("secret", {}).get("secretName") == sname]
        if init is None:
            errors.append(f"{where}: no init container wait-for-secrets to wait for Secret {sname}, naming it")
            return
        if not vols or not vols[0]["secret"].get("optional"):
            errors.append(f"{where}: Secret {sname} must be an optional volume (else the pod never starts to say it is missing)")
            return
        paths = [m["mountPath"] for m in init.get("volumeMounts", []) if m["name"] == vols[0]["name"]]
        script = " ".join(init.get("command", []) + init.get("args", []))
        if not paths or paths[0] not in script:
            errors.append(f"{where}: wait-for-secrets must mount Secret {sname} and wait for its file, naming it")

    for wname, w in workloads.items():
        where = f"{w['kind']} {wname}"
        spec = w["spec"]
        pod = spec["template"]["spec"]
        template_labels = spec["template"]["metadata"].get("labels", {})
        for k, v in spec["selector"]["matchLabels"].items():
            if template_labels.get(k) != v:
                errors.append(f"{where}: selector {k}={v} does not match its pod template")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for vname, v in volumes.items():
            if "secret" in v:
                for item in v["secret"].get("items", []):
                    secret_ref(f"{where} volume {vname}", v["secret"]["secretName"], item["key"])
                if not v["secret"].get("items"):
                    secret_ref(f"{where} volume {vname}", v["secret"]["secretName"])
            if "configMap" in v:
                config_map_ref(f"{where} volume {vname}", v["configMap"]["name"])
            if "secret" in v and made_by.get(v["secret"]["secretName"], "").startswith("Certificate "):
                waits_for(where, pod, v["secret"]["secretName"])
        use = uses.setdefault(wname, {"ports": set()})
        for c in pod["containers"]:
            cwhere = f"{where}/{c['name']}"
            ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
            use["ports"] |= set(ports.values())
            for probe, path in (("livenessProbe", "/q/health/live"), ("readinessProbe", "/q/health/ready")):
                get = c.get(probe, {}).get("httpGet", {})
                if get.get("path") != path:
                    errors.append(f"{cwhere}: {probe} must GET {path}, has {get.get('path')}")
                elif get.get("port") not in ports and get.get("port") not in ports.values():
                    errors.append(f"{cwhere}: {probe} port {get.get('port')} is not a declared port")
            res = c.get("resources", {})
            if "memory" not in res.get("requests", {}) or "memory" not in res.get("limits", {}):
                errors.append(f"{cwhere}: memory request and limit required")
            # restricted: the images' uid 185, never root, read-only root, nothing to escalate to; /tmp its own
            sc = {**pod.get("securityContext", {}), **c.get("securityContext", {})}
            for field, wanted in RESTRICTED.items():
                if sc.get(field) != wanted:
                    errors.append(f"{cwhere}: securityContext.{field} must be {wanted}, is {sc.get(field)}")
            if "ALL" not in sc.get("capabilities", {}).get("drop", []):
                errors.append(f"{cwhere}: securityContext.capabilities must drop ALL")
            tmp = [m["name"] for m in c.get("volumeMounts", []) if m.get("mountPath") == "/tmp"]
            if not tmp or "emptyDir" not in volumes.get(tmp[0], {}):
                errors.append(f"{cwhere}: /tmp must be an emptyDir it mounts (its root filesystem is read-only)")

            # the environment the container sees: ConfigMaps first, then env
            env = {}
            for ref in c.get("envFrom", []):
                if "configMapRef" in ref:
                    cm = ref["configMapRef"]["name"]
                    config_map_ref(cwhere, cm)
                    for k, v in (config_maps.get(cm, {}).get("data") or {}).items():
                        env[k] = ("value", str(v), f"ConfigMap {cm}")
                if "secretRef" in ref:
                    secret_ref(cwhere, ref["secretRef"]["name"])
                    for k in secrets.get(ref["secretRef"]["name"], set()):
                        env[k] = ("secret", ref["secretRef"]["name"], k)
            for e in c.get("env", []):
                value_from = e.get("valueFrom", {})
                if "secretKeyRef" in value_from:
                    r = value_from["secretKeyRef"]
                    secret_ref(f"{cwhere} env {e['name']}", r["name"], r["key"])
                    env[e["name"]] = ("secret", r["name"], r["key"])
                elif "configMapKeyRef" in value_from:
                    r = value_from["configMapKeyRef"]
                    config_map_ref(f"{cwhere} env {e['name']}", r["name"], r["key"])
                    env[e["name"]] = ("value", str(config_maps.get(r["name"], {}).get("data", {}).get(r["key"])),
                                      f"ConfigMap {r['name']}")
                elif "value" in e:
                    env[e["name"]] = ("value", str(e["value"]), "env")
                else:
                    env[e["name"]] = ("field", None, None)

            def value(key):
                return env[key][1] if key in env and env[key][0] == "value" else None

            def mounted(key, what):
                """The (Secret, key) a file path in env points at, through the container's volume mounts."""
                path = value(key)
                if path is None:
                    errors.append(f"{cwhere}: {key} must be set (the path of {what})")
                    return None
                for m in c.get("volumeMounts", []):
                    prefix = m["mountPath"].rstrip("/") + "/"
                    if path.startswith(prefix):
                        rest = path[len(prefix):]
                        v = volumes.get(m["name"], {})
                        if "secret" not in v:
                            break
                        items = {i["path"]: i["key"] for i in v["secret"].get("items", [])}
                        skey = items.get(rest) if items else rest
                        if skey is None:
                            errors.append(f"{cwhere}: {key}={path}: volume {m['name']} does not hold {rest}")
                            return None
                        return v["secret"]["secretName"], skey
                errors.append(f"{cwhere}: {key}={path} is not in a Secret it mounts ({what})")
                return None

            # TLS on the service's port
            profiles = (value("QUARKUS_PROFILE") or "").split(",")
            if "tls" not in profiles:
                errors.append(f"{cwhere}: speaks plaintext: QUARKUS_PROFILE must hold the tls profile (prod,tls)")
            else:
                ssl_port = value("QUARKUS_HTTP_SSL_PORT")
                if ssl_port is None or int(ssl_port) not in ports.values():
                    errors.append(f"{cwhere}: QUARKUS_HTTP_SSL_PORT ({ssl_port}) must be a declared container port")
                for probe in PROBES:
                    get = c.get(probe, {}).get("httpGet")
                    if get is None:
                        continue
                    port = ports.get(get.get("port"), get.get("port"))
                    if get.get("scheme") != "HTTPS":
                        errors.append(f"{cwhere}: {probe} must use scheme HTTPS: the tls profile closes the plaintext port")
                    if ssl_port is not None and port != int(ssl_port):
                        errors.append(f"{cwhere}: {probe} must probe QUARKUS_HTTP_SSL_PORT {ssl_port}, probes {port}")
                keystore = mounted("GPUCLOUD_TLS_KEYSTORE", "the service's PKCS12 keystore")
                if keystore:
                    own = [cn for cn, cert in certificates.items()
                           if cert["spec"]["secretName"] == keystore[0] and not cert["spec"].get("isCA")]
                    if keystore[1] != "keystore.p12" or not own:
                        errors.append(f"{cwhere}: GPUCLOUD_TLS_KEYSTORE must be keystore.p12 of a Certificate's Secret, is {keystore[1]} of {keystore[0]}")
                    else:
                        use["certificate"] = own[0]
                        pw = certificates[own[0]]["spec"].get("keystores", {}).get("pkcs12", {}).get("passwordSecretRef", {})
                        got = env.get("GPUCLOUD_TLS_KEYSTORE_PASSWORD", ())
                        if got[:1] != ("secret",) or (got[1], got[2]) != (pw.get("name"), pw.get("key")):
                            errors.append(f"{cwhere}: GPUCLOUD_TLS_KEYSTORE_PASSWORD must come from Secret {pw.get('name')} key {pw.get('key')}, as Certificate {own[0]}'s keystore")
                annotations = spec["template"]["metadata"].get("annotations", {})
                if annotations.get("prometheus.io/scrape") == "true" and annotations.get("prometheus.io/scheme") != "https":
                    errors.append(f"{where}: prometheus.io/scheme must be https: its port takes TLS only")

            # Kafka
            if "KAFKA_BOOTSTRAP_SERVERS" in env:
                if value("GPUCLOUD_KAFKA_SECURITY_PROTOCOL") != "SASL_SSL":
                    errors.append(f"{cwhere}: GPUCLOUD_KAFKA_SECURITY_PROTOCOL must be SASL_SSL, is {value('GPUCLOUD_KAFKA_SECURITY_PROTOCOL')}")
                user = value("GPUCLOUD_KAFKA_USER")
                boot = env.get("KAFKA_BOOTSTRAP_SERVERS", ())
                use["kafka_strimzi"] = boot[:1] != ("secret",)
                if boot[:1] == ("secret",):
                    # a broker gpucloud does not run: its address and CA from one Secret made out of band, and a
                    # login made with `gpucloud kafka setup-external` (the agents' shared one for an agent)
                    use["kafka_external"] = boot[1]
                    trust = mounted("GPUCLOUD_KAFKA_TRUSTSTORE", "the brokers' CA")
                    if trust and trust[0] != boot[1]:
                        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_TRUSTSTORE must come from Secret {boot[1]}, as KAFKA_BOOTSTRAP_SERVERS does, is {trust[1]} of {trust[0]}")
                    agent = bool(value("GPUCLOUD_ENROLMENT_URL"))
                    if not user:
                        errors.append(f"{cwhere}: no GPUCLOUD_KAFKA_USER: a broker gpucloud does not run makes no login at enrolment"
                                      + (f"; the agents log in as {SHARED_AGENTS}" if agent else ""))
                    elif agent and user != SHARED_AGENTS:
                        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_USER is {user}, but every agent logs in as {SHARED_AGENTS}, the one login with an agent's ACLs in any agent's group")
                    elif not agent and user == SHARED_AGENTS:
                        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_USER {SHARED_AGENTS} is the node agents' login, not a service's")
                    elif env.get("GPUCLOUD_KAFKA_PASSWORD", ())[:3] != ("secret", user, "password"):
                        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_PASSWORD must come from Secret {user} key password, {user}'s login")
                    use["kafka_user"] = user
                elif value("GPUCLOUD_ENROLMENT_URL"):
                    # an agent that enrols logs in as the KafkaUser the scheduler makes for its node: a login in
                    # a DaemonSet's manifest would be every node's; its cluster is the one the scheduler makes users of
                    for key in ("GPUCLOUD_KAFKA_USER", "GPUCLOUD_KAFKA_PASSWORD"):
                        if key in env:
                            errors.append(f"{cwhere}: {key} is set, but an agent that enrols logs in as the KafkaUser the scheduler makes for its node: a login in the manifest is every node's")
                    use["kafka_user"] = "(its node's own, made at enrolment)"
                    use["kafka_transport"] = (cwhere, mounted("GPUCLOUD_KAFKA_TRUSTSTORE", "the Kafka cluster's CA"),
                                              value("KAFKA_BOOTSTRAP_SERVERS"))
                elif user not in kafka_users:
                    errors.append(f"{cwhere}: GPUCLOUD_KAFKA_USER ({user}) must name a rendered KafkaUser")
                else:
                    u = kafka_users[user]
                    cluster = u["metadata"].get("labels", {}).get("strimzi.io/cluster")
                    use["kafka_user"], use["kafka_cluster"] = user, cluster
                    if env.get("GPUCLOUD_KAFKA_PASSWORD", ())[:3] != ("secret", user, "password"):
                        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_PASSWORD must come from Secret {user} key password (KafkaUser {user}'s)")
                    errors.extend(kafka_transport_errors(cwhere, cluster, mounted("GPUCLOUD_KAFKA_TRUSTSTORE", "the Kafka cluster's CA"),
                                                         value("KAFKA_BOOTSTRAP_SERVERS")))

            # PostgreSQL
            if "GPUCLOUD_DB_USER" in env:
                u, p = env["GPUCLOUD_DB_USER"], env.get("GPUCLOUD_DB_PASSWORD", ())
                if u[0] != "secret" or p[:2] != ("secret", u[1]) or (u[2], p[2]) != ("username", "password"):
                    errors.append(f"{cwhere}: GPUCLOUD_DB_USER and GPUCLOUD_DB_PASSWORD must come from one basic-auth Secret (username, password)")
                else:
                    use["db_user"] = secret_values.get(u[1], {}).get("username")
                    use["db_secret"] = u[1]
                for key, want in (("GPUCLOUD_DB_SSL_MODE", "verify-full"), ("GPUCLOUD_DB_VERIFY", "true"),
                                  ("GPUCLOUD_DB_HOSTNAME_VERIFICATION", "HTTPS")):
                    if value(key) != want:
                        errors.append(f"{cwhere}: {key} must be {want}, is {value(key)}")
                host = value("PGHOST") or ""
                cluster = host.split(".")[0].removesuffix("-rw")
                address = env.get("PGHOST", ())
                if address[:1] == ("secret",):
                    # a database gpucloud does not run: its address and CA from one Secret made out of band
                    use["db_external"] = address[1]
                    if env.get("PGPORT", ())[:2] != ("secret", address[1]):
                        errors.append(f"{cwhere}: PGPORT must come from Secret {address[1]}, as PGHOST does")
                    ca = mounted("GPUCLOUD_DB_CA", "the database's CA")
                    if ca and ca[0] != address[1]:
                        errors.append(f"{cwhere}: GPUCLOUD_DB_CA must come from Secret {address[1]}, as PGHOST does, is {ca[1]} of {ca[0]}")
                elif cluster not in pg_clusters or not host.split(".")[0].endswith("-rw"):
                    errors.append(f"{cwhere}: PGHOST {host} must be a rendered CloudNativePG cluster's -rw Service")
                else:
                    use["db_cluster"] = cluster
                    ca = mounted("GPUCLOUD_DB_CA", "CloudNativePG's CA")
                    if ca and ca != (f"{cluster}-ca", "ca.crt"):
                        errors.append(f"{cwhere}: GPUCLOUD_DB_CA must be ca.crt of {cluster}-ca, is {ca[1]} of {ca[0]}")

            # Enrolment: who holds the key, who mints, who asks
            if value("GPUCLOUD_ENROLMENT_KEY"):
                use["enrolment_key"] = mounted("GPUCLOUD_ENROLMENT_KEY", "the enrolment key")
            if value("GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER"):
                use["kafka_users_namespace"] = value("GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE")
                use["kafka_users_cluster"] = value("GPUCLOUD_ENROLMENT_KAFKA_USERS_CLUSTER") or "gpucloud"
                use["runs_as"] = pod.get("serviceAccountName", "default")
                issuer = urlparse(value("GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER"))
                use["enrolment_issuer_port"] = issuer.port or 443
                use["enrolment_audience"] = value("GPUCLOUD_ENROLMENT_KUBERNETES_AUDIENCE") or "gpucloud-enrolment"
                use["enrolment_subject"] = value("GPUCLOUD_ENROLMENT_KUBERNETES_SUBJECT") or ""
                if not value("GPUCLOUD_ENROLMENT_KEY"):
                    errors.append(f"{cwhere}: enrols agents (GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER) without GPUCLOUD_ENROLMENT_KEY")
                sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount/"
                for key in ("GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER_TOKEN_FILE", "GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER_CA"):
                    if not (value(key) or "").startswith(sa_dir) or pod.get("automountServiceAccountToken") is False:
                        errors.append(f"{cwhere}: {key} must be its service account's own file under {sa_dir} (the API server serves the issuer's keys to authenticated callers only), mounted")
            if value("GPUCLOUD_ENROLMENT_URL"):
                url = urlparse(value("GPUCLOUD_ENROLMENT_URL"))
                use["enrols_at"] = (url.hostname.split(".")[0] if url.hostname else None, url.port or 443)
                if url.scheme != "https":
                    errors.append(f"{cwhere}: GPUCLOUD_ENROLMENT_URL must be https://, is {value('GPUCLOUD_ENROLMENT_URL')}")
                mounted("GPUCLOUD_ENROLMENT_CA", "the CA of the scheduler's certificate")
                token, credential = value("GPUCLOUD_ENROLMENT_TOKEN_FILE") or "", value("GPUCLOUD_ENROLMENT_CREDENTIAL") or ""
                use["enrolment_token"] = None
                for m in c.get("volumeMounts", []):
                    prefix = m["mountPath"].rstrip("/") + "/"
                    v = volumes.get(m["name"], {})
                    if token.startswith(prefix):
                        for source in v.get("projected", {}).get("sources", []):
                            sat = source.get("serviceAccountToken")
                            if sat and sat.get("path") == token[len(prefix):]:
                                use["enrolment_token"] = sat
                    if credential.startswith(prefix) and "emptyDir" in v:
                        use["enrolment_credential"] = True
                if use["enrolment_token"] is None:
                    errors.append(f"{cwhere}: GPUCLOUD_ENROLMENT_TOKEN_FILE ({token}) must be a projected serviceAccountToken it mounts")
                elif use["enrolment_token"].get("expirationSeconds", 3600) > 3600:
                    errors.append(f"{cwhere}: its enrolment token must live at most an hour (expirationSeconds), not {use['enrolment_token'].get('expirationSeconds')}")
                if not use.get("enrolment_credential"):
                    errors.append(f"{cwhere}: GPUCLOUD_ENROLMENT_CREDENTIAL ({credential}) must be in an emptyDir it mounts: the pod's own, never the node's disk or a shared Secret")
                use["service_account"] = pod.get("serviceAccountName", "default")
                use["automount"] = pod.get("automountServiceAccountToken")

            # OIDC
            if "GPUCLOUD_OIDC_URL" in env:
                if env["GPUCLOUD_OIDC_URL"][0] != "secret":
                    errors.append(f"{cwhere}: GPUCLOUD_OIDC_URL must come from a Secret")
                else:
                    # a Secret made out of band holds an https URL (docs/kubernetes.md)
                    url = secret_values.get(env["GPUCLOUD_OIDC_URL"][1], {}).get(env["GPUCLOUD_OIDC_URL"][2], "")
                    url = url or ("https://oidc" if env["GPUCLOUD_OIDC_URL"][1] in out_of_band else "")
                    parsed = urlparse(url)
                    use["oidc_port"] = parsed.port or (443 if parsed.scheme == "https" else 80)
                    waits_for(cwhere, pod, env["GPUCLOUD_OIDC_URL"][1])

    # one principal per workload: neither a KafkaUser nor a database role is shared
    for key, what in (("kafka_user", "KafkaUser"), ("db_user", "database role")):
        seen = {}
        for wname, use in uses.items():
            if use.get(key):
                seen.setdefault(use[key], []).append(wname)
        for principal, names in seen.items():
            if len(names) > 1:
                errors.append(f"{what} {principal} is shared by {', '.join(sorted(names))}: each needs its own")

    # ---- enrolment: the agents ask a workload that mints with the key every reader of their records holds
    keys = {wname: use["enrolment_key"] for wname, use in uses.items() if use.get("enrolment_key")}
    for wname, use in uses.items():
        if use.get("enrols_at") is None:
            continue
        where = f"{workloads[wname]['kind']} {wname}"
        host, port = use["enrols_at"]
        minters = [w for w in selected_by_service(services, workloads, host) if uses.get(w, {}).get("enrolment_issuer_port")]
        if not minters:
            errors.append(f"{where}: GPUCLOUD_ENROLMENT_URL names {host}, not the Service of a workload that enrols agents (GPUCLOUD_ENROLMENT_KUBERNETES_ISSUER)")
            continue
        minter = uses[minters[0]]
        use["enrols_with"] = (workloads[minters[0]]["spec"]["template"]["metadata"].get("labels", {}), port)
        if port not in minter["ports"]:
            errors.append(f"{where}: GPUCLOUD_ENROLMENT_URL port {port} is not a port of {minters[0]}")
        audience = (use.get("enrolment_token") or {}).get("audience")
        if use.get("enrolment_token") and audience != minter["enrolment_audience"]:
            errors.append(f"{where}: its enrolment token's audience {audience} is not the one {minters[0]} accepts ({minter['enrolment_audience']})")
        parts = minter["enrolment_subject"].split(":")
        if len(parts) != 4 or parts[:2] != ["system", "serviceaccount"] \
                or parts[2] not in ("$(POD_NAMESPACE)", workloads[wname]["metadata"].get("namespace")):
            errors.append(f"{minters[0]}: GPUCLOUD_ENROLMENT_KUBERNETES_SUBJECT must be system:serviceaccount:<its namespace>:<the agents' service account>, is {minter['enrolment_subject']}")
        elif parts[3] != use["service_account"]:
            errors.append(f"{where}: runs as service account {use['service_account']}, but {minters[0]} enrols {parts[3]}")
        account = by_kind.get("ServiceAccount", {}).get(use["service_account"])
        if account is None:
            errors.append(f"{where}: its service account {use['service_account']} is not rendered")
        elif use["automount"] is not False and account.get("automountServiceAccountToken") is not False:
            errors.append(f"{where}: mounts a token for the Kubernetes API it does not use (automountServiceAccountToken: false)")
        if use.get("kafka_external") and minter.get("kafka_users_namespace"):
            errors.append(f"{minters[0]}: makes a KafkaUser for each agent it enrols (GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE), but {wname} logs in to a broker gpucloud does not run")
        if use.get("kafka_transport"):
            # its Kafka login is the KafkaUser the minter makes for its node, of the cluster it names
            if minter.get("kafka_users_namespace") not in ("$(POD_NAMESPACE)", workloads[minters[0]]["metadata"].get("namespace")):
                errors.append(f"{where}: reaches the broker with the login its enrolment answers, but {minters[0]} makes no KafkaUsers in its namespace (GPUCLOUD_ENROLMENT_KAFKA_USERS_NAMESPACE is {minter.get('kafka_users_namespace')})")
            else:
                cluster = minter["kafka_users_cluster"]
                use["kafka_cluster"] = cluster
                cwhere, trust, bootstrap = use["kafka_transport"]
                errors.extend(kafka_transport_errors(cwhere, cluster, trust, bootstrap))
                errors.extend(kafka_user_rbac_errors(by_kind, minters[0], minter["runs_as"]))
        readers = [w for w, u in uses.items() if u.get("kafka_user") and workloads[w]["kind"] == "Deployment"]
        for reader in readers:
            if keys.get(reader) is None:
                errors.append(f"{reader}: reads the agents' records but has no GPUCLOUD_ENROLMENT_KEY: it would take them unsigned")
        if len({k for k in keys.values() if k}) > 1:
            errors.append(f"the enrolment key differs between workloads: {keys}")

    # ---- one broker: Strimzi's, or one gpucloud does not run, for every workload; nothing left of the other
    elsewhere = {u["kafka_external"] for u in uses.values() if u.get("kafka_external")}
    strimzi = {w for w, u in uses.items() if u.get("kafka_strimzi")}
    if len(elsewhere) > 1:
        errors.append(f"the workloads take the broker's address from different Secrets: {', '.join(sorted(elsewhere))}")
    if elsewhere and strimzi:
        errors.append(f"{', '.join(sorted(strimzi))} reach Strimzi's brokers, the rest a broker gpucloud does not run: one broker for all")
    if elsewhere and not strimzi:
        for kind in ("Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser"):
            for rname in by_kind.get(kind, {}):
                errors.append(f"{kind} {rname}: rendered, but every workload reaches a broker gpucloud does not run (components/external-kafka removes it)")
        for kind in ("Role", "ClusterRole"):
            for rname, r in by_kind.get(kind, {}).items():
                if any("kafkausers" in (rule.get("resources") or []) for rule in r.get("rules") or []):
                    errors.append(f"{kind} {rname}: grants rights on KafkaUsers, which nothing makes with a broker gpucloud does not run")

    # ---- custom resources
    for uname, u in kafka_users.items():
        if not u["metadata"].get("labels", {}).get("strimzi.io/cluster"):
            errors.append(f"KafkaUser {uname}: label strimzi.io/cluster missing")
        if u["spec"].get("authentication", {}).get("type") != "scram-sha-512":
            errors.append(f"KafkaUser {uname}: authentication must be scram-sha-512")
        authz = u["spec"].get("authorization", {})
        if authz.get("type") != "simple" or not authz.get("acls"):
            errors.append(f"KafkaUser {uname}: authorization must be simple, with ACLs")
    issuers = by_kind.get("Issuer", {})
    for iname, i in issuers.items():
        if "ca" in i["spec"] and i["spec"]["ca"]["secretName"] not in made_by:
            errors.append(f"Issuer {iname}: CA Secret {i['spec']['ca']['secretName']} is no Certificate's")
    for cname, cert in certificates.items():
        where = f"Certificate {cname}"
        ref = cert["spec"].get("issuerRef", {})
        if ref.get("kind", "Issuer") == "Issuer" and ref.get("name") not in issuers:
            errors.append(f"{where}: Issuer {ref.get('name')} is not rendered")
        if cert["spec"].get("isCA"):
            continue
        pkcs12 = cert["spec"].get("keystores", {}).get("pkcs12", {})
        if not pkcs12.get("create"):
            errors.append(f"{where}: keystores.pkcs12.create must be true: Quarkus reads keystore.p12")
        if pkcs12.get("profile", "LegacyRC2") == "LegacyRC2":
            errors.append(f"{where}: keystores.pkcs12.profile must be Modern2023: Java 20 and later refuse LegacyRC2")
        pw = pkcs12.get("passwordSecretRef", {})
        secret_ref(f"{where} keystore password", pw.get("name"), pw.get("key"))
        dns = cert["spec"].get("dnsNames", [])
        svc = dns[0] if dns else None
        ns = cert["metadata"].get("namespace")
        want = [svc, f"{svc}.{ns}", f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.cluster.local"]
        if dns != want:
            errors.append(f"{where}: dnsNames must be {want}, are {dns}")
        if svc not in services:
            errors.append(f"{where}: names Service {svc}, which is not rendered")
            continue
        selector = services[svc]["spec"]["selector"]
        for wname, w in workloads.items():
            if labels_match({"matchLabels": selector}, w["spec"]["template"]["metadata"].get("labels", {})) \
                    and uses.get(wname, {}).get("certificate") != cname:
                errors.append(f"{where}: {w['kind']} {wname} (selected by Service {svc}) does not serve it (mount {cert['spec']['secretName']} as GPUCLOUD_TLS_KEYSTORE)")
    for wname, use in uses.items():
        if "certificate" not in use:
            continue
        svc = certificates[use["certificate"]]["spec"]["dnsNames"][0]
        selector = services.get(svc, {}).get("spec", {}).get("selector", {})
        if not labels_match({"matchLabels": selector}, workloads[wname]["spec"]["template"]["metadata"].get("labels", {})):
            errors.append(f"{wname}: serves Certificate {use['certificate']}, whose Service {svc} does not select it")

    db_roles = {}
    for pname, p in pg_clusters.items():
        where = f"Cluster {pname}"
        initdb = p["spec"].get("bootstrap", {}).get("initdb", {})
        role_secrets = []
        if initdb.get("secret"):
            role_secrets.append((initdb["secret"]["name"], initdb.get("owner")))
        for role in p["spec"].get("managed", {}).get("roles", []):
            if role.get("superuser") or role.get("createrole") or role.get("createdb"):
                errors.append(f"{where}: role {role['name']} must be NOSUPERUSER NOCREATEDB NOCREATEROLE")
            if role.get("passwordSecret"):
                role_secrets.append((role["passwordSecret"]["name"], role["name"]))
        for sname, role in role_secrets:
            secret_ref(f"{where} role {role}", sname, "password")
            if sname in secret_values and secret_values[sname].get("username") != role:
                errors.append(f"{where}: Secret {sname} is for {secret_values[sname].get('username')}, not role {role}")
            db_roles[sname] = role
        store = p["spec"].get("backup", {}).get("barmanObjectStore")
        if not store:
            errors.append(f"{where}: no backup.barmanObjectStore: its data would have no copy outside the cluster")
        for cred in ("accessKeyId", "secretAccessKey"):
            ref = (store or {}).get("s3Credentials", {}).get(cred)
            if ref:
                secret_ref(f"{where} backup {cred}", ref["name"], ref["key"])
        if store and not any(b["spec"]["cluster"]["name"] == pname for b in by_kind.get("ScheduledBackup", {}).values()):
            errors.append(f"{where}: no ScheduledBackup takes its base backups")
        hba = [line.split() for line in p["spec"].get("postgresql", {}).get("pg_hba", [])]
        if not hba or hba[0][:1] != ["hostnossl"] or hba[0][-1] != "reject":
            errors.append(f"{where}: pg_hba must begin with `hostnossl all all all reject`: CloudNativePG's own last line takes plaintext")
    for wname, use in uses.items():
        if use.get("db_secret") and not use.get("db_external") and use["db_secret"] not in db_roles:
            errors.append(f"{wname}: its database login {use['db_secret']} is not a role Cluster manages")

    # ---- structure of the rest
    def selected_workloads(selector):
        return [w for w in workloads.values()
                if all(w["spec"]["template"]["metadata"].get("labels", {}).get(k) == v for k, v in selector.items())]

    for sname, s in services.items():
        selected = selected_workloads(s["spec"]["selector"])
        if not selected:
            errors.append(f"Service {sname}: selector {s['spec']['selector']} matches no rendered workload")
        for w in selected:
            declared = {p["name"] for c in w["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
            declared |= {p["containerPort"] for c in w["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
            for port in s["spec"].get("ports", []):
                if port.get("targetPort", port["port"]) not in declared:
                    errors.append(f"Service {sname}: targetPort {port.get('targetPort')} is not a port of {w['metadata']['name']}")
    for pname, p in by_kind.get("PodDisruptionBudget", {}).items():
        if not selected_workloads(p["spec"]["selector"]["matchLabels"]):
            errors.append(f"PodDisruptionBudget {pname}: selector matches no rendered workload")
    # a Deployment of several replicas keeps some through a drain, and spreads them over nodes
    budgeted = {w for p in by_kind.get("PodDisruptionBudget", {}).values()
                for w in selected_workloads(p["spec"]["selector"]["matchLabels"]) for w in [w["metadata"]["name"]]}
    scaled = {h["spec"].get("scaleTargetRef", {}).get("name") for h in by_kind.get("HorizontalPodAutoscaler", {}).values()}
    for wname, w in by_kind.get("Deployment", {}).items():
        if w["spec"].get("replicas", 1) > 1 or wname in scaled:
            if wname not in budgeted:
                errors.append(f"Deployment {wname}: {w['spec'].get('replicas', 1)} replicas and no PodDisruptionBudget")
            keys = {t.get("topologyKey") for t in w["spec"]["template"]["spec"].get("topologySpreadConstraints", [])}
            if "kubernetes.io/hostname" not in keys:
                errors.append(f"Deployment {wname}: its replicas must spread over nodes (topologySpreadConstraints on kubernetes.io/hostname)")
    # Prometheus Operator: every Service of a workload is scraped once, over HTTPS with the CA and the scrape token
    monitored = set()
    for mname, m in by_kind.get("ServiceMonitor", {}).items():
        where = f"ServiceMonitor {mname}"
        sel = m["spec"].get("selector", {})
        picked = [n for n, svc in services.items()
                  if labels_match(sel, svc["metadata"].get("labels", {}))]
        if not picked:
            errors.append(f"{where}: selects no rendered Service")
        behind = [w["metadata"]["name"] for n in picked for w in selected_workloads(services[n]["spec"].get("selector", {}))]
        for wname in sorted({w for w in behind if behind.count(w) > 1}):
            errors.append(f"{where}: scrapes {wname}'s pods more than once (through {', '.join(sorted(picked))})")
        for n in picked:
            if n in monitored:
                errors.append(f"{where}: Service {n} is scraped by another ServiceMonitor too")
            monitored.add(n)
        for e in m["spec"].get("endpoints", []):
            if e.get("scheme") != "https" or e.get("path") != "/q/metrics":
                errors.append(f"{where}: must scrape /q/metrics over https, has {e.get('scheme')} {e.get('path')}")
            for n in picked:
                if e.get("port") not in {p.get("name") for p in services[n]["spec"].get("ports", [])}:
                    errors.append(f"{where}: port {e.get('port')} is not a port of Service {n}")
            ca = e.get("tlsConfig", {}).get("ca", {}).get("secret", {})
            secret_ref(f"{where} CA", ca.get("name"), ca.get("key"))
            cred = e.get("authorization", {}).get("credentials", {})
            secret_ref(f"{where} scrape token", cred.get("name"), cred.get("key"))
    if by_kind.get("ServiceMonitor") is not None or by_kind.get("PrometheusRule") is not None:
        for n, svc in services.items():
            if svc["spec"].get("clusterIP") != "None" and selected_workloads(svc["spec"].get("selector", {})) and n not in monitored:
                errors.append(f"Service {n}: no ServiceMonitor scrapes it")
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
    if not pg_clusters and not any(u.get("db_external") for u in uses.values()):
        errors.append("no CloudNativePG Cluster rendered")
    for pname in pg_clusters:
        if not any(u.get("db_cluster") == pname for u in uses.values()):
            errors.append(f"Cluster {pname}: no workload uses it (with a database elsewhere, components/external-postgres removes it)")

    # ---- NetworkPolicies
    errors += check_network_policies(policies, workloads, uses, namespace)

    for e in errors:
        print(f"  FAIL {name}: {e}")
    kinds = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_kind.items()))
    print(f"  {name}: {len(docs)} resources ({kinds}): {'ok' if not errors else str(len(errors)) + ' problems'}")
    return 1 if errors else 0


def selected_by_service(services, workloads, name):
    """The workloads the Service called name selects."""
    selector = services.get(name, {}).get("spec", {}).get("selector")
    if not selector:
        return []
    return [w for w, d in workloads.items()
            if labels_match({"matchLabels": selector}, d["spec"]["template"]["metadata"].get("labels", {}))]


def kafka_transport_errors(cwhere, cluster, trust, bootstrap):
    """A Kafka client trusts the cluster's CA and reaches its TLS listener."""
    errors = []
    if trust and trust != (f"{cluster}-cluster-ca-cert", "ca.crt"):
        errors.append(f"{cwhere}: GPUCLOUD_KAFKA_TRUSTSTORE must be ca.crt of {cluster}-cluster-ca-cert, is {trust[1]} of {trust[0]}")
    for server in (bootstrap or "").split(","):
        host, _, port = server.strip().rpartition(":")
        if host.split(".")[0] != f"{cluster}-kafka-bootstrap" or port != str(KAFKA_TLS_PORT):
            errors.append(f"{cwhere}: KAFKA_BOOTSTRAP_SERVERS {server} must be {cluster}-kafka-bootstrap:{KAFKA_TLS_PORT}, the TLS listener")
    return errors


# What the scheduler may do to make the agents' KafkaUsers: create and get these, in its namespace, nothing more.
KAFKA_USER_GRANTS = {("kafka.strimzi.io", "kafkausers"), ("", "secrets")}


def kafka_user_rbac_errors(by_kind, workload, account):
    """The workload that makes the agents' KafkaUsers may create and get kafkausers and secrets through a
    namespaced Role bound to its service account, and that Role (or any other bound to it) grants nothing more."""
    errors = []
    granted = set()
    for kind, bindings in (("RoleBinding", by_kind.get("RoleBinding", {})), ("ClusterRoleBinding", by_kind.get("ClusterRoleBinding", {}))):
        for bname, b in bindings.items():
            if not any(s.get("kind") == "ServiceAccount" and s.get("name") == account for s in b.get("subjects") or []):
                continue
            ref = b.get("roleRef", {})
            role = by_kind.get(ref.get("kind"), {}).get(ref.get("name"))
            if role is None:
                continue  # a built-in role (system:service-account-issuer-discovery)
            if ref.get("kind") != "Role" or kind != "RoleBinding":
                errors.append(f"{kind} {bname}: binds {account} to {ref.get('kind')} {ref.get('name')}; the KafkaUsers' rights must be a Role of its namespace")
            for rule in role.get("rules") or []:
                pairs = {(g, r) for g in rule.get("apiGroups") or [] for r in rule.get("resources") or []}
                verbs = set(rule.get("verbs") or [])
                if not pairs <= KAFKA_USER_GRANTS or not verbs <= {"create", "get"} or rule.get("nonResourceURLs"):
                    errors.append(f"{ref.get('kind')} {ref.get('name')}: grants {account} more than create and get on kafkausers.kafka.strimzi.io and secrets: {rule}")
                granted |= {(p, v) for p in pairs for v in verbs}
    for group, resource in sorted(KAFKA_USER_GRANTS):
        for verb in ("create", "get"):
            if ((group, resource), verb) not in granted:
                what = f"{resource}.{group}" if group else resource
                errors.append(f"{workload}: makes the agents' KafkaUsers, but no Role bound to its service account {account} lets it {verb} {what}")
    return errors


def check_network_policies(policies, workloads, uses, namespace):
    errors = []
    own_ns = {"kubernetes.io/metadata.name": namespace}

    def types(p):
        return set(p["spec"].get("policyTypes") or ["Ingress"] + (["Egress"] if "egress" in p["spec"] else []))

    def selecting(labels, kind):
        return [p for p in policies.values() if kind in types(p) and labels_match(p["spec"]["podSelector"], labels)]

    def peer_is(peer, labels, ns_labels):
        """Whether a from/to entry takes the pods with these labels in a namespace with these labels."""
        if "ipBlock" in peer:
            return False
        ns_ok = labels_match(peer["namespaceSelector"], ns_labels) if "namespaceSelector" in peer else ns_labels == own_ns
        pod_ok = labels_match(peer["podSelector"], labels) if "podSelector" in peer else True
        return ns_ok and pod_ok

    def port_in(rule, port, protocol="TCP", names=()):
        if not rule.get("ports"):
            return True
        return any(p.get("protocol", "TCP") == protocol and (p.get("port") in (port, *names) or "port" not in p)
                   for p in rule["ports"])

    def admits(labels, kind, peer_labels, peer_ns, port, protocol="TCP"):
        """Whether some policy selecting these pods lets that peer in (kind Ingress) or out (Egress) on port."""
        rules_key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
        for p in selecting(labels, kind):
            for rule in p["spec"].get(rules_key) or []:
                peers = rule.get(peers_key)
                if (not peers or any(peer_is(x, peer_labels, peer_ns) for x in peers)) and port_in(rule, port, protocol):
                    return True
        return False

    deny = [p for p in policies.values() if p["spec"]["podSelector"] in ({}, None)
            and {"Ingress", "Egress"} <= types(p) and not p["spec"].get("ingress") and not p["spec"].get("egress")]
    if not deny:
        errors.append("no default deny: a NetworkPolicy selecting every pod ({}) with policyTypes Ingress and Egress and no rules")

    dns_labels, dns_ns = {"k8s-app": "kube-dns"}, {"kubernetes.io/metadata.name": "kube-system"}
    prometheus = ({"app.kubernetes.io/name": "prometheus"}, {"kubernetes.io/metadata.name": "monitoring"})
    for wname, w in workloads.items():
        labels = w["spec"]["template"]["metadata"].get("labels", {})
        use = uses.get(wname, {})
        names = {p["name"] for c in w["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
        where = f"{w['kind']} {wname}"
        ingress = selecting(labels, "Ingress")
        egress = selecting(labels, "Egress")
        if not ingress or not egress:
            errors.append(f"{where}: no NetworkPolicy selects it for {'ingress' if not ingress else 'egress'}")
        # ingress: its ports, and nothing else; from anywhere only at the front doors
        for port in use.get("ports", set()):
            if not any(port_in(rule, port, names=tuple(names)) for p in ingress for rule in p["spec"].get("ingress") or []):
                errors.append(f"{where}: no NetworkPolicy admits its port {port}")
            if wname not in FRONT_DOORS and not admits(labels, "Ingress", *prometheus, port):
                errors.append(f"{where}: Prometheus (pods app.kubernetes.io/name=prometheus in namespace monitoring) cannot scrape port {port}")
        for p in ingress:
            for rule in p["spec"].get("ingress") or []:
                for port in rule.get("ports") or [{}]:
                    if port.get("port") not in use.get("ports", set()) | names:
                        errors.append(f"{where}: NetworkPolicy {p['metadata']['name']} admits port {port.get('port', 'any')}, which it does not serve")
                open_to_all = not rule.get("from") or any(x.get("ipBlock", {}).get("cidr") == "0.0.0.0/0" for x in rule["from"])
                if open_to_all and wname not in FRONT_DOORS:
                    errors.append(f"{where}: NetworkPolicy {p['metadata']['name']} admits every source; only {', '.join(sorted(FRONT_DOORS))} may")
        # egress: what it uses, both ends, and nothing else
        needs = [("DNS", dns_labels, dns_ns, 53, "UDP"), ("DNS", dns_labels, dns_ns, 53, "TCP")]
        broker = {"strimzi.io/cluster": use.get("kafka_cluster"), "strimzi.io/kind": "Kafka"}
        database = {"cnpg.io/cluster": use.get("db_cluster"), "cnpg.io/podRole": "instance"}
        if use.get("kafka_user") and not use.get("kafka_external"):
            needs.append(("the Kafka brokers", broker, own_ns, KAFKA_TLS_PORT, "TCP"))
            if not admits(broker, "Ingress", labels, own_ns, KAFKA_TLS_PORT):
                errors.append(f"{where}: no NetworkPolicy lets it into the Kafka brokers' pods on {KAFKA_TLS_PORT}")
        if use.get("enrols_with"):
            needs.append(("the scheduler's enrolment", use["enrols_with"][0], own_ns, use["enrols_with"][1], "TCP"))
        if use.get("db_cluster"):
            needs.append(("PostgreSQL", database, own_ns, 5432, "TCP"))
            if not admits(database, "Ingress", labels, own_ns, 5432):
                errors.append(f"{where}: no NetworkPolicy lets it into PostgreSQL's pods on 5432")
        for what, peer, peer_ns, port, protocol in needs:
            if not admits(labels, "Egress", peer, peer_ns, port, protocol):
                errors.append(f"{where}: no NetworkPolicy lets it reach {what} on {protocol} {port}")
        if use.get("oidc_port") and not any(
                any(x.get("ipBlock") for x in rule.get("to") or []) and port_in(rule, use["oidc_port"])
                for p in egress for rule in p["spec"].get("egress") or []):
            errors.append(f"{where}: no NetworkPolicy lets it reach its OIDC provider (port {use['oidc_port']})")
        outside = {("TCP", use["oidc_port"])} if use.get("oidc_port") else set()
        if use.get("db_external"):
            outside.add(("TCP", 5432))
            if not any(any(x.get("ipBlock") for x in rule.get("to") or []) and port_in(rule, 5432)
                       for p in egress for rule in p["spec"].get("egress") or []):
                errors.append(f"{where}: no NetworkPolicy lets it reach its database outside the cluster (5432)")
        if use.get("kafka_external"):
            outside.add(("TCP", KAFKA_TLS_PORT))
            if not any(any(x.get("ipBlock") for x in rule.get("to") or []) and port_in(rule, KAFKA_TLS_PORT)
                       for p in egress for rule in p["spec"].get("egress") or []):
                errors.append(f"{where}: no NetworkPolicy lets it reach its broker outside the cluster ({KAFKA_TLS_PORT})")
        if use.get("enrolment_issuer_port"):
            outside |= {("TCP", 443), ("TCP", 6443), ("TCP", use["enrolment_issuer_port"])}
            if not any(any(x.get("ipBlock") for x in rule.get("to") or []) and port_in(rule, use["enrolment_issuer_port"])
                       for p in egress for rule in p["spec"].get("egress") or []):
                errors.append(f"{where}: no NetworkPolicy lets it reach the Kubernetes API server's service account issuer (port {use['enrolment_issuer_port']})")
        for p in egress:
            for rule in p["spec"].get("egress") or []:
                peers = rule.get("to")
                if not peers:
                    errors.append(f"{where}: NetworkPolicy {p['metadata']['name']} lets it reach every destination")
                    continue
                for x in peers:
                    ports = {(q.get("protocol", "TCP"), q.get("port")) for q in rule.get("ports") or [{}]}
                    if "ipBlock" in x:
                        ok = bool(outside) and ports <= outside
                    else:
                        ok = any(peer_is(x, peer, peer_ns) and all(q in {(pr, pt) for _, pe, pn, pt, pr in needs
                                                                            if pe == peer} for q in ports)
                                 for _, peer, peer_ns, _, _ in needs)
                    if not ok:
                        errors.append(f"{where}: NetworkPolicy {p['metadata']['name']} lets it reach {x} on {sorted(ports, key=str)}, which it does not use")
    # the operators' pods still work under the default deny: each cluster's pods reach each other
    for what, labels in [("the Kafka brokers", {"strimzi.io/cluster": u.get("kafka_cluster"), "strimzi.io/kind": "Kafka"})
                         for u in uses.values() if u.get("kafka_cluster")][:1] + \
                        [("PostgreSQL", {"cnpg.io/cluster": u.get("db_cluster"), "cnpg.io/podRole": "instance"})
                         for u in uses.values() if u.get("db_cluster")][:1]:
        port = KAFKA_TLS_PORT if "strimzi.io/kind" in labels else 5432
        if not admits(labels, "Egress", labels, own_ns, port) or not admits(labels, "Ingress", labels, own_ns, port):
            errors.append(f"{what}' pods cannot reach each other under the default deny: a NetworkPolicy must let them")
        if not admits(labels, "Egress", dns_labels, dns_ns, 53, "UDP"):
            errors.append(f"{what}' pods cannot resolve names under the default deny")
    return errors


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "manifests", sys.argv[2] if len(sys.argv) > 2 else None))
