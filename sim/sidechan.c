/* sidechan.c — the side channel's FIFO writer (see sidechan.h). */
#include "sim/sidechan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sim_sidechan {
	int fd;
	uint32_t dropped; /* records lost to a full FIFO */
};

/* mkdir -p of the directory part of path. */
static int make_parents(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			int e = -errno;
			free(p);
			return e;
		}
		*s = '/';
	}
	free(p);
	return 0;
}

int sim_sidechan_open(const char *path, sim_sidechan **out)
{
	struct stat st;
	int rc = make_parents(path);
	if (rc < 0)
		return rc;
	if (mkfifo(path, 0644) < 0 && errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISFIFO(st.st_mode))
		return -EEXIST;
	/* O_RDWR: a FIFO opened for writing alone would fail (O_NONBLOCK) or
	 * block until a reader comes; holding both ends keeps it open always. */
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sim_sidechan *sc = calloc(1, sizeof *sc);
	if (!sc) {
		close(fd);
		return -ENOMEM;
	}
	sc->fd = fd;
	*out = sc;
	return 0;
}

int sim_sidechan_write(sim_sidechan *sc, struct chorus_kpatch_record *rec)
{
	rec->dropped = sc->dropped;
	/* 48 bytes < PIPE_BUF: the write is atomic, all or nothing. */
	ssize_t n = write(sc->fd, rec, sizeof *rec);
	if (n == (ssize_t)sizeof *rec)
		return 0;
	sc->dropped++;
	return n < 0 ? -errno : -EIO;
}

uint32_t sim_sidechan_dropped(const sim_sidechan *sc)
{
	return sc->dropped;
}

void sim_sidechan_close(sim_sidechan *sc)
{
	if (!sc)
		return;
	close(sc->fd);
	free(sc);
}
