/* background.h — background noise of the simulated world: white, pink or wind.
 *
 * `[world] background = white | pink | wind` with `background_dbfs` (the RMS
 * level over a long run, dB re full scale; docs/background.md).  A sample is
 * a pure function of (seed, node, mic, frame): no state is carried from one
 * frame to the next, so any frame range regenerates in any order and any
 * number of threads may call sim_background_sample() on one object at once.
 *
 *   white  Gaussian, flat spectrum.
 *   pink   Voss–McCartney with counter-based rows: row k holds a uniform value
 *          keyed by frame >> k, for k = 0..K-1 with 2^(K-1) >= rate / 4 Hz;
 *          the sum has a 1/f spectrum (-3 dB/octave) over the audio band.
 *   wind   a sum of cubic B-spline noises with knots at 400, 200, 100, 50 and
 *          25 Hz (variance doubling per octave down: about f^-2 above the
 *          knee, steep sinc^8 fall above 200 Hz), different at every
 *          microphone, times a log-normal gust envelope exp(s z - s^2) where
 *          z is a unit Gaussian spline noise with knots SIM_BG_GUST_S apart,
 *          one per node (a gust is metres across; a node's mics centimetres).
 */
#ifndef CHORUS_SIM_BACKGROUND_H
#define CHORUS_SIM_BACKGROUND_H

#include <stdint.h>

typedef enum {
	SIM_BG_NONE = 0, /* no background: every sample is 0 */
	SIM_BG_WHITE,
	SIM_BG_PINK,
	SIM_BG_WIND,
} sim_bg_kind;

/* Wind's gust envelope: knot spacing (s) and log-amplitude s.d. s (natural
 * log), so the power envelope e^2 has ln-s.d. 2s = 1 and mean 1. */
#define SIM_BG_GUST_S 1.0
#define SIM_BG_GUST_LOG_SD 0.5

/* Wind's carrier: the highest knot rate (Hz) and the number of octave layers
 * below it (400, 200, 100, 50, 25 Hz). */
#define SIM_BG_WIND_TOP_HZ 400.0
#define SIM_BG_WIND_LAYERS 5

typedef struct sim_background sim_background;

/* The kind named `name` ("none", "white", "pink", "wind"), or -EINVAL.  Pure. */
int sim_background_kind_from_name(const char *name);

/* The name of kind k ("none", "white", …), or NULL if k is not a kind.  Pure;
 * a static string. */
const char *sim_background_kind_name(int k);

/* A background of kind `kind` at RMS level `level_dbfs` (dB re full scale,
 * -200..20) for the world's `seed`, sampled at `sample_rate_hz` (the nominal
 * rate, 1000..1e6 Hz; a node's skewed clock only relabels frames).  Returns
 * it (free with sim_background_free()), or NULL with a static reason in *why
 * (kind unknown, level or rate out of range).  Allocates; otherwise pure. */
sim_background *sim_background_new(sim_bg_kind kind, double level_dbfs, uint64_t seed, double sample_rate_hz,
				   const char **why);

/* Frees b; NULL is accepted. */
void sim_background_free(sim_background *b);

/* The background at microphone `mic` of node `node`, frame `frame` (any
 * int64, negative included), in full-scale units: RMS over a long run is
 * 10^(level_dbfs / 20).  Pure and thread-safe (b is only read); does not
 * allocate.  Independent between (node, mic) pairs. */
double sim_background_sample(const sim_background *b, int node, int mic, int64_t frame);

/* The amplitude envelope the sample carries at that frame (dimensionless,
 * mean square 1 over a long run): wind's gust factor exp(s z - s^2), which is
 * the same for every mic of a node, and 1 for the other kinds.  Pure. */
double sim_background_gust(const sim_background *b, int node, int64_t frame);

/* Pink's number of Voss rows K (0 for the other kinds).  Pure. */
int sim_background_pink_rows(const sim_background *b);

/* Wind's knot spacing of carrier layer l (frames; 0 when l is out of
 * 0..SIM_BG_WIND_LAYERS-1 or the kind is not wind) and its weight (the
 * layer's share of the carrier's variance, summing to 1).  Pure; for the
 * tests' closed forms. */
int sim_background_wind_layer(const sim_background *b, int l, double *weight);

#endif
