//! Which ROS 2 event an event class is, whatever its provider and version, and where its
//! fields are: looked up once per event class, so the per-event work is an index.

use rostrace_ctf::{Event, EventClass, FieldValue};

/// The ROS 2 events the analysis understands (fewer than 64: a set of kinds fits a `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// `rcl_init`
    RclInit,
    /// `rcl_node_init`
    NodeInit,
    /// `rmw_publisher_init`
    RmwPublisherInit,
    /// `rcl_publisher_init`
    PublisherInit,
    /// `rmw_subscription_init`
    RmwSubscriptionInit,
    /// `rcl_subscription_init`
    SubscriptionInit,
    /// `rmw_client_init` (Kilted)
    RmwClientInit,
    /// `rclcpp_subscription_init`
    RclcppSubscriptionInit,
    /// `rclcpp_subscription_callback_added`
    SubscriptionCallbackAdded,
    /// `rcl_service_init`
    ServiceInit,
    /// `rclcpp_service_callback_added`
    ServiceCallbackAdded,
    /// `rcl_client_init`
    ClientInit,
    /// `rcl_timer_init`
    TimerInit,
    /// `rclcpp_timer_callback_added`
    TimerCallbackAdded,
    /// `rclcpp_timer_link_node`
    TimerLinkNode,
    /// `rclcpp_callback_register`
    CallbackRegister,
    /// `rcl_lifecycle_state_machine_init`
    LifecycleInit,
    /// `rcl_lifecycle_transition`
    LifecycleTransition,
    /// `callback_start`
    CallbackStart,
    /// `callback_end`
    CallbackEnd,
    /// `rclcpp_publish`
    RclcppPublish,
    /// `rclcpp_intra_publish`
    RclcppIntraPublish,
    /// `rcl_publish`
    RclPublish,
    /// `rmw_publish`
    RmwPublish,
    /// `dds:write` (instrumented DDS) and CARET's `dds_write`
    DdsWrite,
    /// `dds:create_writer`
    DdsCreateWriter,
    /// CARET's `dds_bind_addr_to_stamp`
    DdsBindAddrToStamp,
    /// `rmw_take`
    RmwTake,
    /// `rcl_take`
    RclTake,
    /// `rclcpp_take`
    RclcppTake,
    /// CARET's `dispatch_subscription_callback`
    DispatchSubscription,
    /// CARET's `dispatch_intra_process_subscription_callback` (and older `dispatch_intra_process`)
    DispatchIntra,
    /// `rclcpp_ring_buffer_enqueue`
    RingEnqueue,
    /// `rclcpp_ring_buffer_dequeue`
    RingDequeue,
    /// `rclcpp_ipb_to_subscription`
    IpbToSubscription,
    /// `rclcpp_buffer_to_ipb`
    BufferToIpb,
    /// `rclcpp_construct_ring_buffer`
    ConstructRingBuffer,
    /// `rmw_send_request` (Kilted)
    SendRequest,
    /// `rmw_take_request` (Kilted)
    TakeRequest,
    /// `rmw_send_response` (Kilted)
    SendResponse,
    /// `rmw_take_response` (Kilted)
    TakeResponse,
    /// `rclcpp_executor_get_next_ready`
    ExecutorGetNextReady,
    /// `rclcpp_executor_wait_for_work`
    ExecutorWaitForWork,
    /// `rclcpp_executor_execute`
    ExecutorExecute,
    /// CARET `construct_executor` / `construct_static_executor`
    ConstructExecutor,
    /// CARET `add_callback_group` / `add_callback_group_static_executor` / `callback_group_to_executor_entity_collector`
    AddCallbackGroup,
    /// CARET `executor_entity_collector_to_executor`
    CollectorToExecutor,
    /// CARET `callback_group_add_timer|subscription|service|client`
    CallbackGroupAdd,
    /// CARET `caret_init`
    CaretInit,
    /// CARET `rmw_implementation`
    RmwImplementation,
    /// `message_link_periodic_async`: a node's subscriptions feed its publishers through the latest message
    MessageLinkPeriodicAsync,
    /// `message_link_partial_sync`: a node's subscriptions feed its publishers, each message at most once
    MessageLinkPartialSync,
}

const _: () = assert!((Kind::MessageLinkPartialSync as u32) < 64, "a set of kinds must fit a u64");

/// Providers whose events are ROS 2 events.
const PROVIDERS: &[&str] = &["ros2", "ros2_caret", "ros2_hook", "dds"];

