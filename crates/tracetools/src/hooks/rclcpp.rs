//! rclcpp's executors and callback groups, by their mangled symbols, as CARET hooks them
//! (tier4/caret_trace `CARET_trace/src/hooked_trace_points.cpp`; its `ROS_DISTRO_JAZZY` branch
//! for Jazzy, which rclcpp 29 (Kilted) and Rolling keep: `Executor::collector_` and
//! `ExecutorEntitiesCollector::add_callback_group_to_collection` are unchanged there).
//!
//! | symbol (demangled) | distros | event |
//! |---|---|---|
//! | `executors::SingleThreadedExecutor::SingleThreadedExecutor(ExecutorOptions const&)` | all | `construct_executor` |
//! | `executors::MultiThreadedExecutor::MultiThreadedExecutor(ExecutorOptions const&, unsigned long, bool, std::chrono::nanoseconds)` | all | `construct_executor` |
//! | `executors::StaticSingleThreadedExecutor::StaticSingleThreadedExecutor(ExecutorOptions const&)` | all | `construct_static_executor` |
//! | `Executor::add_callback_group_to_map(shared_ptr<CallbackGroup>, shared_ptr<NodeBaseInterface>, WeakCallbackGroupsToNodesMap&, bool)` | Humble, Iron | `add_callback_group` |
//! | `executors::StaticExecutorEntitiesCollector::add_callback_group(shared_ptr<CallbackGroup>, shared_ptr<NodeBaseInterface>, WeakCallbackGroupsToNodesMap&)` | Humble, Iron | `add_callback_group_static_executor` |
//! | `Executor::Executor(ExecutorOptions const&)` (C2) | Jazzy+ | `executor_entity_collector_to_executor` |
//! | `executors::ExecutorEntitiesCollector::add_callback_group_to_collection(shared_ptr<CallbackGroup>, CallbackGroupCollection&)` | Jazzy+ | `callback_group_to_executor_entity_collector` |
//! | `CallbackGroup::add_timer / add_subscription / add_service / add_client(shared_ptr<…>)` | all | `callback_group_add_*` |
//!
//! Where CARET reads a private member through a copy of rclcpp's class layout (the executor's
//! entities collector), rostrace needs no layout: since Jazzy the collector is the
//! `ExecutorEntitiesCollector` constructed (hooked: `ExecutorEntitiesCollector(shared_ptr<ExecutorNotifyWaitable>)`)
//! inside the executor object during its constructor; before Jazzy it is the object the executor
//! points to whose virtual table is `StaticExecutorEntitiesCollector`'s, found by reading the
//! executor's first words with `process_vm_readv` (which fails instead of faulting).
//! Handles come from rclcpp's public getters (`TimerBase::get_timer_handle()`, …), called
//! through `rostrace_shared_get` (C++, `shared_get.cpp`: they return a `std::shared_ptr`).
//!
//! Arguments passed as `std::shared_ptr` by value arrive as a pointer to the caller's object
//! (the Itanium C++ ABI passes non-trivial classes by invisible reference, and the caller
//! destroys them): a hook hands the same pointer on, so the call is exactly the original one.

use super::{backend_on, init_timestamp, symbol, Original};
use std::cell::Cell;
use std::ffi::{c_void, CStr};

extern "C" {
    /// Calls `getter` (a member function returning `std::shared_ptr<T>` by value) on `object`
    /// and returns the raw pointer (the object keeps its own reference).
    fn rostrace_shared_get(getter: *const c_void, object: *mut c_void) -> *const c_void;
}

/// The raw pointer a `std::shared_ptr` (passed by invisible reference) holds.
unsafe fn shared(sp: *const *mut c_void) -> *mut c_void {
    if sp.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: not null: the caller's `std::shared_ptr`, whose first word is the raw pointer
        // (libstdc++'s layout), alive for the hooked call.
        unsafe { *sp }
    }
}

/// `object->getter()` for a getter returning a `std::shared_ptr`; 0 when rclcpp has no such symbol.
unsafe fn handle(getter: &CStr, object: *mut c_void) -> usize {
    match symbol(getter) {
        // SAFETY: `g` is rclcpp's getter of `object`'s class (the caller names the one of its
        // entity), `object` a live entity of that class.
        Some(g) if !object.is_null() => unsafe { rostrace_shared_get(g, object) as usize },
        _ => 0,
    }
}

