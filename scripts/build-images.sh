#!/usr/bin/env bash
# Builds the project's three images, starting a Docker engine first where none is running:
#
#   scripts/build-images.sh [daemon] [server] [router]   # all three when none is named
#   scripts/build-images.sh --engine                     # only make sure an engine runs; prints its DOCKER_HOST
#                                                        # and "started" (by this call) or "running"
#   scripts/build-images.sh --stop-engine                # stop the engine this script started (if it did)
#
# Images (tags as deploy/base/deployment.yaml, runtimes/kserve-onnxserver.yaml and the router docs name them):
#   daemon  deploy/Dockerfile  kserve-compile:<version from pyproject.toml>
#   server  server/Dockerfile  ghcr.io/kserve-compile/onnxserver:latest  (ONNXRUNTIME=gpu: :latest-gpu)
#   router  router/Dockerfile  ghcr.io/kserve-compile/router:latest
#
# The engine: the one DOCKER_HOST or the default socket names, if it answers. Otherwise, as root, this script starts
# Debian's dockerd (installing docker.io with apt if needed) with its own data root under the cache directory
# (layers are kept between runs), --bridge=none and --iptables=false: containers get the host's network or none,
# and the host's firewall and interfaces are left alone. It prints `export DOCKER_HOST=...` for later commands.
#
# The base image, python:3.11-slim-bookworm: used as is when present or pullable. Where no registry answers, an
# equivalent is built from Debian's archive (mmdebstrap: bookworm's python3 3.11, venv, pip, ca-certificates, this
# machine's CA bundle so pip inside a build reaches the package index through this network) and tagged with that
# name, labelled org.kserve-compile.local-base=true, so the Dockerfiles build unchanged.
#
# Exit status: 0 built; 1 a build failed; 3 no engine could be started (the reason is printed).
#
# Environment:
#   ONNXRUNTIME=cpu|gpu      the server image's ONNX Runtime (default cpu; see server/Dockerfile)
#   KSERVE_DOCKER_STATE      the started engine's data root (default ${XDG_CACHE_HOME:-~/.cache}/kserve-compile/docker)
#   KSERVE_BASE=auto|local   local: build the Debian base even if a registry answers (default auto)
#   IIDFILE_DIR              write each built image's ID to DIR/NAME.iid (the tests run images by ID, so two
#                            checkouts building the same tags at once cannot swap each other's images)
set -euo pipefail
cd "$(dirname "$0")/.."

STATE="${KSERVE_DOCKER_STATE:-${XDG_CACHE_HOME:-$HOME/.cache}/kserve-compile/docker}"
RUNDIR="${KSERVE_DOCKER_RUN:-/tmp/kserve-compile-docker.$(id -u)}"  # sockets: short paths (108-byte limit)
OWN_HOST="unix://$RUNDIR/docker.sock"
BASE=python:3.11-slim-bookworm
ONNXRUNTIME="${ONNXRUNTIME:-cpu}"
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -n1)"

log() { echo "build-images: $*" >&2; }
now() { date +%s; }
no_engine() { log "no Docker engine: $*"; exit 3; }

engine_answers() { timeout 20 docker info >/dev/null 2>&1; }

start_own_engine() {
  [ "$(id -u)" = 0 ] || no_engine "none answers${DOCKER_HOST:+ at $DOCKER_HOST}, and starting dockerd needs root"
  if ! command -v dockerd >/dev/null; then
    command -v apt-get >/dev/null || no_engine "dockerd is not installed and there is no apt-get to install it"
    log "installing docker.io with apt"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io; } >&2 \
      || no_engine "apt-get install docker.io failed"
  fi
  mkdir -p "$STATE/data" "$RUNDIR"
  log "starting dockerd (data root $STATE/data, socket $RUNDIR/docker.sock, log $STATE/dockerd.log)"
  # (9>&-: dockerd must not inherit the start lock, or it would hold it for as long as it runs)
  setsid dockerd --data-root "$STATE/data" --exec-root "$RUNDIR/exec" --pidfile "$RUNDIR/dockerd.pid" \
    -H "$OWN_HOST" --bridge=none --iptables=false --ip-masq=false >"$STATE/dockerd.log" 2>&1 </dev/null 9>&- &
  local i
  for i in $(seq 1 60); do
    if DOCKER_HOST="$OWN_HOST" engine_answers; then return 0; fi
    if ! kill -0 $! 2>/dev/null; then break; fi
    sleep 1
  done
  kill $! 2>/dev/null || true
  no_engine "dockerd did not come up; the end of its log ($STATE/dockerd.log):
$(tail -n 15 "$STATE/dockerd.log")"
}

# Sets DOCKER_HOST to an engine that answers, starting ours if needed (ENGINE_STATE: running or started).
ENGINE_STATE=running
ensure_engine() {
  if engine_answers; then return 0; fi
  if [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != "$OWN_HOST" ]; then
    no_engine "DOCKER_HOST=$DOCKER_HOST does not answer"
  fi
  export DOCKER_HOST="$OWN_HOST"
  if engine_answers; then return 0; fi
  mkdir -p "$RUNDIR"
  exec 9>"$RUNDIR/start.lock"
  flock 9  # two callers at once: one starts it, the other finds it running
  if ! engine_answers; then start_own_engine; ENGINE_STATE=started; fi
  exec 9>&-
}

