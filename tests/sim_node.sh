# tests/sim_node.sh — sourced by the shell tests that need one simulated
# node's real syncd and audiod (test_libsync_installed.sh, test_python.sh,
# test_mqtt.sh, test_collab_resume.sh): `sim_node_start BUILD SRCDIR` puts this shell into virtual
# node 2 of tests/data/audiod.ini (the environment README.md "Trying it by
# hand" sets), starts build/bin/syncd and audiod, and waits — by polling
# their devices, with an overall limit — until syncd converts cpu to global
# and audiod has captured a second.  `sim_node_stop` ends both (trap it).
# Needs $CHORUS_RUN (tests/run gives each test its own).

sim_node_start() {
    _b=$1; _src=$2
    export CHORUS_NODE=2 CHORUS_SCENARIO="$_src/tests/data/audiod.ini" \
        CHORUS_SIM_CLOCK="-41.0,27182818284" \
        ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$_b/sim/chorus_sim.conf" \
        G_SLICE=always-malloc # as the units set it (libdev/heap.h)
    printf '[device.0]\npcm = chorus_sim\nchannels = 2\nperiods = 64\n' > "$CHORUS_RUN/audiod.conf"
    # A node alone (no network: a networked syncd needs the field's key).
    "$_b/bin/syncd" -c "$_src/tests/data/syncd-alone.conf" > "$CHORUS_RUN/syncd.log" 2>&1 & SIM_SYNCD=$!
    "$_b/bin/audiod" -c "$CHORUS_RUN/audiod.conf" > "$CHORUS_RUN/audiod.log" 2>&1 & SIM_AUDIOD=$!
    _i=0
    until "$_b/bin/synctool" convert cpu global 0 >/dev/null 2>&1 &&
        "$_b/bin/chorus-cat" audio/0/status 2>/dev/null | grep -q 'frames captured=[0-9]\{5,\}'; do
        _i=$((_i + 1))
        if [ $_i -gt 300 ]; then
            echo "sim_node: syncd/audiod not ready after 30 s" >&2
            tail -n 5 "$CHORUS_RUN/syncd.log" "$CHORUS_RUN/audiod.log" >&2
            return 1
        fi
        sleep 0.1
    done
}

sim_node_stop() {
    kill ${SIM_AUDIOD:-} ${SIM_SYNCD:-} 2>/dev/null
    wait ${SIM_AUDIOD:-} ${SIM_SYNCD:-} 2>/dev/null
    SIM_AUDIOD=; SIM_SYNCD=
}

# A test's failure and its waits, shared by the shell tests: st_fail NAME
# LOGS... prints "NAME: FAIL: …" (the message is st_msg) and the last lines
# of each log file under $w, then exits 1; wait_for SECONDS DESCRIPTION
# COMMAND... polls every 0.1 s until COMMAND succeeds, calling the test's
# fail() after SECONDS of wall-clock time.
st_fail() {
    echo "$1: FAIL: $st_msg"
    shift
    for f in "$@"; do
        [ -f "$w/$f" ] && { echo "--- $f"; tail -8 "$w/$f"; }
    done
    exit 1
}
wait_for() {
    _end=$(($(date +%s) + $1)); _d=$2; shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge $_end ] && fail "timed out waiting for $_d"
        sleep 0.1
    done
}

# same_arch FILE: true when the ELF FILE is for this machine (its e_machine
# equals /bin/sh's): a library built by `make arm64` cannot be loaded by
# this machine's python or linked by its cc.
same_arch() {
    [ "$(od -An -tx2 -j18 -N2 "$1")" = "$(od -An -tx2 -j18 -N2 /bin/sh)" ]
}
