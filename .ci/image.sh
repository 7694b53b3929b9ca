#!/usr/bin/env bash
# Builds the container image from the Dockerfile with podman and starts it without a container
# engine: the image is mounted read-only and its default command runs under chroot as the image's
# user, with /data, /logs and /tmp bound to fresh directories. Then it checks /health/ready, a
# created payment link and a gateway notification processed end to end, and a clean stop.
#
# No registry is reachable here, so the Dockerfile's NODE_IMAGE is a local base made once per run:
# Debian bookworm (debootstrap, minbase) plus this machine's own node, npm and Node headers, laid
# out as the official Node image has them (/usr/local). npm reaches its registry through a
# TLS-inspecting proxy, so the build gets this machine's CA bundle as the npm_ca build secret
# (used by the npm ci step only; no layer holds it).
#
# Everything lives under one temporary directory (podman's storage included) and is removed on
# exit, with every mount undone and the service stopped, whether the run passed or failed.
# Prints IMAGE-FIGURES: the image size and the time from start to /health/ready.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

say() { printf 'image: %s\n' "$*" >&2; }
fail() {
  printf 'image: FAILED: %s\n' "$*" >&2
  exit 1
}

# --- tools ---
missing=()
for tool in podman debootstrap curl; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman debootstrap curl uidmap fuse-overlayfs >/dev/null
fi
for tool in podman debootstrap curl chroot mount umount; do command -v "$tool" >/dev/null 2>&1 || fail "$tool is not available"; done

# Work directories a killed run (SIGKILL, a machine stop) could not remove: undo their mounts and
# remove them, when the run that made them is gone.
for stale in /var/tmp/paylink-image-*; do
  [ -d "$stale" ] || continue
  owner="$(cat "$stale/pid" 2>/dev/null || true)"
  if [ -n "$owner" ] && kill -0 "$owner" 2>/dev/null; then continue; fi
  say "removing $stale, left by an earlier run"
  grep -o " $stale[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  rm -rf "$stale"
done

WORK="$(mktemp -d /var/tmp/paylink-image-XXXXXX)"
echo $$ >"$WORK/pid"
STORE=(--root "$WORK/storage" --runroot "$WORK/run")
SERVICE_PID=""
MNT=""
BINDS=()

