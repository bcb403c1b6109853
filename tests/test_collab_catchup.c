/* test_collab_catchup.c — collab keeps working while a node is cut off
 * (issue 16 item 2): the on-disk queue of shared detections (outbox.h), the
 * per-node held/missing ids (seen.h), the HAVE/WANT datagrams
 * (sharemsg.h), late detections completing closed groups (group.h), and
 * two nodes over real UDP sockets catching up after an outage, each missed
 * detection delivered once, in order, marked late. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apps/collab/group.h"
#include "apps/collab/outbox.h"
#include "apps/collab/seen.h"
#include "apps/collab/share.h"
#include "apps/collab/sharemsg.h"
#include "tests/check_run.h"
#include "tests/collab_testutil.h"
#include "tests/tmpdir.h"

static const uint8_t KEY[] = "the-field-network-key-2026";

static det_event event(uint32_t node, uint64_t seq, int64_t global_ns)
{
	det_event e = {.node = node, .seq = seq, .onset_frame = 1000.0 + seq, .onset_se = 0.4, .rate_hz = 16000, .cpu_ns = 5000000000LL + (int64_t)seq * 1000000000LL, .cpu_se_ns = 800, .has_global = TRUE, .global_ns = global_ns, .global_se_ns = 1200, .duration_s = 0.3, .f_lo_hz = 1500, .f_hi_hz = 2500, .snr_db = 12, .template_id = 1};
	g_strlcpy(e.profile, "frog", sizeof e.profile);
	return e;
}

static uint64_t ranges(collab_seen *s, uint32_t node, uint64_t *r, guint max)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	uint64_t epoch = 0;
	uint64_t n = collab_seen_missing(s, node, a, max, &epoch);
	for (guint i = 0; i < a->len; i++)
		r[i] = g_array_index(a, uint64_t, i);
	g_array_free(a, TRUE);
	return n;
}

/* Holes between a node's first id and the newest it claims are missing;
 * resends fill them once; ids from before we listened, a new epoch, the
 * sender's first= and the span bound behave as seen.h says. */
START_TEST(seen_holes_and_duplicates)
{
	collab_seen *s = collab_seen_new(2, 100);
	uint64_t r[8];
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 10, FALSE), SEEN_NEW);
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 11, FALSE), SEEN_NEW);
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 15, FALSE), SEEN_NEW);
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 11, FALSE), SEEN_DUP);
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 9, FALSE), SEEN_BEFORE);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 3);
	ck_assert(r[0] == 12 && r[1] == 14);
	/* The sender has up to 20: 16..20 are missing too. */
	ck_assert_uint_eq(collab_seen_have(s, 7, 1, 5, 20), 0);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 8);
	ck_assert(r[0] == 12 && r[1] == 14 && r[2] == 16 && r[3] == 20);
	ck_assert_uint_eq(ranges(s, 7, r, 1), 3); /* at most one range */
	ck_assert_int_eq(collab_seen_add(s, 7, 1, 13, FALSE), SEEN_NEW);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 7);
	/* The sender dropped up to 14: 12 and 14 are lost. */
	ck_assert_uint_eq(collab_seen_have(s, 7, 1, 15, 20), 2);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 5);
	ck_assert(r[0] == 16 && r[1] == 20);
	GArray *lack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	collab_seen_lacking(s, lack);
	ck_assert_uint_eq(lack->len, 1);
	ck_assert_uint_eq(g_array_index(lack, uint32_t, 0), 7);
	/* A node first heard by its HAVE: its backlog is history. */
	ck_assert_uint_eq(collab_seen_have(s, 8, 4, 1, 50), 0);
	ck_assert_uint_eq(ranges(s, 8, r, 8), 0);
	ck_assert_int_eq(collab_seen_add(s, 8, 4, 50, FALSE), SEEN_BEFORE);
	ck_assert_int_eq(collab_seen_add(s, 8, 4, 52, FALSE), SEEN_NEW);
	ck_assert_uint_eq(ranges(s, 8, r, 8), 1); /* 51 */
	/* A resend from a node never heard: history, nothing set; its first
	 * live detection starts it. */
	collab_seen *fresh = collab_seen_new(2, 100);
	ck_assert_int_eq(collab_seen_add(fresh, 5, 1, 5, TRUE), SEEN_BEFORE);
	ck_assert_int_eq(collab_seen_add(fresh, 5, 1, 6, TRUE), SEEN_BEFORE);
	ck_assert_int_eq(collab_seen_add(fresh, 5, 1, 9, FALSE), SEEN_NEW);
	ck_assert_uint_eq(ranges(fresh, 5, r, 8), 0);
	collab_seen_free(fresh);
	/* A third node: the table is full. */
	ck_assert_int_eq(collab_seen_add(s, 9, 1, 1, FALSE), SEEN_FULL);
	/* Node 7 lost its state: a new epoch starts it afresh (16..20 lost). */
	ck_assert_int_eq(collab_seen_add(s, 7, 2, 1, FALSE), SEEN_NEW);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 0);
	collab_seen_stats st;
	collab_seen_counts(s, &st);
	ck_assert_uint_eq(st.lost, 7);
	ck_assert_uint_eq(st.dups, 1);
	ck_assert_uint_eq(st.missing, 1);
	/* Beyond the span: what falls out unseen is lost, older ids too old. */
	ck_assert_int_eq(collab_seen_add(s, 7, 2, 150, FALSE), SEEN_NEW);
	ck_assert_int_eq(collab_seen_add(s, 7, 2, 30, FALSE), SEEN_TOO_OLD);
	ck_assert_int_eq(collab_seen_add(s, 7, 2, 60, FALSE), SEEN_NEW);
	ck_assert_uint_eq(ranges(s, 7, r, 8), 98); /* 51..149 but 60 */
	collab_seen_counts(s, &st);
	ck_assert_uint_eq(st.lost, 7 + 49); /* 2..50 fell out */
	g_array_free(lack, TRUE);
	collab_seen_free(s);
}
END_TEST

