/* report.h — chorus-selftest's table: one row per measurement or check,
 * "item | measured | stated / criterion | verdict", on standard output, each
 * line prefixed "selftest:" so a log can be grepped; the last line is
 * "CHORUS-SELFTEST: PASS <label>" or "CHORUS-SELFTEST: FAIL <label> (N
 * checks failed)".
 */
#ifndef CHORUS_SELFTEST_REPORT_H
#define CHORUS_SELFTEST_REPORT_H

#include "selftest/tools.h"

typedef enum { REPORT_INFO,
	       REPORT_PASS,
	       REPORT_FAIL } report_verdict;

/* Start the table for the run called label. */
void report_begin(const char *label);

/* One row.  measured and stated may be "". */
void report_row(const char *item, const char *measured, const char *stated, report_verdict v);

/* One row from a printf format whose output is "measured|stated". */
void report_rowf(const char *item, report_verdict v, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* The rows that come from audiod's status at the start (s0) and end (s9):
 * timestamp source (against `expect`, NULL: any), lost and malformed
 * records, overruns (xruns: how many the test provoked), the fitted rate
 * (against the nominal one within 3 stated s.e. when `nominal`), residual,
 * wakeup latency, real-time priority. */
void report_status(const tools_status *s0, const tools_status *s9, const char *expect, int nominal, int xruns);

/* Print the verdict line; returns the exit status (0 or 1). */
int report_end(void);

#endif