impl Kind {
    /// Bit of this kind in a set of kinds (a `u64`).
    #[inline]
    pub fn bit(self) -> u64 {
        1u64 << (self as u32)
    }

    /// Whether the event declares something (an initialization event), as opposed to a
    /// runtime event that is an instance (a callback run, a publication, a take, ...).
    pub fn is_init(self) -> bool {
        use Kind::*;
        matches!(
            self,
            RclInit
                | NodeInit
                | RmwPublisherInit
                | PublisherInit
                | RmwSubscriptionInit
                | SubscriptionInit
                | RmwClientInit
                | RclcppSubscriptionInit
                | SubscriptionCallbackAdded
                | ServiceInit
                | ServiceCallbackAdded
                | ClientInit
                | TimerInit
                | TimerCallbackAdded
                | TimerLinkNode
                | CallbackRegister
                | LifecycleInit
                | DdsCreateWriter
                | IpbToSubscription
                | BufferToIpb
                | ConstructRingBuffer
                | ConstructExecutor
                | AddCallbackGroup
                | CollectorToExecutor
                | CallbackGroupAdd
                | CaretInit
                | RmwImplementation
                | MessageLinkPeriodicAsync
                | MessageLinkPartialSync
        )
    }

    /// The kind of an event class name, if the analysis uses it.
    pub fn of(name: &str) -> Option<Kind> {
        let (provider, ev) = name.split_once(':')?;
        if !PROVIDERS.contains(&provider) {
            return None;
        }
        Some(match (provider, ev) {
            (_, "rcl_init") => Kind::RclInit,
            (_, "rcl_node_init") => Kind::NodeInit,
            (_, "rmw_publisher_init") => Kind::RmwPublisherInit,
            (_, "rcl_publisher_init") => Kind::PublisherInit,
            (_, "rmw_subscription_init") => Kind::RmwSubscriptionInit,
            (_, "rcl_subscription_init") => Kind::SubscriptionInit,
            (_, "rmw_client_init") => Kind::RmwClientInit,
            (_, "rclcpp_subscription_init") => Kind::RclcppSubscriptionInit,
            (_, "rclcpp_subscription_callback_added") => Kind::SubscriptionCallbackAdded,
            (_, "rcl_service_init") => Kind::ServiceInit,
            (_, "rclcpp_service_callback_added") => Kind::ServiceCallbackAdded,
            (_, "rcl_client_init") => Kind::ClientInit,
            (_, "rcl_timer_init") => Kind::TimerInit,
            (_, "rclcpp_timer_callback_added") => Kind::TimerCallbackAdded,
            (_, "rclcpp_timer_link_node") => Kind::TimerLinkNode,
            (_, "rclcpp_callback_register") => Kind::CallbackRegister,
            (_, "rcl_lifecycle_state_machine_init") => Kind::LifecycleInit,
            (_, "rcl_lifecycle_transition") => Kind::LifecycleTransition,
            (_, "callback_start") => Kind::CallbackStart,
            (_, "callback_end") => Kind::CallbackEnd,
            (_, "rclcpp_publish") => Kind::RclcppPublish,
            (_, "rclcpp_intra_publish") => Kind::RclcppIntraPublish,
            (_, "rcl_publish") => Kind::RclPublish,
            (_, "rmw_publish") => Kind::RmwPublish,
            ("dds", "write") | (_, "dds_write") => Kind::DdsWrite,
            ("dds", "create_writer") => Kind::DdsCreateWriter,
            (_, "dds_bind_addr_to_stamp") => Kind::DdsBindAddrToStamp,
            (_, "rmw_take") => Kind::RmwTake,
            (_, "rcl_take") => Kind::RclTake,
            (_, "rclcpp_take") => Kind::RclcppTake,
            (_, "dispatch_subscription_callback") => Kind::DispatchSubscription,
            (_, "dispatch_intra_process_subscription_callback") | (_, "dispatch_intra_process") => Kind::DispatchIntra,
            (_, "rclcpp_ring_buffer_enqueue") => Kind::RingEnqueue,
            (_, "rclcpp_ring_buffer_dequeue") => Kind::RingDequeue,
            (_, "rclcpp_ipb_to_subscription") => Kind::IpbToSubscription,
            (_, "rclcpp_buffer_to_ipb") => Kind::BufferToIpb,
            (_, "rclcpp_construct_ring_buffer") => Kind::ConstructRingBuffer,
            (_, "rmw_send_request") => Kind::SendRequest,
            (_, "rmw_take_request") => Kind::TakeRequest,
            (_, "rmw_send_response") => Kind::SendResponse,
            (_, "rmw_take_response") => Kind::TakeResponse,
            (_, "rclcpp_executor_get_next_ready") => Kind::ExecutorGetNextReady,
            (_, "rclcpp_executor_wait_for_work") => Kind::ExecutorWaitForWork,
            (_, "rclcpp_executor_execute") => Kind::ExecutorExecute,
            (_, "construct_executor") | (_, "construct_static_executor") => Kind::ConstructExecutor,
            (_, "add_callback_group")
            | (_, "add_callback_group_static_executor")
            | (_, "callback_group_to_executor_entity_collector") => Kind::AddCallbackGroup,
            (_, "executor_entity_collector_to_executor") => Kind::CollectorToExecutor,
            (_, "callback_group_add_timer")
            | (_, "callback_group_add_subscription")
            | (_, "callback_group_add_service")
            | (_, "callback_group_add_client") => Kind::CallbackGroupAdd,
            (_, "caret_init") => Kind::CaretInit,
            (_, "rmw_implementation") => Kind::RmwImplementation,
            (_, "message_link_periodic_async") => Kind::MessageLinkPeriodicAsync,
            (_, "message_link_partial_sync") => Kind::MessageLinkPartialSync,
            _ => return None,
        })
    }
}

