#!/bin/sh
# tests/test_python.sh BUILD SRCDIR — the chorus Python module (python/chorus,
# over build/lib/libchorus-sync.so.1 by ctypes) tested from Python
# (tests/python/test_chorus.py, unittest) against one simulated node's real
# syncd and audiod.  Debian's python3 and python3-numpy (make deps); 77
# when they are missing.
set -u
b=$1; src=$2
py=/usr/bin/python3
[ -x $py ] && $py -c 'import numpy' 2>/dev/null ||
    { echo "test_python: SKIP: needs /usr/bin/python3 with numpy (python3-numpy, make deps)" >&2; exit 77; }
. "$src/tests/sim_node.sh"
same_arch "$b/lib/libchorus-sync.so.1" ||
    { echo "test_python: SKIP: $b/lib/libchorus-sync.so.1 is not for this machine (a cross build)" >&2; exit 77; }
trap 'sim_node_stop' EXIT INT TERM
sim_node_start "$b" "$src" || { echo "test_python: FAIL: simulated node did not start"; exit 1; }
sleep 1   # the audio test fetches 0.7 s back
cd "$src/tests/python" || exit 1
CHORUS_LIBSYNC="$b/lib/libchorus-sync.so.1" CHORUS_TEST_BIN="$b/bin" PYTHONPATH="$src/python" \
    $py -m unittest -v test_chorus
