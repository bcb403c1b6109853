/* path.c — device name -> socket path (see path.h). */
#include "libdev/path.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dev_name_check(const char *name, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (!name || !*name) {
		*why = "device name is empty";
		return -EINVAL;
	}
	if (name[0] == '/') {
		*why = "device name must be relative (no leading '/')";
		return -EINVAL;
	}
	const char *c = name;
	while (*c) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		if (n == 0) {
			*why = "device name has an empty component ('//' or a trailing '/')";
			return -EINVAL;
		}
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
			*why = "device name has a '.' or '..' component";
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++) {
			char ch = c[i];
			if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.')) {
				*why = "device name has a character outside [A-Za-z0-9_.-/]";
				return -EINVAL;
			}
		}
		if (!e)
			break;
		c = e + 1;
		if (!*c) {
			*why = "device name has an empty component ('//' or a trailing '/')";
			return -EINVAL;
		}
	}
	return 0;
}

int dev_run_dir(char *buf, size_t len, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	const char *run = getenv("CHORUS_RUN");
	char base[PATH_MAX];
	if (run && *run)
		snprintf(base, sizeof base, "%s", run);
	else if (geteuid() == 0)
		snprintf(base, sizeof base, "/run/chorus");
	else if (getenv("XDG_RUNTIME_DIR") && *getenv("XDG_RUNTIME_DIR"))
		snprintf(base, sizeof base, "%s/chorus", getenv("XDG_RUNTIME_DIR"));
	else
		snprintf(base, sizeof base, "/tmp/chorus-%u", (unsigned)geteuid());
	const char *node = getenv("CHORUS_NODE");
	int n;
	if (node && *node) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(node, &end, 10);
		if (*end || errno || node[0] == '-' || v > UINT32_MAX) {
			*why = "CHORUS_NODE must be a non-negative decimal node number";
			return -EINVAL;
		}
		n = snprintf(buf, len, "%s/sim/node%lu", base, v);
	} else {
		n = snprintf(buf, len, "%s", base);
	}
	if (n < 0 || (size_t)n >= len) {
		*why = "run directory path too long";
		return -ENAMETOOLONG;
	}
	return 0;
}

int dev_path(const char *name, char *buf, size_t len, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	int r = dev_name_check(name, why);
	if (r < 0)
		return r;
	char dir[PATH_MAX];
	r = dev_run_dir(dir, sizeof dir, why);
	if (r < 0)
		return r;
	int n = snprintf(buf, len, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= len || n >= DEV_PATH_MAX) {
		*why = "socket path longer than the 107 bytes AF_UNIX allows";
		return -ENAMETOOLONG;
	}
	return 0;
}

int dev_path_mkparents(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	char *slash = strrchr(tmp, '/');
	if (!slash || slash == tmp)
		return 0;
	*slash = 0;
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || *p == 0) {
			char c = *p;
			*p = 0;
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = c;
			if (!c)
				break;
		}
	}
	struct stat st;
	if (stat(tmp, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}
