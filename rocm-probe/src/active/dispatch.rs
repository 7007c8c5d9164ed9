//! The AQL barrier-AND packet of `--dispatch`: what is written into a queue slot and in which
//! order. The smallest proof that a GPU's command processor runs work: no code object, no
//! memory allocation, only a queue, one packet and a completion signal.
//!
//! The HSA rule for publishing a packet (hsa.h, "Packet header"; ROCR samples' `LaunchPacket`):
//! write the whole packet with its header saying INVALID, then store the real header with
//! release order, so the packet processor never sees a valid header over a half-written body;
//! only then ring the doorbell with the packet's index.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU16, Ordering};

use hsakmt_sys::hsa::{
    HSA_FENCE_SCOPE_SYSTEM, HSA_PACKET_HEADER_BARRIER, HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
    HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE, HSA_PACKET_HEADER_TYPE, HSA_PACKET_TYPE_BARRIER_AND,
    HSA_PACKET_TYPE_INVALID, hsa_barrier_and_packet_t, hsa_signal_t,
};

/// The header of the barrier-AND packet: type BARRIER_AND, the barrier bit (it completes after
/// everything before it), acquire and release fences at system scope.
pub const fn barrier_and_header() -> u16 {
    ((HSA_PACKET_TYPE_BARRIER_AND as u16) << HSA_PACKET_HEADER_TYPE)
        | (1 << HSA_PACKET_HEADER_BARRIER)
        | ((HSA_FENCE_SCOPE_SYSTEM as u16) << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | ((HSA_FENCE_SCOPE_SYSTEM as u16) << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)
}

/// The header a slot carries until the packet is published.
pub const INVALID_HEADER: u16 = (HSA_PACKET_TYPE_INVALID as u16) << HSA_PACKET_HEADER_TYPE;

/// The packet body as first written: INVALID header, no dependencies (handle 0 counts as
/// satisfied), `completion` decremented by the packet processor when the barrier completes.
pub fn barrier_and_body(completion: hsa_signal_t) -> hsa_barrier_and_packet_t {
    hsa_barrier_and_packet_t {
        header: INVALID_HEADER,
        completion_signal: completion,
        ..Default::default()
    }
}

/// Where a packet is written: the two steps of publishing, in the order [`publish`] uses.
pub trait PacketSlot {
    /// Writes all 64 bytes; the header is [`INVALID_HEADER`].
    fn write_body(&mut self, body: &hsa_barrier_and_packet_t);
    /// Stores the 16-bit header with release order.
    fn store_header_release(&mut self, header: u16);
}

/// Publishes a barrier-AND packet into `slot`: body first, header last with release order.
pub fn publish(slot: &mut impl PacketSlot, completion: hsa_signal_t) {
    slot.write_body(&barrier_and_body(completion));
    slot.store_header_release(barrier_and_header());
}

/// A slot of a live queue's ring buffer.
#[derive(Debug)]
pub struct QueueSlot {
    ptr: *mut hsa_barrier_and_packet_t,
}

impl QueueSlot {
    /// # Safety
    /// `ptr` must point at a 64-byte, 64-aligned AQL slot of a live queue that this process
    /// reserved (by advancing the queue's write index) and that nothing else writes until the
    /// packet is published.
    pub unsafe fn new(ptr: *mut hsa_barrier_and_packet_t) -> Self {
        Self { ptr }
    }
}

impl PacketSlot for QueueSlot {
    fn write_body(&mut self, body: &hsa_barrier_and_packet_t) {
        // SAFETY: `ptr` is a reserved, aligned slot (`QueueSlot::new`'s contract); a volatile
        // write because the packet processor, not Rust, reads it.
        unsafe { std::ptr::write_volatile(self.ptr, *body) };
    }

    fn store_header_release(&mut self, header: u16) {
        // SAFETY: the header is the slot's first, 2-aligned u16 (the slot is 64-aligned) and is
        // accessed atomically by the packet processor too; no Rust reference to it exists.
        let atomic = unsafe { AtomicU16::from_ptr(self.ptr.cast::<u16>()) };
        atomic.store(header, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// A slot in ordinary memory that records the order of the writes.
    struct Recording {
        bytes: [u8; 64],
        steps: Vec<&'static str>,
    }

    impl PacketSlot for Recording {
        fn write_body(&mut self, body: &hsa_barrier_and_packet_t) {
            // SAFETY: hsa_barrier_and_packet_t is 64 bytes of plain integers.
            let raw: [u8; 64] = unsafe { std::mem::transmute(*body) };
            self.bytes = raw;
            self.steps.push("body");
        }

        fn store_header_release(&mut self, header: u16) {
            self.bytes[..2].copy_from_slice(&header.to_le_bytes());
            self.steps.push("header");
        }
    }

    #[test]
    fn the_packet_layout_is_hsa_h_s() {
        assert_eq!(size_of::<hsa_barrier_and_packet_t>(), 64);
        assert_eq!(offset_of!(hsa_barrier_and_packet_t, header), 0);
        assert_eq!(offset_of!(hsa_barrier_and_packet_t, dep_signal), 8);
        assert_eq!(offset_of!(hsa_barrier_and_packet_t, completion_signal), 56);
    }

    #[test]
    fn header_bits() {
        let h = barrier_and_header();
        assert_eq!(h & 0xff, 3, "type BARRIER_AND in bits 0-7");
        assert_eq!((h >> 8) & 1, 1, "barrier bit 8");
        assert_eq!((h >> 9) & 3, 2, "acquire fence scope SYSTEM in bits 9-10");
        assert_eq!((h >> 11) & 3, 2, "release fence scope SYSTEM in bits 11-12");
        assert_eq!(h, 0x1503);
        assert_eq!(INVALID_HEADER, 1);
    }

    #[test]
    fn the_header_is_written_last_and_the_bytes_are_right() {
        let mut slot = Recording {
            bytes: [0xAA; 64],
            steps: Vec::new(),
        };
        publish(
            &mut slot,
            hsa_signal_t {
                handle: 0x1122_3344_5566_7788,
            },
        );
        assert_eq!(slot.steps, ["body", "header"]);
        assert_eq!(&slot.bytes[..2], &0x1503u16.to_le_bytes());
        // Reserved fields and the five dependency signals are zero.
        assert!(slot.bytes[2..56].iter().all(|b| *b == 0));
        assert_eq!(&slot.bytes[56..], &0x1122_3344_5566_7788u64.to_le_bytes());
    }

    /// The live slot writer on an aligned buffer in memory: same bytes as the recording one.
    #[test]
    fn the_queue_slot_writes_the_same_bytes() {
        #[repr(C, align(64))]
        struct Aligned(hsa_barrier_and_packet_t);
        let mut buf = Aligned(hsa_barrier_and_packet_t::default());
        // SAFETY: `buf` is a 64-aligned packet that nothing else touches during the test.
        let mut slot = unsafe { QueueSlot::new(&mut buf.0) };
        publish(&mut slot, hsa_signal_t { handle: 42 });
        assert_eq!(buf.0.header, 0x1503);
        assert_eq!(buf.0.completion_signal.handle, 42);
        assert!(buf.0.dep_signal.iter().all(|s| s.handle == 0));
    }
}
