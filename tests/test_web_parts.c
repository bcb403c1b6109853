/* test_web_parts.c — chorus-web's pure parts: the token derived from the
 * key, the services' text forms read for the view, detect's event line as
 * JSON, the spectrogram's quantisation and the WAV encoder. */
#include <check.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "web/audio.h"
#include "web/auth.h"
#include "web/parse.h"
#include "web/spec.h"
#include "tests/check_run.h"

START_TEST(token_is_hmac_of_the_key)
{
	uint8_t key[32];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i + 1);
	char t[WEB_TOKEN_HEX + 1];
	web_token_derive(key, sizeof key, t);
	/* python3: hmac.new(bytes(range(1,33)), b'chorus-web 1\n', hashlib.sha256).hexdigest() */
	ck_assert_str_eq(t, "a8a1859e3e4b0b8f5b2ca367195c7b1e80b2f033c48cc52459fe41515fa45740");
	key[0] ^= 1;
	char u[WEB_TOKEN_HEX + 1];
	web_token_derive(key, sizeof key, u);
	ck_assert_str_ne(t, u);
}
END_TEST

static const char audio[] = "device audio/0 pcm=chorus_sim node3\n"
			    "format rate=16000 channels=1 format=S16_LE period=160 buffer=1280\n"
			    "xruns count=4 frames_lost=0 restart_se_frames=0.000\n"
			    "tstamp source=sim path=/x records=1729\n";
static const char rbs[] = "rbs node3 on 127.255.255.255:21661 authenticated (HMAC-SHA256)\n"
			  "root: node1 switches=1 last_switch=16.734s ago rule=lowest live node\n"
			  "peers: 2 (receptions held: 61)\n"
			  "  node1 heard=0.058s ago reports=18 rbs_obs=62 sr_obs=33 fit=rbs n=62 rms=1375.4ns slope-1=-34.628ppm\n"
			  "  node2 heard=0.213s ago reports=15 rbs_obs=62 sr_obs=34 fit=sr n=12 rms=1264.2ns slope-1=-88.162ppm\n"
			  "nodes known: 5\n  node2 news=0.212s ago hops=2 alive\n";
static const char ticker[] = "ticker node3 now=47364553500696 conversions=3 root=node1\n"
			     "node3:cpu -> node1:cpu slope=0.999965371672424 n=62 rms=1375 se_end=342.6 age=0.399s\n"
			     "node3:audio0 -> node3:cpu slope=62500.51 n=64 rms=2276 se_end=388.8 age=0.356s lower-envelope\n"
			     "node1:cpu -> global slope=1 exact x0=47352030098396 y0=1796159484147696177\n";

START_TEST(key_values_of_status_lines)
{
	char b[32];
	ck_assert_str_eq(web_kv(audio, "format", "rate", b, sizeof b), "16000");
	ck_assert_str_eq(web_kv(audio, "tstamp", "source", b, sizeof b), "sim");
	ck_assert_int_eq(web_kv_int(audio, "xruns", "count", -1), 4);
	/* whole keys: "format=" on the format line, not "format" of "format rate" */
	ck_assert_str_eq(web_kv(audio, "format", "format", b, sizeof b), "S16_LE");
	ck_assert_ptr_null(web_kv(audio, "xruns", "nothing", b, sizeof b));
	ck_assert_int_eq(web_kv_int(audio, "tstamp", "source", -7), -7); /* not a number */
	ck_assert_int_eq(web_kv_int(NULL, "xruns", "count", -1), -1);
}
END_TEST

/* The health members of one object built from the three texts. */
static JsonObject *health(const char *a, const char *r, const char *t, JsonNode **keep)
{
	JsonBuilder *b = json_builder_new();
	json_builder_begin_object(b);
	web_health_json(b, a, r, t);
	json_builder_end_object(b);
	*keep = json_builder_get_root(b);
	g_object_unref(b);
	return json_node_get_object(*keep);
}