/// `CallbackGroup::type()`'s name as CARET records it.
unsafe fn group_type(group: *mut c_void) -> &'static [u8] {
    let Some(f) = symbol(c"_ZNK6rclcpp13CallbackGroup4typeEv") else { return b"unknown" };
    if group.is_null() {
        return b"unknown";
    }
    // SAFETY: `const rclcpp::CallbackGroupType & rclcpp::CallbackGroup::type() const`: it returns
    // a reference (a pointer) to the group's type, an enum class (int).
    let t = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void) -> *const i32>(f)(group) };
    if t.is_null() {
        return b"unknown";
    }
    // SAFETY: a reference to a member of the live group.
    match unsafe { *t } {
        0 => b"mutually_exclusive",
        1 => b"reentrant",
        _ => b"unknown",
    }
}

macro_rules! orig {
    ($o:expr, $t:ty) => {
        // SAFETY: the real function has this signature (the hook's own).
        $o.get().map(|f| unsafe { std::mem::transmute::<*mut c_void, $t>(f) })
    };
}

// --- executors ---------------------------------------------------------------------------

static SINGLE: Original = Original::new(c"_ZN6rclcpp9executors22SingleThreadedExecutorC1ERKNS_15ExecutorOptionsE");
static MULTI: Original = Original::new(
    c"_ZN6rclcpp9executors21MultiThreadedExecutorC1ERKNS_15ExecutorOptionsEmbNSt6chrono8durationIlSt5ratioILl1ELl1000000000EEEE",
);
static STATIC: Original =
    Original::new(c"_ZN6rclcpp9executors28StaticSingleThreadedExecutorC1ERKNS_15ExecutorOptionsE");
static EXECUTOR_C2: Original = Original::new(c"_ZN6rclcpp8ExecutorC2ERKNS_15ExecutorOptionsE");
static COLLECTOR_C1: Original =
    Original::new(c"_ZN6rclcpp9executors25ExecutorEntitiesCollectorC1ESt10shared_ptrINS0_22ExecutorNotifyWaitableEE");

thread_local! {
    /// The `ExecutorEntitiesCollector` this thread constructed last (Jazzy+).
    static COLLECTOR: Cell<usize> = const { Cell::new(0) };
}

/// Whether the object at `member` lies inside the one at `object` (a member of it: within the
/// first 4 KiB, more than any rclcpp executor's size).
fn member_of(member: usize, object: usize) -> bool {
    member > object && member < object + 4096
}

/// The collector constructed inside `executor` during its constructor (Jazzy+: a member of
/// `rclcpp::Executor`, CARET's `&collector_`), or, before Jazzy, the
/// `StaticExecutorEntitiesCollector` it points to; 0 if none.
fn collector_of(executor: *mut c_void) -> usize {
    let c = COLLECTOR.try_with(|c| c.replace(0)).unwrap_or(0);
    if member_of(c, executor as usize) {
        return c;
    }
    static_collector(executor).unwrap_or(0)
}

/// Reads `out.len()` bytes at `addr` of this process; false when unmapped.
fn read_memory(addr: usize, out: &mut [u8]) -> bool {
    let local = libc::iovec { iov_base: out.as_mut_ptr() as *mut c_void, iov_len: out.len() };
    let remote = libc::iovec { iov_base: addr as *mut c_void, iov_len: out.len() };
    // SAFETY: both vectors are valid; the kernel checks the remote range.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n == out.len() as isize
}

/// Before Jazzy: the object `executor` points to (within its first 128 words) whose virtual
/// table pointer is `StaticExecutorEntitiesCollector`'s (`_ZTV…` + 2 words).
fn static_collector(executor: *mut c_void) -> Option<usize> {
    let vtable = symbol(c"_ZTVN6rclcpp9executors31StaticExecutorEntitiesCollectorE")? as usize + 16;
    let mut words = [0u8; 1024];
    // The executor may be smaller than 1 KiB: read as much as is mapped, word by word at the end.
    let mut n = words.len();
    while n > 0 && !read_memory(executor as usize, &mut words[..n]) {
        n = n.saturating_sub(256);
    }
    words[..n].chunks_exact(8).skip(1).find_map(|w| {
        let p = usize::from_ne_bytes(w.try_into().ok()?);
        let mut v = [0u8; 8];
        (p != 0 && p % 8 == 0 && read_memory(p, &mut v) && usize::from_ne_bytes(v) == vtable).then_some(p)
    })
}

fn construct_executor(obj: *mut c_void, kind: &[u8], now: i64) {
    crate::ffi::guard(|| crate::api::ros2_caret_construct_executor(obj as usize, kind, now));
}

