/* fuzz_kpatch.c — libFuzzer target over what audiod believes of the kernel
 * module's FIFO (or the simulator's side channel): the input is a stream of
 * 48-byte records as read() returns them, checked by kpatch_record_problem
 * and, when well-formed, fed to the sequence tracker (kpatch/record.h).
 * Beyond "no crash, no sanitizer report": a refused record says why; the
 * tracker counts every record fed, its counters never go backwards, and a
 * record it calls seamless is exactly the next sequence number. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kpatch/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 48 * 512)
		return 0;
	struct kpatch_seq_tracker t;
	kpatch_seq_init(&t, data[0] & 1);
	uint64_t fed = 0;
	for (size_t off = 1; off + sizeof(struct chorus_kpatch_record) <= size; off += sizeof(struct chorus_kpatch_record)) {
		struct chorus_kpatch_record rec;
		memcpy(&rec, data + off, sizeof rec);
		/* Half the time, a well-formed header over fuzzed contents, so the
		 * tracker sees many records. */
		if (data[off] & 0x80) {
			struct chorus_kpatch_record ok;
			kpatch_record_init(&ok);
			rec.magic = ok.magic;
			rec.version = ok.version;
			rec.size = ok.size;
			if (!(rec.flags & CHORUS_KPATCH_F_UPDATE_TIME))
				rec.update_ns = 0;
		}
		const char *why = kpatch_record_problem(&rec);
		if (why) {
			assert(*why);
			continue;
		}
		/* The update time never precedes the entry time, nor wraps. */
		assert(kpatch_record_update_time(&rec) >= rec.time_ns);
		assert(kpatch_record_has_update(&rec) || kpatch_record_update_time(&rec) == rec.time_ns);
		struct kpatch_seq_stats before = t.st;
		uint64_t expect = t.next_seq;
		int had = t.have_seq;
		int news = kpatch_seq_feed(&t, &rec);
		fed++;
		assert(t.st.records == fed);
		assert(t.st.seq_gaps >= before.seq_gaps && t.st.seq_lost >= before.seq_lost &&
		       t.st.seq_resets >= before.seq_resets && t.st.overflows >= before.overflows &&
		       t.st.xruns >= before.xruns);
		if (news == 0 && had)
			assert(rec.seq == expect);
	}
	return 0;
}
