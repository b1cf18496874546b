/*
 * delayline: constant one-way delay for packets sent to NFQUEUE, one FIFO per queue.
 *
 * Usage: delayline QUEUE:DELAY_US [QUEUE:DELAY_US ...]
 *
 * Each packet that iptables sends to queue QUEUE (-j NFQUEUE --queue-num QUEUE) is held for
 * DELAY_US microseconds and then accepted. Only metadata is copied to user space (copy mode
 * META) and GSO super-packets stay whole (NFQA_CFG_F_GSO), so the payload never leaves the
 * kernel. Packet ids grow within a queue and the delay of a queue is constant, so release is
 * FIFO: one batch verdict accepts every id up to the newest ripe one.
 *
 * It asks for SCHED_FIFO (priority 20) so that busy neighbours on a small VM do not make it
 * release packets late; without the privilege it runs as a normal process.
 *
 * Prints "delayline: ready" on stdout once every queue is bound. SIGTERM/SIGINT: accept all
 * held packets, unbind, print counters on stderr, exit 0. Exit 2 on bad usage, 1 on errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#define MAX_QUEUES 32
#define RING_BITS 18 /* 262144 packets held per queue */
#define RING_SIZE (1u << RING_BITS)
#define RING_MASK (RING_SIZE - 1)

struct dq {
	uint16_t num;            /* NFQUEUE number */
	int64_t delay_ns;        /* constant one-way delay */
	struct nfq_q_handle *qh; /* libnetfilter_queue handle */
	uint32_t *ids;           /* ring of packet ids ... */
	int64_t *due;            /* ... and their release times (CLOCK_MONOTONIC ns) */
	uint32_t head, tail;     /* ring indices (free-running) */
	uint64_t packets, batches, overflows;
};

static struct dq queues[MAX_QUEUES];
static int nqueues;
static volatile sig_atomic_t stop;
static int64_t now_cache;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfad,
		     void *data)
{
	struct dq *q = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfad);
	(void)msg;
	if (!ph)
		return 0;
	uint32_t id = ntohl(ph->packet_id);
	if (q->tail - q->head >= RING_SIZE) { /* cannot hold it: let it pass undelayed */
		q->overflows++;
		return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
	}
	q->ids[q->tail & RING_MASK] = id;
	q->due[q->tail & RING_MASK] = now_cache + q->delay_ns;
	q->tail++;
	q->packets++;
	return 0;
}

/* Accept every packet whose time has come; return the next due time (or INT64_MAX). */
static int64_t release(int64_t now, int all)
{
	int64_t next = INT64_MAX;
	for (int i = 0; i < nqueues; i++) {
		struct dq *q = &queues[i];
		uint32_t h = q->head;
		while (h != q->tail && (all || q->due[h & RING_MASK] <= now))
			h++;
		if (h != q->head) {
			nfq_set_verdict_batch(q->qh, q->ids[(h - 1) & RING_MASK], NF_ACCEPT);
			q->head = h;
			q->batches++;
		}
		if (h != q->tail && q->due[h & RING_MASK] < next)
			next = q->due[h & RING_MASK];
	}
	return next;
}

static int parse_args(int argc, char **argv)
{
	if (argc < 2 || argc - 1 > MAX_QUEUES) {
		fprintf(stderr, "usage: delayline QUEUE:DELAY_US [QUEUE:DELAY_US ...] (at most %d)\n",
			MAX_QUEUES);
		return -1;
	}
	for (int i = 1; i < argc; i++) {
		char *end;
		unsigned long num = strtoul(argv[i], &end, 10);
		if (*end != ':' || num > 65535) {
			fprintf(stderr, "delayline: bad queue spec '%s' (want QUEUE:DELAY_US)\n", argv[i]);
			return -1;
		}
		long long us = strtoll(end + 1, &end, 10);
		if (*end != '\0' || us < 0 || us > 60LL * 1000000) {
			fprintf(stderr, "delayline: bad delay in '%s' (0..60000000 us)\n", argv[i]);
			return -1;
		}
		struct dq *q = &queues[nqueues++];
		q->num = (uint16_t)num;
		q->delay_ns = us * 1000;
		q->ids = calloc(RING_SIZE, sizeof(*q->ids));
		q->due = calloc(RING_SIZE, sizeof(*q->due));
		if (!q->ids || !q->due) {
			fprintf(stderr, "delayline: out of memory\n");
			return -1;
		}
	}
	return 0;
}

