#!/bin/sh
# tests/check-install.sh MAKE — `make check-install`: `make install
# PREFIX=/usr DESTDIR=<temp>` (issue 20 item 3), then check the staged tree:
# a unit for each service (dist/chorus-*.service.in) whose ExecStart is the
# staged program under PREFIX with its staged configuration file, a man page for every program installed, the ALSA
# plugin in alsa-lib's multiarch directory (pkg-config alsa's libdir) and the
# installed plugin configuration naming it, the default configuration files,
# the sysusers.d file and libsync.pc.  Exit 0 pass, 1 fail.
set -u
make=${1:-make}
stage=$(mktemp -d /tmp/chorus-stage.XXXXXX)
trap 'rm -rf "$stage"' EXIT INT TERM
nfail=0
bad() { echo "check-install: FAIL: $*"; nfail=$((nfail + 1)); }

$make --no-print-directory install PREFIX=/usr DESTDIR="$stage" >"$stage.log" 2>&1 ||
    { tail -20 "$stage.log"; rm -f "$stage.log"; echo "check-install: FAIL: make install"; exit 1; }
rm -f "$stage.log"

# Every unit (one per dist/chorus-*.service.in): ExecStart the staged
# program under /usr/bin, -c its staged /etc/chorus file, nothing under
# /usr/local, and the doc it names installed.
nu=0
for t in dist/chorus-*.service.in; do
    u=$(basename "$t" .in); nu=$((nu + 1))
    f=$stage/usr/lib/systemd/system/$u
    prog=${u#chorus-}; prog=${prog%.service}
    case $prog in archive | mqtt | proxy | web) prog=chorus-$prog ;; esac
    exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$f" 2>/dev/null)
    conf=$(sed -n 's/^ExecStart=[^ ]* -c \([^ ]*\).*/\1/p' "$f" 2>/dev/null)
    [ "$exe" = /usr/bin/$prog ] && [ -x "$stage$exe" ] || bad "$u: ExecStart='$exe', want /usr/bin/$prog"
    [ -n "$conf" ] && [ -s "$stage$conf" ] || bad "$u: its configuration '$conf' is not installed"
    doc=$(sed -n 's|^Documentation=.*file://\([^ ]*\).*|\1|p' "$f" 2>/dev/null)
    [ -z "$doc" ] || [ -s "$stage$doc" ] || bad "$u: Documentation $doc is not installed"
    grep -q /usr/local "$f" 2>/dev/null && bad "$u names /usr/local"
done
[ "$nu" -ge 9 ] || bad "only $nu unit templates in dist/"
n=0
for p in "$stage"/usr/bin/*; do
    p=$(basename "$p"); n=$((n + 1))
    ls "$stage"/usr/share/man/man[18]/"$p".[18] >/dev/null 2>&1 || bad "no man page for $p"
done
[ "$n" -ge 13 ] || bad "only $n programs in /usr/bin"
alsa=$(pkg-config --variable=libdir alsa)/alsa-lib
so=$alsa/libasound_module_pcm_chorus_sim.so
[ -x "$stage$so" ] || bad "the ALSA plugin is not in $alsa"
grep -q "lib \"$so\"" "$stage/usr/share/chorus/alsa/chorus_sim.conf" 2>/dev/null ||
    bad "chorus_sim.conf does not name $so"
so=$alsa/libasound_module_pcm_chorus.so
[ -x "$stage$so" ] || bad "the chorus ALSA PCM plugin is not in $alsa"
grep -q "lib \"$so\"" "$stage/usr/share/chorus/alsa/chorus.conf" 2>/dev/null ||
    bad "chorus.conf does not name $so"
[ -s "$stage/usr/share/man/man7/chorus-alsa.7" ] || bad "no chorus-alsa(7)"
for c in syncd audiod fft detect collab; do
    [ -s "$stage/etc/chorus/$c.conf" ] || bad "no /etc/chorus/$c.conf"
done
[ -s "$stage/usr/lib/sysusers.d/chorus.conf" ] || bad "no sysusers.d/chorus.conf"
[ -s "$stage/usr/lib/pkgconfig/libsync.pc" ] || bad "no libsync.pc"
[ -f "$stage/usr/lib/libchorus-sync.so.1.0.0" ] && [ -L "$stage/usr/lib/libchorus-sync.so.1" ] ||
    bad "no libchorus-sync.so.1"
[ -s "$stage/usr/share/man/man3/libsync.3" ] || bad "no libsync(3)"
[ -s "$stage/usr/lib/python3/dist-packages/chorus/__init__.py" ] || bad "no chorus Python module"
[ -s "$stage/usr/lib/systemd/system/chorus-mqtt.service" ] || bad "no chorus-mqtt.service"
[ -s "$stage/etc/chorus/mqtt.conf" ] || bad "no /etc/chorus/mqtt.conf"
[ -s "$stage/usr/lib/systemd/system/chorus-proxy.service" ] || bad "no chorus-proxy.service"
[ -s "$stage/etc/chorus/proxy.conf" ] || bad "no /etc/chorus/proxy.conf"
[ -s "$stage/usr/share/man/man8/chorus-proxy.8" ] || bad "no chorus-proxy(8)"
[ -s "$stage/usr/lib/systemd/system/chorus-web.service" ] || bad "no chorus-web.service"
[ -s "$stage/etc/chorus/web.conf" ] || bad "no /etc/chorus/web.conf"
for f in index.html app.js style.css; do
    [ -s "$stage/usr/share/chorus/web/$f" ] || bad "no /usr/share/chorus/web/$f (chorus-web's page)"
done

[ "$nfail" -eq 0 ] || { echo "check-install: $nfail check(s) failed"; exit 1; }
echo "check-install: make install PREFIX=/usr: $nu units with /usr/bin paths, man pages for $n programs," \
    "the ALSA plugin in $alsa, default configs, sysusers.d, libsync.pc, libchorus-sync.so.1, the Python module"
