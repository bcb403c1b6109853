#!/bin/sh
# tests/test_web_api.sh BUILD SRCDIR — chorus-web's HTTP API on a small
# simulated field (tests/web_field.sh: six nodes, chorus-sim --web): every
# endpoint (nodes and their health, calls with ellipses, truth, detections,
# spectrogram, a call's aligned clips as WAV, audio by global time, the
# device browser, the live stream) and the refusals (no token, a wrong one,
# malformed parameters, each naming the parameter), a browser that never
# reads, and a node shown down when its proxy dies, by tests/web_api.py.
# Exit 0 pass, 1 fail, 77 without python3.
set -u
b=$1; src=$2
command -v /usr/bin/python3 >/dev/null || { echo "test_web_api: SKIP: python3 not found (make deps)"; exit 77; }
. "$src/tests/web_field.sh"
fail() { web_test_fail test_web_api "$*"; }
web_test_field test_web_api "$b" "$src"
/usr/bin/python3 "$src/tests/web_api.py" "$WEB_BASE" "$WEB_TOKEN" "$WEB_NODES" "$WEB_DIR/sim/proxy.conf" || fail "the API (above)"
kill -0 "$WEB_SIM" || fail "chorus-sim is gone"
echo "test_web_api: PASS"
