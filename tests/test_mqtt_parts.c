/* test_mqtt_parts.c — chorus-mqtt's parts on their own: the disk queue
 * (order, acknowledgement, survival of a reopen, the bound and its count,
 * the sequence number across a drained restart) and the JSON payloads
 * (detections from detect's codec, collab results wrapped unchanged,
 * malformed input refused with a reason).  The whole daemon against a real
 * broker is tests/test_mqtt.sh. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "apps/detect/event.h"
#include "apps/mqtt/payload.h"
#include "apps/mqtt/queue.h"
#include "archive/cursor.h"
#include "tests/check_run.h"
#include "tests/tmpdir.h"

static guint64 take(mqtt_queue *q, char **topic, char **payload)
{
	size_t len;
	void *p;
	GError *err = NULL;
	guint64 s = mqtt_queue_next_unsent(q, topic, &p, &len, &err);
	ck_assert_msg(!err, "%s", err ? err->message : "");
	*payload = p;
	if (s)
		ck_assert_uint_eq(strlen(*payload), len);
	return s;
}

START_TEST(queue_order_ack_reopen)
{
	char *dir = tu_tmpdir("mqttq-XXXXXX");
	GError *err = NULL;
	mqtt_queue *q = mqtt_queue_open(dir, 100, 1 << 20, &err);
	ck_assert(q);
	char msg[32];
	for (int i = 0; i < 10; i++) {
		g_snprintf(msg, sizeof msg, "m%d", i);
		ck_assert_uint_eq(mqtt_queue_push(q, "a/b", msg, strlen(msg), &err), (guint64)i + 1);
	}
	char *t, *p;
	/* three out, in order */
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(take(q, &t, &p), (guint64)i + 1);
		g_snprintf(msg, sizeof msg, "m%d", i);
		ck_assert_str_eq(t, "a/b");
		ck_assert_str_eq(p, msg);
		g_free(t);
		g_free(p);
	}
	/* acknowledged out of order: 2 waits for 1 */
	ck_assert_int_eq(mqtt_queue_ack(q, 2, &err), 0);
	mqtt_queue_stats s;
	mqtt_queue_stats_get(q, &s);
	ck_assert_uint_eq(s.count, 10);
	ck_assert_int_eq(mqtt_queue_ack(q, 1, &err), 0);
	mqtt_queue_stats_get(q, &s);
	ck_assert_uint_eq(s.count, 8);
	ck_assert_uint_eq(s.in_flight, 1);
	ck_assert_int_eq(mqtt_queue_ack(q, 1, &err), -ENOENT); /* twice */
	ck_assert_int_eq(mqtt_queue_ack(q, 7, &err), -ENOENT); /* not sent */
	/* the connection is lost: 3 is handed out again, first */
	mqtt_queue_unsend_all(q);
	ck_assert_uint_eq(take(q, &t, &p), 3);
	g_free(t);
	g_free(p);
	mqtt_queue_free(q);
	/* a new process takes back 3..10, oldest first, numbering on at 11 */
	q = mqtt_queue_open(dir, 100, 1 << 20, &err);
	ck_assert(q);
	mqtt_queue_stats_get(q, &s);
	ck_assert_uint_eq(s.count, 8);
	ck_assert_uint_eq(mqtt_queue_peek_seq(q), 11);
	for (guint64 k = 3; k <= 10; k++) {
		ck_assert_uint_eq(take(q, &t, &p), k);
		g_free(t);
		g_free(p);
		ck_assert_int_eq(mqtt_queue_ack(q, k, &err), 0);
	}
	ck_assert_uint_eq(take(q, &t, &p), 0);
	mqtt_queue_free(q);
	/* drained: the next number survives the restart (the file "next") */
	q = mqtt_queue_open(dir, 100, 1 << 20, &err);
	ck_assert_uint_eq(mqtt_queue_peek_seq(q), 11);
	mqtt_queue_free(q);
	tu_rm_rf(dir);
	g_free(dir);
}
END_TEST

