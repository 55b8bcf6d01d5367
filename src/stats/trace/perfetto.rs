//! A minimal Perfetto protobuf writer of our own: varints and length-delimited fields for
//! the dozen messages a scheduling trace needs (no protobuf crate).
//!
//! Field numbers are those of Perfetto's `.proto` files (google/perfetto,
//! `protos/perfetto/trace/trace_packet.proto`, `system_info.proto`, `ps/process_tree.proto`,
//! `ftrace/ftrace_event_bundle.proto`, `ftrace/ftrace_event.proto`, `ftrace/sched.proto`,
//! `ftrace/ftrace.proto`). A trace file is a `Trace` message: a sequence of
//! `packet = 1` fields, so packets can be appended one at a time while the run goes on.
//!
//! Left out: `CompactSched` (the structure-of-arrays form of switch/waking events; it only
//! saves space), interning, track events.

use crate::units::usize_from_u64;

/// Protobuf wire types.
const WIRE_VARINT: u8 = 0;
const WIRE_LEN: u8 = 2;

/// `Trace.packet`.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket` fields.
pub mod packet {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const TIMESTAMP: u32 = 8;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const SYSTEM_INFO: u32 = 45;
}

/// `SystemInfo` / `Utsname` fields.
pub mod system_info {
    pub const UTSNAME: u32 = 1;
    pub const NUM_CPUS: u32 = 8;
    pub const UTS_SYSNAME: u32 = 1;
    pub const UTS_VERSION: u32 = 2;
    pub const UTS_RELEASE: u32 = 3;
    pub const UTS_MACHINE: u32 = 4;
}

/// `ProcessTree` fields (with its nested `Process` and `Thread`).
pub mod process_tree {
    pub const PROCESSES: u32 = 1;
    pub const THREADS: u32 = 2;
    pub const PROCESS_PID: u32 = 1;
    pub const PROCESS_PPID: u32 = 2;
    pub const PROCESS_CMDLINE: u32 = 3;
    pub const THREAD_TID: u32 = 1;
    pub const THREAD_NAME: u32 = 2;
    pub const THREAD_TGID: u32 = 3;
}

/// `FtraceEventBundle` and `FtraceEvent` fields, and the event payloads.
pub mod ftrace {
    pub const BUNDLE_CPU: u32 = 1;
    pub const BUNDLE_EVENT: u32 = 2;
    pub const EVENT_TIMESTAMP: u32 = 1;
    pub const EVENT_PID: u32 = 2;
    pub const EVENT_PRINT: u32 = 3;
    pub const EVENT_SCHED_SWITCH: u32 = 4;
    pub const EVENT_SCHED_WAKEUP: u32 = 17;
    pub const EVENT_SCHED_WAKING: u32 = 20;
    pub const EVENT_SCHED_WAKEUP_NEW: u32 = 114;
    pub const EVENT_SCHED_PROCESS_EXIT: u32 = 238;
    pub const EVENT_SCHED_MIGRATE_TASK: u32 = 491;
    /// `SchedSwitchFtraceEvent`.
    pub const SWITCH_PREV_COMM: u32 = 1;
    pub const SWITCH_PREV_PID: u32 = 2;
    pub const SWITCH_PREV_PRIO: u32 = 3;
    pub const SWITCH_PREV_STATE: u32 = 4;
    pub const SWITCH_NEXT_COMM: u32 = 5;
    pub const SWITCH_NEXT_PID: u32 = 6;
    pub const SWITCH_NEXT_PRIO: u32 = 7;
    /// `SchedWakingFtraceEvent`, `SchedWakeupFtraceEvent`, `SchedWakeupNewFtraceEvent`
    /// (one layout).
    pub const WAKE_COMM: u32 = 1;
    pub const WAKE_PID: u32 = 2;
    pub const WAKE_PRIO: u32 = 3;
    pub const WAKE_SUCCESS: u32 = 4;
    pub const WAKE_TARGET_CPU: u32 = 5;
    /// `SchedMigrateTaskFtraceEvent`.
    pub const MIGRATE_COMM: u32 = 1;
    pub const MIGRATE_PID: u32 = 2;
    pub const MIGRATE_PRIO: u32 = 3;
    pub const MIGRATE_ORIG_CPU: u32 = 4;
    pub const MIGRATE_DEST_CPU: u32 = 5;
    /// `SchedProcessExitFtraceEvent`.
    pub const EXIT_COMM: u32 = 1;
    pub const EXIT_PID: u32 = 2;
    pub const EXIT_TGID: u32 = 3;
    pub const EXIT_PRIO: u32 = 4;
    /// `PrintFtraceEvent`.
    pub const PRINT_BUF: u32 = 2;
}

