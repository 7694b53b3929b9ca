#!/usr/bin/env bash
# Runs the official Midtrans Python client's own test suite against the simulator.
# Usage: scripts/python-client-suite.sh CLIENT_DIR   (an extracted midtrans-python-client checkout)
#
# Starts the simulator on a free loopback port with the merchant keys written in the client's
# tests/config.py, runs its tests with pytest while a plugin of ours
# (scripts/python-client-suite/paylink_simulator_redirect.py) sends the client's calls to the
# simulator, prints the counts, stops the simulator, and exits non-zero when a test in scope fails.
# A call to any other host is refused, so the suite never reaches the internet with the keys in its tests.
set -euo pipefail
client="$(cd "${1:?usage: $0 CLIENT_DIR}" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ -f "$client/tests/config.py" && -d "$client/midtransclient" ]] ||
  { echo "python-client-suite: $client is not a midtrans-python-client checkout" >&2; exit 2; }

# Tests left out, as pytest node ids, each with its reason (none: every test of 1.4.2 runs).
OUT_OF_SCOPE=()

key() { sed -n "s/^$1 *= *['\"]\\([^'\"]*\\)['\"].*/\\1/p" "$client/tests/config.py"; }
server_key="$(key USED_SERVER_KEY)"
client_key="$(key USED_CLIENT_KEY)"
[[ -n "$server_key" && -n "$client_key" ]] ||
  { echo "python-client-suite: no USED_SERVER_KEY / USED_CLIENT_KEY in tests/config.py" >&2; exit 2; }

work="$(mktemp -d)"
sim_pid=''
cleanup() {
  if [[ -n "$sim_pid" ]] && kill -0 "$sim_pid" 2>/dev/null; then
    kill -TERM "$sim_pid" 2>/dev/null || true
    wait "$sim_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

SIMULATOR_PORT=0 SIMULATOR_HOST=127.0.0.1 SIMULATOR_SERVER_KEY="$server_key" SIMULATOR_CLIENT_KEY="$client_key" \
  SIMULATOR_MERCHANTS='' SIMULATOR_NOTIFICATION_URL='' SIMULATOR_TIME_SCALE=1 \
  "$root/node_modules/.bin/tsx" "$root/simulator/main.ts" >"$work/simulator.log" 2>&1 &
sim_pid=$!
base=''
for _ in $(seq 1 300); do
  base="$(sed -n 's/^Midtrans simulator listening on \(http:[^ ]*\).*/\1/p' "$work/simulator.log")"
  [[ -n "$base" ]] && break
  kill -0 "$sim_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z "$base" ]]; then
  echo "python-client-suite: the simulator did not start:" >&2
  cat "$work/simulator.log" >&2
  exit 1
fi
echo "python-client-suite: simulator at $base"

deselect=()
for t in "${OUT_OF_SCOPE[@]+"${OUT_OF_SCOPE[@]}"}"; do deselect+=(--deselect "$t"); done
status=0
total="$(cd "$client" && PYTHONDONTWRITEBYTECODE=1 python3 -m pytest tests -p no:cacheprovider --collect-only -q |
  grep -c '::' || true)"
(cd "$client" && NO_PROXY='127.0.0.1,localhost' no_proxy='127.0.0.1,localhost' PAYLINK_SIMULATOR_URL="$base" \
  PYTHONPATH="$root/scripts/python-client-suite${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
  python3 -m pytest tests -p paylink_simulator_redirect -p no:cacheprovider -q -rfE \
  --junitxml="$work/results.xml" "${deselect[@]+"${deselect[@]}"}") || status=$?

python3 - "$work/results.xml" "$total" <<'PY' || status=1
import sys, xml.etree.ElementTree as ET
suites = ET.parse(sys.argv[1]).getroot()
suite = suites if suites.tag == 'testsuite' else suites.find('testsuite')
tests, failures, errors, skipped = (int(suite.get(k, 0)) for k in ('tests', 'failures', 'errors', 'skipped'))
failed = failures + errors
total = int(sys.argv[2])
print(f'python-client-suite: {total} tests, {total - tests} out of scope, {tests} run: '
      f'{tests - failed - skipped} passed, {failed} failed, {skipped} skipped')
PY
exit "$status"
