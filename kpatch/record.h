/* record.h — pure checks on chorus_kpatch records: validation and the
 * sequence/overflow tracker.  No I/O; reader.c feeds it bytes it read.
 */
#ifndef CHORUS_KPATCH_RECORD_H
#define CHORUS_KPATCH_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "kpatch/chorus_kpatch.h"

/* Fills rec with a valid empty record (magic, version, size; rest zero). */
void kpatch_record_init(struct chorus_kpatch_record *rec);

/* Returns NULL when rec is well-formed (version 1 or 2), else a static
 * string saying why not (bad magic, unknown version, wrong size, nonzero
 * reserved field in version 1, an update time without its flag). */
const char *kpatch_record_problem(const struct chorus_kpatch_record *rec);

/* Returns 1 when the well-formed record rec carries the time after the
 * hw_ptr update (version 2, CHORUS_KPATCH_F_UPDATE_TIME), else 0. */
int kpatch_record_has_update(const struct chorus_kpatch_record *rec);

/* Returns the time after the hw_ptr update, ns on the record's clock
 * (time_ns + update_ns, INT64_MAX where that would overflow), or time_ns
 * when the record has none (version 1, the simulator).  The frame hw_ptr was reached before it on any driver. */
int64_t kpatch_record_update_time(const struct chorus_kpatch_record *rec);

/* What a stream of records says about loss.  All counts since init. */
struct kpatch_seq_stats {
	uint64_t records;    /* records fed */
	uint64_t seq_gaps;   /* times seq jumped forward */
	uint64_t seq_lost;   /* records missing according to seq */
	uint64_t seq_resets; /* times seq went backwards/repeated (producer restarted) */
	uint64_t overflows;  /* records the producer said it dropped (increase of `dropped`) */
	uint64_t xruns;      /* records flagged CHORUS_KPATCH_F_XRUN */
};

/* The largest forward jump of seq taken as records lost (a larger one is a
 * producer restarted with another count: a reset). */
#define KPATCH_SEQ_MAX_JUMP (1ULL << 32)

/* Tracks seq and dropped across records of one substream. */
struct kpatch_seq_tracker {
	struct kpatch_seq_stats st;
	int have_seq;          /* next_seq is known */
	uint64_t next_seq;     /* seq expected next */
	int have_dropped;      /* last_dropped is a baseline */
	uint32_t last_dropped; /* producer's dropped count at the last record */
};

/* Starts a tracker; when dropped_known, the producer's count starts at 0
 * (the kernel zeroes it at SELECT), else the first record sets the baseline. */
void kpatch_seq_init(struct kpatch_seq_tracker *t, int dropped_known);

/* Accounts one valid record; returns 0 when it followed on without loss,
 * 1 when it revealed a seq gap, an overflow or a producer restart. */
int kpatch_seq_feed(struct kpatch_seq_tracker *t,
		    const struct chorus_kpatch_record *rec);

#endif