START_TEST(health_from_the_services)
{
	JsonNode *n;
	JsonObject *o = health(audio, rbs, ticker, &n);
	ck_assert_int_eq(json_object_get_int_member(o, "xruns"), 4);
	ck_assert_str_eq(json_object_get_string_member(o, "tstamp"), "sim");
	ck_assert_int_eq(json_object_get_int_member(o, "rate"), 16000);
	ck_assert_int_eq(json_object_get_int_member(o, "root"), 1);
	JsonArray *p = json_object_get_array_member(o, "peers");
	ck_assert_int_eq(json_array_get_length(p), 2);
	JsonObject *p1 = json_array_get_object_element(p, 1);
	ck_assert_int_eq(json_object_get_int_member(p1, "node"), 2);
	ck_assert_str_eq(json_object_get_string_member(p1, "fit"), "sr");
	ck_assert_double_eq_tol(json_object_get_double_member(p1, "rms_ns"), 1264.2, 1e-9);
	JsonArray *c = json_object_get_array_member(o, "conversions");
	ck_assert_int_eq(json_array_get_length(c), 3);
	JsonObject *c0 = json_array_get_object_element(c, 0), *c2 = json_array_get_object_element(c, 2);
	ck_assert_str_eq(json_object_get_string_member(c0, "from"), "node3:cpu");
	ck_assert_str_eq(json_object_get_string_member(c0, "to"), "node1:cpu");
	ck_assert_double_eq_tol(json_object_get_double_member(c0, "se_ns"), 342.6, 1e-9);
	ck_assert(!json_object_get_boolean_member(c0, "exact"));
	ck_assert_str_eq(json_object_get_string_member(c2, "to"), "global");
	ck_assert(json_object_get_boolean_member(c2, "exact"));
	json_node_unref(n);
	/* nothing known: nothing made up */
	o = health(NULL, NULL, NULL, &n);
	ck_assert(!json_object_has_member(o, "xruns") && !json_object_has_member(o, "root"));
	ck_assert_int_eq(json_array_get_length(json_object_get_array_member(o, "peers")), 0);
	json_node_unref(n);
}
END_TEST

START_TEST(detections_as_json)
{
	JsonNode *j = web_det_json("v=1 node=3 dev=0 seq=17 profile=frog onset_frame=2453112.4071 onset_se=0.0012 "
				   "rate=16000 cpu_ns=2913012345678 cpu_se_ns=140.2 global_ns=1796018273114730631 "
				   "global_se_ns=141.9 duration_s=0.3360 f_lo=1000 f_hi=3200 snr_db=29.3 template=1 call=trill",
				   9);
	ck_assert_ptr_nonnull(j);
	JsonObject *o = json_node_get_object(j);
	ck_assert_int_eq(json_object_get_int_member(o, "node"), 3); /* the line's node, not the device's */
	ck_assert_int_eq(json_object_get_int_member(o, "global_ns"), 1796018273114730631LL);
	ck_assert_double_eq_tol(json_object_get_double_member(o, "onset_frame"), 2453112.4071, 1e-6);
	ck_assert_double_eq_tol(json_object_get_double_member(o, "f_hi"), 3200, 1e-9);
	ck_assert_str_eq(json_object_get_string_member(o, "profile"), "frog");
	ck_assert_str_eq(json_object_get_string_member(o, "call"), "trill");
	json_node_unref(j);
	j = web_det_json("v=1 node=3 onset_frame=5.5 rate=16000 cpu_ns=1 global_ns=none", 9);
	ck_assert(json_object_get_null_member(json_node_get_object(j), "global_ns") ||
		  JSON_NODE_HOLDS_NULL(json_object_get_member(json_node_get_object(j), "global_ns")));
	json_node_unref(j);
	ck_assert_ptr_null(web_det_json("v=1 node=3 rate=16000", 3)); /* no onset */
	ck_assert_ptr_null(web_det_json("garbage", 3));
	ck_assert_ptr_null(web_det_json("", 3));
}
END_TEST

/* A later answer of a reporter to a call replaces its first (collab's
 * "supersedes"); the latest of that reporter and seq goes (a collab
 * restarted counts from 1 again), another reporter's stays. */
