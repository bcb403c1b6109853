/* fuzz_request.c — libFuzzer target over the parameters of a request on
 * audio/<k>/data (audiod/request.c): what any client of audiod may send.
 * The first input byte gives the device's channel count (1-64), the rest is
 * the blob.  Beyond "no crash, no sanitizer report": an accepted request
 * selects only channels the device has, in range, and a time range that is
 * not reversed; a refused one says why. */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "audiod/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	uint32_t channels = 1 + data[0] % AUDIO_MAX_CHANNELS;
	audio_request r;
	GError *err = NULL;
	int rc = audio_request_parse((const char *)data + 1, size - 1, channels, 7, &r, &err);
	if (rc == 0) {
		assert(!err);
		assert(r.nchan <= AUDIO_MAX_CHANNELS);
		for (uint32_t i = 0; i < r.nchan; i++)
			assert(r.chan[i] < channels);
		if (r.by_time)
			assert(r.to == INT64_MAX || r.to >= r.from);
	} else {
		assert(rc == -EINVAL && err && err->message && *err->message);
		g_error_free(err);
	}
	return 0;
}
