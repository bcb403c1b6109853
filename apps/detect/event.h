/* event.h — a detection event: what detect publishes on detect/events and
 * collab shares between nodes.  Pure text codec, no I/O.
 *
 * One line of space-separated key=value pairs (docs/protocol.md):
 *   v=1 node=N dev=K seq=S profile=NAME onset_frame=F onset_se=E rate=R
 *   cpu_ns=C cpu_se_ns=D global_ns=G global_se_ns=H duration_s=T
 *   f_lo=A f_hi=B snr_db=X enr_db=Y template=J [onset_crb_se=E0] [call=NAME]
 *   [onset_alt=D1,D2,...]
 * onset_frame is fractional (absolute frame index of audio<K> where the
 * call starts), onset_se its standard error in frames; cpu_ns and global_ns
 * are the onset on the node's cpu clock and on the global timescale (ns,
 * rounded), with standard errors that include the onset's.  global_ns=none
 * when no conversion to global was possible (the event is still useful
 * locally).  template=0: no template matched, the onset is the energy
 * detector's coarse one.  The format carries nothing of a simulation: a
 * scorer maps cpu_ns to the world's time itself (sim/score/).
 * onset_alt: where else the call may start, frames relative to
 * onset_frame, at most DET_EVENT_ALT, most likely first: the template's
 * other alignments the data leave open (a recorded call's template
 * matching another of its syllables, a varied pulse train one pulse
 * off), which collab's onset gate admits beside onset_frame.
 * Unknown keys are ignored when parsing (forward compatibility).
 */
#ifndef CHORUS_DETECT_EVENT_H
#define CHORUS_DETECT_EVENT_H

#include <glib.h>
#include <stdint.h>

/* The most alternative onsets an event carries (onset_alt). */
#define DET_EVENT_ALT 6

typedef struct {
	uint32_t node;       /* node number */
	uint32_t dev;        /* audio device index */
	uint64_t seq;        /* per-detect-process sequence number */
	char profile[32];    /* profile name */
	double onset_frame;  /* absolute audio frame index, fractional */
	double onset_se;     /* frames: its standard error, every alignment the data leave open included */
	double onset_crb_se; /* frames: the Cramer-Rao bound alone, the error were the call exactly the
			      * template (collab's onset gate); optional on the wire, = onset_se when absent */
	double rate_hz;      /* nominal sample rate, Hz */
	int64_t cpu_ns;      /* onset on the node's cpu clock, ns */
	double cpu_se_ns;    /* ns */
	gboolean has_global;
	int64_t global_ns;               /* onset on the global timescale, ns */
	double global_se_ns;             /* ns */
	double duration_s;               /* s */
	double f_lo_hz, f_hi_hz;         /* band, Hz */
	double snr_db;                   /* peak band SNR, dB */
	double enr_db;                   /* matched-filter energy-to-noise ratio, dB (0 without a match) */
	int template_id;                 /* 1-based template that matched, 0 none */
	char call[32];                   /* its call type ([template.N] call; "": the template is its own), optional on
				  * the wire */
	int n_alt;                       /* the other starts the match leaves most open (0..DET_EVENT_ALT), optional */
	double onset_alt[DET_EVENT_ALT]; /* frames relative to onset_frame, most likely first */
} det_event;

/* Append the text form of e (no newline) to out. */
void det_event_format(const det_event *e, GString *out);

/* Parse one event (len bytes, need not be NUL-terminated).  Returns 0, or
 * -EINVAL with the reason (a missing or malformed key) in why[wlen]. */
int det_event_parse(const char *text, size_t len, det_event *e, char *why, size_t wlen);

/* Range checks of every field, as det_event_parse() applies them (an event
 * from another node is outside input): node not 4294967295, dev <= 255,
 * rate 1000..1e6 Hz, onset_frame >= 0, standard errors >= 0 and below an
 * hour, times in 1..2^62 ns, duration 0..3600 s, 0 <= f_lo <= f_hi <= rate,
 * template 0..65535, a call type's name of 1-31 of A-Z a-z 0-9 _ . - (or
 * none), 0..DET_EVENT_ALT alternative onsets each within an hour.  Returns 0 or -EINVAL with the reason in why[wlen]. */
int det_event_check(const det_event *e, char *why, size_t wlen);

/* Whether s may name a call type: 1-31 of A-Z a-z 0-9 _ . - (it travels
 * in the events' space-separated text). */
gboolean det_call_name_ok(const char *s);

/* The standard error of e's global onset were the call exactly the
 * template: global_se_ns with the onset's whole error replaced by
 * onset_crb_se (ns).  What collab's grouping windows, clip margins and
 * onset gate use: their heuristics were built on it, and with the whole
 * error of a varied call (tens of ms for a pulse train) every window would
 * take in the same frog's next call.  Pure. */
double det_event_global_crb_se_ns(const det_event *e);

#endif
