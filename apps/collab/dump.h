/* dump.h — one solve's inputs on disk, to replay it (collab's `dump_dir`
 * key, `collab-replay`).  A call that failed in the field, or in a soak,
 * happened once; its clips and the numbers tdoa_locate was given are all
 * that decides its answer (tdoa.h is pure), so keeping them makes the
 * failure a case that can be run again, studied and turned into a test.
 *
 * One solve is NAME.ini (GKeyFile) in a directory: [tdoa] every
 * tdoa_params field, [clip.K] (K = 0..n-1) every tdoa_input field but its
 * samples, which are NAME-K.wav beside it (mono, 32-bit float, at the
 * clip's nominal rate: libsndfile), and [result] what the solve answered
 * then (status, position, why: for the reader, not read back).  Doubles
 * are written to round-trip (g_ascii_dtostr), so a replay is bit-exact.
 * Files are written to a temporary name and renamed, so a reader never
 * sees half a case.
 */
#ifndef CHORUS_COLLAB_DUMP_H
#define CHORUS_COLLAB_DUMP_H

#include <glib.h>

#include "apps/collab/tdoa.h"

/* Write in[n] and p (and res, when not NULL) as DIR/NAME.ini and
 * DIR/NAME-K.wav; DIR is created when missing.  0, or -1 with *err
 * naming the file and why. */
int tdoa_dump_write(const char *dir, const char *name, const tdoa_input *in, int n, const tdoa_params *p,
		    const tdoa_result *res, GError **err);

/* Read the case PATH (a NAME.ini written by tdoa_dump_write) into in[],
 * *n and *p; every in[k].x is allocated (tdoa_dump_free frees them).  0,
 * or -1 with *err naming the file, group, key and why (nothing left
 * allocated). */
int tdoa_dump_read(const char *path, tdoa_input in[TDOA_MAX], int *n, tdoa_params *p, GError **err);

/* Free the samples tdoa_dump_read allocated for in[n]. */
void tdoa_dump_free(tdoa_input *in, int n);

#endif
