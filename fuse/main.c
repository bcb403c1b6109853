/* chorus-fuse — every device under $CHORUS_RUN as a file (libfuse3,
 * high-level API), as EmStar showed its FUSD devices:
 *
 *   chorus-fuse /mnt/chorus
 *   cat /mnt/chorus/audio/0/status
 *   echo 'root 3' > /mnt/chorus/sync/command     (a failed command fails the write)
 *   tail -f /mnt/chorus/detect/events
 *
 * The tree is the run directory's (docs/protocol.md "Names and paths",
 * with sim/node<N> when CHORUS_NODE is set): its directories, and each
 * device socket as a regular file whose mode says who may connect (the
 * socket's write bits, as read bits; command, query and packet devices
 * writable by the same).  The kernel checks those against the caller
 * (default_permissions), and every open file is its own connection made
 * with the caller's credentials (fuse/creds.h), so the service's write
 * policy judges the caller, not chorus-fuse.  What read and write do per
 * pattern: fuse/devfile.h.  Nothing is cached: attributes and directory
 * entries time out at once, so devices that come and go show as they are.
 *
 * Exit status: 0 after an unmount, 1 when mounting fails, 2 for usage.
 */
#define FUSE_USE_VERSION 35

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <glib.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse/creds.h"
#include "fuse/devfile.h"
#include "libdev/path.h"

static char run_dir[PATH_MAX];

/* The open stream files by FUSE path: stat(2) reaches chorus-fuse without
 * the file it was called on (the kernel sends the file handle only from
 * read paths), so a path's size and time are its open streams' — the most
 * bytes any of them has read, the newest arrival — never less than what a
 * reader has read (`tail -f` would call that a truncation). */
static GMutex streams_lock;
static GHashTable *streams; /* path -> GPtrArray of devfile */

static gboolean is_stream(devfile *f)
{
	return devfile_pattern(f) == DEV_PATTERN_PACKET || devfile_pattern(f) == DEV_PATTERN_SENSOR;
}

static void streams_add(const char *path, devfile *f)
{
	g_mutex_lock(&streams_lock);
	GPtrArray *a = g_hash_table_lookup(streams, path);
	if (!a) {
		a = g_ptr_array_new();
		g_hash_table_insert(streams, g_strdup(path), a);
	}
	g_ptr_array_add(a, f);
	g_mutex_unlock(&streams_lock);
}

static void streams_remove(const char *path, devfile *f)
{
	g_mutex_lock(&streams_lock);
	GPtrArray *a = g_hash_table_lookup(streams, path);
	if (a && g_ptr_array_remove_fast(a, f) && !a->len)
		g_hash_table_remove(streams, path);
	g_mutex_unlock(&streams_lock);
}

/* Size and time of path's open streams into *st; FALSE when none. */
static gboolean streams_stat(const char *path, struct stat *st)
{
	gboolean any = FALSE;
	g_mutex_lock(&streams_lock);
	GPtrArray *a = g_hash_table_lookup(streams, path);
	for (guint i = 0; a && i < a->len; i++) {
		struct stat one = *st;
		devfile_stat(a->pdata[i], &one);
		if (!any || one.st_size > st->st_size)
			st->st_size = one.st_size;
		if (!any || one.st_mtim.tv_sec > st->st_mtim.tv_sec ||
		    (one.st_mtim.tv_sec == st->st_mtim.tv_sec && one.st_mtim.tv_nsec > st->st_mtim.tv_nsec))
			st->st_mtim = one.st_mtim;
		any = TRUE;
	}
	g_mutex_unlock(&streams_lock);
	return any;
}

/* The run directory's path of FUSE path `path` ("/" = the run directory). */
static int real_path(const char *path, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", run_dir, strcmp(path, "/") ? path : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The file mode a device socket shows as (see the opening comment). */
static mode_t device_mode(const struct stat *sock, int have_pattern, dev_pattern p)
{
	if (!have_pattern)
		return S_IFREG; /* a stale socket: nobody serves it */
	mode_t w = sock->st_mode & 0222, r = w << 1;
	switch (p) {
	case DEV_PATTERN_COMMAND:
	case DEV_PATTERN_QUERY:
	case DEV_PATTERN_PACKET:
		return S_IFREG | r | w;
	default:
		return S_IFREG | r;
	}
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	char rp[PATH_MAX];
	int rc = real_path(path, rp, sizeof rp);
	if (rc < 0)
		return rc;
	struct stat s;
	if (lstat(rp, &s) < 0)
		return -errno;
	if (S_ISDIR(s.st_mode)) {
		*st = s;
		return 0;
	}
	if (!S_ISSOCK(s.st_mode))
		return -ENOENT; /* only directories and devices are shown */
	*st = s;
	st->st_nlink = 1;
	st->st_size = 0;
	st->st_blocks = 0;
	devfile *f = fi ? (devfile *)(uintptr_t)fi->fh : NULL;
	if (f) {
		st->st_mode = device_mode(&s, 1, devfile_pattern(f));
		devfile_stat(f, st);
		return 0;
	}
	streams_stat(path, st);
	dev_pattern p = DEV_PATTERN_STATUS;
	int have = devfile_probe(path + 1, &p) == 0;
	st->st_mode = device_mode(&s, have, p);
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	char rp[PATH_MAX];
	int rc = real_path(path, rp, sizeof rp);
	if (rc < 0)
		return rc;
	DIR *d = opendir(rp);
	if (!d)
		return -errno;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		struct stat s;
		if (fstatat(dirfd(d), e->d_name, &s, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(s.st_mode) || S_ISSOCK(s.st_mode))
			filler(buf, e->d_name, NULL, 0, 0);
	}
	closedir(d);
	return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	char rp[PATH_MAX];
	int rc = real_path(path, rp, sizeof rp);
	if (rc < 0)
		return rc;
	struct stat s;
	if (lstat(rp, &s) < 0)
		return -errno;
	if (S_ISDIR(s.st_mode))
		return -EISDIR;
	if (!S_ISSOCK(s.st_mode))
		return -ENOENT;
	fuse_caller who;
	fuse_caller_get(&who);
	devfile *f = devfile_open(path + 1, fi->flags, &who, &rc);
	if (!f)
		return rc;
	fi->fh = (uint64_t)(uintptr_t)f;
	if (is_stream(f) && (fi->flags & O_ACCMODE) != O_WRONLY)
		streams_add(path, f);
	fi->direct_io = 1; /* every read reaches the device, whatever st_size says */
	fi->keep_cache = 0;
	return 0;
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	return (int)devfile_read((devfile *)(uintptr_t)fi->fh, buf, size, off);
}

static int op_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	return (int)devfile_write((devfile *)(uintptr_t)fi->fh, buf, size);
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	devfile *f = (devfile *)(uintptr_t)fi->fh;
	streams_remove(path, f);
	devfile_close(f);
	return 0;
}

