// castlab-norm: a NORM (RFC 5740) stream sender or receiver with NORM-CC (RFC 5740 §5.5) on,
// written against libnorm's packaged API (normApi.h), for castlab's net-peers experiment.
//
//   castlab-norm send GROUP PORT TTL DURATION_S LOG [IFACE]
//   castlab-norm recv GROUP PORT DURATION_S LOG [IFACE]
//
// GROUP must lie in 239.0.0.0/8 (administratively scoped, as every castlab test's traffic).
// The sender writes a stream as fast as NORM-CC lets it for DURATION_S seconds; the receiver
// reads it. Each writes one CSV line a second to LOG: time (s since start), the bytes it
// handed to / got from the stream in that second, and (sender) NORM-CC's current rate and
// (sender) the group RTT estimate. Both print "ready" on stdout once the session runs, and stop
// at the duration or on SIGINT/SIGTERM. Receivers NACK by unicast (normApi.h,
// NormSetDefaultUnicastNack) so their feedback does not add multicast load to the bottleneck.
#include <normApi.h>

#include <arpa/inet.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int) { g_stop = 1; }

static double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage() {
    fprintf(stderr,
            "usage: castlab-norm send GROUP PORT TTL DURATION_S LOG [IFACE]\n"
            "       castlab-norm recv GROUP PORT DURATION_S LOG [IFACE]\n");
    return 2;
}

static bool in_239(const char* group) {
    in_addr a;
    if (inet_pton(AF_INET, group, &a) != 1) return false;
    return (ntohl(a.s_addr) >> 24) == 239;
}

