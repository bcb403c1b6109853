# tests/check-deb-installed.sh — sourced by tests/check-deb.sh once the
# packages are installed in $root: every check of the installed system,
# through in_root (chroot), ok and bad (counted failures).

# The system user, from the sysusers.d file, through postinst.
if in_root getent passwd chorus >/dev/null && in_root getent group chorus >/dev/null; then
    ok "system user and group chorus: $(in_root getent passwd chorus)"
else
    bad "no chorus user or group after install"
fi

# Conffiles: every file under /etc/chorus, and nothing else of ours in /etc
# besides them is a regular file.
conf=$(in_root dpkg-query -W -f='${Conffiles}\n' chorus | awk 'NF {print $1}' | sort)
etc=$(cd "$root" && find etc/chorus -type f | sed 's|^|/|' | sort)
if [ -n "$conf" ] && [ "$conf" = "$etc" ]; then
    ok "conffiles: $(echo $conf)"
else
    bad "conffiles ($(echo $conf)) are not the files under /etc/chorus ($(echo $etc))"
fi

# Units: one for each service (dist/chorus-*.service.in), each one's
# ExecStart program installed and executable, its configuration file the
# installed /etc/chorus one, run as User=chorus; none is enabled by the
# installation.
units=$(cd "$root/lib/systemd/system" && ls chorus-*.service 2>/dev/null)
for u in syncd audiod fft detect collab chorus-archive chorus-mqtt chorus-proxy chorus-web; do
    case " $(echo $units) " in *" chorus-${u#chorus-}.service "*) ;; *) bad "no chorus-${u#chorus-}.service" ;; esac
done
for unit in $units; do
    f=$root/lib/systemd/system/$unit
    exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$f")
    conf=$(sed -n 's/^ExecStart=[^ ]* -c \([^ ]*\).*/\1/p' "$f")
    if [ "${exe%/*}" = /usr/bin ] && [ -x "$root$exe" ] && [ -f "$root$conf" ] && grep -q '^User=chorus$' "$f"; then
        ok "$unit: ExecStart=$exe -c $conf, User=chorus"
    else
        bad "$unit: ExecStart='$exe' (want /usr/bin/..., executable), -c '$conf' (want an installed file) or no User=chorus"
    fi
done
# (--man=no: man-db is not in the root; the man pages are checked below)
if in_root sh -c 'systemd-analyze verify --man=no /lib/systemd/system/chorus-*.service' >"$cache/verify.log" 2>&1; then
    ok "systemd-analyze verify: the $(echo $units | wc -w) units"
else
    bad "systemd-analyze verify: $(cat "$cache/verify.log")"
