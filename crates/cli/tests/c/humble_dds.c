/* A Humble-ABI publisher and subscriber over Cyclone DDS, traced as rcl/rmw would trace them:
 * Humble's tracetools (ROS_DISTRO=humble) has no source timestamp in rmw_publish (its only
 * argument is the message), so the link from a publication to its take is CARET's
 * dds_bind_addr_to_stamp, recorded by rostrace's dds_write hook. One process, two nodes:
 * /talker publishes N messages on /chatter (rcl_publish, rmw_publish, dds_write), /listener
 * takes them (rmw_take with the sample's source timestamp) in a subscription callback. */
#include <stdio.h>
#include <stdlib.h>
#include "dds/dds.h"
#include "tracetools/tracetools.h"
#include "cyclone_sample.h"

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 20;
  static int context, talker, listener, pub, rmw_pub, sub, rmw_sub, sub_obj, callback;
  ros_trace_rcl_init(&context);
  ros_trace_rcl_node_init(&talker, &talker, "talker", "/");
  ros_trace_rcl_node_init(&listener, &listener, "listener", "/");
  ros_trace_rcl_publisher_init(&pub, &talker, &rmw_pub, "/chatter", 10);
  ros_trace_rcl_subscription_init(&sub, &listener, &rmw_sub, "/chatter", 10);
  ros_trace_rclcpp_subscription_init(&sub, &sub_obj);
  ros_trace_rclcpp_subscription_callback_added(&sub_obj, &callback);
  ros_trace_rclcpp_callback_register(&callback, "void listener_callback(Sample)");

  dds_entity_t participant = dds_create_participant(DDS_DOMAIN_DEFAULT, NULL, NULL);
  dds_entity_t topic = dds_create_topic(participant, &rostrace_test_Sample_desc, "rt_chatter", NULL, NULL);
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
  dds_entity_t reader = dds_create_reader(participant, topic, qos, NULL);
  dds_entity_t writer = dds_create_writer(participant, topic, qos, NULL);
  dds_delete_qos(qos);
  if (participant < 0 || topic < 0 || reader < 0 || writer < 0) { fprintf(stderr, "entities failed\n"); return 1; }
  int taken = 0;
  for (int i = 0; i < n; i++) {
    rostrace_test_Sample msg = { .id = i };
    ros_trace_rclcpp_publish(NULL, &msg);
    ros_trace_rcl_publish(&pub, &msg);
    /* Humble: ros_trace_rmw_publish(const void * message). */
    ros_trace_rmw_publish(&msg, NULL, 0);
    if (dds_write(writer, &msg) != DDS_RETCODE_OK) { fprintf(stderr, "write failed\n"); return 1; }
    void *samples[1] = { NULL };
    dds_sample_info_t info[1];
    for (int tries = 0; tries < 500; tries++) {
      dds_return_t k = dds_take(reader, samples, info, 1, 1);
      if (k > 0 && info[0].valid_data) {
        ros_trace_rmw_take(&rmw_sub, samples[0], info[0].source_timestamp, true);
        ros_trace_rcl_take(samples[0]);
        ros_trace_rclcpp_take(samples[0]);
        ros_trace_callback_start(&callback, false);
        ros_trace_callback_end(&callback);
        dds_return_loan(reader, samples, k);
        taken++;
        break;
      }
      if (k > 0) dds_return_loan(reader, samples, k);
      dds_sleepfor(DDS_MSECS(1));
    }
  }
  dds_delete(participant);
  printf("published %d taken %d\n", n, taken);
  return taken == n ? 0 : 1;
}
