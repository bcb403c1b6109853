/* print.h — a demo_eval (sim/score/report.h) as text and as CSV. */
#ifndef CHORUS_SIM_SCORE_PRINT_H
#define CHORUS_SIM_SCORE_PRINT_H

#include <glib.h>
#include <stdio.h>

#include "sim/score/report.h"

/* The per-call table (with `table`) and the summary, human readable, to f.
 * Returns 0, or -EIO when writing to f failed. */
int demo_print(const demo_eval *e, gboolean table, FILE *f);

/* The per-call table as CSV at path (created or replaced).  Returns 0 or
 * -errno (opening, writing or closing failed; the file may then be partial). */
int demo_write_csv(const demo_eval *e, const char *path);

/* Every detection matched to a scored arrival (demo_eval.onsets) as CSV at
 * path: node, source, call, template, the arrival (world s), the onset's
 * error and stated s.e. (us) and their ratio.  Returns 0 or -errno, as
 * demo_write_csv. */
int demo_write_onsets_csv(const demo_eval *e, const char *path);

#endif
