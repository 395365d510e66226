/* A Cyclone DDS writer and reader (one process, reliable, keep-all): writes N samples, half
 * with dds_write and half with dds_write_ts, takes them all and prints each sample's id and
 * source timestamp (from its sample info): what rostrace's dds_bind_addr_to_stamp must carry.
 * `cyclone_pair bench N`: a writer alone writes N samples with dds_write then N with
 * dds_write_ts and prints the ns per call of each (best of 5 rounds; the hooks benchmark). */
#define _POSIX_C_SOURCE 199309L
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include "dds/dds.h"
#include "cyclone_sample.h"

static double now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int bench(long n)
{
  dds_entity_t participant = dds_create_participant(DDS_DOMAIN_DEFAULT, NULL, NULL);
  dds_entity_t topic = dds_create_topic(participant, &rostrace_test_Sample_desc, "rostrace_hooks_bench", NULL, NULL);
  dds_entity_t writer = dds_create_writer(participant, topic, NULL, NULL);
  if (participant < 0 || topic < 0 || writer < 0) { fprintf(stderr, "entities failed\n"); return 1; }
  double best_w = 1e30, best_ts = 1e30;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ns();
    for (long i = 0; i < n; i++) { rostrace_test_Sample s = { .id = (int)i }; dds_write(writer, &s); }
    double t1 = now_ns();
    for (long i = 0; i < n; i++) { rostrace_test_Sample s = { .id = (int)i }; dds_write_ts(writer, &s, dds_time()); }
    double t2 = now_ns();
    if ((t1 - t0) / n < best_w) best_w = (t1 - t0) / n;
    if ((t2 - t1) / n < best_ts) best_ts = (t2 - t1) / n;
  }
  dds_delete(participant);
  printf("%.3f %.3f\n", best_w, best_ts);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 2 && strcmp(argv[1], "bench") == 0) return bench(atol(argv[2]));
  int n = argc > 1 ? atoi(argv[1]) : 20;
  dds_entity_t participant = dds_create_participant(DDS_DOMAIN_DEFAULT, NULL, NULL);
  if (participant < 0) { fprintf(stderr, "participant: %s\n", dds_strretcode(-participant)); return 1; }
  dds_entity_t topic = dds_create_topic(participant, &rostrace_test_Sample_desc, "rostrace_hooks", NULL, NULL);
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
  dds_entity_t reader = dds_create_reader(participant, topic, qos, NULL);
  dds_entity_t writer = dds_create_writer(participant, topic, qos, NULL);
  dds_delete_qos(qos);
  if (topic < 0 || reader < 0 || writer < 0) { fprintf(stderr, "entities failed\n"); return 1; }
  for (int i = 0; i < n; i++) {
    rostrace_test_Sample s = { .id = i };
    dds_return_t rc = (i % 2) ? dds_write_ts(writer, &s, dds_time() - 1000 * i) : dds_write(writer, &s);
    if (rc != DDS_RETCODE_OK) { fprintf(stderr, "write %d: %s\n", i, dds_strretcode(-rc)); return 1; }
  }
  int got = 0;
  for (int tries = 0; got < n && tries < 500; tries++) {
    void *samples[1] = { NULL };
    dds_sample_info_t info[1];
    dds_return_t k = dds_take(reader, samples, info, 1, 1);
    if (k > 0 && info[0].valid_data) {
      printf("sample %d %lld\n", (int)((rostrace_test_Sample *)samples[0])->id, (long long)info[0].source_timestamp);
      got++;
    }
    if (k > 0) dds_return_loan(reader, samples, k); else dds_sleepfor(DDS_MSECS(2));
  }
  dds_delete(participant);
  printf("taken %d of %d\n", got, n);
  return got == n ? 0 : 1;
}
