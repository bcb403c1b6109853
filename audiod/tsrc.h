/* tsrc.h — the timestamp source of a capture stream: which one, and opening
 * it (docs/audiod.md §2).
 *
 * Sources, best first:
 *   kpatch  the kernel module's FIFO of DMA-interrupt times (hw PCMs),
 *   alsa    snd_pcm_htimestamp: time of the last hw_ptr update,
 *   sim     the simulator's side channel (kpatch record format).
 * With `auto`, a hw PCM uses kpatch when its device exists, else alsa; a PCM
 * whose simulator side channel exists uses it (the simulator's records are
 * its interrupt times, so they rank with kpatch); anything else uses alsa.
 */
#ifndef CHORUS_AUDIOD_TSRC_H
#define CHORUS_AUDIOD_TSRC_H

#include <glib.h>

#include "audiod/capture.h"

struct kpatch_reader;

typedef enum { TSRC_AUTO = 0,
	       TSRC_KPATCH,
	       TSRC_ALSA,
	       TSRC_SIM,
	       TSRC_NONE } tsrc_kind;

/* Name of a timestamp source ("kpatch", "alsa", "sim", "none", "auto"), or
 * "?" for a value out of range (pure). */
const char *tsrc_name(tsrc_kind k);

/* Parse a source name ("auto", "kpatch", "alsa", "sim"); returns 0 and *out,
 * or -EINVAL (pure). */
int tsrc_parse(const char *s, tsrc_kind *out);

/* Choose and open the timestamp source `want` for the PCM `cap`, opened by
 * the name `pcm_name`; `sidechannel` is the simulator side channel's path,
 * NULL for the PCM's default (kpatch/sidechan_path.h).  Returns 0 with the
 * source in *kind (TSRC_KPATCH, TSRC_SIM or TSRC_ALSA) and its reader in
 * *reader (NULL for alsa; the caller frees it), or -errno with err set
 * (AUDIOD_ERROR): kpatch wanted but its device unavailable (the reader's
 * error, or -ENODEV when the PCM is not a hw PCM so the module cannot be
 * asked), sim wanted but no FIFO at the path (-ENOENT).  Opens files; never
 * blocks. */
int tsrc_open(tsrc_kind want, capture *cap, const char *pcm_name, const char *sidechannel, tsrc_kind *kind,
	      struct kpatch_reader **reader, GError **err);

#endif
