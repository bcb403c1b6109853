/* test_request.c — the audio request parameters and reply fields (pure). */
#include <check.h>
#include <glib.h>
#include <string.h>

#include "audiod/request.h"
#include "tests/check_run.h"

/* Parse text as a request on a 4-channel device of node 7; the error's
 * message (or "") in err. */
static int parse_len(const char *text, size_t len, audio_request *r, GString *err)
{
	GError *e = NULL;
	int rc = audio_request_parse(text, len, 4, 7, r, &e);
	g_string_assign(err, e ? e->message : "");
	ck_assert_msg((rc < 0) == (e != NULL), "\"%s\": rc %d with%s an error", text, rc, e ? "" : "out");
	if (e)
		ck_assert_int_eq(e->code, -rc);
	g_clear_error(&e);
	return rc;
}

static int parse(const char *text, audio_request *r, GString *err)
{
	return parse_len(text, strlen(text), r, err);
}

START_TEST(good_requests)
{
	audio_request r;
	GString *e = g_string_new(NULL);
	ck_assert_int_eq(parse("", &r, e), 0);
	ck_assert_int_eq(r.nchan, 0);
	ck_assert(!r.by_time);
	ck_assert_int_eq(parse("channels=3,0  clock=cpu from=100 to=200", &r, e), 0);
	ck_assert_int_eq(r.nchan, 2);
	ck_assert_int_eq(r.chan[0], 3);
	ck_assert_int_eq(r.chan[1], 0);
	ck_assert(r.by_time);
	ck_assert(sync_clock_equal(r.clock, sync_clock_cpu(7))); /* a bare kind is this node's */
	ck_assert_int_eq(r.from, 100);
	ck_assert_int_eq(r.to, 200);
	ck_assert_int_eq(parse("clock=node3:audio1 from=-5", &r, e), 0);
	ck_assert(sync_clock_equal(r.clock, sync_clock_audio(3, 1)));
	ck_assert_int_eq(r.to, INT64_MAX); /* open-ended */
	g_string_free(e, TRUE);
}
END_TEST

START_TEST(bad_requests_say_why)
{
	audio_request r;
	GString *e = g_string_new(NULL);
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"channels=4", "not a channel of this device (0..3)"},
		{"channels=", "channels: empty list"},
		{"channels=1,x", "\"x\" is not a channel"},
		{"clock=bogus from=1", "unknown clock kind"},
		{"clock=cpu", "clock given without from"},
		{"from=1", "from given without clock"},
		{"clock=cpu from=5 to=5", "must be after from"},
		{"clock=cpu from=5x", "\"5x\" is not an integer time"},
		{"speed=2", "unknown parameter \"speed\""},
		{"channels", "is not key=value"},
		{"channels=0 channels=1", "parameter channels given twice"},
		{"clock=cpu from=1 from=2", "parameter from given twice"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		ck_assert_int_lt(parse(bad[i].text, &r, e), 0);
		ck_assert_msg(strstr(e->str, bad[i].why), "\"%s\": %s", bad[i].text, e->str);
	}
	/* A NUL inside the blob is refused, not truncated. */
	g_string_truncate(e, 0);
	ck_assert_int_lt(parse_len("channels=1\0x", 12, &r, e), 0);
	ck_assert(strstr(e->str, "NUL"));
	g_string_free(e, TRUE);
}
END_TEST

START_TEST(reply_fields)
{
	char b[16];
	const char *reply = "first=480 last=open rate=48000 channels=2 format=S16_LE se_frames=0.01";
	ck_assert_str_eq(audio_reply_field(reply, "first", b, sizeof b), "480");
	ck_assert_str_eq(audio_reply_field(reply, "last", b, sizeof b), "open");
	ck_assert_str_eq(audio_reply_field(reply, "format", b, sizeof b), "S16_LE");
	ck_assert_str_eq(audio_reply_field(reply, "se_frames", b, sizeof b), "0.01");
	/* Whole keys only: "frames" is not the tail of "se_frames". */
	ck_assert_ptr_null(audio_reply_field(reply, "frames", b, sizeof b));
	ck_assert_ptr_null(audio_reply_field(reply, "clock", b, sizeof b));
	/* Truncated to the buffer. */
	char small[4];
	ck_assert_str_eq(audio_reply_field(reply, "rate", small, sizeof small), "480");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("request");
	TCase *tc = tcase_create("request");
	tcase_add_test(tc, good_requests);
	tcase_add_test(tc, bad_requests_say_why);
	tcase_add_test(tc, reply_fields);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
