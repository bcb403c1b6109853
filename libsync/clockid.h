/* clockid.h — names of clocks: (node, kind, index) and their text forms.
 *
 * Text forms (docs/architecture.md §2.1): "node3:cpu", "node3:realtime", "node3:audio0",
 * "global", "utc".  Units: cpu/realtime/global in ns, audio<k> in frames.
 * Pure: no I/O.  Errors are negative errno values.
 */
#ifndef CHORUS_CLOCKID_H
#define CHORUS_CLOCKID_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	SYNC_KIND_CPU = 0,      /* CLOCK_MONOTONIC_RAW of the node, ns */
	SYNC_KIND_REALTIME = 1, /* CLOCK_REALTIME of the node, ns */
	SYNC_KIND_AUDIO = 2,    /* absolute frame index of audio device `index`, frames */
	SYNC_KIND_GLOBAL = 3,   /* the network's timescale, ns (node and index are 0) */
	SYNC_KIND_UTC = 4,      /* UTC as the nodes' disciplined realtime clocks know it, ns (node and index are 0) */
} sync_kind;

#define SYNC_KIND_LAST SYNC_KIND_UTC /* the largest valid kind (wire decoders refuse larger) */

typedef struct {
	uint32_t node;  /* node number (0 for global) */
	uint16_t kind;  /* sync_kind */
	uint16_t index; /* audio device index; 0 for other kinds */
} sync_clock_id;

#define SYNC_CLOCK_NAME_MAX 32 /* longest text form, with NUL */

/* Parse a clock name into *out; `default_node` is used for a bare kind
 * ("cpu", "audio0") or -1 to require the node.  Returns 0, or -EINVAL with a
 * static reason in *why (if why != NULL). */
int sync_clock_parse(const char *text, int64_t default_node, sync_clock_id *out, const char **why);

/* Write the text form of id into buf (at least SYNC_CLOCK_NAME_MAX bytes);
 * returns buf. */
char *sync_clock_format(sync_clock_id id, char *buf, size_t len);

/* True when a and b name the same clock. */
int sync_clock_equal(sync_clock_id a, sync_clock_id b);

/* Constructors. */
sync_clock_id sync_clock_cpu(uint32_t node);
sync_clock_id sync_clock_realtime(uint32_t node);
sync_clock_id sync_clock_audio(uint32_t node, uint16_t index);
sync_clock_id sync_clock_global(void);
sync_clock_id sync_clock_utc(void);

#endif
