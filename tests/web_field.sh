# tests/web_field.sh — sourced by the chorus-web tests and bench/web: a
# small simulated field (chorus-sim, sim/scenarios/default.ini: six nodes
# with syncd, audiod, fft, detect, collab) with --web: chorus-proxy on
# every node and chorus-web on a free loopback port.
#   web_field_start BUILD SRCDIR DIR SECONDS   start it (in the background)
#   web_field_wait_calls N TIMEOUT             until collab located N calls
#   web_field_stop                             SIGTERM chorus-sim, wait
# Sets WEB_URL (with the token), WEB_BASE (without), WEB_TOKEN, WEB_NODES
# (the nodes file) and WEB_DIR.
WEB_SIM=
web_field_start() {
    _b=$1; _src=$2; WEB_DIR=$3; _secs=$4
    mkdir -p "$WEB_DIR"
    _port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # collab's share port (UDP) and clip ports (TCP, clip_port + node for
    # the six nodes): tests/free_base.py.
    _base=$(/usr/bin/python3 "$_src/tests/free_base.py") || return 1
    printf '[collab]\nnodes = %s/sim/nodes.txt\nshare_address = 127.255.255.255\nshare_port = %d\nclip_port = %d\nmap_every = 1000\nkey_file = %s/sim/network.key\n' \
        "$WEB_DIR" "$_base" $((_base + 1)) "$WEB_DIR" > "$WEB_DIR/collab.conf"
    nice -n 5 "$_b/bin/chorus-sim" "$_src/sim/scenarios/default.ini" --duration "$_secs" --out "$WEB_DIR/sim" --bin "$_b/bin" \
        --app fft --app "detect -p $_src/apps/profiles/frog.ini" \
        --app "collab -c $WEB_DIR/collab.conf --jsonl $WEB_DIR/node%n-collab.jsonl" \
        --web "$_port" > "$WEB_DIR/sim.log" 2>&1 & WEB_SIM=$!
    _i=0
    until grep -q 'live view: http' "$WEB_DIR/sim.log" 2>/dev/null; do
        _i=$((_i + 1))
        if [ $_i -gt 600 ] || ! kill -0 "$WEB_SIM" 2>/dev/null; then
            echo "web_field: chorus-sim --web did not start the view:"; tail -5 "$WEB_DIR/sim.log"; return 1
        fi
        sleep 0.1
    done
    WEB_URL=$(sed -n 's/.*live view: \(http[^ ]*\).*/\1/p' "$WEB_DIR/sim.log" | head -1)
    WEB_BASE=${WEB_URL%%/\?*}
    WEB_TOKEN=${WEB_URL##*token=}
    WEB_NODES=$WEB_DIR/sim/nodes.txt
}
web_field_wait_calls() {
    _i=0
    while [ "$(cat "$WEB_DIR"/node*-collab.jsonl 2>/dev/null | grep -c '"status":"ok"')" -lt "$1" ]; do
        _i=$((_i + 1)); [ $_i -gt $(($2 * 10)) ] && return 1
        kill -0 "$WEB_SIM" 2>/dev/null || return 1
        sleep 0.1
    done
}
web_field_stop() {
    [ -n "$WEB_SIM" ] && kill "$WEB_SIM" 2>/dev/null && wait "$WEB_SIM" 2>/dev/null
    WEB_SIM=
}
# web_test_fail NAME WHY: a test's failure with the field's last log lines.
web_test_fail() {
    echo "$1: FAIL: $2"
    tail -5 "$WEB_DIR/sim.log" "$WEB_DIR/sim/chorus-web.log" 2>/dev/null
    exit 1
}
# web_test_field NAME BUILD SRCDIR: start the field for test NAME and wait
# for collab's first located call (failing the test otherwise).
web_test_field() {
    trap 'web_field_stop' EXIT INT TERM
    web_field_start "$2" "$3" "$CHORUS_RUN/field" 150 || web_test_fail "$1" "the field did not start"
    web_field_wait_calls 1 120 || web_test_fail "$1" "collab located no call in 120 s"
}
