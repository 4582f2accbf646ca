/*
 * The open-loop viewers of bench/ssai-capacity, in C (SSAI_CAPACITY_LOADGEN=native, the default where `cc` works).
 *
 * Why our own, not a library: the load generator shares the bench's two cores with the engine, and the Node one (an
 * undici pool) took 0.6-0.8 of a core at 10,000 viewers, CPU that real players, on their own machines, never take from
 * a server. wrk2 (open loop, latency from the schedule) is not packaged for Debian and nothing may be downloaded here;
 * wrk is closed loop. This does what the Node generator does, the same way (one epoll loop, keep-alive connections of
 * a pool, a request waiting for a free connection), in a fraction of its CPU.
 *
 * Every viewer reloads its own media playlist once per period at its own phase, from its first round (joins spread
 * over the ramp); latency counts from the scheduled send. With segments, each new `/v1/segment/` URI among a reply's
 * last three URI lines is fetched once (a 302 is the answer expected), as a player fetches the ad segments at the live
 * edge. Prints one JSON line of the shape of the Node generator's result (setupMs is the caller's).
 *
 * Usage: open-loop-load HOST PORT VIEWERS SECONDS RAMP_SECONDS PERIOD_MS CONNECTIONS WITH_SEGMENTS PATHS_FILE
 * (PATHS_FILE: one media playlist path per viewer, a line each)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum kind { MEDIA, SEGMENT };

typedef struct {
  int viewer;
  enum kind kind;
  int measured;
  double scheduled; /* ms, monotonic */
  char *path;       /* owned by the request for segments; the viewer's path for media */
} request_t;

typedef struct {
  int fd;
  int busy;
  int connected;
  request_t req;
  char out[2048];
  size_t out_len, out_off;
  char *in;
  size_t in_len, in_cap;
} conn_t;

typedef struct { double latency; int second; int ads; } media_record_t;

static const char *host;
static int port;
static struct sockaddr_in addr;
static int epfd;
static conn_t *conns;
static int nconns;
static int *idle_stack, nidle;
static request_t *queue; /* requests waiting for a free connection, first in first out (submit, release) */
static size_t q_head, q_len, q_cap;

static char **paths;
static uint64_t (*seen)[8];
static int *seen_next;
static int with_segments;

/* results */
static media_record_t *media_records; static size_t n_media, cap_media;
static double *ramp_lat; static size_t n_ramp, cap_ramp;
static double *seg_lat; static size_t n_seg, cap_seg;
/* how late each measured send left, against its schedule (the generator's own lag), by second of the run */
typedef struct { double ms; int second; } late_record_t;
static late_record_t *late; static size_t n_late, cap_late;
static long sent, ramp_sent, answered, errors, with_ads, segments_sent, segment_errors;
static long statuses[600], status_error;
static double measure_from;
static int inflight;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap * 2 : 1024;
  while (c < need) c *= 2;
  void *q = realloc(p, c * size);
  if (!q) { perror("realloc"); exit(1); }
  *cap = c;
  return q;
}

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
  return h;
}

static void conn_open(conn_t *c) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) { perror("socket"); exit(1); }
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int r = connect(c->fd, (struct sockaddr *)&addr, sizeof addr);
  if (r < 0 && errno != EINPROGRESS) { perror("connect"); exit(1); }
  c->connected = r == 0;
  c->in_len = 0;
  struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = c };
  epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void record_answer(const request_t *r, int status, const char *body, size_t body_len);

static void try_write(conn_t *c) {
  while (c->connected && c->out_off < c->out_len) {
    ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
    if (w < 0) return; /* EAGAIN: EPOLLOUT resumes it; an error: the read side sees it */
    c->out_off += (size_t)w;
  }
}

static void start_request(conn_t *c, request_t r) {
  c->busy = 1;
  c->req = r;
  int n = snprintf(c->out, sizeof c->out, "GET %s HTTP/1.1\r\nhost: %s:%d\r\nconnection: keep-alive\r\n\r\n", r.path, host, port);
  if (n < 0 || (size_t)n >= sizeof c->out) { fprintf(stderr, "path too long: %s\n", r.path); exit(1); }
  c->out_len = (size_t)n;
  c->out_off = 0;
  c->in_len = 0;
  try_write(c);
}