/// Field names the analysis reads, in one list; a class stores the position of each in its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub enum F {
    ContextHandle,
    Version,
    NodeHandle,
    RmwHandle,
    NodeName,
    Namespace,
    RmwPublisherHandle,
    Gid,
    PublisherHandle,
    TopicName,
    QueueDepth,
    RmwSubscriptionHandle,
    SubscriptionHandle,
    Subscription,
    Callback,
    ServiceHandle,
    RmwServiceHandle,
    ServiceName,
    ClientHandle,
    RmwClientHandle,
    TimerHandle,
    Period,
    Symbol,
    StateMachine,
    StartLabel,
    GoalLabel,
    IsIntraProcess,
    Message,
    Timestamp,
    Writer,
    Addr,
    SourceStamp,
    SourceTimestamp,
    Taken,
    Buffer,
    Index,
    Ipb,
    Capacity,
    Overwritten,
    InitTimestamp,
    ClockOffset,
    Distribution,
    RmwImpl,
    ExecutorAddr,
    ExecutorTypeName,
    CallbackGroupAddr,
    GroupTypeName,
    EntitiesCollectorAddr,
    SequenceNumber,
    Request,
    Response,
    ClientGid,
    Handle,
    Timeout,
    Data,
    Subs,
    Pubs,
}

const FIELD_NAMES: &[(F, &str)] = &[
    (F::ContextHandle, "context_handle"),
    (F::Version, "version"),
    (F::NodeHandle, "node_handle"),
    (F::RmwHandle, "rmw_handle"),
    (F::NodeName, "node_name"),
    (F::Namespace, "namespace"),
    (F::RmwPublisherHandle, "rmw_publisher_handle"),
    (F::Gid, "gid"),
    (F::PublisherHandle, "publisher_handle"),
    (F::TopicName, "topic_name"),
    (F::QueueDepth, "queue_depth"),
    (F::RmwSubscriptionHandle, "rmw_subscription_handle"),
    (F::SubscriptionHandle, "subscription_handle"),
    (F::Subscription, "subscription"),
    (F::Callback, "callback"),
    (F::ServiceHandle, "service_handle"),
    (F::RmwServiceHandle, "rmw_service_handle"),
    (F::ServiceName, "service_name"),
    (F::ClientHandle, "client_handle"),
    (F::RmwClientHandle, "rmw_client_handle"),
    (F::TimerHandle, "timer_handle"),
    (F::Period, "period"),
    (F::Symbol, "symbol"),
    (F::StateMachine, "state_machine"),
    (F::StartLabel, "start_label"),
    (F::GoalLabel, "goal_label"),
    (F::IsIntraProcess, "is_intra_process"),
    (F::Message, "message"),
    (F::Timestamp, "timestamp"),
    (F::Writer, "writer"),
    (F::Addr, "addr"),
    (F::SourceStamp, "source_stamp"),
    (F::SourceTimestamp, "source_timestamp"),
    (F::Taken, "taken"),
    (F::Buffer, "buffer"),
    (F::Index, "index"),
    (F::Ipb, "ipb"),
    (F::Capacity, "capacity"),
    (F::Overwritten, "overwritten"),
    (F::InitTimestamp, "init_timestamp"),
    (F::ClockOffset, "clock_offset"),
    (F::Distribution, "distribution"),
    (F::RmwImpl, "rmw_impl"),
    (F::ExecutorAddr, "executor_addr"),
    (F::ExecutorTypeName, "executor_type_name"),
    (F::CallbackGroupAddr, "callback_group_addr"),
    (F::GroupTypeName, "group_type_name"),
    (F::EntitiesCollectorAddr, "entities_collector_addr"),
    (F::SequenceNumber, "sequence_number"),
    (F::Request, "request"),
    (F::Response, "response"),
    (F::ClientGid, "client_gid"),
    (F::Handle, "handle"),
    (F::Timeout, "timeout"),
    (F::Data, "data"),
    (F::Subs, "subs"),
    (F::Pubs, "pubs"),
];

