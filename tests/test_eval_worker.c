/* The evaluation worker without a GPU: the wire format (partial writes,
 * signals, garbage, truncation, a dead peer), a start that fails for want of
 * a driver, and the process handling (a crash or hang in the middle of a
 * request, a death while idle, garbage from the child) through the
 * test-mode worker, which runs the real process machinery with a trivial
 * request handler instead of an evaluator. The GPU side is in test_gpu.c. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"
#include "harness/eval_worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when this test process has no child left, not even a zombie. */
static int no_children(void)
{
    int st;
    return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

static void make_header(unsigned char hdr[16], uint32_t magic, uint32_t type, uint64_t len)
{
    memcpy(hdr, &magic, 4);
    memcpy(hdr + 4, &type, 4);
    memcpy(hdr + 8, &len, 8);
}

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) _exit(9);
        c += r;
        n -= (size_t)r;
    }
}

static volatile sig_atomic_t interrupts;
static void on_usr1(int sig)
{
    (void)sig;
    interrupts++;
}

TEST(worker_wire_reassembles_byte_by_byte_writes_despite_signals)
{
    /* A handler without SA_RESTART: poll and read fail with EINTR. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    unsigned char payload[700];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (unsigned char)(i * 7 + 3);
    pid_t parent = getpid();
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* Two messages, one byte per write, a signal to the reader every
         * 16 bytes; then an orderly close. */
        close(sv[0]);
        unsigned char hdr[16];
        struct timespec pause = {0, 100000};
        for (int m = 0; m < 2; m++) {
            make_header(hdr, VPT_WIRE_MAGIC, 40u + (uint32_t)m, sizeof payload);
            unsigned char frame[16 + sizeof payload];
            memcpy(frame, hdr, 16);
            memcpy(frame + 16, payload, sizeof payload);
            for (size_t i = 0; i < sizeof frame; i++) {
                write_all(sv[1], frame + i, 1);
                if (i % 16 == 0) kill(parent, SIGUSR1);
                nanosleep(&pause, NULL);
            }
        }
        _exit(0);
    }
    close(sv[1]);
    for (int m = 0; m < 2; m++) {
        uint32_t type = 0;
        void *p = NULL;
        size_t len = 0;
        VptWireStatus st = vpt_wire_recv(sv[0], 1 << 20, 30.0, &type, &p, &len);
        REQUIRE_MSG(st == VPT_WIRE_OK, "message %d: status %d: %s", m, (int)st, vpt_errmsg());
        CHECK_EQ_INT(type, 40 + m);
        CHECK_EQ_INT(len, sizeof payload);
        CHECK(p && memcmp(p, payload, sizeof payload) == 0);
        free(p);
    }
    uint32_t type;
    void *p;
    size_t len;
    CHECK_EQ_INT(vpt_wire_recv(sv[0], 1 << 20, 30.0, &type, &p, &len), VPT_WIRE_EOF);
    vpt_test_log("%d signals interrupted the reads", (int)interrupts);
    CHECK(interrupts > 10);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(sv[0]);
}

/* Feeds bytes to a fresh socket, closes the writer, and receives. */
static VptWireStatus recv_from(const void *bytes, size_t n, int close_writer, double timeout_s)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) vpt_test_fail_at(__FILE__, __LINE__, "socketpair");
    if (n) write_all(sv[1], bytes, n);
    if (close_writer) close(sv[1]);
    uint32_t type;
    void *p;
    size_t len;
    VptWireStatus st = vpt_wire_recv(sv[0], 4096, timeout_s, &type, &p, &len);
    free(p);
    close(sv[0]);
    if (!close_writer) close(sv[1]);
    return st;
}