/* The queue survives a restart with its ids and epoch; bounds drop the
 * oldest; a torn last line is dropped, a malformed one names the line. */
START_TEST(outbox_durable_and_bounded)
{
	char *dir = tu_tmpdir("catchup-XXXXXX");
	char *path = g_build_filename(dir, "collab.outbox", NULL);
	GError *err = NULL;
	collab_outbox *o = collab_outbox_open(path, 5, 100 * 1000000000LL, &err);
	ck_assert_msg(o, "%s", err ? err->message : "");
	uint64_t first, last, id;
	collab_outbox_range(o, &first, &last);
	ck_assert(first == 1 && last == 0);
	uint64_t epoch = collab_outbox_epoch(o);
	for (uint64_t i = 1; i <= 3; i++) {
		det_event e = event(2, i, 1000000000000LL * (int64_t)i);
		ck_assert_int_eq(collab_outbox_add(o, &e, e.cpu_ns, &id), 0);
		ck_assert_uint_eq(id, i);
	}
	collab_outbox_free(o);
	/* Reopened: the same epoch, the three, and the next id is 4. */
	o = collab_outbox_open(path, 5, 100 * 1000000000LL, &err);
	ck_assert_msg(o, "%s", err ? err->message : "");
	ck_assert_uint_eq(collab_outbox_epoch(o), epoch);
	collab_outbox_range(o, &first, &last);
	ck_assert(first == 1 && last == 3);
	ck_assert(collab_outbox_get(o, 2) && collab_outbox_get(o, 2)->seq == 2);
	ck_assert(collab_outbox_get(o, 4) == NULL);
	/* Eight more: at most five are kept, and the file is rewritten. */
	for (uint64_t i = 4; i <= 11; i++) {
		det_event e = event(2, i, 1000000000000LL * (int64_t)i);
		ck_assert_int_eq(collab_outbox_add(o, &e, e.cpu_ns, &id), 0);
		ck_assert_uint_eq(id, i);
	}
	collab_outbox_range(o, &first, &last);
	ck_assert(first == 7 && last == 11);
	collab_outbox_stats st;
	collab_outbox_counts(o, &st);
	ck_assert_uint_eq(st.queued, 5);
	ck_assert_uint_eq(st.dropped, 6);
	ck_assert_uint_ge(st.rewrites, 2);
	/* Older than 100 s of cpu time: dropped. */
	ck_assert_uint_eq(collab_outbox_expire(o, 5000000000LL + 9 * 1000000000LL + 100 * 1000000000LL + 1), 3);
	collab_outbox_range(o, &first, &last);
	ck_assert(first == 10 && last == 11);
	collab_outbox_free(o);
	/* A crash mid-write: a torn last line is dropped, the rest kept. */
	FILE *f = fopen(path, "a");
	ck_assert(f);
	fputs("12 v=1 node=2 dev=0 seq=12 prof", f);
	fclose(f);
	o = collab_outbox_open(path, 5, 100 * 1000000000LL, &err);
	ck_assert_msg(o, "%s", err ? err->message : "");
	collab_outbox_counts(o, &st);
	ck_assert_uint_eq(st.torn, 1);
	collab_outbox_range(o, &first, &last);
	ck_assert(first == 7 && last == 11); /* expiry is by the caller's clock: not applied at open */
	collab_outbox_free(o);
	/* A malformed line that is not the last: an error naming it. */
	f = fopen(path, "a");
	fputs("\nnonsense\n", f);
	fclose(f);
	ck_assert(collab_outbox_open(path, 5, 100 * 1000000000LL, &err) == NULL);
	ck_assert_msg(strstr(err->message, "collab.outbox:") && strstr(err->message, "expected an id"), "%s", err->message);
	g_clear_error(&err);
	g_file_set_contents(path, "not an outbox\n", -1, NULL);
	ck_assert(collab_outbox_open(path, 5, 100 * 1000000000LL, &err) == NULL);
	ck_assert_msg(strstr(err->message, ":1: not a collab outbox"), "%s", err->message);
	g_clear_error(&err);
	g_free(path);
	tu_rm_rf(dir);
	g_free(dir);
}
END_TEST

