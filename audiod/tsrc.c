/* tsrc.c — choosing and opening the timestamp source (see tsrc.h). */
#include "audiod/tsrc.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "audiod/error.h"
#include "kpatch/reader.h"
#include "kpatch/sidechan_path.h"

const char *tsrc_name(tsrc_kind k)
{
	static const char *names[] = {"auto", "kpatch", "alsa", "sim", "none"};
	return k <= TSRC_NONE ? names[k] : "?";
}

int tsrc_parse(const char *s, tsrc_kind *out)
{
	for (int k = TSRC_AUTO; k <= TSRC_SIM; k++)
		if (!strcmp(s, tsrc_name((tsrc_kind)k))) {
			*out = (tsrc_kind)k;
			return 0;
		}
	return -EINVAL;
}

static int is_fifo(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

int tsrc_open(tsrc_kind want, capture *cap, const char *pcm_name, const char *sidechannel, tsrc_kind *kind,
	      struct kpatch_reader **reader, GError **err)
{
	int card, dev, sub;
	char path[256];
	*reader = NULL;
	capture_hw_ids(cap, &card, &dev, &sub);
	if (want == TSRC_KPATCH && card < 0) {
		/* The module stamps a hw substream's interrupts; a plugin PCM
		 * (plughw:, dsnoop, the simulator) names no card to ask it for,
		 * so the timestamps asked for cannot be had: say so rather than
		 * falling back to ALSA's. */
		g_set_error(err, AUDIOD_ERROR, ENODEV,
			    "%s: kpatch timestamps wanted but the PCM is not a hw: PCM (no card to ask "
			    "the module for; use hw:CARD,DEV, or tstamp = auto/alsa)",
			    pcm_name);
		return -ENODEV;
	}
	if ((want == TSRC_AUTO || want == TSRC_KPATCH) && card >= 0) {
		int rc = kpatch_reader_open_for_pcm(card, dev, sub, CHORUS_KPATCH_STREAM_CAPTURE, reader);
		if (rc == 0) {
			*kind = TSRC_KPATCH;
			return 0;
		}
		if (want == TSRC_KPATCH) {
			g_set_error(err, AUDIOD_ERROR, -rc, "%s: kpatch timestamps wanted but unavailable: %s",
				    pcm_name, g_strerror(-rc));
			return rc;
		}
	}
	if (want == TSRC_AUTO || want == TSRC_SIM) {
		const char *p = sidechannel;
		if (!p && kpatch_sidechan_path(pcm_name, path, sizeof path) > 0)
			p = path;
		if (p && is_fifo(p) && kpatch_reader_open_path(p, reader) == 0) {
			*kind = TSRC_SIM;
			return 0;
		}
		if (want == TSRC_SIM) {
			g_set_error(err, AUDIOD_ERROR, ENOENT, "%s: simulator side channel %s not found", pcm_name,
				    p ? p : "(no path)");
			return -ENOENT;
		}
	}
	*kind = TSRC_ALSA;
	return 0;
}
