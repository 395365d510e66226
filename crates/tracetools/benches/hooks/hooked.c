/* The hooked functions of the benchmark: Cyclone DDS's dds_write_ts and Fast DDS 3.x's
 * DataWriter::write_w_timestamp (by its mangled name), each doing almost nothing, so that
 * what is measured is the cost of the call, hooked or not. */
#include <stdint.h>

volatile uint64_t hooked_calls;

int dds_write_ts(int writer, const void *data, int64_t timestamp)
{
  (void)data;
  hooked_calls += (uint64_t)writer + (uint64_t)timestamp;
  return 0;
}

struct fastdds_time { int32_t seconds; uint32_t nanosec; };

int32_t _ZN8eprosima7fastdds3dds10DataWriter17write_w_timestampEPKvRKNS0_4rtps16InstanceHandle_tERKNS1_6Time_tE(
  void *self, const void *data, const void *handle, const struct fastdds_time *t)
{
  (void)self; (void)data; (void)handle;
  hooked_calls += (uint64_t)t->nanosec;
  return 0;
}
