#!/bin/busybox sh
# /init of the kpatch-vmtest VM (run.sh builds the initramfs around it).
#
# 1. vmcheck: the module's own checks on snd-dummy (kpatch/vmtest/vmcheck.c).
# 2. chorus end to end, configured as a field user configures it
#    (`--print-config` edited: README.md "Running on a real sound card"):
#    syncd + audiod capturing hw:Loopback,1,0 while chorus-selftest plays a
#    known signal into hw:Loopback,0,0 and checks samples, clicks by time,
#    an overrun provoked with SIGSTOP, and the timestamp source:
#      a. kpatch loaded: audiod must pick it (tstamp = auto);
#      b. audiod forced to ALSA timestamps (--tstamp alsa), module loaded
#         (the player still times itself with kpatch): the two sources'
#         offsets are compared;
#      (and the same in S24_3LE, 6 s, no overrun)
#      c. the module unloaded: audiod must fall back to ALSA by itself.
# 3. the same capture checks on snd-dummy at 16 and 48 kHz, two periods each.
# With chorus_vmtest=short on the kernel command line (make check's short
# form): 1, 2a (8 s) and snd-dummy at 48 kHz with 1024-frame periods (its
# overrun check failed about every other run while audiod fitted the
# records' entry times; kpatch/README.md "Tests").  The other snd-dummy runs
# have buffers of 40-80 ms, which a loaded host's qemu overruns by itself
# now and then: make check must not be flaky.
# With chorus_vmtest=nodummy besides: no snd-dummy (see below).
# With chorus_vmtest=dummy (VMTEST_DUMMY=1 make vmtest): 1, then only
# snd-dummy, 48 kHz period 1024 three times and period 240 once (the
# overrun runs that failed while audiod fitted the entry times).
# Every line meant for the host starts with "vmcheck", "selftest",
# "CHORUS-SELFTEST", "vmtest" or "KPATCH-VMTEST"; the VM powers off at the end.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /run /tmp /etc/chorus
ip link set lo up 2>/dev/null
export PATH=/bin:/usr/bin
fails=0
vmcheck_ok=0
short=0
grep -q 'chorus_vmtest=short' /proc/cmdline && short=1
grep -q 'chorus_vmtest=dummy' /proc/cmdline && short=2
obs=0
grep -q 'chorus_vmtest_obs' /proc/cmdline && obs=1
say() { echo "vmtest: $*"; }
bad() { echo "vmtest: FAIL $*"; fails=$((fails + 1)); }

# chorus_vmtest=nodummy (cross/vm-kpatch-arm64.sh: Debian's arm64 kernel
# has no snd-dummy): vmcheck's hw:0,0 is then snd-aloop's card.
nodummy=0
grep -q 'chorus_vmtest=nodummy' /proc/cmdline && nodummy=1
for m in soundcore snd snd-timer snd-pcm snd-dummy; do
    if [ $m = snd-dummy ] && [ $nodummy = 1 ]; then
        say "no snd-dummy in this kernel: vmcheck on card 0, snd-aloop's"
        continue
    fi
    insmod /lib/modules/$m.ko || bad "insmod $m"
done
insmod /lib/modules/snd-aloop.ko pcm_substreams=1 || bad "insmod snd-aloop"
say "cards: $(cat /proc/asound/cards | tr -s ' \n' ' ')"

# --- 1. the module's own checks (a small FIFO, so the overflow phase overflows).
if insmod /lib/modules/chorus_kpatch.ko fifo_depth=64; then
    ls -l /dev/chorus_kpatch
    /bin/vmcheck && vmcheck_ok=1
    rmmod chorus_kpatch && echo "vmcheck: rmmod ok" || vmcheck_ok=0
else
    bad "insmod chorus_kpatch"
fi

# --- 2. the configuration a field user writes.
syncd --print-config | sed -e 's/^#node = 0/node = 1/' \
    -e '/^\[rbs\]/,/^\[/ s/^#enable = true/enable = false/' > /etc/chorus/syncd.conf
# audiod_conf PCM RATE CHANNELS FORMAT PERIOD: the printed defaults, edited.
audiod_conf() {
    audiod --print-config | sed -e 's/^#node = 0/node = 1/' \
        -e 's/^#rt_priority = 0/rt_priority = 70/' -e 's/^#lock_memory = false/lock_memory = true/' \
        -e "/^\[device\.0\]/,/^\[device\.1\]/ {
            s/^#pcm = default/pcm = $1/
            s/^#rate_hz = 48000/rate_hz = $2/
            s/^#channels = 1/channels = $3/
            s/^#format = S16_LE/format = $4/
            s/^#period = 480/period = $5/
            s/^#ring_s = 60/ring_s = 30/
        }" > /etc/chorus/audiod.conf
}
syncd > /tmp/syncd.log 2>&1 &
syncd_pid=$!
sleep 2

