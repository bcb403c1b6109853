/* fuzz_config.c — libFuzzer target over two configuration readers built on
 * libcfg and GKeyFile, as a field team's files reach them: syncd.conf
 * (syncd/config.c) and detect's profiles (apps/detect/profile.c).  The
 * first input byte chooses; the rest is the file, written to a memfd and
 * read through /proc/self/fd as a path.  Beyond "no crash, no sanitizer
 * report": a refused file's message begins with its path, and an accepted
 * profile keeps its cross-key checks (off_db <= on_db, f_lo < f_hi). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apps/detect/profile.h"
#include "syncd/syncd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 16384)
		return 0;
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	GError *err = NULL;
	if (data[0] & 1) {
		det_profile p;
		memset(&p, 0, sizeof p);
		if (det_profile_load(&p, path, &err)) {
			assert(p.off_db <= p.on_db && p.f_lo_hz < p.f_hi_hz);
		} else {
			assert(err && g_str_has_prefix(err->message, path));
			g_error_free(err);
		}
		det_profile_clear(&p);
	} else {
		syncd_config c;
		memset(&c, 0, sizeof c);
		if (!syncd_config_load(&c, path, TRUE, &err)) {
			assert(err && strstr(err->message, path));
			g_error_free(err);
		}
		syncd_config_clear(&c);
	}
	close(fd);
	return 0;
}