/// `SingleThreadedExecutor::SingleThreadedExecutor(ExecutorOptions const&)` (C1).
///
/// # Safety
/// Called as that constructor.
#[export_name = "_ZN6rclcpp9executors22SingleThreadedExecutorC1ERKNS_15ExecutorOptionsE"]
pub unsafe extern "C" fn single_threaded_executor(obj: *mut c_void, options: *const c_void) {
    let now = init_timestamp();
    if let Some(f) = orig!(SINGLE, unsafe extern "C" fn(*mut c_void, *const c_void)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, options) };
    }
    if backend_on() {
        construct_executor(obj, b"single_threaded_executor", now);
    }
}

/// `MultiThreadedExecutor::MultiThreadedExecutor(ExecutorOptions const&, size_t, bool, std::chrono::nanoseconds)` (C1).
///
/// # Safety
/// Called as that constructor.
#[export_name = "_ZN6rclcpp9executors21MultiThreadedExecutorC1ERKNS_15ExecutorOptionsEmbNSt6chrono8durationIlSt5ratioILl1ELl1000000000EEEE"]
pub unsafe extern "C" fn multi_threaded_executor(
    obj: *mut c_void,
    options: *const c_void,
    threads: usize,
    yield_before_execute: bool,
    timeout: i64,
) {
    let now = init_timestamp();
    if let Some(f) = orig!(MULTI, unsafe extern "C" fn(*mut c_void, *const c_void, usize, bool, i64)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, options, threads, yield_before_execute, timeout) };
    }
    if backend_on() {
        construct_executor(obj, b"multi_threaded_executor", now);
    }
}

/// `StaticSingleThreadedExecutor::StaticSingleThreadedExecutor(ExecutorOptions const&)` (C1).
///
/// # Safety
/// Called as that constructor.
#[export_name = "_ZN6rclcpp9executors28StaticSingleThreadedExecutorC1ERKNS_15ExecutorOptionsE"]
pub unsafe extern "C" fn static_single_threaded_executor(obj: *mut c_void, options: *const c_void) {
    let now = init_timestamp();
    if let Some(f) = orig!(STATIC, unsafe extern "C" fn(*mut c_void, *const c_void)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, options) };
    }
    if backend_on() {
        crate::ffi::guard(|| {
            let collector = collector_of(obj);
            crate::api::ros2_caret_construct_static_executor(
                obj as usize,
                collector,
                b"static_single_threaded_executor",
                now,
            );
        });
    }
}

/// Jazzy+: `Executor::Executor(ExecutorOptions const&)` (C2, the base of every executor).
///
/// # Safety
/// Called as that constructor.
#[export_name = "_ZN6rclcpp8ExecutorC2ERKNS_15ExecutorOptionsE"]
pub unsafe extern "C" fn executor_base(obj: *mut c_void, options: *const c_void) {
    let now = init_timestamp();
    if let Some(f) = orig!(EXECUTOR_C2, unsafe extern "C" fn(*mut c_void, *const c_void)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, options) };
    }
    if backend_on() {
        crate::ffi::guard(|| {
            let c = COLLECTOR.try_with(|c| c.get()).unwrap_or(0);
            if member_of(c, obj as usize) {
                crate::api::ros2_caret_executor_entity_collector_to_executor(obj as usize, c, now);
            }
        });
    }
}

/// Jazzy+: `executors::ExecutorEntitiesCollector::ExecutorEntitiesCollector(shared_ptr<ExecutorNotifyWaitable>)`
/// (C1): remembers the collector for the executor constructor around it.
///
/// # Safety
/// Called as that constructor.
#[export_name = "_ZN6rclcpp9executors25ExecutorEntitiesCollectorC1ESt10shared_ptrINS0_22ExecutorNotifyWaitableEE"]
pub unsafe extern "C" fn executor_entities_collector(obj: *mut c_void, notify: *mut c_void) {
    if let Some(f) = orig!(COLLECTOR_C1, unsafe extern "C" fn(*mut c_void, *mut c_void)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, notify) };
    }
    let _ = COLLECTOR.try_with(|c| c.set(obj as usize));
}

// --- callback groups and executors ---------------------------------------------------------

static ADD_TO_MAP: Original = Original::new(
    c"_ZN6rclcpp8Executor25add_callback_group_to_mapESt10shared_ptrINS_13CallbackGroupEES1_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS2_ES8_IS5_ESt10owner_lessIS9_ESaISt4pairIKS9_SA_EEEb",
);
static STATIC_ADD: Original = Original::new(
    c"_ZN6rclcpp9executors31StaticExecutorEntitiesCollector18add_callback_groupESt10shared_ptrINS_13CallbackGroupEES2_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS3_ES9_IS6_ESt10owner_lessISA_ESaISt4pairIKSA_SB_EEE",
);
static ADD_TO_COLLECTION: Original = Original::new(
    c"_ZN6rclcpp9executors25ExecutorEntitiesCollector32add_callback_group_to_collectionESt10shared_ptrINS_13CallbackGroupEERSt3setISt8weak_ptrIS3_ESt10owner_lessIS7_ESaIS7_EE",
);