/* `echo cmd > file` opens with O_TRUNC: there is nothing to truncate. */
static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	return 0;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = op_init,
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.truncate = op_truncate,
};

static void usage(FILE *to)
{
	fprintf(to, "usage: chorus-fuse MOUNTPOINT [-f] [-d] [-s] [-o FUSE-OPTION,...]\n"
		    "  shows every device under the run directory ($CHORUS_RUN; with CHORUS_NODE=N its\n"
		    "  sim/nodeN) as a file; -f stays in the foreground; unmount with fusermount3 -u (or umount)\n");
}

/* Refuse a mount point inside the run directory (the tree would contain
 * itself and every stat of it would call back into chorus-fuse).  0, or 2
 * after saying why. */
static int check_paths(const char *mnt)
{
	struct stat s;
	if (stat(run_dir, &s) < 0 || !S_ISDIR(s.st_mode)) {
		fprintf(stderr, "chorus-fuse: run directory %s: %s (no chorus service has run here)\n", run_dir,
			stat(run_dir, &s) < 0 ? strerror(errno) : "not a directory");
		return 2;
	}
	char *rmnt = realpath(mnt, NULL), *rrun = realpath(run_dir, NULL);
	int rc = 0;
	if (!rmnt) {
		fprintf(stderr, "chorus-fuse: mount point %s: %s\n", mnt, strerror(errno));
		rc = 2;
	} else {
		size_t lr = strlen(rrun);
		if (!strncmp(rmnt, rrun, lr) && (rmnt[lr] == '/' || !rmnt[lr])) {
			fprintf(stderr, "chorus-fuse: mount point %s is inside the run directory %s (it would contain itself)\n",
				rmnt, rrun);
			rc = 2;
		} else {
			g_strlcpy(run_dir, rrun, sizeof run_dir);
		}
	}
	free(rmnt);
	free(rrun);
	return rc;
}

int main(int argc, char **argv)
{
	const char *why;
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts;
	if (fuse_parse_cmdline(&args, &opts) != 0) {
		usage(stderr);
		return 2;
	}
	if (opts.show_help) {
		usage(stdout);
		fuse_cmdline_help();
		fuse_lib_help(&args);
		return 0;
	}
	if (opts.show_version) {
		printf("chorus-fuse, libfuse %s\n", fuse_pkgversion());
		return 0;
	}
	if (!opts.mountpoint) {
		usage(stderr);
		return 2;
	}
	if (dev_run_dir(run_dir, sizeof run_dir, &why) < 0) {
		fprintf(stderr, "chorus-fuse: the run directory: %s\n", why);
		return 2;
	}
	int rc = check_paths(opts.mountpoint);
	if (rc)
		return rc;
	fuse_creds_init();
	streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	/* The kernel checks the modes shown against the caller; as root the
	 * tree is for every user, each judged by their own credentials. */
	if (fuse_opt_add_arg(&args, "-odefault_permissions,fsname=chorus,subtype=chorus") < 0 ||
	    (fuse_creds_can_switch() && fuse_opt_add_arg(&args, "-oallow_other") < 0)) {
		fprintf(stderr, "chorus-fuse: out of memory\n");
		return 1;
	}
	if (!fuse_creds_can_switch())
		fprintf(stderr, "chorus-fuse: not running as root: every device is opened as uid %u, for every caller\n",
			(unsigned)geteuid());
	struct fuse *fuse = fuse_new(&args, &ops, sizeof ops, NULL);
	if (!fuse)
		return 1; /* libfuse said why */
	struct fuse_session *se = fuse_get_session(fuse);
	if (fuse_mount(fuse, opts.mountpoint) != 0) {
		fuse_destroy(fuse);
		return 1;
	}
	if (fuse_daemonize(opts.foreground) != 0 || fuse_set_signal_handlers(se) != 0) {
		fuse_unmount(fuse);
		fuse_destroy(fuse);
		return 1;
	}
	struct fuse_loop_config lc = {.clone_fd = opts.clone_fd, .max_idle_threads = 10};
	int res = opts.singlethread ? fuse_loop(fuse) : fuse_loop_mt(fuse, &lc);
	fuse_remove_signal_handlers(se);
	fuse_unmount(fuse);
	fuse_destroy(fuse);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	/* libfuse ends its loop with the signal's number after SIGTERM, SIGINT
	 * or SIGHUP: an unmount asked for, not a failure. */
	if (res == 0 || res == SIGTERM || res == SIGINT || res == SIGHUP)
		return 0;
	fprintf(stderr, "chorus-fuse: the FUSE loop failed: %s\n", res < 0 ? strerror(-res) : "error");
	return 1;
}