TEST(worker_wire_rejects_garbage_truncation_and_oversize)
{
    unsigned char buf[64];
    memset(buf, 'x', sizeof buf);
    CHECK_EQ_INT(recv_from(buf, sizeof buf, 1, 5.0), VPT_WIRE_ERROR);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad magic");

    /* An absurd length is refused from the header, before any allocation
     * (1 TiB could not be allocated: the message would say so). */
    make_header(buf, VPT_WIRE_MAGIC, 33, (uint64_t)1 << 40);
    CHECK_EQ_INT(recv_from(buf, 16, 1, 5.0), VPT_WIRE_ERROR);
    CHECK_STR_CONTAINS(vpt_errmsg(), "more than the 4096 allowed");

    make_header(buf, VPT_WIRE_MAGIC, 33, 100);
    CHECK_EQ_INT(recv_from(buf, 16 + 10, 1, 5.0), VPT_WIRE_ERROR);
    CHECK_STR_CONTAINS(vpt_errmsg(), "closed in the middle of a message (10 of 100 bytes)");

    CHECK_EQ_INT(recv_from(buf, 5, 1, 5.0), VPT_WIRE_ERROR);
    CHECK_STR_CONTAINS(vpt_errmsg(), "middle of a message header (5 of 16 bytes)");

    CHECK_EQ_INT(recv_from(NULL, 0, 1, 5.0), VPT_WIRE_EOF);

    double t0 = now_s();
    CHECK_EQ_INT(recv_from(NULL, 0, 0, 0.2), VPT_WIRE_TIMEOUT);
    double dt = now_s() - t0;
    CHECK_MSG(dt >= 0.19 && dt < 3.0, "timeout after %.3f s", dt);
    /* Half a message, writer still open: a timeout, not a hang. */
    CHECK_EQ_INT(recv_from(buf, 16 + 10, 0, 0.2), VPT_WIRE_TIMEOUT);

    /* An empty payload is a message too. */
    make_header(buf, VPT_WIRE_MAGIC, 36, 0);
    CHECK_EQ_INT(recv_from(buf, 16, 1, 5.0), VPT_WIRE_OK);
}

TEST(worker_wire_send_to_a_dead_peer_fails_without_sigpipe)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    close(sv[1]);
    /* SIGPIPE keeps its default action here: it would kill this test. */
    char big[100000];
    memset(big, 1, sizeof big);
    CHECK(vpt_wire_send(sv[0], 7, big, sizeof big, NULL, 0, 5.0) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "Broken pipe");
    close(sv[0]);
}

TEST(worker_wire_carries_a_large_two_part_message)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    size_t na = 1000, nb = (size_t)6 << 20; /* far beyond a socket buffer: many partial writes */
    unsigned char *a = malloc(na), *b = malloc(nb);
    REQUIRE(a && b);
    for (size_t i = 0; i < na; i++) a[i] = (unsigned char)i;
    for (size_t i = 0; i < nb; i++) b[i] = (unsigned char)(i >> 3);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* echo one message back */
        close(sv[0]);
        uint32_t type;
        void *p;
        size_t len;
        if (vpt_wire_recv(sv[1], (size_t)16 << 20, 30.0, &type, &p, &len) != VPT_WIRE_OK) _exit(1);
        if (vpt_wire_send(sv[1], type + 1, p, len, NULL, 0, 30.0)) _exit(2);
        _exit(0);
    }
    close(sv[1]);
    REQUIRE_MSG(vpt_wire_send(sv[0], 5, a, na, b, nb, 30.0) == 0, "%s", vpt_errmsg());
    uint32_t type;
    void *p;
    size_t len;
    REQUIRE_MSG(vpt_wire_recv(sv[0], (size_t)16 << 20, 30.0, &type, &p, &len) == VPT_WIRE_OK, "%s", vpt_errmsg());
    CHECK_EQ_INT(type, 6);
    REQUIRE(len == na + nb);
    CHECK(memcmp(p, a, na) == 0);
    CHECK(memcmp((char *)p + na, b, nb) == 0);
    free(p);
    free(a);
    free(b);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(sv[0]);
}