cleanup() {
  local rc=$?
  set +e
  if [ -n "$SERVICE_PID" ] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -KILL "$SERVICE_PID" 2>/dev/null
    wait "$SERVICE_PID" 2>/dev/null
  fi
  for ((i = ${#BINDS[@]} - 1; i >= 0; i--)); do
    umount "${BINDS[$i]}" 2>/dev/null || umount -l "${BINDS[$i]}" 2>/dev/null
  done
  [ -n "$MNT" ] && podman "${STORE[@]}" --storage-driver "${DRIVER:-vfs}" image umount --all >/dev/null 2>&1
  if [ -d "$WORK/storage" ]; then
    podman "${STORE[@]}" --storage-driver "${DRIVER:-vfs}" rmi --all --force >/dev/null 2>&1
    # The storage's own mounts (overlay layers, its shm), if any are left.
    grep -o " $WORK[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  fi
  rm -rf "$WORK" 2>/dev/null || { chattr -R -i "$WORK" 2>/dev/null; rm -rf "$WORK"; }
  if grep -q " $WORK" /proc/mounts; then
    say "mounts left under $WORK"
    rc=1
  fi
  [ $rc -eq 0 ] || say "exit $rc"
  exit $rc
}
trap cleanup EXIT
# A signal ends the run through the EXIT trap too, so its cleanup runs.
trap 'exit 130' INT
trap 'exit 143' TERM

# --- storage: overlay where the kernel allows it (much faster), vfs otherwise ---
DRIVER=vfs
if podman "${STORE[@]}" --storage-driver overlay info >/dev/null 2>&1; then DRIVER=overlay; fi
PODMAN=(podman "${STORE[@]}" --storage-driver "$DRIVER")
say "podman $(podman --version | awk '{print $3}'), storage $DRIVER, work dir $WORK"

# --- local base image: bookworm minbase + this machine's node ---
# This machine's Debian mirror (classic or deb822 sources, comments skipped).
MIRROR="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | grep -vE '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -1 || true)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
NODE_BIN="$(command -v node)"
NPM_DIR="$(npm root -g 2>/dev/null)/npm"
NODE_HEADERS="$(dirname "$(dirname "$NODE_BIN")")/include/node"
[ -f "$NPM_DIR/bin/npm-cli.js" ] || fail "npm not found at $NPM_DIR"
[ -f "$NODE_HEADERS/node.h" ] || fail "Node headers not found at $NODE_HEADERS (node-gyp needs them to build better-sqlite3)"
say "debootstrap bookworm from $MIRROR"
t=$SECONDS
debootstrap --variant=minbase bookworm "$WORK/rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; fail "debootstrap"; }
install -D -m 0755 "$NODE_BIN" "$WORK/rootfs/usr/local/bin/node"
mkdir -p "$WORK/rootfs/usr/local/lib/node_modules" "$WORK/rootfs/usr/local/include"
cp -a "$NPM_DIR" "$WORK/rootfs/usr/local/lib/node_modules/npm"
cp -a "$NODE_HEADERS" "$WORK/rootfs/usr/local/include/node"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$WORK/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$WORK/rootfs/usr/local/bin/npx"
chroot "$WORK/rootfs" /usr/local/bin/node --version >/dev/null || fail "the machine's node does not run in the bookworm base"
tar -C "$WORK/rootfs" -c . | "${PODMAN[@]}" import --quiet - localhost/paylink-ci-base:bookworm >/dev/null
rm -rf "$WORK/rootfs"
say "base image ready ($((SECONDS - t)) s)"

# --- build ---
VERSION="$(node -p 'require("./package.json").version')"
CA="$(npm config get cafile 2>/dev/null || true)"
[ -n "$CA" ] && [ "$CA" != "null" ] && [ "$CA" != "undefined" ] && [ -f "$CA" ] || CA="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
[ -f "$CA" ] || fail "no CA bundle for the build's npm ci"
say "building paylink:$VERSION"
t=$SECONDS
"${PODMAN[@]}" build --format docker --isolation chroot --pull=never \
  --build-arg NODE_IMAGE=localhost/paylink-ci-base:bookworm --build-arg VERSION="$VERSION" \
  --secret id=npm_ca,src="$CA" -t localhost/paylink:ci "$ROOT" >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; fail "podman build"; }
BUILD_S=$((SECONDS - t))
say "built in ${BUILD_S} s"

# --- what the image declares ---
inspect() { "${PODMAN[@]}" image inspect --format "$1" localhost/paylink:ci; }
USER_NAME="$(inspect '{{.Config.User}}')"
[ "$USER_NAME" = "paylink" ] || fail "image user is '$USER_NAME', not paylink"
[ "$(inspect '{{json .Config.Cmd}}')" = '["paylink","serve"]' ] || fail "default command is $(inspect '{{json .Config.Cmd}}')"
[ "$(inspect '{{.Config.StopSignal}}')" = "SIGTERM" ] || fail "stop signal is $(inspect '{{.Config.StopSignal}}')"
inspect '{{json .Config.Healthcheck}}' | grep -q '/health/live' || fail "no HEALTHCHECK on /health/live"
inspect '{{json .Config.Volumes}}' | grep -q '"/data"' || fail "no /data volume"
inspect '{{json .Config.Volumes}}' | grep -q '"/logs"' || fail "no /logs volume"
[ "$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')" = "$VERSION" ] || fail "version label is not $VERSION"
SIZE_BYTES="$(inspect '{{.Size}}')"

# --- start it: the mounted image, read-only, by chroot as its user ---
MNT="$("${PODMAN[@]}" image mount localhost/paylink:ci)"
[ -d "$MNT/app/dist/src" ] || fail "no /app/dist/src in the image"
[ ! -e "$MNT/app/src" ] || fail "the image holds the TypeScript sources"
[ ! -e "$MNT/app/node_modules/typescript" ] || fail "the image holds dev dependencies (typescript)"
# The build's CA secret must not have reached a layer.
leaked="$(find "$MNT" -xdev -type f -size "$(stat -c %s "$CA")c" -exec cmp -s "$CA" {} \; -print 2>/dev/null | head -1)"
[ -z "$leaked" ] || fail "the build's CA bundle is in the image at ${leaked#"$MNT"}"
UID_N="$(awk -F: '$1=="paylink"{print $3}' "$MNT/etc/passwd")"
GID_N="$(awk -F: '$1=="paylink"{print $4}' "$MNT/etc/passwd")"
[ -n "$UID_N" ] && [ "$UID_N" != 0 ] || fail "no non-root paylink user in /etc/passwd"
for d in data logs tmp; do
  mkdir -p "$WORK/$d"
  chown "$UID_N:$GID_N" "$WORK/$d"
  mount --bind "$WORK/$d" "$MNT/$d"
  BINDS+=("$MNT/$d")
done
chmod 1777 "$WORK/tmp"
mount -t proc proc "$MNT/proc" || fail "mount proc"
BINDS+=("$MNT/proc")
mount --bind /dev "$MNT/dev" || fail "bind /dev"
BINDS+=("$MNT/dev")

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
PORT="$(free_port)"
SIM_PORT="$(free_port)"
API_KEY="ci-image-api-key-$RANDOM$RANDOM"
BASE="http://127.0.0.1:$PORT"
mapfile -t IMAGE_ENV < <(inspect '{{range .Config.Env}}{{println .}}{{end}}' | grep -v '^$')
mapfile -t CMD < <(inspect '{{range .Config.Cmd}}{{println .}}{{end}}' | grep -v '^$')
WORKDIR="$(inspect '{{.Config.WorkingDir}}')"
# The image's environment, then this check's: loopback ports, the embedded simulator (so not
# production, which refuses it), an API key and operator credentials.
START_NS=$(date +%s%N)
chroot --userspec="$UID_N:$GID_N" "$MNT" /usr/bin/env -i -C "$WORKDIR" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${IMAGE_ENV[@]}" \
  NODE_ENV=development HOST=127.0.0.1 PORT="$PORT" SIMULATOR_PORT="$SIM_PORT" PUBLIC_BASE_URL="$BASE" \
  API_KEYS="$API_KEY" log_user=ci log_pass=ci-image-operator-pass "${CMD[@]}" >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!

ready=""
for _ in $(seq 1 600); do
  kill -0 "$SERVICE_PID" 2>/dev/null || { tail -30 "$WORK/service.log" >&2; fail "the service exited during start-up"; }
  if curl -fsS -m 2 "$BASE/health/ready" -o "$WORK/ready.json" 2>/dev/null; then ready=1; break; fi
  sleep 0.1
done
READY_MS=$((($(date +%s%N) - START_NS) / 1000000))
[ -n "$ready" ] || { tail -30 "$WORK/service.log" >&2; fail "/health/ready did not answer 200 within 60 s"; }
grep -q '"status":"ready"' "$WORK/ready.json" || fail "/health/ready: $(cat "$WORK/ready.json")"
curl -fsS "$BASE/health/live" | grep -q '"live"' || fail "/health/live"
curl -fsS "$BASE/health" | grep -q "\"version\":\"$VERSION\"" || fail "/health does not report version $VERSION"
say "ready after ${READY_MS} ms"

# A payment link, paid on the embedded simulator: its notification reaches the webhook, is
# verified, confirmed and applied.
ORDER="CI-IMAGE/$RANDOM:1"
ENC="$(node -p 'encodeURIComponent(process.argv[1])' "$ORDER")"
code="$(curl -sS -o "$WORK/link.json" -w '%{http_code}' -X POST "$BASE/api/payment-links" -H "authorization: Bearer $API_KEY" -H 'content-type: application/json' -d "{\"order_id\":\"$ORDER\",\"nominal\":150000}")"
[ "$code" = 201 ] || fail "link creation answered $code: $(cat "$WORK/link.json")"
GW_ORDER="$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).gateway_order_id' "$WORK/link.json")"
node -e 'const l=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); if(!/^http:\/\/127\.0\.0\.1:\d+\/payment-links\//.test(l.payment_url)) process.exit(1)' "$WORK/link.json" || fail "no payment_url in $(cat "$WORK/link.json")"
say "link created: $ORDER"
curl -fsS -X POST "http://127.0.0.1:$SIM_PORT/_sim/transactions/$GW_ORDER/pay" -H 'content-type: application/json' -d '{"payment_type":"bank_transfer"}' >/dev/null || fail "the simulator did not take the payment"
paid=""
for _ in $(seq 1 100); do
  if curl -fsS "$BASE/api/payment-links/$ENC" -H "authorization: Bearer $API_KEY" | grep -q '"status":"paid"'; then paid=1; break; fi
  sleep 0.1
done
[ -n "$paid" ] || { tail -20 "$WORK/service.log" >&2; fail "the gateway notification was not processed (link not paid)"; }
# stdout is written in batches (at most 100 ms late, see src/platform/logging/logger.ts): the
# request's line may follow the committed payment by that much.
logged=""
for _ in $(seq 1 30); do
  if grep -q '"url":"/webhook/midtrans"' "$WORK/service.log"; then logged=1; break; fi
  sleep 0.1
done
[ -n "$logged" ] || fail "no webhook request in the service log within 3 s of the payment"
say "webhook processed: $ORDER paid"

# Files written by the service belong to the image's user, not root.
[ "$(stat -c %u "$WORK/data/paylink.db")" = "$UID_N" ] || fail "the database file is not owned by uid $UID_N"
ls "$WORK/logs"/*.log >/dev/null 2>&1 || fail "no log file in /logs"

kill -TERM "$SERVICE_PID"
for _ in $(seq 1 200); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SERVICE_PID" 2>/dev/null && fail "the service did not stop within 20 s of SIGTERM"
rc=0
wait "$SERVICE_PID" || rc=$?
SERVICE_PID=""
[ "$rc" = 0 ] || fail "the service exited $rc on SIGTERM"

SIZE_MB="$(node -p "($SIZE_BYTES/1e6).toFixed(1)")"
BASE_MB="$(node -p "($("${PODMAN[@]}" image inspect --format '{{.Size}}' localhost/paylink-ci-base:bookworm)/1e6).toFixed(1)")"
echo "IMAGE-FIGURES size_mb=$SIZE_MB base_mb=$BASE_MB ready_ms=$READY_MS build_s=$BUILD_S storage=$DRIVER base=debootstrap-bookworm-minbase+node-$(node --version)"
say "passed"
