/* world.h — the simulated world: what each microphone hears, and the truth
 * about every clock.
 *
 * Time.  True time is the host's CLOCK_MONOTONIC_RAW.  The world's own times
 * (call times, t below) are seconds since the world's epoch, a true time
 * chosen by whoever runs the world (the launcher, or the plugin's first
 * start); functions taking host ns say so.
 *
 * Audio clock of node N (rate R Hz, skew a ppm): its crystal ticks since the
 * epoch, frame F happening at true time
 *     t(F) = F / (R (1 + a 1e-6))          [s since epoch]
 * A stream started at true time t_s begins at the first whole frame at or
 * after t_s, F0 = ceil(t_s R (1 + a 1e-6)), so its frame index f = F - F0
 * obeys f = (t - t(F0)) R (1 + a 1e-6).  Sample value of frame F at mic m:
 *     x = sum over sources, paths p and calls k of
 *           g_p * (h_p * s_k)(t(F) - d_p - c_k)  +  n(seed, N, m, F)
 * with paths p the direct sound and its images (ground, room walls), d_p the
 * path length over the speed of sound (plus the wind along it), g_p = level
 * / max(length, min_distance), h_p a short FIR of the path's reflections and
 * air absorption (sim/acoustics.h), s_k call k's waveform (its parameters
 * drawn per call with variation), c_k its start, and n counter-based noise:
 * a pure function of (scenario, N, m, F), so any frame range can be
 * regenerated in any order.  A moving source's delay and spreading are
 * solved at each sample from where it was when it emitted (Doppler follows);
 * its filters are those of where it was when the call began.
 *
 * CPU clock of node N: sync_simclock_apply(node cpu params, true ns).
 * Interrupt latency of the period ending at frame F: a pure function of
 * (seed, N, F) drawn from the node's distribution.
 *
 * Everything here is pure computation on the loaded scenario (file sources
 * are read by sim_world_new); thread-safe for concurrent readers.
 */
#ifndef CHORUS_SIM_WORLD_H
#define CHORUS_SIM_WORLD_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/scenario.h"

typedef struct sim_world sim_world;

/* Build the world of a scenario (which must outlive it): draws the Poisson
 * call times, reads file sources.  Returns it, or NULL with *err. */
sim_world *sim_world_new(const sim_scenario *sc, GError **err);

void sim_world_free(sim_world *w);

const sim_scenario *sim_world_scenario(const sim_world *w);

/* The node numbered `node`, or NULL. */
const sim_node_cfg *sim_world_node(const sim_world *w, int node);

/* Number of microphones of a node; -ENOENT for an unknown node. */
int sim_world_n_mics(const sim_world *w, int node);

/* Propagation delay from source i (file order) to mic m of node, s; NAN when
 * node or mic does not exist. */
double sim_world_delay_s(const sim_world *w, int node, int mic, size_t source);

/* True time (s since epoch) at which the direct sound of call k of source i
 * reaches mic m of node: the call's start plus the propagation delay along
 * the direct path (for a moving source, from where it was when it emitted
 * the call's start).  NAN for an unknown node, mic, source or call.  This is
 * what scoring matches detections against. */
double sim_world_arrival_s(const sim_world *w, int node, int mic, size_t source, size_t k);

/* True position (m) of source i when it emitted the start of call k; FALSE
 * (pos untouched) for an unknown source or call. */
gboolean sim_world_call_pos(const sim_world *w, size_t source, size_t k, double pos_m[3]);

/* Amplitude factor of source i at mic m along the direct path (level and
 * spreading loss; for a moving source, from its first waypoint). */
double sim_world_gain(const sim_world *w, int node, int mic, size_t source);

/* Number of propagation paths from each source to each mic: 1 in free
 * field, 2 over a ground (direct, then the ground's image), the room's image
 * sources up to max_order (direct first, then by order). */
size_t sim_world_n_images(const sim_world *w);

/* Delay (s) of path `image` from source i to mic m (for a moving source,
 * from its first waypoint); NAN when any index is out of range. */
double sim_world_path_delay_s(const sim_world *w, int node, int mic, size_t source, size_t image);

/* Complex transfer function at f_hz of path `image` besides its delay:
 * spreading, reflections and air absorption as the world applies them (its
 * FIR's response).  NAN when any index is out of range. */
double _Complex sim_world_path_response(const sim_world *w, int node, int mic, size_t source, size_t image,
					double f_hz);

/* Length (s) of call k of source i (calls differ with variation); NAN when
 * out of range. */
double sim_world_call_length_s(const sim_world *w, size_t source, size_t k);

/* The parameters call k of source i was drawn with (the source's own
 * without variation; a file's segment as configured): a developer's view
 * of the truth (chorus-calltrace), never an app's.  FALSE when out of
 * range. */
gboolean sim_world_call_params(const sim_world *w, size_t source, size_t k, dsp_wave_params *out);

/* Calls of source i: count, and the start time of call k (s since epoch,
 * ascending). */
size_t sim_world_n_calls(const sim_world *w, size_t source);
double sim_world_call_time_s(const sim_world *w, size_t source, size_t k);

/* Acoustic signal (noise-free) at mic m of node at true time t_s (s since
 * epoch), full scale 1.0; 0 for an unknown node/mic. */
double sim_world_pressure(const sim_world *w, int node, int mic, double t_s);

/* The noise added to frame F of mic m (full scale 1.0). */
double sim_world_noise(const sim_world *w, int node, int mic, int64_t frame);

/* Value of frame F (absolute, since the epoch) of mic m at sound-card rate
 * `rate_hz`: pressure at t(F) plus noise.  The plugin produces exactly this. */
double sim_world_sample(const sim_world *w, int node, int mic, double rate_hz, int64_t frame);

/* True time of frame F, s since epoch. */
double sim_world_frame_time_s(const sim_world *w, int node, double rate_hz, int64_t frame);

/* True time of frame F, ns since epoch, rounded to the nearest ns. */
int64_t sim_world_frame_time_ns(const sim_world *w, int node, double rate_hz, int64_t frame);

/* The (fractional) frame of node's audio clock at true time t_s. */
double sim_world_frame_at(const sim_world *w, int node, double rate_hz, double t_s);

/* First whole frame at or after ns_since_epoch: where a stream started then
 * begins (F0 above). */
int64_t sim_world_first_frame_at(const sim_world *w, int node, double rate_hz, int64_t ns_since_epoch);

/* Anchor the cpu clocks' wander (libsync/simwander.h) at host raw time
 * epoch_ns, the world's time 0, as chorus-sim tells its processes in
 * CHORUS_SIM_CLOCK; until it is called the cpu wander starts at host raw 0.
 * (The cards' wander is in world time and needs no anchor.) */
void sim_world_set_epoch(sim_world *w, int64_t epoch_ns);

/* The node's cpu clock reading at host true time (CLOCK_MONOTONIC_RAW ns). */
int64_t sim_world_node_cpu_at(const sim_world *w, int node, int64_t true_ns);

/* Host true time at which the node's cpu clock reads cpu_ns (±1 ns). */
int64_t sim_world_true_at_node_cpu(const sim_world *w, int node, int64_t cpu_ns);

/* Interrupt latency of the period that ends at frame F, ns, >= 0 and at most
 * cap_ns (the plugin caps it at half a period so interrupts stay in order). */
int64_t sim_world_irq_latency_ns(const sim_world *w, int node, int64_t frame_end, int64_t cap_ns);

#endif