TEST(worker_start_without_cuda_driver_fails_cleanly)
{
    /* Also on a machine with a GPU: point the driver at nothing. */
    setenv("VPT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    VptWorkerSpec spec = vpt_worker_spec_default();
    spec.scene = s;
    spec.eval.quiet = 1;
    int no_gpu = -1;
    VptEvalWorker *w = vpt_eval_worker_start(&spec, &no_gpu);
    CHECK(w == NULL);
    CHECK_EQ_INT(no_gpu, 1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no CUDA driver");
    CHECK_STR_CONTAINS(vpt_errmsg(), "/nonexistent/libcuda.so.1");
    CHECK_MSG(no_children(), "the failed worker was not reaped");
    /* and again: nothing left over from the first attempt */
    CHECK(vpt_eval_worker_start(&spec, NULL) == NULL);
    CHECK(no_children());
    vpt_eval_worker_stop(w); /* NULL is fine */
    vpt_scene_destroy(s);
}

static VptEvalWorker *test_worker(double hard_timeout_s)
{
    VptWorkerSpec spec = vpt_worker_spec_default();
    spec.test_mode = 1;
    spec.eval.quiet = 1;
    spec.hard_timeout_s = hard_timeout_s;
    VptEvalWorker *w = vpt_eval_worker_start(&spec, NULL);
    if (!w) vpt_test_fail_at(__FILE__, __LINE__, "test-mode worker: %s", vpt_errmsg());
    return w;
}

static VptConfig cfg(const char *text)
{
    VptConfig c;
    if (vpt_config_parse(text, &c)) vpt_test_fail_at(__FILE__, __LINE__, "bad config %s: %s", text, vpt_errmsg());
    return c;
}

TEST(worker_crash_mid_request_is_runtime_and_a_fresh_worker_continues)
{
    VptEvalWorker *w = test_worker(0);
    REQUIRE(w);
    CHECK_STR_CONTAINS(vpt_eval_worker_provenance(w)->gpu_name, "none");
    pid_t first = vpt_eval_worker_pid(w);
    CHECK(first > 0 && first != getpid());
    VptWorkerTestEcho echo;
    REQUIRE_MSG(vpt_eval_worker_test(w, VPT_WORKER_TEST_ECHO, 0, &echo) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(echo.pid, first);

    VptConfig cs[3] = {cfg("regenerationSK-warp"), cfg("streamingSK"), cfg("sortingSK")};
    vpt_eval_worker_prefetch(w, cs, 3);
    REQUIRE(vpt_eval_worker_test(w, VPT_WORKER_TEST_ECHO, 0, &echo) == 0);
    CHECK_EQ_INT(echo.nprefetched, 3);

    VptEvalResult r;
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &cs[0], VPT_FAULT_ILLEGAL_ADDRESS, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_RUNTIME, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "worker process died: killed by signal 11");
    CHECK_STR_CONTAINS(r.reason, "during the request");
    CHECK_STR_CONTAINS(r.reason, "last CUDA error: none reported");
    CHECK(vpt_config_equal(&r.config, &cs[0]));
    CHECK_STR_CONTAINS(r.canon, "regen=warp");
    /* reaped at once, no zombie */
    int st;
    CHECK(waitpid(first, &st, WNOHANG) == -1 && errno == ECHILD);

    /* The next config goes to a fresh worker, which was handed what is
     * still queued (the crashed config is not). */
    REQUIRE_MSG(vpt_eval_worker_run(w, &cs[1], &r) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(r.reason, "test-mode worker");
    pid_t second = vpt_eval_worker_pid(w);
    CHECK(second > 0 && second != first);
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 1);
    REQUIRE(vpt_eval_worker_test(w, VPT_WORKER_TEST_ECHO, 0, &echo) == 0);
    CHECK_EQ_INT(echo.pid, second);
    CHECK_EQ_INT(echo.nprefetched, 2);
    vpt_eval_worker_stop(w);
    CHECK(no_children());
}

TEST(worker_hang_is_killed_as_timeout_and_a_fresh_worker_continues)
{
    VptEvalWorker *w = test_worker(0.5);
    REQUIRE(w);
    pid_t first = vpt_eval_worker_pid(w);
    VptConfig c = cfg("regenerationSK-block");
    VptEvalResult r;
    double t0 = now_s();
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &c, VPT_FAULT_HANG, &r) == 0, "%s", vpt_errmsg());
    double dt = now_s() - t0;
    CHECK_MSG(r.status == VPT_STATUS_TIMEOUT, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "gave no sign of life for 0.5 s during render and was killed");
    CHECK_MSG(dt >= 0.45 && dt < 10.0, "killed after %.2f s", dt);
    CHECK(r.measure_s > 0.4);
    int st;
    CHECK(waitpid(first, &st, WNOHANG) == -1 && errno == ECHILD);
    REQUIRE(vpt_eval_worker_run(w, &c, &r) == 0);
    CHECK_STR_CONTAINS(r.reason, "test-mode worker");
    CHECK(vpt_eval_worker_pid(w) != first);
    vpt_eval_worker_stop(w);
    CHECK(no_children());
}

/* Kills the worker(s) of a request from outside, as an operator or the
 * OOM killer would: each of `times` workers with SIGKILL, a moment after it
 * is seen running. */
typedef struct {
    VptEvalWorker *w;
    int times, killed;
    pid_t pids[2];
} Killer;

static void *kill_from_outside(void *arg)
{
    Killer *k = arg;
    pid_t last = 0;
    double t0 = now_s();
    while (k->killed < k->times && now_s() - t0 < 5.0) {
        pid_t p = vpt_eval_worker_pid(k->w);
        if (p > 0 && p != last) {
            struct timespec pause = {0, 150000000};
            nanosleep(&pause, NULL);
            if (kill(p, SIGKILL) == 0) k->pids[k->killed++] = p;
            last = p;
        }
        struct timespec tick = {0, 5000000};
        nanosleep(&tick, NULL);
    }
    return NULL;
}

