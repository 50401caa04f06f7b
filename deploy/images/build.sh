#!/usr/bin/env bash
# deploy/images/build.sh (./gpucloud images): an OCI image for each service and the node agent, without a Docker
# engine or a registry to pull from (docs/images.md).
#
#   ./gpucloud images [--registry HOST[/PATH]] [--tag T] [--push [--insecure]] [--tar DIR] [--check]
#
#   1. the base image (deploy/images/base.sh: Debian bookworm and OpenJDK 17 from Debian's apt mirror, user 185),
#      made once into target/images/base.tar;
#   2. Quarkus's Jib extension layers each service on it (`./mvnw -Pimages package`: dependencies, then the
#      application, as separate layers) and loads it into podman's local storage as
#      [REGISTRY/]gpucloud/MODULE:TAG (default tag 0.1.0, the prod overlay's); --push sends it to REGISTRY instead
#      (Jib speaks the registry's API itself; log in with `podman login`, whose auth file Jib reads; --insecure
#      lets it use plain HTTP, for a registry such as the dev overlay's localhost:5000);
#   3. --tar DIR: each image also as DIR/MODULE.tar (oci-archive), for `podman load`, `skopeo copy` or `ctr import`;
#   4. --check: runs the whole local stack from the images (GPUCLOUD_RUNTIME=podman ./gpucloud demo --fresh: each
#      service in its own container as user 185 on a read-only root filesystem), then ./gpucloud down.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODULES=(scheduler-service billing-service metrics-service node-agent)
registry="" tag="0.1.0" push=0 insecure=0 tar_dir="" check=0
usage() { sed -n '4,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) registry="${2:?--registry needs a host, e.g. localhost:5000 or ghcr.io}"; shift 2 ;;
    --tag) tag="${2:?--tag needs a value, e.g. 0.1.0}"; shift 2 ;;
    --push) push=1; shift ;;
    --insecure) insecure=1; shift ;;
    --tar) tar_dir="${2:?--tar needs a folder}"; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "images: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || { echo "images: '$tag' is not an image tag (letters, digits, _ . -, at most 128)" >&2; exit 2; }
[ -z "$registry" ] || [[ "$registry" =~ ^[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$ ]] \
  || { echo "images: '$registry' is not a registry (host[:port][/path])" >&2; exit 2; }
[ "$push" = 0 ] || [ -n "$registry" ] || { echo "images: --push needs --registry" >&2; exit 2; }
command -v podman >/dev/null || { echo "images: podman is not installed (apt-get install podman runc mmdebstrap uidmap)" >&2; exit 1; }

started=$SECONDS
base="$ROOT/target/images/base.tar"
bash "$ROOT/deploy/images/base.sh" "$base"

group="gpucloud"; [ -z "$registry" ] || group="$registry/gpucloud"
props=(-Dgpucloud.image.tag="$tag" -Dgpucloud.image.base="tar://$base")
# Jib's registry is the first path element; the rest goes in front of the image's group
if [ -n "$registry" ]; then
  props+=(-Dgpucloud.image.registry="${registry%%/*}")
  [[ "$registry" == */* ]] && props+=(-Dgpucloud.image.group="${registry#*/}/gpucloud")
fi
[ "$push" = 0 ] || props+=(-Dquarkus.container-image.push=true)
[ "$insecure" = 0 ] || props+=(-Dquarkus.container-image.insecure=true)
log="$ROOT/target/images/build.log"
mkdir -p "$ROOT/target/images"
echo "images: building ${MODULES[*]} with Jib (log: $log)"
modules="$(IFS=,; echo "${MODULES[*]}")"
if ! "$ROOT/mvnw" -B -Pimages -DskipTests -DskipITs -pl "$modules" -am "${props[@]}" package >"$log" 2>&1; then
  grep -E '^\[ERROR\] (Caused by|Failed)' "$log" | sed 's/^\[ERROR\] //' | head -8 >&2
  echo "images: the build failed: see $log" >&2
  exit 1
fi

printf '%-48s %10s\n' IMAGE SIZE
for module in "${MODULES[@]}"; do
  image="$group/$module:$tag"
  if [ "$push" = 1 ]; then
    printf '%-48s %10s\n' "$image" pushed
    continue
  fi
  size="$(podman image inspect --format '{{.Size}}' "$image")"
  printf '%-48s %7d MiB\n' "$image" $((size / 1048576))
  if [ -n "$tar_dir" ]; then
    mkdir -p "$tar_dir"
    rm -f "$tar_dir/$module.tar"
    podman save --quiet --format oci-archive -o "$tar_dir/$module.tar" "$image"
  fi
done
[ -z "$tar_dir" ] || echo "images: saved as $tar_dir/MODULE.tar (oci-archive)"
echo "images: built in $((SECONDS - started)) s"

if [ "$check" = 1 ]; then
  [ "$push" = 0 ] || { echo "images: --check runs the images from local storage; build without --push" >&2; exit 2; }
  # each image as Kubernetes runs it (restricted-pods.yaml): its default user is 185, its root filesystem read-only,
  # and the wait-for-secrets init container's loop (a shell, test, sleep) runs in it within that container's 16 MiB
  for module in "${MODULES[@]}"; do
    image="$group/$module:$tag"
    user="$(podman image inspect --format '{{.Config.User}}' "$image")"
    [ "$user" = 185 ] || { echo "images: $image runs as user '$user', not 185" >&2; exit 1; }
    if ! out="$(podman run --rm --runtime runc --read-only --memory 16m --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 \
        --entrypoint sh "$image" -c 'id -u; touch /probe 2>/dev/null && echo writable; sleep 0 && [ -w /tmp ] && echo ok' 2>&1)" \
        || [ "$out" != "$(printf '185\nok')" ]; then
      echo "images: $image is not as restricted-pods.yaml runs it: $out" >&2; exit 1
    fi
  done
  echo "images: each runs as user 185 on a read-only root filesystem"
  echo "images: running the stack from them (GPUCLOUD_RUNTIME=podman ./gpucloud demo --fresh)"
  status=0
  GPUCLOUD_RUNTIME=podman GPUCLOUD_IMAGE_PREFIX="$group" GPUCLOUD_IMAGE_TAG="$tag" "$ROOT/gpucloud" demo --fresh || status=$?
  "$ROOT/gpucloud" down || status=$?
  [ "$status" = 0 ] && echo "images: the stack ran from the images and stopped cleanly" || echo "images: the check failed" >&2
  exit "$status"
fi