stop_own_engine() {
  local pid
  pid="$(cat "$RUNDIR/dockerd.pid" 2>/dev/null || true)"
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then log "no engine started by this script is running"; return 0; fi
  log "stopping dockerd ($pid)"
  kill -TERM "$pid"
  local i
  for i in $(seq 1 30); do kill -0 "$pid" 2>/dev/null && sleep 1 || break; done
  if kill -0 "$pid" 2>/dev/null; then
    log "dockerd ($pid) still running after 30 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # dockerd leaves the host network namespace bind-mounted under its exec root
  umount "$RUNDIR/exec/netns/default" 2>/dev/null || true
  log "stopped"
}

# The legacy builder where the client has no BuildKit (a docker CLI without buildx); the Dockerfiles need neither.
choose_builder() {
  if docker buildx version >/dev/null 2>&1; then export DOCKER_BUILDKIT=1; else export DOCKER_BUILDKIT=0; fi
}

build_local_base() {
  [ "$(id -u)" = 0 ] || { log "error: building the local base image needs root (mmdebstrap)"; exit 1; }
  command -v mmdebstrap >/dev/null || {
    log "installing mmdebstrap with apt"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap; } >&2
  }
  local t0 tmp aptopts=()
  t0=$(now)
  tmp="$(mktemp -d)"
  # A mirror snapshot has an expired Release date; keep the host's answer to that inside the image's apt too.
  if apt-config dump | grep -q 'Acquire::Check-Valid-Until "false"'; then
    aptopts+=(--aptopt='Acquire::Check-Valid-Until "false"')
  fi
  log "building $BASE from Debian bookworm (mmdebstrap)"
  mmdebstrap --quiet --variant=apt --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
    "${aptopts[@]}" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='copy-in /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs' \
    --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
    bookworm "$tmp/rootfs.tar" >&2
  docker import --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' \
    --change 'LABEL org.kserve-compile.local-base=true' "$tmp/rootfs.tar" "$BASE" >/dev/null
  rm -rf "$tmp"
  log "base image: $(( $(now) - t0 )) s"
}

ensure_base() {
  if docker image inspect "$BASE" >/dev/null 2>&1; then return 0; fi
  if [ "${KSERVE_BASE:-auto}" != local ] && timeout 120 docker pull "$BASE" >&2 2>/dev/null; then return 0; fi
  log "$BASE cannot be pulled here; building an equivalent locally"
  build_local_base
}

is_local_base() { [ "$(docker image inspect -f '{{index .Config.Labels "org.kserve-compile.local-base"}}' "$BASE")" = true ]; }

# pip settings for the build stages: the local base holds this machine's CA bundle; an index URL pip uses here is
# passed on (a file:// index is not, it is not inside the build).
pip_build_args() {
  local args=() index
  if is_local_base; then args+=(--build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt); fi
  index="${PIP_INDEX_URL:-$(pip config get global.index-url 2>/dev/null || true)}"
  case "$index" in http*) args+=(--build-arg "PIP_INDEX_URL=$index") ;; esac
  echo "${args[@]}"
}

build_image() {
  local name="$1" dockerfile tag extra=()
  case "$name" in
    daemon) dockerfile=deploy/Dockerfile tag="kserve-compile:$VERSION" ;;
    server)
      dockerfile=server/Dockerfile tag=ghcr.io/kserve-compile/onnxserver:latest
      extra=(--build-arg "ONNXRUNTIME=$ONNXRUNTIME")
      [ "$ONNXRUNTIME" = cpu ] || tag="$tag-$ONNXRUNTIME"
      ;;
    router) dockerfile=router/Dockerfile tag=ghcr.io/kserve-compile/router:latest ;;
    *) log "error: unknown image '$name' (daemon, server or router)"; exit 2 ;;
  esac
  local t0; t0=$(now)
  log "building $tag ($dockerfile)"
  # shellcheck disable=SC2046
  if ! docker build --network host -f "$dockerfile" -t "$tag" $(pip_build_args) "${extra[@]}" \
    ${IIDFILE_DIR:+--iidfile "$IIDFILE_DIR/$name.iid"} . >&2; then
    log "error: building $tag failed"
    exit 1
  fi
  log "$tag: $(( $(now) - t0 )) s, $(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')"
}

main() {
  case "${1:-}" in
    --engine) ensure_engine; echo "$DOCKER_HOST $ENGINE_STATE"; return 0 ;;
    --stop-engine) stop_own_engine; return 0 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; return 0 ;;
  esac
  local images=("$@")
  [ ${#images[@]} -gt 0 ] || images=(daemon server router)
  ensure_engine
  choose_builder
  ensure_base
  local name
  for name in "${images[@]}"; do build_image "$name"; done
  echo "export DOCKER_HOST=$DOCKER_HOST"
}

main "$@"