START_TEST(queue_bound_drops_oldest_unsent)
{
	char *dir = tu_tmpdir("mqttq-XXXXXX");
	GError *err = NULL;
	mqtt_queue *q = mqtt_queue_open(dir, 5, 1 << 20, &err);
	for (int i = 0; i < 3; i++)
		ck_assert(mqtt_queue_push(q, "t", "x", 1, &err));
	char *t, *p;
	ck_assert_uint_eq(take(q, &t, &p), 1); /* 1 in flight: never dropped */
	g_free(t);
	g_free(p);
	for (int i = 0; i < 5; i++)
		ck_assert(mqtt_queue_push(q, "t", "x", 1, &err));
	mqtt_queue_stats s;
	mqtt_queue_stats_get(q, &s);
	/* 8 pushed into 5 places: 2 and 3 (the oldest unsent), then 4, dropped */
	ck_assert_uint_eq(s.count, 5);
	ck_assert_uint_eq(s.dropped_full, 3);
	ck_assert_uint_eq(take(q, &t, &p), 5);
	g_free(t);
	g_free(p);
	/* a message over the byte bound is refused, not stored */
	mqtt_queue_free(q);
	q = mqtt_queue_open(dir, 5, 8, &err);
	ck_assert_uint_eq(mqtt_queue_push(q, "topic", "123456789", 9, &err), 0);
	ck_assert_int_eq(err->code, EMSGSIZE);
	g_clear_error(&err);
	mqtt_queue_free(q);
	tu_rm_rf(dir);
	g_free(dir);
}
END_TEST

static JsonObject *parse(JsonParser *p, const char *text)
{
	ck_assert_msg(json_parser_load_from_data(p, text, -1, NULL), "not JSON: %s", text);
	return json_node_get_object(json_parser_get_root(p));
}

/* The cursor: none at first; what was saved comes back, also after it is
 * saved again; a damaged file is an error naming it, and no cursor. */
START_TEST(cursor_round_trip)
{
	char *dir = tu_tmpdir("mqttc-XXXXXX");
	uint64_t boot = 1, next = 1;
	GError *err = NULL;
	ck_assert(archive_cursor_load(dir, "cursor.detections", &boot, &next, &err));
	ck_assert_uint_eq(boot, 0);
	ck_assert_uint_eq(next, 0);
	ck_assert(archive_cursor_save(dir, "cursor.detections", 18446744073709551557ULL, 42, &err));
	ck_assert(archive_cursor_save(dir, "cursor.detections", 18446744073709551557ULL, 43, &err));
	ck_assert(archive_cursor_load(dir, "cursor.detections", &boot, &next, &err));
	ck_assert_uint_eq(boot, 18446744073709551557ULL);
	ck_assert_uint_eq(next, 43);
	ck_assert(archive_cursor_load(dir, "cursor.locations", &boot, &next, &err)); /* each input its own */
	ck_assert_uint_eq(boot, 0);
	char *path = g_build_filename(dir, "cursor.detections", NULL);
	static const char *const bad[] = {"", "7\n", "0 5\n", "7 0\n", "7 5 9\n", "x y\n", "7 5\ngarbage"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		ck_assert(g_file_set_contents(path, bad[i], -1, NULL));
		boot = next = 1;
		ck_assert_msg(!archive_cursor_load(dir, "cursor.detections", &boot, &next, &err), "accepted %s", bad[i]);
		ck_assert(strstr(err->message, "cursor.detections"));
		ck_assert_uint_eq(boot, 0);
		g_clear_error(&err);
	}
	g_free(path);
	tu_rm_rf(dir);
	g_free(dir);
}
END_TEST

