/* csvout.h — where a benchmark writes its CSV, and the close that says
 * when rows were lost.
 *
 * Every bench/ program writes one CSV beside its table: NAME in the
 * directory $CHORUS_BENCH_OUT (bench/run sets it to bench-out/; the
 * current directory when it is unset or empty), made when missing.  A
 * benchmark whose CSV cannot be opened or written exits non-zero: a
 * comparison across runs that silently lost its rows would be wrong. */
#ifndef CHORUS_BENCH_CSVOUT_H
#define CHORUS_BENCH_CSVOUT_H

#include <stddef.h>
#include <stdio.h>

/* Open $CHORUS_BENCH_OUT/name for writing (the directory made, one level,
 * when missing); the path in path[len].  Returns the stream, or NULL after
 * printing the path and the reason on stderr. */
FILE *bench_csv_open(const char *name, char *path, size_t len);

/* Flush and close f (opened by bench_csv_open as path).  Returns 0, or -1
 * after printing the path and the reason on stderr (a full disk, an I/O
 * error: rows lost).  f NULL: 0. */
int bench_csv_close(FILE *f, const char *path);

#endif