/* A worker killed from outside mid-request is no fault of the config: it is
 * measured again on a fresh worker (here the hang then meets the
 * watchdog: a timeout, not a runtime failure); killed a second time, it is
 * recorded as a runtime failure that says so. */
TEST(worker_killed_from_outside_measures_the_config_again_once)
{
    for (int times = 1; times <= 2; times++) {
        VptEvalWorker *w = test_worker(1.5);
        REQUIRE(w);
        Killer k = {.w = w, .times = times};
        pthread_t th;
        REQUIRE(pthread_create(&th, NULL, kill_from_outside, &k) == 0);
        VptConfig c = cfg("regenerationSK-block");
        VptEvalResult r;
        REQUIRE_MSG(vpt_eval_worker_run_fault(w, &c, VPT_FAULT_HANG, &r) == 0, "%s", vpt_errmsg());
        pthread_join(th, NULL);
        CHECK_EQ_INT(k.killed, times);
        CHECK_EQ_INT(vpt_eval_worker_restarts(w), 1); /* the first kill; after the last, the next request restarts */
        if (times == 1) {
            CHECK_MSG(r.status == VPT_STATUS_TIMEOUT, "status %s: %s", vpt_status_name(r.status), r.reason);
            CHECK_STR_CONTAINS(r.reason, "gave no sign of life");
        } else {
            CHECK_MSG(r.status == VPT_STATUS_RUNTIME, "status %s: %s", vpt_status_name(r.status), r.reason);
            CHECK_STR_CONTAINS(r.reason, "killed by signal 9");
            CHECK_STR_CONTAINS(r.reason, "the second time for this config");
        }
        vpt_eval_worker_stop(w);
        CHECK(no_children());
    }
}

TEST(worker_death_while_idle_is_not_blamed_on_the_next_config)
{
    VptEvalWorker *w = test_worker(0);
    REQUIRE(w);
    pid_t first = vpt_eval_worker_pid(w);
    REQUIRE(kill(first, SIGKILL) == 0);
    /* Let it die first, so the request surely meets a dead worker. */
    struct timespec pause = {0, 100000000};
    nanosleep(&pause, NULL);
    VptConfig c = cfg("naiveSK");
    VptEvalResult r;
    REQUIRE_MSG(vpt_eval_worker_run(w, &c, &r) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(r.reason, "test-mode worker");
    CHECK(vpt_eval_worker_pid(w) != first);
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 1);

    /* A worker that exits in the middle of a request: reported with its
     * exit status; the next request starts another. */
    pid_t second = vpt_eval_worker_pid(w);
    CHECK(vpt_eval_worker_test(w, VPT_WORKER_TEST_EXIT, 7, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "worker process died: exited with status 7");
    int st;
    CHECK(waitpid(second, &st, WNOHANG) == -1 && errno == ECHILD);
    VptWorkerTestEcho echo;
    REQUIRE(vpt_eval_worker_test(w, VPT_WORKER_TEST_ECHO, 0, &echo) == 0);
    CHECK(echo.pid != second && echo.pid != first);
    vpt_eval_worker_stop(w);
    CHECK(no_children());
}

TEST(worker_garbage_from_the_child_is_a_protocol_error)
{
    VptEvalWorker *w = test_worker(0);
    REQUIRE(w);
    pid_t first = vpt_eval_worker_pid(w);
    CHECK(vpt_eval_worker_test(w, VPT_WORKER_TEST_GARBAGE, 0, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "worker protocol error");
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad magic");
    int st;
    CHECK(waitpid(first, &st, WNOHANG) == -1 && errno == ECHILD);
    VptWorkerTestEcho echo;
    REQUIRE(vpt_eval_worker_test(w, VPT_WORKER_TEST_ECHO, 0, &echo) == 0);
    CHECK(echo.pid != first);
    vpt_eval_worker_stop(w);
    CHECK(no_children());
}

/* The row of a runtime failure of config `text` on s, built without a
 * session (what the parent does when a worker dies). */
static json_t *failure_row(const VptScene *s, const VptRenderSettings *rs, const char *text)
{
    VptParams P;
    vpt_params_init(&P, s, rs);
    VptProvenance pv;
    vpt_provenance_fill(&pv, NULL);
    VptEvalResult r;
    memset(&r, 0, sizeof r);
    r.config = cfg(text);
    vpt_config_format(&r.config, r.canon, sizeof r.canon);
    r.status = VPT_STATUS_RUNTIME;
    snprintf(r.reason, sizeof r.reason, "worker process died: killed by signal 9 (Killed)");
    return vpt_eval_result_row(&pv, &P, rs, s, &r);
}

TEST(worker_result_row_needs_no_session)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    VptRenderSettings rs = {64, 32, 3, 9, 12, 4, 1};
    json_t *row = failure_row(s, &rs, "streamingSK,block=128");
    REQUIRE(row);
    CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "scene")), "bucky");
    CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "status")), "runtime");
    CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "schedule")), "streamingSK");
    CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "config")), "block=128");
    CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "reason")), "signal 9");
    json_t *wl = json_object_get(row, "workload");
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "width")), 64);
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "spp")), 3);
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "max_depth")), 12);
    CHECK_EQ_INT(json_integer_value(json_object_get(wl, "rr_depth")), 4);
    CHECK_STR_CONTAINS(json_string_value(json_object_get(json_object_get(row, "gpu"), "name")), "none");
    /* the volume: a built-in scene's grid and name, no file hash */
    json_t *v = json_object_get(row, "volume");
    REQUIRE(json_is_object(v));
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(v, "dims"), 0)), 32);
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(v, "dims"), 2)), 32);
    CHECK_STR_CONTAINS(json_string_value(json_object_get(v, "format")), "f32");
    CHECK_EQ_INT(json_integer_value(json_object_get(v, "bytes")), 32 * 32 * 32 * 4);
    CHECK_STR_CONTAINS(json_string_value(json_object_get(v, "source")), "bucky");
    CHECK(json_object_get(v, "sha256") == NULL);
    json_decref(row);
    vpt_scene_destroy(s);
}

