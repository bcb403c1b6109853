#!/bin/sh
# tests/test_libsync_installed.sh BUILD SRCDIR MAKE — libsync as other
# people's programs use it (issue 18 item 4): `make install` into a
# temporary DESTDIR, the tutorial's example (docs/examples/libsync-example.c)
# compiled against the *installed* headers and libsync.pc only (pkg-config
# with PKG_CONFIG_SYSROOT_DIR), its binary's NEEDED entry the SONAME, the
# exported symbols only sync_*, then run against one simulated node's real
# syncd and audiod: three cpu times to global with their s.e., and one
# second of audio fetched by global time.  Exit 0 pass, 1 fail, 77 no cc.
set -u
b=$1; src=$2; make=${3:-make}
command -v cc >/dev/null && command -v pkg-config >/dev/null ||
    { echo "test_libsync_installed: SKIP: needs cc and pkg-config (make deps)" >&2; exit 77; }
. "$src/tests/sim_node.sh"
same_arch "$b/lib/libchorus-sync.so.1" ||
    { echo "test_libsync_installed: SKIP: $b/lib/libchorus-sync.so.1 is not for this machine (a cross build)" >&2; exit 77; }
stage=$CHORUS_RUN/stage
trap 'sim_node_stop; rm -rf "$stage"' EXIT INT TERM
fail() { echo "test_libsync_installed: FAIL: $*"; exit 1; }

$make --no-print-directory -C "$src" install-libsync DESTDIR="$stage" >"$CHORUS_RUN/install.log" 2>&1 ||
    { tail -20 "$CHORUS_RUN/install.log"; fail "make install-libsync"; }
lib=$(ls -d "$stage"/usr/local/lib 2>/dev/null) || fail "nothing installed under /usr/local/lib"
[ -f "$lib/libchorus-sync.so.1.0.0" ] && [ -L "$lib/libchorus-sync.so.1" ] && [ -L "$lib/libchorus-sync.so" ] ||
    fail "libchorus-sync.so.1.0.0 and its two links not installed"
soname=$(objdump -p "$lib/libchorus-sync.so.1.0.0" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libchorus-sync.so.1 ] || fail "SONAME is '$soname', want libchorus-sync.so.1"
other=$(nm -D --defined-only "$lib/libchorus-sync.so.1.0.0" | awk '$2 != "A" && $3 !~ /^sync_/ {print $3}' | head -3)
[ -z "$other" ] || fail "exports symbols outside sync_*: $other"
[ -f "$stage/usr/local/share/man/man3/libsync.3" ] || fail "no libsync(3) man page installed"
echo "test_libsync_installed: installed $soname, $(nm -D --defined-only "$lib/libchorus-sync.so.1.0.0" | grep -c ' T sync_') sync_* functions exported, nothing else"

# The staged tree stands where it would be installed: the installed .pc with
# its prefix line moved to the stage (libdir and includedir follow ${prefix});
# glib and gsl are the system's own .pc files.
[ -f "$lib/pkgconfig/libsync.pc" ] || fail "no libsync.pc installed"
mkdir -p "$CHORUS_RUN/pc"
sed "s|^prefix=.*|prefix=$stage/usr/local|" "$lib/pkgconfig/libsync.pc" > "$CHORUS_RUN/pc/libsync.pc"
grep -q '^libdir=${prefix}/lib$' "$CHORUS_RUN/pc/libsync.pc" || fail "libsync.pc's libdir does not follow its prefix"
export PKG_CONFIG_PATH="$CHORUS_RUN/pc"
flags=$(pkg-config --cflags --libs libsync) || fail "pkg-config libsync failed"
case $flags in *"$src"*) fail "pkg-config points into the source tree: $flags" ;; esac
cc -std=c11 -Wall -Werror -o "$CHORUS_RUN/libsync-example" "$src/docs/examples/libsync-example.c" $flags ||
    fail "the example does not compile against the installed headers: cc ... $flags"
objdump -p "$CHORUS_RUN/libsync-example" | grep -q 'NEEDED *libchorus-sync.so.1$' ||
    fail "the example does not link the shared library by its SONAME"
echo "test_libsync_installed: compiled with: $flags"

sim_node_start "$b" "$src" || fail "simulated node did not start"
sleep 2.5   # the example fetches the audio of the last 2 s; make sure audiod holds them
LD_LIBRARY_PATH="$lib" "$CHORUS_RUN/libsync-example" 1 > "$CHORUS_RUN/out" 2>&1
rc=$?
cat "$CHORUS_RUN/out"
[ $rc = 0 ] || fail "the example exited $rc"
n=$(grep -c '^node2:cpu [0-9]* -> global [0-9]*[-+][0-9.]* ns  (s.e. [0-9.]* ns)$' "$CHORUS_RUN/out")
[ "$n" = 3 ] || fail "expected 3 conversions with a standard error, got $n"
# One second at 48 kHz by global time: the frame count is the interval
# over the card's frame period (audio skew 18.5 ppm, cpu skew -41 ppm: within
# 1 frame of 48000 after rounding the two ends).
fr=$(sed -n 's/^audio: \([0-9]*\) frames .*/\1/p' "$CHORUS_RUN/out")
[ -n "$fr" ] && [ "$fr" -ge 47997 ] && [ "$fr" -le 48003 ] || fail "fetched '$fr' frames for 1 s of global time"
grep -q '^audio: first frame at global ' "$CHORUS_RUN/out" || fail "no global time stated for the first frame"
echo "test_libsync_installed: pass"