fi
enabled=$(ls "$root"/etc/systemd/system/*.wants 2>/dev/null | grep chorus)
[ -z "$enabled" ] && ok "no unit enabled by the installation" || bad "enabled at install: $enabled"

# A man page for every program the packages put in /usr/bin.
progs=$(in_root dpkg -L chorus chorus-sim | grep '^/usr/bin/' | sed 's|/usr/bin/||')
missing=""
for p in $progs; do
    ls "$root"/usr/share/man/man[18]/"$p".[18].gz >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && ok "man pages for all $(echo $progs | wc -w) programs" || bad "no man page for:$missing"

# The programs load and answer from their installed paths (synctool, which
# has commands rather than options, prints its usage and exits 2).
for p in $progs; do
    in_root "/usr/bin/$p" --help >"$cache/help.txt" 2>&1
    grep -qi '^usage' "$cache/help.txt" ||
        bad "/usr/bin/$p --help: $(head -3 "$cache/help.txt")"
done
ok "--help of each program ran"
if in_root /usr/bin/syncd --print-config | grep -q '^\[rbs\]'; then
    ok "syncd --print-config"
else
    bad "syncd --print-config printed no [rbs]"
fi
# The default configuration files parse: syncd refuses to start on any error
# (networking off here, so the chroot's syncd does not talk on the host's LAN).
run=/run/chorus-test
in_root sh -c "install -d -o chorus -g chorus $run; grep -v '^#' /etc/chorus/syncd.conf | grep -q = && exit 1;
    printf '[syncd]\nnode = 2\n[rbs]\nenable = false\n' >$run/syncd.conf" ||
    bad "the shipped syncd.conf sets keys (it should only comment them)"

# syncd and audiod as the chorus user, audiod on the installed simulator
# plugin (the README's one-node recipe), for a few seconds.
simenv="CHORUS_RUN=$run CHORUS_NODE=2 CHORUS_SCENARIO=/usr/share/chorus/scenarios/default.ini
    CHORUS_SIM_CLOCK=-41.0,27182818284 ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:/usr/share/chorus/alsa/chorus_sim.conf"
as_chorus="chroot --userspec=chorus:chorus --groups=audio $root env -i PATH=/usr/bin:/bin $simenv"
# (not through a function: $! must be chroot's pid, which becomes the daemon's)
$as_chorus /usr/bin/syncd -c $run/syncd.conf >"$cache/syncd.log" 2>&1 &
syncd_pid=$!
$as_chorus /usr/bin/audiod --pcm chorus_sim --channels 2 -c /dev/null >"$cache/audiod.log" 2>&1 &
audiod_pid=$!
i=0
while [ $i -lt 50 ] && ! [ -e "$root$run/audio/0/status" ]; do sleep 0.2; i=$((i + 1)); done
sleep 2
$as_chorus /usr/bin/chorus-cat audio/0/status >"$cache/status.txt" 2>&1
$as_chorus /usr/bin/synctool ticker >"$cache/ticker.txt" 2>&1
frames=$(sed -n 's/.*frames captured[ =:]*\([0-9][0-9]*\).*/\1/p' "$cache/status.txt" | head -1)
if [ "${frames:-0}" -gt 0 ]; then
    ok "audiod on the installed chorus_sim plugin captured $frames frames (chorus-cat audio/0/status)"
else
    bad "audiod captured nothing: $(head -5 "$cache/status.txt"; tail -5 "$cache/audiod.log")"
fi
if grep -q 'cpu' "$cache/ticker.txt"; then
    ok "syncd's ticker from the installed synctool: $(grep -c . "$cache/ticker.txt") lines"
else
    bad "synctool ticker: $(head -3 "$cache/ticker.txt"; tail -3 "$cache/syncd.log")"
fi
# python3-chorus (dh_python3: byte-compiled at install) reads that syncd's
# ticker through the installed libchorus-sync.so.1, as the chorus user.
if $as_chorus python3 -c 'import chorus, sys; e = chorus.ticker(); print(len(e), chorus.__file__); sys.exit(len(e) == 0)' \
    >"$cache/python.txt" 2>&1; then
    ok "python3-chorus: $(cat "$cache/python.txt") ticker entries"
else
    bad "python3-chorus: $(tail -5 "$cache/python.txt")"
fi
ls "$root"/usr/lib/python3/dist-packages/chorus/__pycache__/__init__.cpython-*.pyc >/dev/null 2>&1 &&
    ok "python3-chorus byte-compiled at installation (py3compile)" || bad "python3-chorus: no __pycache__ after install"
kill $audiod_pid $syncd_pid 2>/dev/null
wait $audiod_pid $syncd_pid 2>/dev/null
in_root rm -rf $run

# libchorus-sync-dev: a program built with pkg-config's flags, run.
cat >"$root/tmp/t.c" <<'EOF'
#include <stdio.h>
#include "libsync/client.h"
#include "libsync/now.h"
int main(void)
{
	sync_simclock c;
	const char *why = NULL;
	if (sync_simclock_parse("0,1000", &c, &why) != 0) {
		printf("parse: %s\n", why ? why : "?");
		return 1;
	}
	printf("%lld\n", (long long)sync_simclock_apply(&c, 5));
	return 0;
}
EOF
if in_root sh -c 'cc -o /tmp/t /tmp/t.c $(pkg-config --cflags --static --libs libsync) && /tmp/t' >"$cache/dev.log" 2>&1 &&
    [ "$(tail -1 "$cache/dev.log")" = 1005 ]; then
    ok "a program built against libsync.pc (libchorus-sync-dev) runs"
else
    bad "libchorus-sync-dev: $(cat "$cache/dev.log")"
fi
# ... and linked against the shared library (libchorus-sync1's
# libchorus-sync.so.1), from libchorus-sync-dev's .so link.
if in_root sh -c 'cc -o /tmp/t /tmp/t.c $(pkg-config --cflags libsync) -lchorus-sync && /tmp/t' >"$cache/dev.log" 2>&1 &&
    [ "$(tail -1 "$cache/dev.log")" = 1005 ] && in_root sh -c 'objdump -p /tmp/t 2>/dev/null || readelf -d /tmp/t' 2>/dev/null |
    grep -q 'NEEDED.*libchorus-sync\.so\.1'; then
    ok "a program linked with -lchorus-sync runs on libchorus-sync.so.1"
else
    bad "libchorus-sync1: $(cat "$cache/dev.log")"
fi
rm -f "$root/tmp/t" "$root/tmp/t.c"

# The kernel module, built by DKMS at install for the root's kernel headers.
if [ "$dkms" = 1 ]; then
    st=$(in_root dkms status chorus-kpatch 2>&1)
    ko=$(cd "$root" && ls lib/modules/*/updates/dkms/chorus_kpatch.ko* 2>/dev/null)
    if echo "$st" | grep -q installed && [ -n "$ko" ]; then
        ok "DKMS: $st; /$ko"
    else
        bad "DKMS did not build the module: $st $(tail -5 "$cache/install.log")"
    fi
else
    say "note: CHORUS_DEB_DKMS=0: the DKMS build was not tried"
fi

# chorus-sim from the package: the installed plugin configuration and radio
# (its fallbacks when --bin is not a build tree), a short syncd-only field.
# CHORUS_DEB_SIM=0 leaves it out (a simulation takes the machine's CPU and
# UDP ports for its duration).
if [ "${CHORUS_DEB_SIM:-1}" != 0 ]; then
    # tests/test_syncd_net.c's fast timers, so that 12 s give fits.
    printf '[rbs]\nbeacon_interval_s = 0.1\nreport_interval_s = 0.1\nadvert_interval_s = 0.2\n[realtime]\ninterval_s = 0.1\n' \
        >"$root/tmp/fast.conf"
    if in_root /usr/bin/chorus-sim --bin /usr/bin --no-audio --duration 12 --syncd-conf /tmp/fast.conf --out /tmp/sim \
        /usr/share/chorus/scenarios/test.ini >"$cache/sim.log" 2>&1 && [ -s "$root/tmp/sim/truth.csv" ]; then
        ok "chorus-sim --bin /usr/bin on the installed test.ini: $(grep -m1 'conversions' "$cache/sim.log")"
    else
        bad "installed chorus-sim: $(tail -5 "$cache/sim.log")"
    fi
    rm -rf "$root/tmp/sim" "$root/tmp/fast.conf"
else
    say "note: CHORUS_DEB_SIM=0: the installed chorus-sim was not run"
fi
