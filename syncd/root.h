/* root.h — global time as this node sees it: which node is the root, whether
 * global <-> root cpu is known here, and — on the root — the definition
 * global = cpu - cpu0 + utc0 taken from one realtime<->cpu sample when the
 * node became root, its rate then steered to UTC as a piecewise-linear
 * timescale (timescale.h, steer.h; docs/clocks.md, docs/protocol.md
 * "Global time").
 *
 * Opaque, with accessors (as linuxptp's `struct clock`): the command
 * language sets the preferred root, RBS applies the root rule (the
 * configured root while it is alive, otherwise the lowest-numbered live
 * node; liveness is rbs_mesh's) and reports whether the remote root's
 * definition has reached us, and the ticker reads the result.  Every change
 * a reader would see goes to the `syncd_notify` given at creation.
 * Reads a clock only in syncd_root_take (and so in syncd_root_new and
 * syncd_root_follow when this node becomes root).
 */
#ifndef CHORUS_SYNCD_ROOT_H
#define CHORUS_SYNCD_ROOT_H

#include <glib.h>
#include <stdint.h>

#include "libsync/now.h"
#include "libsync/ticker_wire.h"
#include "syncd/continuation.h"
#include "syncd/notify.h"
#include "syncd/steer.h"
#include "syncd/timescale.h"

typedef struct syncd_root syncd_root;

/* The root of node `self` with preferred root `preferred` (-1: none, i.e.
 * this node).  When this node is its own choice it takes the root at once
 * (syncd_root_take, `rtcpu_tries` sandwiches, >= 1); otherwise the root is
 * `preferred` and global is unknown until syncd_root_follow says so.
 * Never fails.  (A networked syncd calls syncd_root_listen next.) */
syncd_root *syncd_root_new(uint32_t self, int64_t preferred, int rtcpu_tries, int64_t now_ns, syncd_notify on_change);

/* Withdraw the definition syncd_root_new took before anyone saw it: a
 * networked node listens first for a live timescale to continue (the
 * root rule in rbs.c) rather than start one of its own. */
void syncd_root_listen(syncd_root *rt);

/* The continuation noted last (valid = 0: none). */
const syncd_continuation *syncd_root_continuation(const syncd_root *rt);

/* Free (NULL is fine). */
void syncd_root_free(syncd_root *rt);

/* This node's number. */
uint32_t syncd_root_self(const syncd_root *rt);

/* The current root node. */
uint32_t syncd_root_node(const syncd_root *rt);

/* TRUE when global <-> root cpu is known here (defined here, or the root's
 * definition has reached us). */
gboolean syncd_root_have_global(const syncd_root *rt);

/* When this node is the root and has defined global: the definition as a
 * ticker entry cpu(self) -> global (fixed, updated = cpu0) in *out and
 * TRUE; otherwise FALSE. */
gboolean syncd_root_definition(const syncd_root *rt, sync_ticker_entry *out);

/* The preferred root (-1: none). */
int64_t syncd_root_preferred(const syncd_root *rt);

/* Prefer `node` (-1: none) from now on; the root rule applies it. */
void syncd_root_prefer(syncd_root *rt, int64_t node);

/* Note this node's latest conversion to global while it follows a remote
 * root (continuation.h); kept for a hand-over to this node. */
void syncd_root_offer_continuation(syncd_root *rt, const syncd_continuation *c);

/* The longest a noted continuation is used for after it was measured, ns. */
#define SYNCD_ROOT_CONTINUATION_MAX_AGE_NS (3600LL * 1000000000LL)

/* Make this node the global root now.  When it has a continuation of the
 * current timescale (offered within SYNCD_ROOT_CONTINUATION_MAX_AGE_NS, of
 * the root it followed) global continues along it: global = global0 +
 * slope (cpu - cpu0), and the step that defining it afresh would have made
 * is logged and kept (syncd_root_describe).  Otherwise (the first root of
 * a field) global = cpu + (realtime - cpu) from a fresh realtime<->cpu
 * sample.  Tells the listener SYNCD_CHANGED_AT_ONCE. */
void syncd_root_take(syncd_root *rt, int64_t now_ns);

