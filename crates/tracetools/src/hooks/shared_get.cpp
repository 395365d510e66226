// rostrace: calls an rclcpp getter that returns a std::shared_ptr by value (TimerBase::
// get_timer_handle(), SubscriptionBase::get_subscription_handle(), ...) and returns the raw
// pointer; the shared_ptr returned is released here, so reference counts are unchanged.
// A non-static member function taking no argument is called like a free function taking
// `this` (the Itanium C++ ABI places the hidden return slot the same way for both).
#include <memory>

extern "C" const void * rostrace_shared_get(const void * getter, void * object)
{
  using Getter = std::shared_ptr<const void> (*)(void *);
  return reinterpret_cast<Getter>(const_cast<void *>(getter))(object).get();
}