START_TEST(payload_detection)
{
	det_event e = {.node = 2, .dev = 0, .seq = 17, .onset_frame = 2453112.4071, .onset_se = 0.0012, .rate_hz = 16000, .cpu_ns = 2913012345678LL, .cpu_se_ns = 140.2, .has_global = TRUE, .global_ns = 1796018273114730631LL, .global_se_ns = 141.9, .duration_s = 0.336, .f_lo_hz = 1000, .f_hi_hz = 3200, .snr_db = 29.3, .enr_db = 67.4, .template_id = 1};
	g_strlcpy(e.profile, "frog", sizeof e.profile);
	GString *s = g_string_new(NULL);
	det_event_format(&e, s);
	mqtt_envelope env = {.field = "marsh", .node = 2, .mseq = 99};
	char why[200];
	size_t n;
	char *j = mqtt_payload_detection(&env, s->str, s->len, &n, why, sizeof why);
	ck_assert_msg(j, "%s", why);
	ck_assert_uint_eq(strlen(j), n);
	JsonParser *p = json_parser_new();
	JsonObject *o = parse(p, j);
	ck_assert_str_eq(json_object_get_string_member(o, "kind"), "detection");
	ck_assert_str_eq(json_object_get_string_member(o, "field"), "marsh");
	ck_assert_int_eq(json_object_get_int_member(o, "mseq"), 99);
	ck_assert_int_eq(json_object_get_int_member(o, "seq"), 17);
	/* ns near 2^61 survive exactly */
	ck_assert_int_eq(json_object_get_int_member(o, "global_ns"), 1796018273114730631LL);
	ck_assert_int_eq(json_object_get_int_member(o, "cpu_ns"), 2913012345678LL);
	g_free(j);
	/* without a global time: null, not a number */
	e.has_global = FALSE;
	g_string_truncate(s, 0);
	det_event_format(&e, s);
	j = mqtt_payload_detection(&env, s->str, s->len, &n, why, sizeof why);
	o = parse(p, j);
	ck_assert(json_object_get_null_member(o, "global_ns"));
	ck_assert(json_object_get_null_member(o, "global_se_ns"));
	g_free(j);
	/* malformed lines: refused with the codec's reason */
	const char *bad[] = {"", "hello", "v=1 node=x onset_frame=1 rate=1 cpu_ns=1 global_ns=none"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		why[0] = 0;
		ck_assert_msg(!mqtt_payload_detection(&env, bad[i], strlen(bad[i]), &n, why, sizeof why), "%s", bad[i]);
		ck_assert_msg(*why, "no reason for \"%s\"", bad[i]);
	}
	g_object_unref(p);
	g_string_free(s, TRUE);
}
END_TEST

START_TEST(payload_location)
{
	const char *r = "{\"v\":1,\"reporter\":5,\"seq\":2,\"status\":\"ok\",\"x\":8.0236,\"y\":11.9495,\"t_global_ns\":"
			"1796018273114730631,\"nodes\":[5,1,3],\"t_cpu_ns\":null}";
	mqtt_envelope env = {.field = "marsh", .node = 5, .mseq = 3};
	char why[200];
	size_t n;
	char *j = mqtt_payload_location(&env, r, strlen(r), &n, why, sizeof why);
	ck_assert_msg(j, "%s", why);
	JsonParser *p = json_parser_new();
	JsonObject *o = parse(p, j);
	ck_assert_str_eq(json_object_get_string_member(o, "kind"), "location");
	JsonObject *res = json_object_get_object_member(o, "result");
	ck_assert_str_eq(json_object_get_string_member(res, "status"), "ok");
	ck_assert_int_eq(json_object_get_int_member(res, "t_global_ns"), 1796018273114730631LL);
	ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(res, "nodes")), 3);
	g_free(j);
	const char *bad[] = {"", "{", "[1,2]", "{\"x\":1}", "nul"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		why[0] = 0;
		ck_assert_msg(!mqtt_payload_location(&env, bad[i], strlen(bad[i]), &n, why, sizeof why), "%s", bad[i]);
		ck_assert_msg(*why, "no reason for \"%s\"", bad[i]);
	}
	g_object_unref(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mqtt_parts");
	TCase *tc = tcase_create("mqtt_parts");
	tcase_add_test(tc, queue_order_ack_reopen);
	tcase_add_test(tc, queue_bound_drops_oldest_unsent);
	tcase_add_test(tc, payload_detection);
	tcase_add_test(tc, payload_location);
	tcase_add_test(tc, cursor_round_trip);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
