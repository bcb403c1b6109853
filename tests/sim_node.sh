# tests/sim_node.sh — sourced by the shell tests that need one simulated
# node's real syncd and audiod (test_libsync_installed.sh, test_python.sh,
# test_mqtt.sh): `sim_node_start BUILD SRCDIR` puts this shell into virtual
# node 2 of tests/data/audiod.ini (the environment README.md "Trying it by
# hand" sets), starts build/bin/syncd and audiod, and waits — by polling
# their devices, with an overall limit — until syncd converts cpu to global
# and audiod has captured a second.  `sim_node_stop` ends both (trap it).
# Needs $CHORUS_RUN (tests/run gives each test its own).

sim_node_start() {
    _b=$1; _src=$2
    export CHORUS_NODE=2 CHORUS_SCENARIO="$_src/tests/data/audiod.ini" \
        CHORUS_SIM_CLOCK="-41.0,27182818284" \
        ALSA_CONFIG_PATH="/usr/share/alsa/alsa.conf:$_b/sim/chorus_sim.conf"
    printf '[device.0]\npcm = chorus_sim\nchannels = 2\nperiods = 64\n' > "$CHORUS_RUN/audiod.conf"
    "$_b/bin/syncd" > "$CHORUS_RUN/syncd.log" 2>&1 & SIM_SYNCD=$!
    "$_b/bin/audiod" -c "$CHORUS_RUN/audiod.conf" > "$CHORUS_RUN/audiod.log" 2>&1 & SIM_AUDIOD=$!
    _i=0
    until "$_b/bin/synctool" convert cpu global 0 >/dev/null 2>&1 &&
        "$_b/bin/chorus-cat" audio/0/status 2>/dev/null | grep -q 'frames captured=[0-9]\{5,\}'; do
        _i=$((_i + 1))
        if [ $_i -gt 300 ]; then
            echo "sim_node: syncd/audiod not ready after 30 s" >&2
            tail -5 "$CHORUS_RUN/syncd.log" "$CHORUS_RUN/audiod.log" >&2
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

# same_arch FILE: true when the ELF FILE is for this machine (its e_machine
# equals /bin/sh's): a library built by `make arm64` cannot be loaded by
# this machine's python or linked by its cc.
same_arch() {
    [ "$(od -An -tx2 -j18 -N2 "$1")" = "$(od -An -tx2 -j18 -N2 /bin/sh)" ]
}