/* A loaded volume's row names the file, its SHA-256 and the resampling. */
TEST(worker_result_row_names_a_files_volume)
{
    char path[600];
    snprintf(path, sizeof path, "%s/v.nrrd", vpt_test_tmpdir());
    FILE *fp = fopen(path, "wb");
    REQUIRE(fp);
    const char hdr[] = "NRRD0004\ntype: short\ndimension: 3\nsizes: 4 3 2\nendian: little\nencoding: raw\n\n";
    int16_t data[24];
    for (int i = 0; i < 24; i++) data[i] = (int16_t)(i * 100 - 1000);
    fwrite(hdr, 1, sizeof hdr - 1, fp);
    fwrite(data, 1, sizeof data, fp);
    fclose(fp);
    VptVolumeSceneOptions o = {.upsample = 2};
    VptScene *s = vpt_scene_from_volume(path, &o);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    VptRenderSettings rs = {8, 8, 1, 0, 0, -1, 1};
    json_t *row = failure_row(s, &rs, "naiveSK");
    REQUIRE(row);
    json_t *v = json_object_get(row, "volume");
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(v, "dims"), 0)), 8);
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(v, "dims"), 2)), 4);
    CHECK_STR_CONTAINS(json_string_value(json_object_get(v, "format")), "i16");
    CHECK_EQ_INT(json_integer_value(json_object_get(v, "bytes")), 8 * 6 * 4 * 2);
    CHECK(!strcmp(json_string_value(json_object_get(v, "source")), path));
    CHECK_STR_CONTAINS(json_string_value(json_object_get(v, "resample")), "up2");
    CHECK_EQ_INT((int)strlen(json_string_value(json_object_get(v, "sha256"))), 64);
    CHECK(!strcmp(json_string_value(json_object_get(v, "sha256")), s->volume.sha256));
    json_decref(row);
    vpt_scene_destroy(s);
}

TEST(worker_that_dies_before_accepting_is_retried_once_then_reported)
{
    VptEvalWorker *w = test_worker(0);
    REQUIRE(w);
    VptConfig c = cfg("naiveMK");
    VptEvalResult r;
    /* Each worker quits on receipt: the first death is not the config's
     * fault (the request goes to a fresh worker), the second is reported. */
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &c, VPT_WORKER_TEST_QUIT, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_RUNTIME, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "exited with status 3");
    CHECK_STR_CONTAINS(r.reason, "before accepting the request");
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 1);
    REQUIRE(vpt_eval_worker_run(w, &c, &r) == 0);
    CHECK_STR_CONTAINS(r.reason, "test-mode worker");
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 2);
    vpt_eval_worker_stop(w);
    CHECK(no_children());
}