static void submit(request_t r) {
  inflight++;
  if (nidle > 0) { start_request(&conns[idle_stack[--nidle]], r); return; }
  queue = grow(queue, &q_cap, q_len + 1, sizeof *queue);
  /* a FIFO in one array: taken from the head, added at the end, moved back to the start when the end is reached */
  if (q_head + q_len >= q_cap) {
    memmove(queue, queue + q_head, q_len * sizeof *queue);
    q_head = 0;
  }
  queue[q_head + q_len++] = r;
}

static void release(conn_t *c) {
  c->busy = 0;
  if (q_len > 0) {
    request_t r = queue[q_head++];
    q_len--;
    if (q_len == 0) q_head = 0;
    start_request(c, r);
  } else idle_stack[nidle++] = (int)(c - conns);
}

/* A connection lost mid-request: the request counts as failed, the slot reconnects. */
static void reopen(conn_t *c);
static void conn_fail(conn_t *c) {
  reopen(c);
  if (!c->busy) return; /* an idle connection the server closed: still on the idle stack */
  request_t r = c->req;
  c->busy = 0;
  record_answer(&r, -1, NULL, 0);
  release(c);
}

/* Parses a complete response in c->in, if there is one: returns 1 (and fills status, body) when complete. */
static int parse_response(conn_t *c, int *status, char **body, size_t *body_len, int *close_after) {
  char *buf = c->in;
  char *end = memmem(buf, c->in_len, "\r\n\r\n", 4);
  if (!end) return 0;
  size_t head_len = (size_t)(end - buf) + 4;
  if (c->in_len < 12) return 0;
  *status = atoi(buf + 9);
  long content_length = -1;
  int chunked = 0;
  *close_after = 0;
  for (char *line = memchr(buf, '\n', head_len) + 1; line < end; line = memchr(line, '\n', (size_t)(end + 2 - line)) + 1) {
    if (strncasecmp(line, "content-length:", 15) == 0) content_length = strtol(line + 15, NULL, 10);
    else if (strncasecmp(line, "transfer-encoding:", 18) == 0) {
      const char *value = strcasestr(line, "chunked"); /* on this line, not a later one */
      chunked = value != NULL && value < strchr(line, '\n');
    }
    else if (strncasecmp(line, "connection:", 11) == 0 && strncasecmp(line + 11 + strspn(line + 11, " "), "close", 5) == 0) *close_after = 1;
  }
  if (chunked) {
    /* decoded in place into a fresh buffer each time the response may be complete (playlists are a few KB) */
    size_t at = head_len, out = 0;
    char *decoded = malloc(c->in_len - head_len + 1);
    for (;;) {
      char *crlf = memmem(buf + at, c->in_len - at, "\r\n", 2);
      if (!crlf) { free(decoded); return 0; }
      size_t size = strtoul(buf + at, NULL, 16);
      size_t data = (size_t)(crlf - buf) + 2;
      if (data + size + 2 > c->in_len) { free(decoded); return 0; }
      if (size == 0) {
        /* trailers end with an empty line: the common case is none */
        if (!memmem(buf + data - 2, c->in_len - (data - 2), "\r\n\r\n", 4)) { free(decoded); return 0; }
        break;
      }
      memcpy(decoded + out, buf + data, size);
      out += size;
      at = data + size + 2;
    }
    decoded[out] = 0;
    *body = decoded;
    *body_len = out;
    return 1;
  }
  if (content_length < 0) content_length = 0; /* a reply with neither (a 302, a 204) has no body on keep-alive */
  if (c->in_len < head_len + (size_t)content_length) return 0;
  *body = malloc((size_t)content_length + 1);
  memcpy(*body, buf + head_len, (size_t)content_length);
  (*body)[content_length] = 0;
  *body_len = (size_t)content_length;
  return 1;
}

