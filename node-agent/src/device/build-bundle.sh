#!/usr/bin/env bash
# Builds node-agent/target/device-bundle: a jlink'd Java runtime plus the jars the NVML check needs
# (the agent's classes, JNA 5.19.1, the contracts), for a GPU machine that has no Java.
#   node-agent/src/device/build-bundle.sh
# Needs: a JDK 17+ with jlink, and the agent packaged (./mvnw -o -pl node-agent package -DskipTests).
# The bundle stays under 64 MiB (it prints its size), and carries run-check.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
APP=target/quarkus-app
[ -d "$APP/lib/main" ] || { echo "package the agent first: ./mvnw -o -pl node-agent package -DskipTests" >&2; exit 1; }
OUT=target/device-bundle
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp "$APP"/app/node-agent-*.jar "$OUT/lib/"
for jar in "$APP"/lib/main/net.java.dev.jna.jna-*.jar "$APP"/lib/main/dev.gpucloud.contracts-*.jar \
           "$APP"/lib/main/com.fasterxml.jackson.core.jackson-annotations-*.jar; do
  cp "$jar" "$OUT/lib/"
done
jlink --add-modules java.base,java.logging,jdk.unsupported --strip-debug --no-header-files --no-man-pages \
  --compress=2 --output "$OUT/runtime" 2>/dev/null
cp src/device/run-check.sh "$OUT/"
chmod +x "$OUT/run-check.sh"
du -sh "$OUT" "$OUT/runtime" "$OUT/lib"
size_kib="$(du -sk "$OUT" | cut -f1)"
[ "$size_kib" -lt $((64 * 1024)) ] || { echo "bundle is ${size_kib} KiB, over 64 MiB" >&2; exit 1; }
echo "bundle ready: $OUT (run $OUT/run-check.sh on the GPU machine)"
