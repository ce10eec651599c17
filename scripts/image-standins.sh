#!/usr/bin/env bash
# Builds local stand-ins for the two base images the Dockerfile names, for
# machines that cannot pull from an image registry (../shared/notes/containers.md):
#
#   golang:1.26-bookworm                   FROM scratch: busybox (static) as /bin/sh,
#                                          this machine's Go from $(go env GOROOT),
#                                          CA certificates, and this machine's
#                                          module proxy settings
#   gcr.io/distroless/static-debian12:nonroot
#                                          FROM scratch: /etc/passwd and /etc/group
#                                          naming nonroot (65532), CA certificates,
#                                          tzdata, /tmp and /home/nonroot
#
# Then `podman build --pull=never .` builds the project's own Dockerfile
# unchanged. Each stand-in carries the label org.hostmint.standin=1; a name
# that already holds an image without that label (a real base image) is left
# alone. Prints the names it built, one a line.
#
# usage: scripts/image-standins.sh [PODMAN_GLOBAL_FLAGS...]
#   e.g. scripts/image-standins.sh --runtime runc --cgroup-manager cgroupfs
# Needs podman, busybox-static (/bin/busybox) and ca-certificates.
set -euo pipefail

builder=golang:1.26-bookworm
runtime=gcr.io/distroless/static-debian12:nonroot
podman=(podman "$@")

need() { [ -e "$1" ] || { echo "image-standins: $1 is missing ($2)" >&2; exit 1; }; }
need /bin/busybox "apt-get install busybox-static"
need /etc/ssl/certs/ca-certificates.crt "apt-get install ca-certificates"
need /usr/share/zoneinfo/UTC "apt-get install tzdata"
if file /bin/busybox 2>/dev/null | grep -q 'dynamically linked'; then
  echo "image-standins: /bin/busybox is not static (apt-get install busybox-static)" >&2
  exit 1
fi
goroot=$(go env GOROOT)
need "$goroot/bin/go" "Go"

# real NAME: true when NAME holds an image that is not one of these stand-ins.
real() {
  "${podman[@]}" image exists "$1" &&
    [ "$("${podman[@]}" image inspect --format '{{index .Config.Labels "org.hostmint.standin"}}' "$1")" != 1 ]
}

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

if real "$builder"; then
  echo "image-standins: $builder is a real image; using it" >&2
else
  mkdir -p "$ctx/builder/rootfs/bin" "$ctx/builder/rootfs/etc/ssl/certs" \
    "$ctx/builder/rootfs/usr/local" "$ctx/builder/rootfs/tmp" "$ctx/builder/rootfs/root"
  cp /bin/busybox "$ctx/builder/rootfs/bin/busybox"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/builder/rootfs/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$ctx/builder/rootfs/etc/passwd"
  printf 'root:x:0:\n' >"$ctx/builder/rootfs/etc/group"
  # Hard links where GOROOT is on the same file system: no 270 MB copy.
  if ! cp -al "$goroot" "$ctx/builder/rootfs/usr/local/go" 2>/dev/null; then
    rm -rf "$ctx/builder/rootfs/usr/local/go"
    cp -a "$goroot" "$ctx/builder/rootfs/usr/local/go"
  fi
  # What a build never reads (the links go, not the files in GOROOT).
  rm -rf "$ctx/builder/rootfs/usr/local/go/test" "$ctx/builder/rootfs/usr/local/go/api"
  find "$ctx/builder/rootfs/usr/local/go/src" -depth -type d -name testdata -exec rm -rf {} +
  # The go command's settings on this machine (module proxy, checksum
  # database, GOFLAGS such as -buildvcs=false: the image has no git).
  envs=""
  for v in GOPROXY GOSUMDB GONOSUMDB GONOSUMCHECK GOPRIVATE GONOPROXY GOINSECURE GOTOOLCHAIN; do
    val=$(go env "$v")
    if [ -n "$val" ]; then envs+="ENV $v=\"$val\""$'\n'; fi
  done
  # No git in here: the build context's .git must not ask for VCS stamping.
  goflags=$(go env GOFLAGS)
  case "$goflags" in *-buildvcs*) ;; *) goflags="${goflags:+$goflags }-buildvcs=false" ;; esac
  envs+="ENV GOFLAGS=\"$goflags\""$'\n'
  for v in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    if [ -n "${!v:-}" ]; then envs+="ENV $v=\"${!v}\""$'\n'; fi
  done
  cat >"$ctx/builder/Containerfile" <<EOF
FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENV GOPATH=/go HOME=/root SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
$envs
RUN mkdir -p /go/bin /go/src /usr/bin /sbin /usr/sbin && chmod 1777 /tmp
WORKDIR /go
LABEL org.hostmint.standin=1
EOF
  "${podman[@]}" build --pull=never --network host --quiet -t "$builder" "$ctx/builder" >/dev/null
  echo "$builder"
fi

if real "$runtime"; then
  echo "image-standins: $runtime is a real image; using it" >&2
else
  r="$ctx/runtime/rootfs"
  mkdir -p "$r/etc/ssl/certs" "$r/usr/share" "$r/tmp" "$r/home/nonroot" "$r/root"
  cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
  cp -a /usr/share/zoneinfo "$r/usr/share/zoneinfo"
  cat >"$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"$r/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
  printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
  chmod 1777 "$r/tmp"
  chmod 700 "$r/home/nonroot" "$r/root"
  cat >"$ctx/runtime/Containerfile" <<'EOF'
FROM scratch
COPY rootfs/ /
COPY --chown=65532:65532 rootfs/home/nonroot /home/nonroot
USER 65532:65532
WORKDIR /home/nonroot
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
LABEL org.hostmint.standin=1
EOF
  "${podman[@]}" build --pull=never --network host --quiet -t "$runtime" "$ctx/runtime" >/dev/null
  echo "$runtime"
fi