/// What the analysis knows of one event class.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// The event.
    pub kind: Kind,
    /// The last part of the event name (`timer_handle` of `ros2:rclcpp_...`), for kinds that merge several names.
    pub short: String,
    idx: Vec<u8>,
}

const NONE: u8 = u8::MAX;

impl ClassInfo {
    /// Looks up the fields of `class`, if it is a ROS 2 event the analysis uses.
    pub fn of(class: &EventClass) -> Option<ClassInfo> {
        let kind = Kind::of(&class.name)?;
        let mut idx = vec![NONE; FIELD_NAMES.len()];
        for (f, name) in FIELD_NAMES {
            if let Some(i) = class.field_index(name) {
                idx[*f as usize] = i.min(254) as u8;
            }
        }
        let short = class.name.split_once(':').map(|(_, s)| s).unwrap_or(&class.name).to_string();
        Some(ClassInfo { kind, short, idx })
    }

    /// Whether the payload has field `f`.
    pub fn has(&self, f: F) -> bool {
        self.idx[f as usize] != NONE
    }

    /// Field `f` of `ev`.
    #[inline]
    pub fn get<'e>(&self, ev: &Event<'e>, f: F) -> Option<FieldValue<'e>> {
        let i = self.idx[f as usize];
        if i == NONE {
            return None;
        }
        ev.field_at(i as usize)
    }

    /// Field `f` as an unsigned integer (handles, pointers), 0 when absent.
    #[inline]
    pub fn u(&self, ev: &Event, f: F) -> u64 {
        self.int(ev, f).unwrap_or(0)
    }

    /// Field `f` as an integer's bits, if present (see [`Event::u64_at`]).
    #[inline]
    fn int(&self, ev: &Event, f: F) -> Option<u64> {
        match self.idx[f as usize] {
            NONE => None,
            i => ev.u64_at(i as usize),
        }
    }

    /// Field `f` as a signed integer, if present.
    #[inline]
    pub fn i(&self, ev: &Event, f: F) -> Option<i64> {
        // (As `as_i64`: the same bits.)
        self.int(ev, f).map(|v| v as i64)
    }

    /// Field `f` as a string ("" when absent).
    pub fn s(&self, ev: &Event, f: F) -> String {
        self.get(ev, f).and_then(|v| v.as_str().map(|s| s.into_owned())).unwrap_or_default()
    }

    /// Field `f` as bytes of an array (GIDs), empty when absent.
    pub fn bytes(&self, ev: &Event, f: F) -> Vec<u8> {
        match self.get(ev, f) {
            Some(FieldValue::Array(a)) => a.iter().filter_map(|v| v.as_u64()).map(|b| b as u8).collect(),
            _ => Vec::new(),
        }
    }

    /// Field `f` as the integers of a sequence (handles), empty when absent.
    pub fn u64s(&self, ev: &Event, f: F) -> Vec<u64> {
        match self.get(ev, f) {
            Some(FieldValue::Array(a)) => a.iter().filter_map(|v| v.as_u64()).collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_across_providers_and_versions() {
        assert_eq!(Kind::of("ros2:callback_start"), Some(Kind::CallbackStart));
        assert_eq!(Kind::of("ros2_caret:rcl_node_init"), Some(Kind::NodeInit));
        assert_eq!(Kind::of("ros2_hook:dds_write"), Some(Kind::DdsWrite));
        assert_eq!(Kind::of("ros2:dispatch_intra_process"), Some(Kind::DispatchIntra));
        assert_eq!(Kind::of("dds:write"), Some(Kind::DdsWrite));
        assert_eq!(Kind::of("sched_switch"), None);
        assert_eq!(Kind::of("lttng_ust_libc:malloc"), None);
        for name in ["ros2:message_link_periodic_async", "ros2:message_link_partial_sync"] {
            assert!(Kind::of(name).is_some_and(Kind::is_init), "{name}");
        }
    }
}
