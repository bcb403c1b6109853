/* wavefile.c — reading a recorded call from a sound file with libsndfile
 * (see wave.h): the one place apps/dsp touches a file besides FFTW wisdom. */
#include <sndfile.h>
#include <string.h>

#include "apps/dsp/wave.h"

float *dsp_wave_read_file(const char *path, int channel, size_t *n, double *rate_hz, GError **err)
{
	SF_INFO info;
	memset(&info, 0, sizeof info);
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	if (!sf) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", path, sf_strerror(NULL));
		return NULL;
	}
	if (channel < 0 || channel >= info.channels || info.frames <= 0) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: has %d channel(s) and %lld frames; channel %d is not there",
			    path, info.channels, (long long)info.frames, channel);
		sf_close(sf);
		return NULL;
	}
	float *all = g_new(float, (gsize)info.frames *info.channels);
	sf_count_t got = sf_readf_float(sf, all, info.frames);
	sf_close(sf);
	if (got <= 0) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "%s: no frames could be read", path);
		g_free(all);
		return NULL;
	}
	float *x = g_new(float, got);
	for (sf_count_t i = 0; i < got; i++)
		x[i] = all[i * info.channels + channel];
	g_free(all);
	*n = (size_t)got;
	*rate_hz = info.samplerate;
	return x;
}
