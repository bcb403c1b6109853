/* libsync-example.c — the tutorial's program (docs/libsync.md): convert a
 * node's cpu timestamps to global time with their uncertainties, then fetch
 * the audio of a global-time interval with the time of its first frame.
 *
 *   cc libsync-example.c $(pkg-config --cflags --libs libsync) -o libsync-example
 *   ./libsync-example [SECONDS_BACK]
 *
 * Needs syncd (and, for the audio, audiod) running on the node that
 * $CHORUS_RUN points at.  Exit status: 0 ok, 1 a conversion or the fetch
 * failed (the reason is printed), 2 syncd unreachable.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <libsync/audio_fetch.h>
#include <libsync/client.h>
#include <libsync/many.h>
#include <libsync/now.h>

int main(int argc, char **argv)
{
	double back_s = argc > 1 ? atof(argv[1]) : 1.0;
	GError *err = NULL;
	char why[256];

	/* 1. Subscribe to the node's ticker and wait for the first one. */
	sync_client *c = sync_client_new(NULL, NULL, NULL, NULL, &err);
	if (!c) {
		fprintf(stderr, "libsync-example: %s\n", err->message);
		return 2;
	}
	if (sync_client_wait(c, 5000) < 0) {
		fprintf(stderr, "libsync-example: no ticker from syncd within 5 s\n");
		return 2;
	}
	uint32_t node, root;
	sync_client_info(c, &node, &root);

	/* 2. Three cpu timestamps of this node: now, and back_s and 2 back_s ago. */
	int64_t now = sync_now(SYNC_KIND_CPU), step = (int64_t)(back_s * 1e9);
	int64_t cpu[3] = {now - 2 * step, now - step, now};
	int64_t g[3];
	double frac[3], se[3];
	int32_t rc[3];
	if (sync_client_convert_many(c, sync_clock_cpu(node), sync_clock_global(), cpu, 3, now, g, frac, se, rc, why,
				     sizeof why)) {
		fprintf(stderr, "libsync-example: %s\n", why);
		return 1;
	}
	for (int i = 0; i < 3; i++)
		printf("node%" PRIu32 ":cpu %" PRId64 " -> global %" PRId64 "%+.3f ns  (s.e. %.1f ns)\n", node, cpu[i], g[i],
		       frac[i], se[i]);

	/* 3. The audio between the first two, by global time. */
	sync_audio *a;
	int r = sync_audio_fetch(0, "global", g[0], g[1], NULL, 10000, &a, why, sizeof why);
	if (r < 0) {
		fprintf(stderr, "libsync-example: audio: %s\n", why);
		return 1;
	}
	sync_audio_info_t in;
	size_t bytes;
	sync_audio_info(a, &in);
	sync_audio_data(a, &bytes);
	printf("audio: %" PRId64 " frames from frame %" PRId64 ", %u Hz, %u channels %s, %zu bytes, %" PRId64
	       " lost\n",
	       in.frames, in.first_frame, in.rate_hz, in.channels, in.format, bytes, in.gap_frames);
	if (in.has_t0)
		printf("audio: first frame at %s %" PRId64 "%+.3f (s.e. %.1f), frame period %.6f (s.e. %.3g)\n", in.t0_clock,
		       in.t0, in.t0_frac, in.t0_se, in.period, in.period_se);
	sync_audio_free(a);
	sync_client_free(c);
	return 0;
}
