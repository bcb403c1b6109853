/* mqtt_sub.c — the test's MQTT subscriber (tests/test_mqtt.sh): a
 * libmosquitto client with a persistent session (clean session off, a fixed
 * client id, QoS 1), so the broker keeps what arrives for it while it is
 * disconnected, across the broker's own restart (with persistence on).
 * Every message is appended to OUT as "TOPIC<TAB>PAYLOAD\n" and flushed.
 *
 *   mqtt_sub HOST PORT CLIENT_ID TOPIC OUT
 *   env: MQTT_USER, MQTT_PASS; MQTT_CAFILE, MQTT_CERT, MQTT_KEY for TLS
 *
 * Runs until SIGTERM or SIGINT; prints "subscribed" on stdout each time the
 * subscription is granted.  Exit status 0, 1 when OUT could not be written
 * (a test must not pass on a lost line), 2 usage.
 */
#include <errno.h>
#include <mosquitto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *out;
static const char *topic;
static int write_failed;

static void on_connect(struct mosquitto *m, void *obj, int rc)
{
	if (rc) {
		fprintf(stderr, "mqtt_sub: connection refused: %s\n", mosquitto_connack_string(rc));
		return;
	}
	mosquitto_subscribe(m, NULL, topic, 1);
}

static void on_subscribe(struct mosquitto *m, void *obj, int mid, int n, const int *granted)
{
	printf("subscribed qos=%d\n", n ? granted[0] : -1);
	fflush(stdout);
}

static void on_message(struct mosquitto *m, void *obj, const struct mosquitto_message *msg)
{
	if (fprintf(out, "%s\t%.*s\n", msg->topic, msg->payloadlen, (const char *)msg->payload) < 0 || fflush(out) != 0)
		write_failed = 1;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: mqtt_sub HOST PORT CLIENT_ID TOPIC OUT\n");
		return 2;
	}
	topic = argv[4];
	out = fopen(argv[5], "a");
	if (!out) {
		fprintf(stderr, "mqtt_sub: %s: %s\n", argv[5], strerror(errno));
		return 2;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* the network thread inherits the mask */
	mosquitto_lib_init();
	struct mosquitto *m = mosquitto_new(argv[3], false, NULL);
	if (!m)
		return 2;
	if (getenv("MQTT_USER"))
		mosquitto_username_pw_set(m, getenv("MQTT_USER"), getenv("MQTT_PASS"));
	if (getenv("MQTT_CAFILE") &&
	    mosquitto_tls_set(m, getenv("MQTT_CAFILE"), NULL, getenv("MQTT_CERT"), getenv("MQTT_KEY"), NULL)) {
		fprintf(stderr, "mqtt_sub: tls set-up refused\n");
		return 2;
	}
	mosquitto_reconnect_delay_set(m, 1, 1, false);
	mosquitto_connect_callback_set(m, on_connect);
	mosquitto_subscribe_callback_set(m, on_subscribe);
	mosquitto_message_callback_set(m, on_message);
	/* Until the broker listens (libmosquitto's own reconnecting starts
	 * only after a first connection attempt that got under way): 10 s. */
	int rc = MOSQ_ERR_ERRNO;
	for (int i = 0; i < 100 && rc == MOSQ_ERR_ERRNO; i++) {
		rc = mosquitto_connect_async(m, argv[1], atoi(argv[2]), 10);
		if (rc == MOSQ_ERR_ERRNO)
			usleep(100000);
	}
	if (rc) {
		fprintf(stderr, "mqtt_sub: connect: %s\n", rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
		return 2;
	}
	mosquitto_loop_start(m);
	int sig;
	sigwait(&set, &sig);
	mosquitto_disconnect(m);
	mosquitto_loop_stop(m, false);
	mosquitto_destroy(m);
	mosquitto_lib_cleanup();
	if (fclose(out) != 0)
		write_failed = 1;
	return write_failed;
}
