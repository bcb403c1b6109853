/* creds.c — act as the FUSE caller while connecting (see creds.h). */
#define FUSE_USE_VERSION 31
#include "fuse/creds.h"

#include <errno.h>
#include <fuse.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void fuse_caller_get(fuse_caller *c)
{
	struct fuse_context *fc = fuse_get_context();
	c->uid = fc->uid;
	c->gid = fc->gid;
	c->pid = fc->pid;
	int n = fuse_getgroups((int)(sizeof c->groups / sizeof c->groups[0]), c->groups);
	c->ngroups = n < 0 ? -1 : n > 64 ? 64
					 : n;
}

static int switching;
static gid_t own_groups[64];
static int n_own_groups;

void fuse_creds_init(void)
{
	switching = geteuid() == 0;
	int n = getgroups((int)(sizeof own_groups / sizeof own_groups[0]), own_groups);
	n_own_groups = n < 0 ? 0 : n;
}

int fuse_creds_can_switch(void)
{
	return switching;
}

/* Raw system calls: per thread (creds.h says why). */
static int thread_setgroups(size_t n, const gid_t *g)
{
	return syscall(SYS_setgroups, n, g) < 0 ? -errno : 0;
}

int fuse_creds_enter(const fuse_caller *c)
{
	if (!fuse_creds_can_switch())
		return 0;
	int rc = thread_setgroups(c->ngroups > 0 ? (size_t)c->ngroups : 0, c->groups);
	if (rc == 0 && syscall(SYS_setresgid, (gid_t)-1, c->gid, (gid_t)-1) < 0)
		rc = -errno;
	if (rc == 0 && syscall(SYS_setresuid, (uid_t)-1, c->uid, (uid_t)-1) < 0)
		rc = -errno;
	if (rc < 0)
		fuse_creds_leave();
	return rc;
}

void fuse_creds_leave(void)
{
	if (!switching)
		return;
	/* The real and saved uids stayed 0, so the effective one can come back. */
	if (syscall(SYS_setresuid, (uid_t)-1, (uid_t)0, (uid_t)-1) < 0 ||
	    syscall(SYS_setresgid, (gid_t)-1, getgid(), (gid_t)-1) < 0 ||
	    thread_setgroups((size_t)n_own_groups, own_groups) < 0) {
		fprintf(stderr, "chorus-fuse: cannot return to root's credentials: %s\n", strerror(errno));
		abort();
	}
}
