#!/usr/bin/env bash
# Builds, once, the control-plane binaries the integration tests run (tests/integration/) and prints the directory
# that holds them, as `setup-envtest use -p path` does:
#
#   export KUBEBUILDER_ASSETS="$(scripts/kube-assets.sh)"
#
# The directory holds kube-apiserver, kube-controller-manager (Kubernetes 1.20.2, built from Debian bookworm's
# `kubernetes` source package, which carries its vendored dependencies) and etcd (Debian's etcd-server, 3.4). Nothing
# is fetched from outside Debian's archive. A second run finds the binaries and prints the directory at once.
#
# Run as root on Debian, it installs what it needs with apt (and adds a deb-src entry for bookworm, in a file of its
# own); otherwise it names what is missing and exits 1. Logs go to stderr; stdout is the directory alone.
#
# Environment:
#   KUBE_ASSETS_DIR   where the binaries go (default ${XDG_CACHE_HOME:-~/.cache}/kserve-compile/kube-assets/1.20.2)
#   KUBE_ASSETS_WORK  where the source is unpacked and built (default: <KUBE_ASSETS_DIR>.build; removed on success
#                     unless KUBE_ASSETS_KEEP_WORK=1)
#
# Why the reflect2 swap: Kubernetes 1.20 vendors github.com/modern-go/reflect2 1.0.1, which reads Go's map internals
# as they were before Go 1.18; built with Debian's Go 1.19 the apiserver dies on its first requests ("unexpected
# fault address" in map iteration). Debian's reflect2 1.0.2 (golang-github-modern-go-reflect2-dev) is the fixed
# release, with the same API.
set -euo pipefail

VERSION=1.20.2
DEST="${KUBE_ASSETS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kserve-compile/kube-assets/$VERSION}"
WORK="${KUBE_ASSETS_WORK:-$DEST.build}"
BINARIES=(kube-apiserver kube-controller-manager etcd)
APT_PACKAGES=(golang-go rsync jq make dpkg-dev etcd-server golang-github-modern-go-reflect2-dev)
REFLECT2_SRC=/usr/share/gocode/src/github.com/modern-go/reflect2
SRC_LIST=/etc/apt/sources.list.d/kserve-compile-bookworm-src.sources

log() { echo "kube-assets: $*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s; }

have_all() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$DEST/$b" ] || return 1; done
  [ -f "$DEST/VERSION" ]
}

# `apt-get source` needs a deb-src entry; bookworm's sources.list often has none.
ensure_deb_src() {
  if apt-get indextargets --format '$(IDENTIFIER)' 2>/dev/null | grep -qx 'Sources'; then return 0; fi
  log "adding a deb-src entry for bookworm ($SRC_LIST)"
  cat >"$SRC_LIST" <<'EOF'
# Added by kserve-compile's scripts/kube-assets.sh: `apt-get source kubernetes` needs bookworm's sources.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
}

missing_prerequisites() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  echo "${missing[@]}"
}

install_prerequisites() {
  local missing
  missing="$(missing_prerequisites)"
  command -v apt-get >/dev/null || die "not a Debian system (no apt-get): build kube-apiserver, kube-controller-manager and etcd yourself, or use setup-envtest, and point KUBEBUILDER_ASSETS at them"
  if [ "$(id -u)" != 0 ]; then
    if [ -n "$missing" ]; then
      die "missing Debian packages: $missing; run as root, or: sudo apt-get install $missing (and add a deb-src entry for bookworm)"
    fi
    apt-get indextargets --format '$(IDENTIFIER)' 2>/dev/null | grep -qx 'Sources' \
      || die "no deb-src entry: add one for bookworm and run apt-get update as root (apt-get source kubernetes needs it)"
    return 0
  fi
  local t0; t0=$(now)
  ensure_deb_src
  log "apt-get update; installing: ${missing:-(nothing missing)}"
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  [ -z "$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
  log "apt: $(( $(now) - t0 )) s"
}

fetch_source() {
  rm -rf "$WORK" && mkdir -p "$WORK"
  local t0; t0=$(now)
  log "apt-get source kubernetes (into $WORK)"
  (cd "$WORK" && apt-get source -qq --only-source kubernetes >&2)
  SRCDIR="$(find "$WORK" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)"
  [ -n "$SRCDIR" ] || die "apt-get source kubernetes left no kubernetes-* directory in $WORK"
  log "source: $SRCDIR ($(( $(now) - t0 )) s)"
}

# What debian/rules does: a GOPATH whose k8s.io/kubernetes is the source tree, CGO off (static binaries).
build() {
  [ -d "$REFLECT2_SRC" ] || die "$REFLECT2_SRC missing (package golang-github-modern-go-reflect2-dev)"
  rm -rf "$SRCDIR/vendor/github.com/modern-go/reflect2"
  cp -r "$REFLECT2_SRC" "$SRCDIR/vendor/github.com/modern-go/reflect2"
  mkdir -p "$WORK/gopath/src/k8s.io" "$WORK/gocache"
  ln -sfn "$SRCDIR" "$WORK/gopath/src/k8s.io/kubernetes"
  local t0; t0=$(now)
  log "make WHAT='cmd/kube-apiserver cmd/kube-controller-manager' (5-9 min on 2 cores)"
  (
    cd "$WORK/gopath/src/k8s.io/kubernetes"
    export GOPATH="$WORK/gopath" GOCACHE="$WORK/gocache" CGO_ENABLED=0
    export KUBE_GIT_TREE_STATE=clean KUBE_GIT_VERSION="v$VERSION" KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20
    make WHAT='cmd/kube-apiserver cmd/kube-controller-manager' >&2
  )
  log "kube build: $(( $(now) - t0 )) s"
}

install_binaries() {
  local out="$WORK/gopath/src/k8s.io/kubernetes/_output/local/bin/linux/amd64" tmp="$DEST.tmp"
  [ -d "$out" ] || out="$(dirname "$(find "$SRCDIR/_output" -type f -name kube-apiserver | head -n1)")"
  rm -rf "$tmp" && mkdir -p "$tmp"
  cp "$out/kube-apiserver" "$out/kube-controller-manager" "$tmp/"
  cp "$(command -v etcd || echo /usr/bin/etcd)" "$tmp/etcd"
  {
    echo "kubernetes $VERSION (Debian source package $(basename "$SRCDIR"), reflect2 from $(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev))"
    echo "etcd $(dpkg-query -W -f='${Version}' etcd-server)"
    echo "go $(go version | awk '{print $3}')"
  } >"$tmp/VERSION"
  rm -rf "$DEST" && mv "$tmp" "$DEST"
}

main() {
  if have_all; then echo "$DEST"; exit 0; fi
  mkdir -p "$(dirname "$DEST")"
  exec 9>"$DEST.lock"
  flock 9  # a second run waits for the first, then finds its binaries
  if have_all; then echo "$DEST"; exit 0; fi
  local t0; t0=$(now)
  install_prerequisites
  fetch_source
  build
  install_binaries
  [ "${KUBE_ASSETS_KEEP_WORK:-0}" = 1 ] || rm -rf "$WORK"
  log "done in $(( $(now) - t0 )) s: $DEST"
  echo "$DEST"
}

main "$@"
