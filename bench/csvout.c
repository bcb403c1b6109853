/* csvout.c — a benchmark's CSV file (csvout.h). */
#include "bench/csvout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

FILE *bench_csv_open(const char *name, char *path, size_t len)
{
	const char *dir = getenv("CHORUS_BENCH_OUT");
	if (!dir || !*dir)
		dir = ".";
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench: cannot make %s for %s: %s\n", dir, name, strerror(errno));
		return NULL;
	}
	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len) {
		fprintf(stderr, "bench: the path %s/%s is too long\n", dir, name);
		return NULL;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int bench_csv_close(FILE *f, const char *path)
{
	if (!f)
		return 0;
	int bad = fflush(f) != 0, err = errno;
	if (!bad && ferror(f)) { /* an earlier write failed; its errno is gone */
		bad = 1;
		err = EIO;
	}
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	if (bad) {
		fprintf(stderr, "bench: writing %s failed: %s (rows lost)\n", path, strerror(err));
		return -1;
	}
	return 0;
}