/// Humble, Iron: `Executor::add_callback_group_to_map(...)`.
///
/// # Safety
/// Called as that member function.
#[export_name = "_ZN6rclcpp8Executor25add_callback_group_to_mapESt10shared_ptrINS_13CallbackGroupEES1_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS2_ES8_IS5_ESt10owner_lessIS9_ESaISt4pairIKS9_SA_EEEb"]
pub unsafe extern "C" fn add_callback_group_to_map(
    obj: *mut c_void,
    group: *const *mut c_void,
    node: *const *mut c_void,
    map: *mut c_void,
    notify: bool,
) {
    let now = init_timestamp();
    // SAFETY: `group` is the caller's `std::shared_ptr<CallbackGroup>` (or null), alive for the call.
    let g = unsafe { shared(group) };
    if let Some(f) =
        orig!(ADD_TO_MAP, unsafe extern "C" fn(*mut c_void, *const *mut c_void, *const *mut c_void, *mut c_void, bool))
    {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, group, node, map, notify) };
    }
    if backend_on() {
        // SAFETY: `g` is the caller's group (or null), which its `shared_ptr` keeps alive.
        let kind = unsafe { group_type(g) };
        crate::ffi::guard(|| crate::api::ros2_caret_add_callback_group(obj as usize, g as usize, kind, now));
    }
}

/// Humble, Iron: `executors::StaticExecutorEntitiesCollector::add_callback_group(...)`.
///
/// # Safety
/// Called as that member function.
#[export_name = "_ZN6rclcpp9executors31StaticExecutorEntitiesCollector18add_callback_groupESt10shared_ptrINS_13CallbackGroupEES2_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS3_ES9_IS6_ESt10owner_lessISA_ESaISt4pairIKSA_SB_EEE"]
pub unsafe extern "C" fn static_add_callback_group(
    obj: *mut c_void,
    group: *const *mut c_void,
    node: *const *mut c_void,
    map: *mut c_void,
) -> bool {
    let now = init_timestamp();
    // SAFETY: `group` is the caller's `std::shared_ptr<CallbackGroup>` (or null), alive for the call.
    let g = unsafe { shared(group) };
    let ret = match orig!(
        STATIC_ADD,
        unsafe extern "C" fn(*mut c_void, *const *mut c_void, *const *mut c_void, *mut c_void) -> bool
    ) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        Some(f) => unsafe { f(obj, group, node, map) },
        None => false,
    };
    if backend_on() {
        // SAFETY: `g` is the caller's group (or null), which its `shared_ptr` keeps alive.
        let kind = unsafe { group_type(g) };
        crate::ffi::guard(|| {
            crate::api::ros2_caret_add_callback_group_static_executor(obj as usize, g as usize, kind, now)
        });
    }
    ret
}

/// Jazzy+: `executors::ExecutorEntitiesCollector::add_callback_group_to_collection(...)`.
///
/// # Safety
/// Called as that member function.
#[export_name = "_ZN6rclcpp9executors25ExecutorEntitiesCollector32add_callback_group_to_collectionESt10shared_ptrINS_13CallbackGroupEERSt3setISt8weak_ptrIS3_ESt10owner_lessIS7_ESaIS7_EE"]
pub unsafe extern "C" fn add_callback_group_to_collection(
    obj: *mut c_void,
    group: *const *mut c_void,
    collection: *mut c_void,
) {
    let now = init_timestamp();
    // SAFETY: `group` is the caller's `std::shared_ptr<CallbackGroup>` (or null), alive for the call.
    let g = unsafe { shared(group) };
    if let Some(f) = orig!(ADD_TO_COLLECTION, unsafe extern "C" fn(*mut c_void, *const *mut c_void, *mut c_void)) {
        // SAFETY: the real function, called with the arguments this hook was called with.
        unsafe { f(obj, group, collection) };
    }
    if backend_on() {
        // SAFETY: `g` is the caller's group (or null), which its `shared_ptr` keeps alive.
        let kind = unsafe { group_type(g) };
        crate::ffi::guard(|| {
            crate::api::ros2_caret_callback_group_to_executor_entity_collector(obj as usize, g as usize, kind, now)
        });
    }
}

// --- entities of a callback group ------------------------------------------------------------

