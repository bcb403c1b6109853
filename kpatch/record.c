/* record.c — validation of chorus_kpatch records and loss accounting. */
#include "kpatch/record.h"

#include <stdint.h>
#include <string.h>

void kpatch_record_init(struct chorus_kpatch_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->magic = CHORUS_KPATCH_MAGIC;
	rec->version = CHORUS_KPATCH_VERSION;
	rec->size = sizeof(*rec);
}

const char *kpatch_record_problem(const struct chorus_kpatch_record *rec)
{
	if (rec->magic != CHORUS_KPATCH_MAGIC)
		return "bad magic";
	if (rec->version < CHORUS_KPATCH_VERSION_MIN || rec->version > CHORUS_KPATCH_VERSION)
		return "unknown version";
	if (rec->size != sizeof(*rec))
		return "wrong record size";
	/* Version 1 had this field reserved (zero) and no update time. */
	if (rec->version == 1 && (rec->update_ns != 0 || (rec->flags & CHORUS_KPATCH_F_UPDATE_TIME)))
		return "nonzero reserved field";
	if (!(rec->flags & CHORUS_KPATCH_F_UPDATE_TIME) && rec->update_ns != 0)
		return "update time without its flag";
	return NULL;
}

int kpatch_record_has_update(const struct chorus_kpatch_record *rec)
{
	return rec->version >= 2 && (rec->flags & CHORUS_KPATCH_F_UPDATE_TIME) != 0;
}

int64_t kpatch_record_update_time(const struct chorus_kpatch_record *rec)
{
	if (!kpatch_record_has_update(rec))
		return rec->time_ns;
	/* A producer's time near the end of the range saturates rather
	 * than wrap (no such clock, but the bytes are untrusted). */
	if (rec->time_ns > INT64_MAX - (int64_t)rec->update_ns)
		return INT64_MAX;
	return rec->time_ns + (int64_t)rec->update_ns;
}

void kpatch_seq_init(struct kpatch_seq_tracker *t, int dropped_known)
{
	memset(t, 0, sizeof(*t));
	t->have_dropped = dropped_known != 0;
}

int kpatch_seq_feed(struct kpatch_seq_tracker *t,
		    const struct chorus_kpatch_record *rec)
{
	int event = 0;

	t->st.records++;
	if (rec->flags & CHORUS_KPATCH_F_XRUN)
		t->st.xruns++;
	if (t->have_seq && rec->seq != t->next_seq) {
		event = 1;
		/* A forward jump of 2^32 records or more is no loss (that is
		 * over a year of periods at 100 Hz) but a producer counting from
		 * elsewhere: counted as a reset, so seq_lost cannot wrap. */
		if (rec->seq > t->next_seq && rec->seq - t->next_seq < KPATCH_SEQ_MAX_JUMP) {
			t->st.seq_gaps++;
			t->st.seq_lost += rec->seq - t->next_seq;
		} else {
			/* A new producer (restarted plugin, module reloaded):
			 * its drop count starts again too. */
			t->st.seq_resets++;
			t->have_dropped = 0;
		}
	}
	t->have_seq = 1;
	t->next_seq = rec->seq + 1;

	if (t->have_dropped && rec->dropped > t->last_dropped) {
		t->st.overflows += rec->dropped - t->last_dropped;
		event = 1;
	}
	/* A smaller count than before means the producer zeroed it (a new
	 * SELECT): it becomes the baseline, nothing was lost by it. */
	t->have_dropped = 1;
	t->last_dropped = rec->dropped;
	return event;
}
