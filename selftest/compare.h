/* compare.h — what audiod served against what was played (pure).
 *
 * The captured stream is a byte buffer of interleaved frames, frame i being
 * audiod's absolute frame first + i (audioget --follow writes the frames of
 * a gap as zeros, so the indices stay absolute), and a list of gaps.  The
 * played signal is signal.h's, frames [0, played).
 */
#ifndef CHORUS_SELFTEST_COMPARE_H
#define CHORUS_SELFTEST_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "selftest/signal.h"

typedef struct {
	const void *data;    /* captured frames */
	size_t frames;       /* how many */
	int64_t first;       /* audiod's index of data's frame 0 */
	const int64_t *gaps; /* [from, to) pairs, absolute frames */
	int ngaps;
} cmp_capture;

typedef struct {
	int found;            /* the signal's start was found in the capture */
	int64_t offset;       /* audiod frame = played frame + offset */
	int64_t compared;     /* frames compared (outside gaps, inside the capture) */
	int64_t mismatched;   /* of them, frames that differ in any channel (after the last gap: at offset + shift) */
	int64_t in_gaps;      /* played frames that fell into a reported gap */
	int64_t missing;      /* played frames beyond the end of the capture */
	int64_t first_bad;    /* audiod index of the first mismatch, -1 if none */
	int64_t after_gap_ok; /* frames after the last gap that match at offset + shift */
	int64_t shift;        /* after the last gap: offset that matches there, minus offset (0: on real time) */
	int shift_found;      /* shift was searched and found */
} cmp_result;

/* Align the capture with the signal (its first non-zero frame) and compare
 * every played frame bit for bit; after the last gap, first search within
 * +-window frames for where the signal continues (the shift: 0 when the
 * index stayed on real time) and compare those frames there (pure). */
void cmp_run(const sig_params *sig, int64_t played, const cmp_capture *cap, int64_t window, cmp_result *r);

/* 1 when audiod frame f lies in one of the capture's gaps (pure). */
int cmp_in_gap(const cmp_capture *cap, int64_t f);

#endif