START_TEST(a_superseded_call_leaves_the_list)
{
	const char *kept[] = {"{\"reporter\":3,\"seq\":4,\"status\":\"ok\",\"id\":1}",
			      "{\"reporter\":5,\"seq\":4,\"status\":\"untested\",\"id\":2}",
			      "{\"reporter\":3,\"seq\":4,\"status\":\"untested\",\"id\":3}",
			      "{\"reporter\":3,\"seq\":5,\"status\":\"ok\",\"id\":4}"};
	GQueue q = G_QUEUE_INIT;
	for (guint i = 0; i < G_N_ELEMENTS(kept); i++)
		g_queue_push_tail(&q, json_from_string(kept[i], NULL));
	JsonNode *nw = json_from_string("{\"reporter\":3,\"seq\":6,\"supersedes\":4,\"status\":\"ok\"}", NULL);
	JsonNode *gone = web_call_superseded(&q, json_node_get_object(nw));
	ck_assert_ptr_nonnull(gone);
	ck_assert_int_eq(json_object_get_int_member(json_node_get_object(gone), "id"), 3);
	ck_assert_uint_eq(q.length, 3);
	json_node_unref(gone);
	/* nothing else of reporter 3 and seq 4 but the older run's: it goes next */
	gone = web_call_superseded(&q, json_node_get_object(nw));
	ck_assert_int_eq(json_object_get_int_member(json_node_get_object(gone), "id"), 1);
	json_node_unref(gone);
	ck_assert_ptr_null(web_call_superseded(&q, json_node_get_object(nw)));
	JsonNode *plain = json_from_string("{\"reporter\":5,\"seq\":7,\"status\":\"ok\"}", NULL);
	ck_assert_ptr_null(web_call_superseded(&q, json_node_get_object(plain)));
	ck_assert_uint_eq(q.length, 2);
	json_node_unref(plain);
	json_node_unref(nw);
	g_queue_clear_full(&q, (GDestroyNotify)json_node_unref);
}
END_TEST

START_TEST(spectrogram_bytes)
{
	float p[WEB_SPEC_SIZE / 2 + 1];
	uint8_t q[WEB_SPEC_BINS];
	for (size_t i = 0; i < G_N_ELEMENTS(p); i++)
		p[i] = 1e-5f; /* -50 dBFS */
	p[10] = 1.0f;         /* 0 dBFS in the pair (10, 11): the larger is kept */
	p[20] = 1e-14f;       /* below the floor, but its pair's other bin is -50 */
	p[40] = p[41] = 0;
	web_spec_quantise(p, q);
	ck_assert_int_eq(q[5], 255);
	ck_assert_int_eq(q[0], 139); /* (-50 + 110) * 255 / 110 = 139.1 */
	ck_assert_int_eq(q[10], 139);
	ck_assert_int_eq(q[20], 0);
}
END_TEST

START_TEST(wav_in_memory)
{
	int16_t s[8] = {0, 1000, -1000, 32767, -32768, 5, 6, 7};
	const char *why = NULL;
	GBytes *w = web_wav_encode(s, 4, 2, 16000, "S16_LE", "chorus node=1 t0=5", &why);
	ck_assert_ptr_nonnull(w);
	gsize n;
	const uint8_t *d = g_bytes_get_data(w, &n);
	ck_assert(n > 44 + sizeof s);
	ck_assert(!memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WAVE", 4));
	ck_assert_ptr_nonnull(memmem(d, n, "chorus node=1 t0=5", 18));
	/* the samples, unchanged, somewhere after the header */
	gboolean found = FALSE;
	for (gsize i = 12; i + sizeof s <= n && !found; i++)
		found = !memcmp(d + i, s, sizeof s);
	ck_assert(found);
	g_bytes_unref(w);
	ck_assert_ptr_null(web_wav_encode(s, 4, 2, 16000, "U8", NULL, &why));
	ck_assert_ptr_nonnull(why);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("web_parts");
	TCase *tc = tcase_create("web_parts");
	tcase_add_test(tc, token_is_hmac_of_the_key);
	tcase_add_test(tc, key_values_of_status_lines);
	tcase_add_test(tc, health_from_the_services);
	tcase_add_test(tc, detections_as_json);
	tcase_add_test(tc, a_superseded_call_leaves_the_list);
	tcase_add_test(tc, spectrogram_bytes);
	tcase_add_test(tc, wav_in_memory);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