# start_audiod [OPTIONS]: audiod with /etc/chorus/audiod.conf; sets $apid.
start_audiod() {
    audiod "$@" > /tmp/audiod.log 2>&1 &
    apid=$!
    sleep 3
    if ! kill -0 $apid 2>/dev/null; then
        bad "audiod did not start: $(tr '\n' ' ' < /tmp/audiod.log)"
        return 1
    fi
}
stop_audiod() {
    kill $apid 2>/dev/null
    wait $apid 2>/dev/null
    sed 's/^/vmtest: audiod log: /' /tmp/audiod.log | grep -iE 'warn|crit|error|overrun|continues|restart' | head -n 10
}
# selftest LABEL ARGS...: chorus-selftest, counted.
selftest() {
    label=$1
    shift
    chorus-selftest --label "$label" "$@" || bad "chorus-selftest: $label"
}

insmod /lib/modules/chorus_kpatch.ko || bad "insmod chorus_kpatch (default FIFO)"
audiod_conf hw:Loopback,1,0 48000 2 S32_LE 480
sed 's/^/vmtest: audiod.conf: /' /etc/chorus/audiod.conf | grep -vE ': #|: $'
if [ $short != 2 ] && start_audiod; then
    echo "vmtest: chorus-cat audio/0/status:"
    chorus-cat audio/0/status | sed 's/^/vmtest:   /'
    secs=12
    [ $short = 1 ] && secs=8
    selftest "loopback 48k S32 kpatch" --play hw:Loopback,0,0 --rt 60 --xrun-pid $apid \
        --expect-source kpatch --nominal --save /tmp/offset.kpatch --seconds $secs
    stop_audiod
fi
if [ $short = 0 ] && start_audiod --tstamp alsa; then
    selftest "loopback 48k S32 alsa (module loaded)" --play hw:Loopback,0,0 --rt 60 \
        --expect-source alsa --nominal --compare /tmp/offset.kpatch
    stop_audiod
fi
# Packed 24-bit, as many USB cards capture.
if [ $short = 0 ]; then
    audiod_conf hw:Loopback,1,0 48000 2 S24_3LE 480
    if start_audiod; then
        selftest "loopback 48k S24_3LE kpatch" --play hw:Loopback,0,0 --rt 60 --seconds 6 \
            --expect-source kpatch --nominal
        stop_audiod
    fi
    audiod_conf hw:Loopback,1,0 48000 2 S32_LE 480
fi
rmmod chorus_kpatch || bad "rmmod chorus_kpatch"
if [ $short = 0 ] && start_audiod; then
    chorus-cat audio/0/status | grep '^tstamp' | sed 's/^/vmtest: module unloaded: /'
    selftest "loopback 48k S32 module unloaded" --play hw:Loopback,0,0 --rt 60 --seconds 8 \
        --expect-source alsa --nominal
    stop_audiod
fi

# --- 3. snd-dummy: two rates, two periods each; an overrun in each.
insmod /lib/modules/chorus_kpatch.ko || bad "insmod chorus_kpatch again"
confs='16000 160,16000 640,48000 240,48000 1024'
[ $short = 1 ] && confs='48000 1024'
[ $short = 2 ] && confs='48000 1024,48000 1024,48000 1024,48000 240'
[ $nodummy = 1 ] && confs=''
IFS=,
for conf in $confs; do
    unset IFS
    set -- $conf
    audiod_conf hw:Dummy,0,0 $1 2 S16_LE $2
    if start_audiod --obs-log /tmp/obs.log; then
        f0=$fails
        selftest "dummy ${1} Hz period $2 kpatch" --xrun-pid $apid --expect-source kpatch --nominal
        stop_audiod
        # The observations audiod fitted, for the host to study (a failed
        # run's, or every run's with VMTEST_OBS=1).
        if [ $fails != $f0 ] || [ $obs = 1 ]; then
            sed "s/^/vmtest: obs dummy $1 $2: /" /tmp/obs.log
        fi
    fi
    IFS=,
done
unset IFS
rmmod chorus_kpatch || bad "rmmod chorus_kpatch at the end"
kill $syncd_pid 2>/dev/null

dmesg | grep -iE 'chorus|kprobe|BUG|WARNING' | sed 's/^/dmesg: /'
if [ "$fails" = 0 ] && [ "$vmcheck_ok" = 1 ]; then
    echo "KPATCH-VMTEST: PASS"
else
    echo "KPATCH-VMTEST: FAIL ($fails selftest/vmtest failures, vmcheck ok=$vmcheck_ok)"
fi
poweroff -f