macro_rules! group_add {
    ($fn:ident, $sym:literal, $getter:literal, $event:ident) => {
        /// `CallbackGroup::add_*(std::shared_ptr<…>)`: the entity's rcl handle, through its getter.
        ///
        /// # Safety
        /// Called as that member function.
        #[export_name = $sym]
        pub unsafe extern "C" fn $fn(obj: *mut c_void, entity: *const *mut c_void) {
            static ORIG: Original = Original::new(
                // SAFETY: a literal without NUL inside.
                unsafe { CStr::from_bytes_with_nul_unchecked(concat!($sym, "\0").as_bytes()) },
            );
            let now = init_timestamp();
            // SAFETY: `entity` is the caller's `std::shared_ptr` to an entity of the getter's
            // class, alive for the call.
            let h = if backend_on() { unsafe { handle($getter, shared(entity)) } } else { 0 };
            if let Some(f) = orig!(ORIG, unsafe extern "C" fn(*mut c_void, *const *mut c_void)) {
                // SAFETY: the real function, called with the arguments this hook was called with.
                unsafe { f(obj, entity) };
            }
            if backend_on() {
                crate::ffi::guard(|| crate::api::$event(obj as usize, h, now));
            }
        }
    };
}

group_add!(
    callback_group_add_timer,
    "_ZN6rclcpp13CallbackGroup9add_timerESt10shared_ptrINS_9TimerBaseEE",
    c"_ZN6rclcpp9TimerBase16get_timer_handleEv",
    ros2_caret_callback_group_add_timer
);
group_add!(
    callback_group_add_subscription,
    "_ZN6rclcpp13CallbackGroup16add_subscriptionESt10shared_ptrINS_16SubscriptionBaseEE",
    c"_ZN6rclcpp16SubscriptionBase23get_subscription_handleEv",
    ros2_caret_callback_group_add_subscription
);
group_add!(
    callback_group_add_service,
    "_ZN6rclcpp13CallbackGroup11add_serviceESt10shared_ptrINS_11ServiceBaseEE",
    c"_ZN6rclcpp11ServiceBase18get_service_handleEv",
    ros2_caret_callback_group_add_service
);
group_add!(
    callback_group_add_client,
    "_ZN6rclcpp13CallbackGroup10add_clientESt10shared_ptrINS_10ClientBaseEE",
    c"_ZN6rclcpp10ClientBase17get_client_handleEv",
    ros2_caret_callback_group_add_client
);

/// Every hooked rclcpp symbol, for tests and the README.
pub const SYMBOLS: &[&str] = &[
    "_ZN6rclcpp9executors22SingleThreadedExecutorC1ERKNS_15ExecutorOptionsE",
    "_ZN6rclcpp9executors21MultiThreadedExecutorC1ERKNS_15ExecutorOptionsEmbNSt6chrono8durationIlSt5ratioILl1ELl1000000000EEEE",
    "_ZN6rclcpp9executors28StaticSingleThreadedExecutorC1ERKNS_15ExecutorOptionsE",
    "_ZN6rclcpp8ExecutorC2ERKNS_15ExecutorOptionsE",
    "_ZN6rclcpp9executors25ExecutorEntitiesCollectorC1ESt10shared_ptrINS0_22ExecutorNotifyWaitableEE",
    "_ZN6rclcpp8Executor25add_callback_group_to_mapESt10shared_ptrINS_13CallbackGroupEES1_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS2_ES8_IS5_ESt10owner_lessIS9_ESaISt4pairIKS9_SA_EEEb",
    "_ZN6rclcpp9executors31StaticExecutorEntitiesCollector18add_callback_groupESt10shared_ptrINS_13CallbackGroupEES2_INS_15node_interfaces17NodeBaseInterfaceEERSt3mapISt8weak_ptrIS3_ES9_IS6_ESt10owner_lessISA_ESaISt4pairIKSA_SB_EEE",
    "_ZN6rclcpp9executors25ExecutorEntitiesCollector32add_callback_group_to_collectionESt10shared_ptrINS_13CallbackGroupEERSt3setISt8weak_ptrIS3_ESt10owner_lessIS7_ESaIS7_EE",
    "_ZN6rclcpp13CallbackGroup9add_timerESt10shared_ptrINS_9TimerBaseEE",
    "_ZN6rclcpp13CallbackGroup16add_subscriptionESt10shared_ptrINS_16SubscriptionBaseEE",
    "_ZN6rclcpp13CallbackGroup11add_serviceESt10shared_ptrINS_11ServiceBaseEE",
    "_ZN6rclcpp13CallbackGroup10add_clientESt10shared_ptrINS_10ClientBaseEE",
];