static void fetch_segments(int viewer, const char *body, size_t len, int measured) {
  /* the last three URI lines of the playlist */
  const char *uris[3]; size_t lens[3]; int n = 0;
  const char *p = body + len;
  while (p > body && n < 3) {
    const char *line_end = p;
    while (line_end > body && (line_end[-1] == '\n' || line_end[-1] == '\r')) line_end--;
    const char *line = line_end;
    while (line > body && line[-1] != '\n') line--;
    p = line;
    if (line_end > line && line[0] != '#') { uris[n] = line; lens[n] = (size_t)(line_end - line); n++; }
    if (line == body) break;
  }
  for (int k = n - 1; k >= 0; k--) {
    if (lens[k] < 12 || strncmp(uris[k], "/v1/segment/", 12) != 0) continue;
    uint64_t h = fnv1a(uris[k], lens[k]);
    int dup = 0;
    for (int s = 0; s < 8; s++) if (seen[viewer][s] == h) dup = 1;
    if (dup) continue;
    seen[viewer][seen_next[viewer]] = h;
    seen_next[viewer] = (seen_next[viewer] + 1) % 8;
    char *path = strndup(uris[k], lens[k]);
    if (measured) segments_sent++;
    submit((request_t){ .viewer = viewer, .kind = SEGMENT, .measured = measured, .scheduled = now_ms(), .path = path });
  }
}

static void record_answer(const request_t *r, int status, const char *body, size_t body_len) {
  double latency = now_ms() - r->scheduled;
  inflight--;
  if (r->kind == SEGMENT) {
    if (r->measured) {
      if (status != 302) segment_errors++;
      if (status > 0) { seg_lat = grow(seg_lat, &cap_seg, n_seg + 1, sizeof *seg_lat); seg_lat[n_seg++] = latency; }
    }
    free(r->path);
    return;
  }
  int ads = 0;
  if (status > 0) {
    ads = memmem(body, body_len, "/v1/segment/", 12) != NULL;
    if (with_segments && ads) fetch_segments(r->viewer, body, body_len, r->measured);
  }
  if (!r->measured) { ramp_lat = grow(ramp_lat, &cap_ramp, n_ramp + 1, sizeof *ramp_lat); ramp_lat[n_ramp++] = latency; return; }
  if (status > 0 && status < 600) statuses[status]++; else status_error++;
  answered++;
  if (status != 200) errors++;
  if (ads) with_ads++;
  media_records = grow(media_records, &cap_media, n_media + 1, sizeof *media_records);
  media_records[n_media++] = (media_record_t){ latency, (int)((r->scheduled - measure_from) / 1000), ads };
}

static void reopen(conn_t *c) {
  epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  conn_open(c);
}

static void on_readable(conn_t *c) {
  /* Read all there is; the end of the stream may come in the same turn as a reply sent with "connection: close",
   * which is read first. */
  int eof = 0;
  for (;;) {
    c->in = grow(c->in, &c->in_cap, c->in_len + 16384, 1);
    ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
    if (n == 0) { eof = 1; break; }
    if (n < 0) { if (errno == EAGAIN) break; eof = 1; break; }
    c->in_len += (size_t)n;
  }
  c->in[c->in_len] = 0; /* the header scan's string functions stop here (grow() left room) */
  int status, close_after = 0;
  char *body; size_t body_len;
  if (!c->busy || !parse_response(c, &status, &body, &body_len, &close_after)) {
    if (eof) conn_fail(c);
    return;
  }
  request_t r = c->req;
  c->busy = 0;
  record_answer(&r, status, body, body_len);
  free(body);
  c->in_len = 0;
  if (close_after || eof) reopen(c);
  release(c);
}