/* HAVE, WANT and DET with its outbox id round-trip under the key; what is
 * malformed is refused with its reason. */
START_TEST(messages_round_trip)
{
	collab_msg m = {.kind = COLLAB_MSG_WANT, .boot = 5, .sseq = 9, .sender = 3, .asked = 2, .epoch = 77, .n_ranges = 2};
	m.ranges[0][0] = 4;
	m.ranges[0][1] = 9;
	m.ranges[1][0] = 12;
	m.ranges[1][1] = 12;
	GString *g = collab_msg_encode(&m, KEY, sizeof KEY - 1);
	ck_assert_msg(strstr(g->str, "WANT boot=5 sseq=9 node=2 from=3 ob=77 ids=4-9,12-12 mac="), "%s", g->str);
	collab_msg out;
	char why[200];
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, KEY, sizeof KEY - 1, &out, why, sizeof why), 0);
	ck_assert(out.kind == COLLAB_MSG_WANT && out.sender == 3 && out.asked == 2 && out.epoch == 77 && out.n_ranges == 2 &&
		  out.ranges[1][0] == 12);
	g_string_free(g, TRUE);
	collab_msg h = {.kind = COLLAB_MSG_HAVE, .boot = 5, .sseq = 1, .sender = 2, .epoch = 77, .first = 3, .last = 40};
	g = collab_msg_encode(&h, NULL, 0);
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, NULL, 0, &out, why, sizeof why), 0);
	ck_assert(out.kind == COLLAB_MSG_HAVE && out.sender == 2 && out.first == 3 && out.last == 40);
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, KEY, sizeof KEY - 1, &out, why, sizeof why), -EACCES);
	g_string_free(g, TRUE);
	/* A node first heard is asked since when (WANT since_ms=), and
	 * answers with a HAVE to= since=. */
	collab_msg q = {.kind = COLLAB_MSG_WANT, .boot = 5, .sseq = 10, .sender = 3, .asked = 2, .epoch = 77, .since_ms = 93000};
	g = collab_msg_encode(&q, KEY, sizeof KEY - 1);
	ck_assert_msg(strstr(g->str, "WANT boot=5 sseq=10 node=2 from=3 ob=77 since_ms=93000 mac="), "%s", g->str);
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, KEY, sizeof KEY - 1, &out, why, sizeof why), 0);
	ck_assert(out.kind == COLLAB_MSG_WANT && out.sender == 3 && out.asked == 2 && out.since_ms == 93000 && out.n_ranges == 0);
	g_string_free(g, TRUE);
	collab_msg a = {.kind = COLLAB_MSG_HAVE, .boot = 5, .sseq = 2, .sender = 2, .epoch = 77, .first = 3, .last = 40, .asked = 3, .since = 17};
	g = collab_msg_encode(&a, NULL, 0);
	ck_assert_msg(strstr(g->str, "HAVE boot=5 sseq=2 node=2 ob=77 first=3 last=40 to=3 since=17"), "%s", g->str);
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, NULL, 0, &out, why, sizeof why), 0);
	ck_assert(out.kind == COLLAB_MSG_HAVE && out.sender == 2 && out.first == 3 && out.last == 40 && out.asked == 3 && out.since == 17);
	g_string_free(g, TRUE);
	/* late's reasons round trip, each alone and both */
	for (guint w = 1; w <= COLLAB_LATE_ALL; w++) {
		collab_msg d = {.kind = COLLAB_MSG_DET, .boot = 5, .sseq = 2, .e = event(2, 1, 123456789), .late = w};
		g = collab_msg_encode(&d, NULL, 0);
		ck_assert_int_eq(collab_msg_decode(g->str, g->len, NULL, 0, &out, why, sizeof why), 0);
		ck_assert_uint_eq(out.late, w);
		g_string_free(g, TRUE);
	}
	collab_msg d = {.kind = COLLAB_MSG_DET, .boot = 5, .sseq = 2, .e = event(2, 1, 123456789), .epoch = 77, .oid = 31, .late = COLLAB_LATE_RESENT};
	g = collab_msg_encode(&d, KEY, sizeof KEY - 1);
	ck_assert_int_eq(collab_msg_decode(g->str, g->len, KEY, sizeof KEY - 1, &out, why, sizeof why), 0);
	ck_assert(out.kind == COLLAB_MSG_DET && out.sender == 2 && out.oid == 31 && out.late == COLLAB_LATE_RESENT && out.e.global_ns == 123456789);
	/* An older receiver's view: the detection parses, the new keys skipped. */
	det_event e;
	uint64_t boot;
	uint32_t sseq;
	ck_assert_int_eq(collab_share_decode(g->str, g->len, KEY, sizeof KEY - 1, &e, &boot, &sseq, why, sizeof why), 0);
	ck_assert(e.node == 2 && boot == 5 && sseq == 2);
	g_string_free(g, TRUE);
	static const char *const bad[] = {
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=9 last=3",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=0 first=1 last=3",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=1",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 ids=",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 ids=5-4",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 ids=0-4",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 ids=1-2,x",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 ids=1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,11-11,12-12,13-13,14-14,15-15,16-16,17-17",
		"CHORUS-COLLAB 2 DET boot=1 sseq=1 ob=7 v=1 node=2",
		"CHORUS-COLLAB 2 NOPE boot=1 sseq=1",
		"CHORUS-COLLAB 2 HAVE sseq=1 boot=1 node=2 ob=7 first=1 last=3",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=2 last=3 to=3",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=2 last=3 to=3 since=1",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=2 last=3 to=3 since=5",
		"CHORUS-COLLAB 2 HAVE boot=1 sseq=1 node=2 ob=7 first=2 last=3 since=3",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 since_ms=0",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 since_ms=34560000000001",
		"CHORUS-COLLAB 2 WANT boot=1 sseq=1 node=2 from=3 ob=7 since_ms=5 ids=1-2",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		ck_assert_msg(collab_msg_decode(bad[i], strlen(bad[i]), NULL, 0, &out, why, sizeof why) == -EBADMSG,
			      "accepted: %s", bad[i]);
}
END_TEST