/* Apply the root rule's choice `chosen` at now: when it is this node and
 * this node is not already the root with global defined, take the root;
 * when it is another node than the current root, follow it.  While the
 * root is remote, `remote_global_known` says whether its definition of
 * global has reached us.  A switch counts (syncd_root_switches) and is
 * logged; any visible change goes to the listener. */
void syncd_root_follow(syncd_root *rt, uint32_t chosen, gboolean remote_global_known, int64_t now_ns);

/* Times the root changed since creation. */
guint syncd_root_switches(const syncd_root *rt);

/* Node cpu ns of the last root change (meaningless before the first). */
int64_t syncd_root_since(const syncd_root *rt);

/* TRUE when this node's definition of global continues another root's
 * timescale; the step avoided (ns: realtime-defined minus continued, at
 * the hand-over) and the continuation's s.e. then (ns) in *step, *se. */
gboolean syncd_root_continued(const syncd_root *rt, double *step_ns, double *se_ns);

/* TRUE when this node is the root and its definition continues another
 * root's timescale: the stated drift of ours from it now (ns, one s.e.;
 * continuity.h: grows with the time since the hand-over and the wander
 * measured while we followed it) in *se_ns and that root in *of. */
gboolean syncd_root_drift(const syncd_root *rt, int64_t now_ns, double *se_ns, uint32_t *of);

/* After this node switched from one timescale to another root's (a
 * partition's half rejoining the other, a hand-over it followed): the step
 * its global made at the switch — the new root's global minus the line it
 * followed before (its own definition, or its last conversion to the old
 * root), measured at the first conversion to the new root — and that
 * step's s.e. (both ns).  FALSE before the step is measured, or when
 * there was no line before. */
gboolean syncd_root_joined(const syncd_root *rt, double *step_ns, double *se_ns);

/* The root line of sync/rbs: "root: nodeN[ (global not known yet)]
 * switches=K[ last_switch=Xs ago] rule=...\n" and, after a hand-over that
 * continued the timescale, "continued: from nodeM's timescale ...\n", and
 * after a switch to another root's timescale "joined: nodeM's timescale
 * ... stepped ...\n" (syncd_root_joined; with the drift our continuation
 * stated at the switch when ours was one, syncd_root_drift), appended to
 * out. */
void syncd_root_describe(const syncd_root *rt, int64_t now_ns, GString *out);

/* This node's realtime clock against UTC as last read (sync_utc_status):
 * kept for syncd_root_utc, the steering and the status line. */
void syncd_root_set_utc(syncd_root *rt, const sync_utc *u);

/* This node's latest realtime fit cpu -> realtime (n >= 4 points): a root
 * taken afresh with a disciplined realtime clock starts global at its rate. */
void syncd_root_set_realtime_fit(syncd_root *rt, const sync_conv *fit);

/* TRUE when the last read said this node's realtime is disciplined to UTC;
 * its stated standard error (ns) in *est_error_ns. */
gboolean syncd_root_utc(const syncd_root *rt, double *est_error_ns);

/* On the root with global defined: steer global's rate to UTC (steer.h)
 * from now on, given utc = this node's cpu -> utc conversion (NULL: no
 * UTC estimate; global runs free) when a decision is due
 * (syncd_steer_due).  Returns 1 when a segment was added, 0 when not (not
 * the root, no estimate, not due), a negative errno when the
 * timescale refused it.  Tells the listener SYNCD_CHANGED. */
int syncd_root_steer(syncd_root *rt, const sync_conv *utc, const syncd_steer_params *p, int64_t now_ns);

/* On a follower: the current root's definition as the advertisements
 * bring it (NULL: none), noted in the timescale's history. */
void syncd_root_note_definition(syncd_root *rt, const sync_conv *def);

/* The timescale as this node knows it (on the root: its own). */
const syncd_timescale *syncd_root_timescale(const syncd_root *rt);

/* The "timescale:" line of sync/rbs and sync/status: steered to UTC (with
 * global - utc and its s.e., the rate and correction) or free-running and
 * why; on a follower, whose timescale and how many segments are kept. */
void syncd_root_describe_utc(const syncd_root *rt, GString *out);

#endif
