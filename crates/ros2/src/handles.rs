//! The addresses that stand for one entity in the trace events.

/// Four distinct addresses owned by one Rust object, stable for its lifetime: the rclcpp-level
/// object, the rcl handle, the rmw handle and the callback. Addresses are unique within the process
/// while the object lives, like the C++ pointers `ros2_tracing` records.
pub(crate) struct Handles(Box<[u64; 4]>);

impl Handles {
    /// A fresh block of addresses.
    pub(crate) fn new() -> Handles {
        Handles(Box::new([0; 4]))
    }

    fn at(&self, i: usize) -> usize {
        &self.0[i] as *const u64 as usize
    }

    /// The rclcpp-level object (node, subscription, publisher).
    pub(crate) fn object(&self) -> usize {
        self.at(0)
    }

    /// The rcl handle.
    pub(crate) fn rcl(&self) -> usize {
        self.at(1)
    }

    /// The rmw handle.
    pub(crate) fn rmw(&self) -> usize {
        self.at(2)
    }

    /// The callback.
    pub(crate) fn callback(&self) -> usize {
        self.at(3)
    }
}