/* A located group is remembered compactly (its earliest onset, its kind,
 * each detection's node and seq) in a ring of max_groups: a late detection
 * of its call is kept, a duplicate refused, also past the eight members
 * held inline (a ten-node field); another kind or a node twice is another
 * call; the oldest is forgotten when the ring is full. */
START_TEST(located_groups_remembered_compactly)
{
	const int64_t S = 1000000000LL, hold = S / 2;
	collab_grouper *g = collab_grouper_new(100000000, 30000000, hold);
	collab_grouper_keep(g, 4, 3600 * S, 3);
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)collab_group_free);
	for (uint32_t n = 1; n <= 10; n++) {
		det_event a = event(n, 100 + n, 10 * S + n * 1000000);
		collab_grouper_add(g, &a, 0);
	}
	ck_assert_uint_eq(collab_grouper_poll(g, hold, out), 1);
	ck_assert_uint_eq(collab_grouper_kept(g), 1);
	det_event a9 = event(9, 109, 10 * S + 9000000), a2 = event(2, 102, 10 * S + 2000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &a9, 60 * S, COLLAB_LATE_RESENT), -EALREADY); /* past the inline eight */
	ck_assert_int_eq(collab_grouper_add_late(g, &a2, 60 * S, COLLAB_LATE_RESENT), -EALREADY);
	det_event a11 = event(11, 111, 10 * S + 11000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &a11, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	ck_assert_int_eq(collab_grouper_add_late(g, &a11, 60 * S, COLLAB_LATE_RESENT), -EALREADY);
	/* An earlier arrival becomes the remembered earliest onset: the
	 * window (aperture + margin = 130 ms) now reaches from it. */
	det_event a12 = event(12, 112, 10 * S - 100000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &a12, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	det_event a13 = event(13, 113, 10 * S - 220000000); /* 120 ms before the new earliest */
	ck_assert_int_eq(collab_grouper_add_late(g, &a13, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	ck_assert_uint_eq(collab_grouper_open(g), 0);
	/* Another kind, or node 3 with another seq: another call. */
	det_event toad = event(14, 114, 10 * S + 5000000), a3b = event(3, 999, 10 * S + 3000000);
	g_strlcpy(toad.profile, "toad", sizeof toad.profile);
	ck_assert_int_eq(collab_grouper_add_late(g, &toad, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_OPENED);
	ck_assert_int_eq(collab_grouper_add_late(g, &a3b, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_OPENED);
	ck_assert_uint_eq(collab_grouper_poll(g, 60 * S + hold, out), 2); /* both small: remembered whole */
	ck_assert_uint_eq(collab_grouper_kept(g), 3);
	/* Three more located calls fill the ring of three: the first goes. */
	for (int64_t c = 2; c <= 4; c++) {
		for (uint32_t n = 1; n <= 4; n++) {
			det_event b = event(n, (uint64_t)(c * 100 + n), c * 10 * S + n * 1000000);
			collab_grouper_add(g, &b, 61 * S);
		}
		ck_assert_uint_eq(collab_grouper_poll(g, 61 * S + hold, out), 1);
	}
	ck_assert_uint_eq(collab_grouper_kept(g), 2 + 3);
	/* a9 was a duplicate of the first call's record; forgotten, it joins
	 * the small group node 3's second detection opened there. */
	ck_assert_int_eq(collab_grouper_add_late(g, &a9, 62 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	g_ptr_array_free(out, TRUE);
	collab_grouper_free(g);
}
END_TEST

/* Four nodes hear a call; node 4 and node 1 were cut off, so the groups
 * the others closed were too small.  Their detections come late: the group
 * is opened again, closes after hold, late; a group located before is not
 * located twice. */
START_TEST(late_detections_complete_groups)
{
	const int64_t S = 1000000000LL, hold = S / 2;
	collab_grouper *g = collab_grouper_new(100000000, 30000000, hold);
	collab_grouper_keep(g, 4, 3600 * S, 100);
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)collab_group_free);
	/* Call A at 10 s: nodes 2 and 3 only, live. */
	det_event a2 = event(2, 1, 10 * S + 1000000), a3 = event(3, 1, 10 * S + 2000000);
	ck_assert_int_eq(collab_grouper_add(g, &a2, 0), 0);
	ck_assert_int_eq(collab_grouper_add(g, &a3, 0), 1);
	/* Call B at 20 s: nodes 1..4, all live: located. */
	for (uint32_t n = 1; n <= 4; n++) {
		det_event b = event(n, 2, 20 * S + n * 1000000);
		collab_grouper_add(g, &b, 0);
	}
	ck_assert_uint_eq(collab_grouper_poll(g, hold, out), 2);
	ck_assert_uint_eq(collab_grouper_kept(g), 2);
	g_ptr_array_set_size(out, 0);
	/* Node 4's detection of A comes late: 3 of 4, kept closed. */
	det_event a4 = event(4, 1, 10 * S + 500000);
	ck_assert_int_eq(collab_grouper_add_late(g, &a4, 60 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	ck_assert_int_eq(collab_grouper_add_late(g, &a4, 60 * S, COLLAB_LATE_RESENT), -EALREADY);
	ck_assert_uint_eq(collab_grouper_open(g), 0);
	/* Node 1's: 4 of 4, opened again. */
	det_event a1 = event(1, 1, 10 * S + 3000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &a1, 61 * S, COLLAB_LATE_HELD), COLLAB_LATE_REOPENED);
	ck_assert_uint_eq(collab_grouper_open(g), 1);
	ck_assert_uint_eq(collab_grouper_poll(g, 61 * S + hold - 1, out), 0);
	ck_assert_uint_eq(collab_grouper_poll(g, 61 * S + hold, out), 1);
	collab_group *gr = g_ptr_array_index(out, 0);
	/* late for both its late detections' reasons */
	ck_assert_uint_eq(gr->late, COLLAB_LATE_RESENT | COLLAB_LATE_HELD);
	ck_assert_uint_eq(gr->dets->len, 4);
	ck_assert_uint_eq(collab_group_reporter(gr), 4); /* the earliest onset */
	g_ptr_array_set_size(out, 0);
	/* A late detection of B (located live) is kept, nothing reopened. */
	det_event b5 = event(5, 2, 20 * S + 9000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &b5, 62 * S, COLLAB_LATE_RESENT), COLLAB_LATE_KEPT);
	ck_assert_uint_eq(collab_grouper_open(g), 0);
	/* A late one of no known call opens a late group; another joins it. */
	det_event c1 = event(1, 3, 30 * S), c2 = event(2, 3, 30 * S + 1000000);
	ck_assert_int_eq(collab_grouper_add_late(g, &c1, 62 * S, COLLAB_LATE_HELD), COLLAB_LATE_OPENED);
	ck_assert_int_eq(collab_grouper_add_late(g, &c2, 62 * S, COLLAB_LATE_HELD), COLLAB_LATE_JOINED);
	ck_assert_uint_eq(collab_grouper_poll(g, 62 * S + hold, out), 1);
	ck_assert_uint_eq(((collab_group *)g_ptr_array_index(out, 0))->late, COLLAB_LATE_HELD);
	/* Remembered groups are forgotten after keep_ns. */
	ck_assert_uint_eq(collab_grouper_kept(g), 3);
	collab_grouper_poll(g, 3700 * S, out);
	ck_assert_uint_eq(collab_grouper_kept(g), 0);
	g_ptr_array_free(out, TRUE);
	collab_grouper_free(g);
}
END_TEST

typedef struct {
	GArray *seqs; /* uint64_t: the detections' seq, in arrival order */
	guint late;
	guint retimed; /* node 2's late ones that arrived timed again */
} inbox;

/* Node 2 times a resent detection again (collab's retime: the onset
 * converted across the outage now): 777 ns later than it was queued. */
#define RETIME_NS 777
static gboolean retime(void *ctx, det_event *e)
{
	e->global_ns += RETIME_NS;
	return TRUE;
}

static void on_det(void *user, const det_event *e, guint late)
{
	inbox *b = user;
	g_array_append_val(b->seqs, e->seq);
	/* a catch-up's resends, never anything else */
	ck_assert(late == 0 || late == COLLAB_LATE_RESENT);
	b->late += late != 0;
	/* Node 2's (event(2, i, i s)) carry the new time when resent only. */
	if (e->node == 2) {
		ck_assert_int_eq(e->global_ns, 1000000000LL * (int64_t)e->seq + (late ? RETIME_NS : 0));
		b->retimed += late != 0;
	}
}

/* Both nodes' cpu clock (the clock of event()'s cpu_ns), set by the tests. */
static int64_t fake_now_ns;
static int64_t fake_now(void *ctx)
{
	return fake_now_ns;
}

/* Node 2's radio is down: neither hears the other. */
static int radio_down;
static gboolean reach(void *ctx, uint32_t peer)
{
	return !radio_down;
}

/* Nodes 2 and 3 on loopback, each with its queue (node 2's resends timed
 * again, node 3's as queued), both on the fake clock from fake_now_ns. */
typedef struct {
	char *dir, *p2, *p3;
	collab_outbox *o2, *o3;
	collab_share_cfg c2, c3;
	inbox b2, b3;
	collab_share *s2, *s3;
	collab_share_stats st2, st3;
} rig;

static void rig_open(rig *r)
{
	memset(r, 0, sizeof *r);
	int port = tu_udp_port();
	r->dir = tu_tmpdir("catchup-XXXXXX");
	r->p2 = g_build_filename(r->dir, "n2.outbox", NULL);
	r->p3 = g_build_filename(r->dir, "n3.outbox", NULL);
	GError *err = NULL;
	r->o2 = collab_outbox_open(r->p2, 1000, 3600 * 1000000000LL, &err);
	r->o3 = collab_outbox_open(r->p3, 1000, 3600 * 1000000000LL, &err);
	ck_assert(r->o2 && r->o3);
	collab_share_cfg c2 = {2, "127.255.255.255", port, KEY, sizeof KEY - 1, 1000, 16, reach, NULL, r->o2, 1000, 200, 50, retime, NULL, fake_now, NULL};
	collab_share_cfg c3 = {3, "127.255.255.255", port, KEY, sizeof KEY - 1, 2000, 16, reach, NULL, r->o3, 1000, 200, 50, NULL, NULL, fake_now, NULL};
	r->c2 = c2;
	r->c3 = c3;
	r->b2.seqs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	r->b3.seqs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	r->s2 = collab_share_new(&r->c2, on_det, &r->b2, &err);
	ck_assert_msg(r->s2, "%s", err ? err->message : "");
	r->s3 = collab_share_new(&r->c3, on_det, &r->b3, &err);
	ck_assert_msg(r->s3, "%s", err ? err->message : "");
}

/* Both share detection i (node 3's global 1 ns after node 2's), on the
 * fake clock half a second after its onset. */
static void rig_share(rig *r, uint64_t i)
{
	fake_now_ns = event(2, i, 0).cpu_ns + 500000000;
	det_event e2 = event(2, i, 1000000000LL * (int64_t)i), e3 = event(3, i, 1000000000LL * (int64_t)i + 1);
	ck_assert_int_eq(collab_share_send(r->s2, &e2, FALSE), 0);
	ck_assert_int_eq(collab_share_send(r->s3, &e3, FALSE), 0);
}

/* HAVE/WANT rounds and resends until each holds n of the other's and
 * misses none, or seconds pass; the counts in r->st2, r->st3. */
static void rig_settle(rig *r, guint n, int seconds)
{
	gint64 end = g_get_monotonic_time() + seconds * 1000000LL;
	do {
		tu_spin(100);
		collab_share_counts(r->s2, &r->st2);
		collab_share_counts(r->s3, &r->st3);
	} while ((r->b2.seqs->len < n || r->b3.seqs->len < n || r->st2.missing || r->st3.missing) &&
		 g_get_monotonic_time() < end);
}

/* Each node received n, `late` of them late, in the order order(i). */
static void rig_check_arrivals(rig *r, guint n, guint late, uint64_t (*order)(guint i))
{
	inbox *boxes[2] = {&r->b2, &r->b3};
	for (int k = 0; k < 2; k++) {
		inbox *b = boxes[k];
		ck_assert_msg(b->seqs->len == n, "node %d got %u of %u", k + 2, b->seqs->len, n);
		ck_assert_uint_eq(b->late, late);
		for (guint i = 0; i < n; i++)
			ck_assert_msg(g_array_index(b->seqs, uint64_t, i) == order(i),
				      "node %d: arrival %u is %" G_GUINT64_FORMAT ", not %" G_GUINT64_FORMAT, k + 2, i,
				      g_array_index(b->seqs, uint64_t, i), order(i));
	}
}

static void rig_close(rig *r)
{
	collab_share_free(r->s2);
	collab_share_free(r->s3);
	collab_outbox_free(r->o2);
	collab_outbox_free(r->o3);
	g_array_free(r->b2.seqs, TRUE);
	g_array_free(r->b3.seqs, TRUE);
	g_free(r->p2);
	g_free(r->p3);
	tu_rm_rf(r->dir);
	g_free(r->dir);
}

/* The live ones first, in order, then the late ones in order: 1..15,
 * 46..60, 16..45. */
static uint64_t outage_order(guint i)
{
	return i < 15 ? i + 1 : i < 30 ? i + 31
				       : i - 14;
}

/* Both share while node 2's radio is down; when it comes back each asks
 * the other for what it missed and gets every detection once, the missed
 * ones late and in order; a restarted node 2 (its queue reopened) is not
 * asked again. */
START_TEST(two_nodes_catch_up_after_an_outage)
{
	rig r;
	fake_now_ns = 0;
	radio_down = 0;
	rig_open(&r);
	/* The two hear each other, then node 2's radio is down for 30 of the
	 * 60 detections each shares, then up. */
	for (uint64_t i = 1; i <= 60; i++) {
		if (i == 16)
			radio_down = 1;
		if (i == 46)
			radio_down = 0;
		rig_share(&r, i);
		if (i < 46)
			tu_spin(10); /* 46..60 go out at once: live, before any resend */
	}
	rig_settle(&r, 60, 8); /* two HAVE/WANT rounds and the resends at 50 per second */
	rig_check_arrivals(&r, 60, 30, outage_order);
	ck_assert_uint_eq(r.st2.missing, 0);
	ck_assert_uint_eq(r.st2.lost, 0);
	ck_assert_uint_ge(r.st2.resent, 30);
	ck_assert_uint_ge(r.st3.resent, 30);
	ck_assert_uint_ge(r.st2.cut_off, 30);
	/* Node 2's resends went out timed again, node 3's as queued. */
	ck_assert_uint_eq(r.b3.retimed, 30);
	ck_assert_uint_eq(r.st2.retimed, r.st2.resent);
	ck_assert_uint_eq(r.st3.retimed, 0);
	/* Node 2 restarts (its queue reopened, a new boot): node 3 holds its
	 * numbering and asks for nothing; both stay caught up.  Node 2 asks
	 * node 3 which of its ids are from the second it has listened: none. */
	fake_now_ns += 1000000000;
	collab_share_free(r.s2);
	collab_outbox_free(r.o2);
	GError *err = NULL;
	r.o2 = collab_outbox_open(r.p2, 1000, 3600 * 1000000000LL, &err);
	ck_assert(r.o2);
	r.c2.outbox = r.o2;
	r.c2.boot = 1001;
	g_array_set_size(r.b2.seqs, 0);
	r.s2 = collab_share_new(&r.c2, on_det, &r.b2, &err);
	ck_assert(r.s2);
	det_event e2 = event(2, 61, 61000000000LL);
	ck_assert_int_eq(collab_share_send(r.s2, &e2, FALSE), 0);
	tu_spin(1500);
	collab_share_counts(r.s3, &r.st3);
	ck_assert_uint_eq(r.st3.missing, 0);
	ck_assert_uint_eq(r.b3.seqs->len, 61);
	ck_assert_uint_eq(r.b2.seqs->len, 0); /* node 3's history is not pulled by a restart */
	collab_share_counts(r.s2, &r.st2);
	ck_assert_uint_eq(r.st2.want_sent, 0);
	ck_assert_uint_ge(r.st2.since_sent, 1);
	ck_assert_uint_eq(r.st2.pulled, 0);
	rig_close(&r);
}
END_TEST

/* The live ones (31..40) first, then the pulled ones, 1..30. */
static uint64_t start_order(guint i)
{
	return i < 10 ? i + 31 : i - 9;
}

/* Node 2's radio is down from its very start: nodes 2 and 3 have never
 * heard each other when it comes back, 30 detections each later.  What
 * each queued while the other listened is not history: each asks the
 * other since when (WANT since_ms=), takes the answer's ids as missing and
 * gets them, late, once and in order, after the live ones. */
START_TEST(a_node_cut_off_from_its_start_is_caught_up)
{
	rig r;
	radio_down = 1;
	fake_now_ns = 4000000000LL; /* both listen from 1 s before the first onset */
	rig_open(&r);
	for (uint64_t i = 1; i <= 40; i++) {
		if (i == 31)
			radio_down = 0;
		rig_share(&r, i);
		if (i < 31)
			tu_spin(10); /* 31..40 go out at once: live, before any resend */
	}
	rig_settle(&r, 40, 10);
	rig_check_arrivals(&r, 40, 30, start_order);
	collab_share_stats *sts[2] = {&r.st2, &r.st3};
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_ge(sts[k]->since_sent, 1);
		ck_assert_uint_ge(sts[k]->since_answered, 1);
		ck_assert_uint_eq(sts[k]->pulled, 30);
		ck_assert_uint_eq(sts[k]->lost, 0);
		ck_assert_uint_eq(sts[k]->missing, 0);
	}
	ck_assert_uint_eq(r.b3.retimed, 30);
	rig_close(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("collab_catchup");
	TCase *tc = tcase_create("catchup");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, seen_holes_and_duplicates);
	tcase_add_test(tc, outbox_durable_and_bounded);
	tcase_add_test(tc, messages_round_trip);
	tcase_add_test(tc, late_detections_complete_groups);
	tcase_add_test(tc, located_groups_remembered_compactly);
	tcase_add_test(tc, two_nodes_catch_up_after_an_outage);
	tcase_add_test(tc, a_node_cut_off_from_its_start_is_caught_up);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
