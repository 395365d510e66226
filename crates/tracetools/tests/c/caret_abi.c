/* Calls CARET's events through rostrace's C ABI (tracetools/caret.h). */
#include <stdio.h>
#include "tracetools/caret.h"

int main(void)
{
  printf("enabled %d\n", (int)ros_trace_enabled_caret_sim_time());
  ros_trace_caret_caret_init(123, "jazzy");
  ros_trace_caret_rmw_implementation("rmw_test_cpp", 456);
  ros_trace_caret_rcl_node_init((const void *)0x10, (const void *)0x11, "node", "/ns", 789);
  ros_trace_caret_dds_bind_addr_to_stamp((const void *)0x20, 1000);
  ros_trace_caret_dds_write((const void *)0x30, (const void *)0x31, 2000);
  ros_trace_caret_sim_time(3000);
  ros_trace_caret_construct_executor((const void *)0x40, NULL, 5);
  return 0;
}
