//! A single-threaded executor, traced like rclcpp's: `rclcpp_executor_wait_for_work` before waiting,
//! `rclcpp_executor_get_next_ready` when looking for work, `rclcpp_executor_execute` before each callback.
//! Creating one and adding nodes to it emit CARET's executor and callback-group events (see `caret.rs`).

use crate::entity::{Timer, Waitable};
use crate::handles::Handles;
use crate::node::Node;
use crate::Result;
use ros2_client::dds::rustdds::mio1::{Events, Poll, Token};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracetools::api;

/// Longest wait without looking at the stop flag.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Runs the callbacks of the nodes added to it on the calling thread.
pub struct Executor {
    poll: Poll,
    events: Events,
    nodes: Vec<Node>,
    waitables: Vec<Box<dyn Waitable>>,
    ready: Vec<bool>,
    timers: Vec<Timer>,
    next_waitable: usize,
    stop: Arc<AtomicBool>,
    /// The executor's address (`object()`) and its entities collector's (`rcl()`) in CARET's events.
    handles: Handles,
}

impl Executor {
    /// An executor with no nodes.
    pub fn new() -> Result<Executor> {
        let handles = Handles::new();
        crate::caret::executor_created(handles.object(), handles.rcl());
        Ok(Executor {
            poll: Poll::new()?,
            events: Events::with_capacity(64),
            nodes: Vec::new(),
            waitables: Vec::new(),
            ready: Vec::new(),
            timers: Vec::new(),
            next_waitable: 0,
            stop: Arc::new(AtomicBool::new(false)),
            handles,
        })
    }

    /// Adds a node: its subscriptions, services, clients and timers run from now on.
    pub fn add_node(&mut self, mut node: Node) -> Result<()> {
        crate::caret::group_added(self.handles.object(), self.handles.rcl(), node.callback_group());
        for mut w in node.waitables.drain(..) {
            w.register(self.poll.registry(), Token(self.waitables.len()))?;
            self.waitables.push(w);
            // Data may have arrived before registration: look once.
            self.ready.push(true);
        }
        self.timers.append(&mut node.timers);
        self.nodes.push(node);
        Ok(())
    }

    /// A flag that makes [`spin_until`](Executor::spin_until) return when set (from any thread or a signal handler's thread).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Runs callbacks for `duration`.
    pub fn spin_for(&mut self, duration: Duration) {
        self.spin_until(Some(Instant::now() + duration));
    }

    /// Runs callbacks until `deadline` (forever if `None`) or until the stop flag is set.
    pub fn spin_until(&mut self, deadline: Option<Instant>) {
        while !self.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            api::rclcpp_executor_get_next_ready();
            if let Some(i) = self.due_timer(now) {
                api::rclcpp_executor_execute(self.timers[i].handle());
                self.timers[i].execute(now);
                continue;
            }
            if let Some(i) = self.next_ready() {
                api::rclcpp_executor_execute(self.waitables[i].handle());
                self.waitables[i].execute();
                continue;
            }
            let mut wait = MAX_WAIT;
            if let Some(next) = self.timers.iter().map(|t| t.next).min() {
                wait = wait.min(next.saturating_duration_since(now));
            }
            if let Some(d) = deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            api::rclcpp_executor_wait_for_work(wait.as_nanos() as i64);
            if self.poll.poll(&mut self.events, Some(wait)).is_err() {
                // Interrupted: look again.
                continue;
            }
            for e in self.events.iter() {
                if let Some(r) = self.ready.get_mut(e.token().0) {
                    *r = true;
                }
            }
        }
    }

    /// The timer most overdue, if any is due.
    fn due_timer(&self, now: Instant) -> Option<usize> {
        self.timers.iter().enumerate().filter(|(_, t)| t.next <= now).min_by_key(|(_, t)| t.next).map(|(i, _)| i)
    }

    /// The next waitable with a sample staged, round robin.
    fn next_ready(&mut self) -> Option<usize> {
        let n = self.waitables.len();
        for k in 0..n {
            let i = (self.next_waitable + k) % n;
            if !self.ready[i] {
                continue;
            }
            if self.waitables[i].stage() {
                self.next_waitable = (i + 1) % n;
                return Some(i);
            }
            self.ready[i] = false;
        }
        None
    }

    /// Read errors per entity (samples that could not be taken or decoded), for entities that had any.
    pub fn read_errors(&self) -> Vec<(String, u64)> {
        self.waitables.iter().filter(|w| w.errors() > 0).map(|w| (w.what(), w.errors())).collect()
    }

    /// The nodes added so far.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
}