static double *phase_of;
static int cmp_phase(const void *a, const void *b) { double x = phase_of[*(const int *)a], y = phase_of[*(const int *)b]; return x < y ? -1 : x > y; }
static int cmp_double(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double quantile(double *sorted, size_t n, double p) {
  if (!n) return 0;
  size_t i = (size_t)(p * n);
  if (i >= n) i = n - 1;
  return round(sorted[i] * 100) / 100;
}
int main(int argc, char **argv) {
  if (argc != 10) { fprintf(stderr, "usage: %s HOST PORT VIEWERS SECONDS RAMP_SECONDS PERIOD_MS CONNECTIONS WITH_SEGMENTS PATHS_FILE\n", argv[0]); return 2; }
  host = argv[1];
  port = atoi(argv[2]);
  int viewers = atoi(argv[3]);
  double seconds = atof(argv[4]), ramp_seconds = atof(argv[5]), period = atof(argv[6]);
  nconns = atoi(argv[7]);
  with_segments = atoi(argv[8]);
  FILE *f = fopen(argv[9], "r");
  if (!f) { perror(argv[9]); return 1; }
  paths = calloc((size_t)viewers, sizeof *paths);
  char line[4096];
  for (int i = 0; i < viewers; i++) {
    if (!fgets(line, sizeof line, f)) { fprintf(stderr, "paths file holds fewer than %d lines\n", viewers); return 1; }
    line[strcspn(line, "\r\n")] = 0;
    paths[i] = strdup(line);
  }
  fclose(f);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) { fprintf(stderr, "host must be an IPv4 address: %s\n", host); return 1; }
  seen = calloc((size_t)viewers, sizeof *seen);
  seen_next = calloc((size_t)viewers, sizeof *seen_next);

  epfd = epoll_create1(EPOLL_CLOEXEC);
  conns = calloc((size_t)nconns, sizeof *conns);
  idle_stack = calloc((size_t)nconns, sizeof *idle_stack);
  for (int i = 0; i < nconns; i++) { conn_open(&conns[i]); idle_stack[nidle++] = i; }

  /* The schedule: viewer i joins at t0 + join[i] (uniform over the ramp) and sends at t0 + phase[i] + k·period from
   * its first round; sorted by phase, so one cursor walks the rounds. */
  double ramp_ms = round(ramp_seconds * 1000 / period) * period;
  if (ramp_ms < period) ramp_ms = period;
  double *phase = malloc((size_t)viewers * sizeof *phase);
  int *first_round = malloc((size_t)viewers * sizeof *first_round);
  int *order = malloc((size_t)viewers * sizeof *order);
  srand48((long)time(NULL) ^ getpid());
  for (int i = 0; i < viewers; i++) {
    double join = drand48() * ramp_ms;
    phase[i] = fmod(join, period);
    first_round[i] = (int)(join / period);
    order[i] = i;
  }
  phase_of = phase;
  qsort(order, (size_t)viewers, sizeof *order, cmp_phase);

  struct rusage ru0, ru1;
  getrusage(RUSAGE_SELF, &ru0);
  double t0 = now_ms() + 200;
  measure_from = t0 + ramp_ms;
  double end = measure_from + seconds * 1000;
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  double wall_at_measure = wall.tv_sec * 1e3 + wall.tv_nsec / 1e6 + (measure_from - now_ms());
  struct { double at, ms; } *stalls = NULL; size_t n_stalls = 0, cap_stalls = 0;
  long round_no = 0; int cursor = 0;
  struct epoll_event events[256];
  int done_sending = 0;
  for (;;) {
    double now = now_ms();
    while (!done_sending) {
      int i = order[cursor];
      double at = t0 + round_no * period + phase[i];
      if (at > now) break;
      if (at >= end) { done_sending = 1; break; }
      if (round_no >= first_round[i]) {
        int measured = at >= measure_from;
        if (measured) {
          sent++;
          late = grow(late, &cap_late, n_late + 1, sizeof *late);
          late[n_late++] = (late_record_t){ now - at, (int)((at - measure_from) / 1000) };
        } else ramp_sent++;
        submit((request_t){ .viewer = i, .kind = MEDIA, .measured = measured, .scheduled = at, .path = paths[i] });
      }
      if (++cursor == viewers) { cursor = 0; round_no++; }
    }
    if (now >= end) done_sending = 1;
    if (done_sending && inflight == 0) break;
    int timeout = 1;
    double expected = now_ms() + timeout;
    int n = epoll_wait(epfd, events, 256, timeout);
    double woke = now_ms();
    if (woke - expected > 50) { /* as the Node generator: ramp stalls too, at a negative time */
      stalls = grow(stalls, &cap_stalls, n_stalls + 1, sizeof *stalls);
      stalls[n_stalls].at = round(expected - measure_from);
      stalls[n_stalls++].ms = round(woke - expected);
    }
    for (int k = 0; k < n; k++) {
      conn_t *c = events[k].data.ptr;
      if (events[k].events & (EPOLLERR | EPOLLHUP) && !(events[k].events & EPOLLIN)) { conn_fail(c); continue; }
      if (events[k].events & EPOLLOUT) {
        if (!c->connected) {
          int err = 0; socklen_t len = sizeof err;
          getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
          if (err) { conn_fail(c); continue; }
          c->connected = 1;
        }
        try_write(c);
      }
      if (events[k].events & EPOLLIN) on_readable(c);
    }
  }
  getrusage(RUSAGE_SELF, &ru1);
  double cpu_ms = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1e3 + (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e3
    + (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1e3 + (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e3;

  /* the figures */
  double *lat = malloc((n_media + 1) * sizeof *lat);
  for (size_t i = 0; i < n_media; i++) lat[i] = media_records[i].latency;
  qsort(lat, n_media, sizeof *lat, cmp_double);
  qsort(ramp_lat, n_ramp, sizeof *ramp_lat, cmp_double);
  qsort(seg_lat, n_seg, sizeof *seg_lat, cmp_double);
  printf("{\"viewers\":%d,\"seconds\":%g,\"sent\":%ld,\"answered\":%ld,\"errors\":%ld,\"statuses\":{", viewers, seconds, sent, answered, errors);
  int first = 1;
  for (int s = 0; s < 600; s++) if (statuses[s]) { printf("%s\"%d\":%ld", first ? "" : ",", s, statuses[s]); first = 0; }
  if (status_error) printf("%s\"error\":%ld", first ? "" : ",", status_error);
  printf("},\"p50Ms\":%g,\"p90Ms\":%g,\"p99Ms\":%g,\"p999Ms\":%g,\"maxMs\":%g,\"withAds\":%ld,\"setupMs\":0,",
    quantile(lat, n_media, 0.5), quantile(lat, n_media, 0.9), quantile(lat, n_media, 0.99), quantile(lat, n_media, 0.999), quantile(lat, n_media, 1), with_ads);
  printf("\"ramp\":{\"seconds\":%g,\"sent\":%ld,\"p50Ms\":%g,\"p99Ms\":%g,\"maxMs\":%g},", ramp_ms / 1000, ramp_sent,
    quantile(ramp_lat, n_ramp, 0.5), quantile(ramp_lat, n_ramp, 0.99), quantile(ramp_lat, n_ramp, 1));
  printf("\"cpuMs\":%.0f,\"stalls\":[", cpu_ms);
  for (size_t i = 0; i < n_stalls; i++) printf("%s{\"at\":%.0f,\"ms\":%.0f}", i ? "," : "", stalls[i].at, stalls[i].ms);
  printf("],\"bySecond\":[");
  int first_second = 1;
  int seconds_n = (int)seconds + 1;
  for (int s = 0; s < seconds_n; s++) {
    size_t cnt = 0, ads = 0, lcnt = 0;
    for (size_t i = 0; i < n_media; i++) if (media_records[i].second == s) cnt++;
    for (size_t i = 0; i < n_late; i++) if (late[i].second == s) lcnt++;
    if (!cnt && !lcnt) continue;
    double *l = malloc((cnt + 1) * sizeof *l), *lt = malloc((lcnt + 1) * sizeof *lt);
    size_t a = 0, b = 0;
    for (size_t i = 0; i < n_media; i++) if (media_records[i].second == s) { l[a++] = media_records[i].latency; ads += (size_t)media_records[i].ads; }
    for (size_t i = 0; i < n_late; i++) if (late[i].second == s) lt[b++] = late[i].ms;
    qsort(l, cnt, sizeof *l, cmp_double);
    qsort(lt, lcnt, sizeof *lt, cmp_double);
    double p99 = cnt ? l[(size_t)(0.99 * cnt) < cnt ? (size_t)(0.99 * cnt) : cnt - 1] : 0;
    double lp99 = lcnt ? lt[(size_t)(0.99 * lcnt) < lcnt ? (size_t)(0.99 * lcnt) : lcnt - 1] : 0;
    printf("%s{\"s\":%d,\"p99Ms\":%g,\"withAds\":%g,\"sendLateP99Ms\":%g}", first_second ? "" : ",", s, round(p99 * 10) / 10,
      round((double)ads / (cnt ? (double)cnt : 1) * 100) / 100, round(lp99 * 10) / 10);
    first_second = 0;
    free(l); free(lt);
  }
  printf("],\"measureFromWallMs\":%.0f", wall_at_measure);
  if (with_segments) printf(",\"segments\":{\"sent\":%ld,\"errors\":%ld,\"p50Ms\":%g,\"p99Ms\":%g}", segments_sent, segment_errors,
    quantile(seg_lat, n_seg, 0.5), quantile(seg_lat, n_seg, 0.99));
  printf(",\"loadGenerator\":\"native\"}\n");
  return 0;
}