/// One message being encoded: fields are appended in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Msg {
    pub buf: Vec<u8>,
}

/// Append `v` as a base-128 varint.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(((v & 0x7f) as u8) | 0x80);
        v >>= 7;
    }
    buf.push(u8::try_from(v).expect("below 0x80 after the loop"));
}

fn put_key(buf: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

impl Msg {
    pub fn new() -> Msg {
        Msg::default()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// `uint32`/`uint64`/`bool` field.
    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        put_key(&mut self.buf, field, WIRE_VARINT);
        put_varint(&mut self.buf, v);
        self
    }

    /// `int32`/`int64` field: negative values are sign-extended to 64 bits (10 bytes), as
    /// protobuf encodes them (not zig-zag, which is `sint`).
    pub fn int(&mut self, field: u32, v: i64) -> &mut Self {
        put_key(&mut self.buf, field, WIRE_VARINT);
        put_varint(&mut self.buf, v.cast_unsigned());
        self
    }

    /// `string`/`bytes` field.
    pub fn bytes(&mut self, field: u32, b: &[u8]) -> &mut Self {
        put_key(&mut self.buf, field, WIRE_LEN);
        put_varint(&mut self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
        self
    }

    pub fn string(&mut self, field: u32, s: &str) -> &mut Self {
        self.bytes(field, s.as_bytes())
    }

    /// Embedded message field.
    pub fn message(&mut self, field: u32, m: &Msg) -> &mut Self {
        self.bytes(field, &m.buf)
    }
}

/// A decoded field, for tests and for reading our own traces back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field<'a> {
    Varint(u64),
    Len(&'a [u8]),
}

/// Decode the top-level fields of one message (varint and length-delimited wire types only,
/// which is all this writer produces). `None` on malformed input.
pub fn decode(mut b: &[u8]) -> Option<Vec<(u32, Field<'_>)>> {
    fn varint(b: &mut &[u8]) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = b.split_first()?;
            *b = rest;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b)?;
        let field = u32::try_from(key >> 3).ok()?;
        match (key & 7) as u8 {
            WIRE_VARINT => out.push((field, Field::Varint(varint(&mut b)?))),
            WIRE_LEN => {
                let n = usize_from_u64(varint(&mut b)?);
                if n > b.len() {
                    return None;
                }
                let (data, rest) = b.split_at(n);
                b = rest;
                out.push((field, Field::Len(data)));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_protobuf_encoding_guide() {
        // The examples of the protobuf encoding documentation: 1 = 01, 150 = 96 01.
        let mut b = Vec::new();
        put_varint(&mut b, 1);
        assert_eq!(b, [0x01]);
        b.clear();
        put_varint(&mut b, 150);
        assert_eq!(b, [0x96, 0x01]);
        b.clear();
        put_varint(&mut b, u64::MAX);
        assert_eq!(b.len(), 10);
        // Field 1 = 150 encodes as 08 96 01; field 2 = "testing" as 12 07 74 65 73 74 69 6e 67.
        let mut m = Msg::new();
        m.uint(1, 150);
        assert_eq!(m.buf, [0x08, 0x96, 0x01]);
        let mut m = Msg::new();
        m.string(2, "testing");
        assert_eq!(
            m.buf,
            [0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67]
        );
    }

    #[test]
    fn negative_int32_is_ten_bytes_and_decodes_back() {
        let mut m = Msg::new();
        m.int(3, -1);
        assert_eq!(m.len(), 1 + 10);
        let f = decode(&m.buf).unwrap();
        assert_eq!(f, vec![(3, Field::Varint(u64::MAX))]);
        assert_eq!(
            match f[0].1 {
                Field::Varint(v) => v as i64,
                _ => 0,
            },
            -1
        );
    }

    #[test]
    fn nested_messages_round_trip() {
        let mut inner = Msg::new();
        inner.uint(1, 7).string(5, "hackbench");
        let mut outer = Msg::new();
        outer.message(4, &inner).uint(1, 300);
        let f = decode(&outer.buf).unwrap();
        assert_eq!(f.len(), 2);
        let Field::Len(b) = f[0].1 else {
            panic!("expected a message")
        };
        assert_eq!(
            decode(b).unwrap(),
            vec![(1, Field::Varint(7)), (5, Field::Len(b"hackbench"))]
        );
        assert_eq!(f[1], (1, Field::Varint(300)));
        assert!(decode(&[0x0a, 0x05, 0x01]).is_none(), "truncated length");
    }
}