static int bind_queues(struct nfq_handle *h)
{
	for (int i = 0; i < nqueues; i++) {
		struct dq *q = &queues[i];
		q->qh = nfq_create_queue(h, q->num, on_packet, q);
		if (!q->qh) {
			fprintf(stderr, "delayline: cannot bind queue %u: %s (another program on it?)\n",
				q->num, strerror(errno));
			return -1;
		}
		if (nfq_set_mode(q->qh, NFQNL_COPY_META, 0) < 0 ||
		    nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0 ||
		    nfq_set_queue_maxlen(q->qh, RING_SIZE - 1) < 0) {
			fprintf(stderr, "delayline: cannot configure queue %u: %s\n", q->num,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void tune_socket(int fd)
{
	int size = 16 << 20, one = 1;
	/* Root may exceed rmem_max; fall back quietly if not. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	/* A full socket drops messages (the packets then stay queued until we exit);
	 * don't turn that into an error on every recv. */
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
}

/* Read everything the socket has now; return -1 on a fatal error. */
static int drain(struct nfq_handle *h, int fd, char *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS)
				return 0;
			fprintf(stderr, "delayline: recv: %s\n", strerror(errno));
			return -1;
		}
		now_cache = now_ns();
		nfq_handle_packet(h, buf, (int)n);
		release(now_cache, 0);
	}
}

static int run(struct nfq_handle *h)
{
	static char buf[1 << 18];
	int fd = nfq_fd(h);
	sigset_t blocked, waitmask;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigprocmask(SIG_BLOCK, &blocked, &waitmask); /* signals arrive only inside ppoll */
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	printf("delayline: ready\n");
	fflush(stdout);
	int64_t next = INT64_MAX;
	while (!stop) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		struct timespec ts, *tsp = NULL;
		if (next != INT64_MAX) {
			int64_t wait = next - now_ns();
			if (wait < 0)
				wait = 0;
			ts.tv_sec = wait / 1000000000;
			ts.tv_nsec = wait % 1000000000;
			tsp = &ts;
		}
		int r = ppoll(&pfd, 1, tsp, &waitmask);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "delayline: ppoll: %s\n", strerror(errno));
			return -1;
		}
		if (r > 0 && drain(h, fd, buf, sizeof(buf)) < 0)
			return -1;
		next = release(now_ns(), 0);
	}
	release(0, 1);
	return 0;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv) < 0)
		return 2;
	struct nfq_handle *h = nfq_open();
	if (!h) {
		fprintf(stderr, "delayline: nfq_open: %s (need root / CAP_NET_ADMIN)\n",
			strerror(errno));
		return 1;
	}
	tune_socket(nfq_fd(h));
	struct sched_param sp = {.sched_priority = 20};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
		fprintf(stderr, "delayline: no real-time priority (%s), running as normal process\n",
			strerror(errno));
	int rc = bind_queues(h) < 0 ? 1 : 0;
	if (rc == 0)
		rc = run(h) < 0 ? 1 : 0;
	for (int i = 0; i < nqueues; i++) {
		struct dq *q = &queues[i];
		if (q->qh)
			nfq_destroy_queue(q->qh);
		fprintf(stderr,
			"delayline: queue %u delay %lld us: %llu packets, %llu batches, %llu overflows\n",
			q->num, (long long)(q->delay_ns / 1000), (unsigned long long)q->packets,
			(unsigned long long)q->batches, (unsigned long long)q->overflows);
	}
	nfq_close(h);
	return rc;
}
