/* tmpdir.h — scratch directories for tests: made under the temporary
 * directory, and removed with the files in them. */
#ifndef CHORUS_TESTS_TMPDIR_H
#define CHORUS_TESTS_TMPDIR_H

/* A new directory from template tmpl ("name-XXXXXX"); fails the test when
 * it cannot be made.  g_free the path. */
char *tu_tmpdir(const char *tmpl);

/* Remove dir and the files in it (one level: tests make no subdirectories). */
void tu_rm_rf(const char *dir);

#endif
