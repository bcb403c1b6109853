/* collab_testutil.h — what collab's socket tests share: a free UDP port on
 * loopback, and running the main loop for a while. */
#ifndef CHORUS_TESTS_COLLAB_TESTUTIL_H
#define CHORUS_TESTS_COLLAB_TESTUTIL_H

/* A UDP port free on 127.0.0.1 just now. */
int tu_udp_port(void);

/* Iterate the default main context for ms milliseconds. */
void tu_spin(int ms);

#endif
