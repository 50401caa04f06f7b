#!/usr/bin/env bash
# deploy/images/base.sh OUT.tar: the base image every gpucloud image is layered on, built without a registry or a
# Docker engine. mmdebstrap makes a minimal Debian bookworm root filesystem from Debian's apt mirror (dpkg, a shell,
# coreutils, procps and OpenJDK 17's headless runtime; no recommended packages, documentation, manual pages or locales), adds the unprivileged user
# gpucloud (uid and gid 185, the uid the Kubernetes manifests run as), and podman turns it into an image
# (gpucloud/base-jre17:bookworm) whose default user is 185, saved as OUT.tar in the docker-archive format that Jib
# reads as a base image (tar://OUT.tar). Rebuilt only when OUT.tar is missing or GPUCLOUD_IMAGE_BASE_REBUILD=1.
set -euo pipefail
out="${1:?usage: deploy/images/base.sh OUT.tar}"
name="${GPUCLOUD_IMAGE_BASE_NAME:-gpucloud/base-jre17:bookworm}"
suite="${GPUCLOUD_IMAGE_SUITE:-bookworm}"
mirror="${GPUCLOUD_IMAGE_MIRROR:-}"   # empty: the host's own apt sources (mmdebstrap reads them)

if [ -s "$out" ] && [ "${GPUCLOUD_IMAGE_BASE_REBUILD:-0}" != 1 ]; then
  echo "base image: $out (kept; GPUCLOUD_IMAGE_BASE_REBUILD=1 builds it again)"
  exit 0
fi
for tool in mmdebstrap podman; do
  command -v "$tool" >/dev/null || { echo "base image: $tool is not installed (apt-get install podman runc mmdebstrap uidmap)" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/gpucloud-base.XXXXXX")"
trap 'rm -rf "$work"' EXIT
started=$SECONDS
echo "base image: debian $suite with openjdk-17-jre-headless (mmdebstrap)"
# usrmerge (and the Perl it needs, 50 MiB) is purged once /usr is merged (usr-is-merged stands for it); openjdk's postinst links its manual page into usr/share/man/man1, which must exist though no page is installed
log="${out%.tar}.log"
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2086
if ! mmdebstrap --variant=essential --include=openjdk-17-jre-headless,ca-certificates,procps,usr-is-merged \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --aptopt='APT::Install-Recommends "false"' \
  --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='echo "gpucloud:x:185:185:gpucloud:/deployments:/usr/sbin/nologin" >>"$1/etc/passwd"' \
  --customize-hook='echo "gpucloud:x:185:" >>"$1/etc/group"' \
  --customize-hook='chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
  "$suite" "$work/rootfs.tar" $mirror >"$log" 2>&1; then
  grep -E '^(E:|dpkg: error)|error' "$log" | head -10 >&2
  echo "base image: mmdebstrap failed (log: $log)" >&2
  exit 1
fi
java_home=/usr/lib/jvm/java-17-openjdk-amd64
[ "$(dpkg --print-architecture)" = amd64 ] || java_home="/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture)"
podman import --quiet \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV JAVA_HOME=$java_home" --change "ENV LANG=C.UTF-8" \
  --change "WORKDIR /deployments" --change "USER 185" \
  "$work/rootfs.tar" "$name" >/dev/null
rm -f "$out"
podman save --quiet --format docker-archive -o "$out" "$name"
echo "base image: $name, $(du -m "$out" | cut -f1) MiB, saved to $out in $((SECONDS - started)) s"
