/* sidechan_path.c — the side channel's default path (see sidechan_path.h). */
#include "kpatch/sidechan_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int kpatch_sidechan_path_for(const char *run_dir, const char *chorus_node, const char *pcm_name,
			     char *buf, size_t len)
{
	char node[32] = "";
	char pcm[128];
	size_t i;
	if (!pcm_name || !*pcm_name)
		return -EINVAL;
	if (chorus_node && *chorus_node) {
		char *end;
		errno = 0;
		long n = strtol(chorus_node, &end, 10);
		if (*end || errno || n < 0 || n > 65535)
			return -EINVAL;
		snprintf(node, sizeof node, "sim/node%ld/", n);
	}
	for (i = 0; pcm_name[i] && i < sizeof pcm - 1; i++) {
		char c = pcm_name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';
		pcm[i] = ok ? c : '_';
	}
	pcm[i] = 0;
	int n = snprintf(buf, len, "%s/%skpatch/sim-%s", run_dir, node, pcm);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int kpatch_sidechan_path(const char *pcm_name, char *buf, size_t len)
{
	const char *run = getenv("CHORUS_RUN");
	char tmp[4096];
	if (!run || !*run) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		if (geteuid() == 0)
			run = "/run/chorus";
		else if (xdg && *xdg) {
			snprintf(tmp, sizeof tmp, "%s/chorus", xdg);
			run = tmp;
		} else
			return -ENOENT;
	}
	return kpatch_sidechan_path_for(run, getenv("CHORUS_NODE"), pcm_name, buf, len);
}