static bool parse_num(const char* s, double lo, double hi, double* out) {
    char* end = nullptr;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

// Wait up to `timeout_s` for the instance's next event; false if none came.
static bool next_event(NormInstanceHandle inst, NormEvent* ev, double timeout_s) {
    int fd = NormGetDescriptor(inst);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    timeval tv;
    tv.tv_sec = (long)timeout_s;
    tv.tv_usec = (long)((timeout_s - tv.tv_sec) * 1e6);
    if (select(fd + 1, &rd, nullptr, nullptr, &tv) <= 0) return false;
    return NormGetNextEvent(inst, ev, false);
}

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    bool send = strcmp(argv[1], "send") == 0;
    if (!send && strcmp(argv[1], "recv") != 0) return usage();
    int fixed = send ? 7 : 6;  // argc without the optional IFACE
    if (argc != fixed && argc != fixed + 1) return usage();
    const char* group = argv[2];
    double port, ttl = 1, duration;
    int k = 4;
    if (!in_239(group)) {
        fprintf(stderr, "castlab-norm: GROUP %s is not an IPv4 address in 239.0.0.0/8\n", group);
        return 2;
    }
    if (!parse_num(argv[3], 1, 65535, &port)) {
        fprintf(stderr, "castlab-norm: PORT %s is not in 1..65535\n", argv[3]);
        return 2;
    }
    if (send) {
        if (!parse_num(argv[4], 1, 255, &ttl)) {
            fprintf(stderr, "castlab-norm: TTL %s is not in 1..255\n", argv[4]);
            return 2;
        }
        k = 5;
    }
    if (!parse_num(argv[k], 0.1, 86400, &duration)) {
        fprintf(stderr, "castlab-norm: DURATION_S %s is not in 0.1..86400\n", argv[k]);
        return 2;
    }
    const char* log_path = argv[k + 1];
    const char* iface = argc == fixed + 1 ? argv[fixed] : nullptr;
    FILE* log = fopen(log_path, "w");
    if (!log) {
        fprintf(stderr, "castlab-norm: cannot write %s\n", log_path);
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    NormInstanceHandle inst = NormCreateInstance();
    if (inst == NORM_INSTANCE_INVALID) {
        fprintf(stderr, "castlab-norm: NormCreateInstance failed\n");
        return 1;
    }
    NormSessionHandle sess = NormCreateSession(inst, group, (UINT16)port, NORM_NODE_ANY);
    if (sess == NORM_SESSION_INVALID) {
        fprintf(stderr, "castlab-norm: NormCreateSession failed\n");
        return 1;
    }
    if (iface && !NormSetMulticastInterface(sess, iface)) {
        fprintf(stderr, "castlab-norm: no multicast interface %s\n", iface);
        return 1;
    }
    NormSetRxPortReuse(sess, true);
    NormSetLoopback(sess, false);

    const unsigned int SEGMENT = 1000;  // payload bytes per packet, as castlab's schemes
    static char buf[64 * 1024];
    NormObjectHandle stream = NORM_OBJECT_INVALID;
    if (send) {
        NormSetTTL(sess, (unsigned char)ttl);
        NormSetCongestionControl(sess, true);  // NORM-CC, RFC 5740 §5.5
        NormSetTxRateBounds(sess, 8e3, 100e6);
        if (!NormStartSender(sess, NormGetRandomSessionId(), 2 * 1024 * 1024, SEGMENT, 16, 0)) {
            fprintf(stderr, "castlab-norm: NormStartSender failed\n");
            return 1;
        }
        stream = NormStreamOpen(sess, 1024 * 1024);
        if (stream == NORM_OBJECT_INVALID) {
            fprintf(stderr, "castlab-norm: NormStreamOpen failed\n");
            return 1;
        }
        memset(buf, 'n', sizeof buf);
        fprintf(log, "time_s,bytes,rate_bps,grtt_s\n");
    } else {
        NormSetDefaultUnicastNack(sess, true);
        if (!NormStartReceiver(sess, 4 * 1024 * 1024)) {
            fprintf(stderr, "castlab-norm: NormStartReceiver failed\n");
            return 1;
        }
        fprintf(log, "time_s,bytes\n");
    }
    printf("ready\n");
    fflush(stdout);

    double t0 = now_s(), next_log = t0 + 1.0;
    unsigned long long bytes = 0, total = 0;
    bool writable = send;
    while (!g_stop && now_s() - t0 < duration) {
        if (send && writable) {
            // fill the stream until NORM refuses: it paces what it sends at NORM-CC's rate
            unsigned int n = NormStreamWrite(stream, buf, sizeof buf);
            bytes += n;
            if (n < sizeof buf) writable = false;
        }
        NormEvent ev;
        double wait = next_log - now_s();
        if (next_event(inst, &ev, wait > 0 ? (wait < 0.05 ? wait : 0.05) : 0)) {
            if (ev.type == NORM_TX_QUEUE_VACANCY || ev.type == NORM_TX_QUEUE_EMPTY) writable = true;
            if (!send && (ev.type == NORM_RX_OBJECT_NEW || ev.type == NORM_RX_OBJECT_UPDATED) &&
                NormObjectGetType(ev.object) == NORM_OBJECT_STREAM) {
                for (;;) {
                    unsigned int n = sizeof buf;
                    if (!NormStreamRead(ev.object, buf, &n) || n == 0) break;
                    bytes += n;
                }
            }
        }
        double t = now_s();
        if (t >= next_log) {
            if (send)
                fprintf(log, "%.3f,%llu,%.0f,%.4f\n", next_log - t0, bytes, NormGetTxRate(sess),
                        NormGetGrttEstimate(sess));
            else
                fprintf(log, "%.3f,%llu\n", next_log - t0, bytes);
            fflush(log);
            total += bytes;
            bytes = 0;
            next_log += 1.0;
        }
    }
    fclose(log);
    if (send) {
        NormStreamClose(stream, false);
        NormStopSender(sess);
    } else {
        NormStopReceiver(sess);
    }
    NormDestroySession(sess);
    NormDestroyInstance(inst);
    fprintf(stderr, "castlab-norm: %s %llu bytes\n", send ? "wrote" : "read", total + bytes);
    return 0;
}
