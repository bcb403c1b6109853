/* compare.c — the captured stream against the played signal (see compare.h). */
#include "selftest/compare.h"

#include <string.h>

int cmp_in_gap(const cmp_capture *cap, int64_t f)
{
	for (int g = 0; g < cap->ngaps; g++)
		if (f >= cap->gaps[2 * g] && f < cap->gaps[2 * g + 1])
			return 1;
	return 0;
}

/* 1 when captured frame i equals signal frame n in every channel (pure). */
static int same(const sig_params *sig, const cmp_capture *cap, size_t i, int64_t n)
{
	for (unsigned c = 0; c < sig->channels; c++)
		if (sig_get(sig, cap->data, i, c) != sig_value(sig, n, c))
			return 0;
	return 1;
}

/* 1 when captured frame i is all zero (pure). */
static int silent(const sig_params *sig, const cmp_capture *cap, size_t i)
{
	for (unsigned c = 0; c < sig->channels; c++)
		if (sig_get(sig, cap->data, i, c))
			return 0;
	return 1;
}

/* From audiod frame f on, the offset at which 64 consecutive frames match
 * the signal, searched within +-window of off; 1 and *found, or 0 (pure). */
static int search(const sig_params *sig, int64_t played, const cmp_capture *cap, int64_t f, int64_t off,
		  int64_t window, int64_t *found)
{
	for (int64_t d = 0; d <= window; d++)
		for (int s = -1; s <= 1; s += 2) {
			int64_t o = off + s * d, ok = 0;
			for (int64_t k = 0; k < 64; k++) {
				int64_t a = f + k, n = a - o;
				if (a - cap->first >= (int64_t)cap->frames || n < 0 || n >= played ||
				    !same(sig, cap, (size_t)(a - cap->first), n))
					break;
				ok++;
			}
			if (ok == 64) {
				*found = o;
				return 1;
			}
		}
	return 0;
}

void cmp_run(const sig_params *sig, int64_t played, const cmp_capture *cap, int64_t window, cmp_result *r)
{
	memset(r, 0, sizeof *r);
	r->first_bad = -1;
	int64_t p0 = 0;
	while (p0 < played) {
		int nz = 0;
		for (unsigned c = 0; c < sig->channels; c++)
			nz |= sig_value(sig, p0, c) != 0;
		if (nz)
			break;
		p0++;
	}
	size_t i0 = 0;
	while (i0 < cap->frames && silent(sig, cap, i0))
		i0++;
	if (i0 == cap->frames || p0 == played)
		return;
	r->found = 1;
	r->offset = cap->first + (int64_t)i0 - p0;
	int64_t last_gap_end = -1;
	for (int g = 0; g < cap->ngaps; g++)
		if (cap->gaps[2 * g + 1] > last_gap_end)
			last_gap_end = cap->gaps[2 * g + 1];
	if (last_gap_end >= 0) {
		int64_t o;
		r->shift_found = search(sig, played, cap, last_gap_end + 16, r->offset, window, &o);
		if (r->shift_found)
			r->shift = o - r->offset;
	}
	for (int64_t n = p0; n < played; n++) {
		int64_t a = n + r->offset;
		int after = last_gap_end >= 0 && a >= last_gap_end;
		if (after)
			a += r->shift;
		int64_t i = a - cap->first;
		if (cmp_in_gap(cap, a)) {
			r->in_gaps++;
			continue;
		}
		if (i >= (int64_t)cap->frames) {
			r->missing++;
			continue;
		}
		r->compared++;
		if (!same(sig, cap, (size_t)i, n)) {
			r->mismatched++;
			if (r->first_bad < 0)
				r->first_bad = a;
		} else if (after) {
			r->after_gap_ok++;
		}
	}
}
