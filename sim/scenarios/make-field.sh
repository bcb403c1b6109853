#!/bin/sh
# make-field.sh — print a scenario of N nodes for scale runs (docs/scenario.md):
#
#   sh sim/scenarios/make-field.sh N [SPACING_M [RANGE_M [SEED]]] > field.ini
#   chorus-sim field.ini --no-audio
#
# The nodes stand on a square grid SPACING_M apart (default 10 m), each with a
# cpu skew in -100..+100 ppm and an offset of its own drawn from SEED, 1 µs
# receive jitter.  RANGE_M (default 15 m: the 8 nearest neighbours) is the
# radio range; a range larger than the field's diagonal puts every node in
# range of every other (N = 48, RANGE_M = 1000: the field whose 1130
# conversions once made one ticker message too long).
n=${1:?usage: make-field.sh N [SPACING_M [RANGE_M [SEED]]]}
spacing=${2:-10}
range=${3:-15}
seed=${4:-300}
awk -v n="$n" -v sp="$spacing" -v r="$range" -v seed="$seed" 'BEGIN {
    if (n !~ /^[0-9]+$/ || n < 1) { print "make-field.sh: N must be a positive integer" > "/dev/stderr"; exit 2 }
    srand(seed)
    side = int(sqrt(n)); if (side * side < n) side++
    printf "# %d nodes on a %d-wide grid, %g m apart, radio range %g m (sim/scenarios/make-field.sh)\n", n, side, sp, r
    printf "[world]\nseed = %d\nradio_range_m = %g\nduration_s = 60\n", seed, r
    for (i = 1; i <= n; i++) {
        x = ((i - 1) % side) * sp; y = int((i - 1) / side) * sp
        printf "[node.%d]\nposition_m = %g,%g,0\ncpu_skew_ppm = %.3f\ncpu_offset_ns = %d\n", i, x, y, 200 * rand() - 100, int(rand() * 1e9) + i * 1000000
        printf "audio_skew_ppm = %.3f\nradio_jitter_ns = 1000\n", 80 * rand() - 40
    }
}'
