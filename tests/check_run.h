/* check_run.h — the end of every Check test's main(): run the suite (its
 * own fork per test, CK_NORMAL output) and turn the failures into the exit
 * status tests/run counts (0 pass, 1 fail).  Header-only, so a test needs
 * no extra object to link. */
#ifndef CHORUS_TESTS_CHECK_RUN_H
#define CHORUS_TESTS_CHECK_RUN_H

#include <check.h>

/* Run every test of s, free the runner; 0 when none failed, else 1. */
static inline int tu_check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

/* The same, every test in this process (CK_NOFORK: for tests whose
 * fixtures, e.g. a simulated field, outlive one test). */
static inline int tu_check_run_nofork(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
