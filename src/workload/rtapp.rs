//! rt-app JSON import: the file grammar of scheduler-tools/rt-app (`doc/tutorial.txt`,
//! `src/rt-app_parse_config.c`) turned into a typed [`RtAppSpec`] the engine can run.
//!
//! **Reading the file.** rt-app uses json-c, which accepts C comments and trailing commas; real
//! files use both. We blank those out (keeping line/column positions for error messages) and
//! then read the text with serde_json through a visitor that keeps object members *in file
//! order and with duplicates* ([`JsonValue::Object`] is a `Vec` of pairs): events run in key
//! order, and hand-written files (e.g. the tutorial's example 5, browser/mp3 use cases) repeat
//! keys such as `"run"` in one object. A repeated *task name* is an error (json-c would drop
//! the first task). Keeping duplicates in order is what rt-app's `workgen`
//! preprocessor produces (it renames them `run1`, `run2`, ...); raw json-c would instead keep
//! only the last value at the first position. For scalar keys (`loop`, `instance`...) the last
//! occurrence wins, as with json-c.
//!
//! **Semantics kept from rt-app.** Events are recognised by key *prefix* in rt-app's order
//! (`runtime7` is a runtime event, `sleep_long` a sleep). A task without `phases` is one
//! implicit phase that runs `loop` times (then the task ends; forever without `loop`); with
//! `phases`, each phase runs its own `loop` (default 1) and the phase list repeats task-`loop`
//! times (default forever). Phase `loop` ≤ 0 never matches rt-app's equality test, so it means
//! forever. Instance k of task X is thread `X-<global index>`, indexes counted over all tasks
//! in file order. Types are strict, as rt-app's `assure_type_is` makes them.
//!
//! **What is refused.** Events the simulator cannot model — `iorun` (a block device) and
//! `memrun` (a memory-system model) — are listed by name in one [`InputError`]; nothing is
//! silently dropped. Unknown non-event keys in tasks and phases are errors listing the accepted
//! keys (rt-app would ignore them, but they are nearly always typos). Unknown *global* keys
//! (old files carry `"frag"`) and the legacy top-level `"resources"` are accepted and reported
//! in [`RtAppSpec::ignored_keys`]; a resource there must have a type rt-app accepts
//! ([`RESOURCE_TYPES`]), as rt-app stops on any other.

use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::{InputError, InputResult};

// ---------------------------------------------------------------------------------------------
// Order-preserving JSON.

/// A JSON value whose objects keep member order and duplicate keys.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<JsonValue>),
    Object(Vec<(String, JsonValue)>),
}

impl JsonValue {
    fn type_name(&self) -> &'static str {
        match self {
            JsonValue::Null => "null",
            JsonValue::Bool(_) => "boolean",
            JsonValue::Int(_) => "int",
            JsonValue::Float(_) => "double",
            JsonValue::Str(_) => "string",
            JsonValue::Array(_) => "array",
            JsonValue::Object(_) => "object",
        }
    }

    /// The last member named `key` (json-c semantics for repeated scalar keys).
    pub fn get(&self, key: &str) -> Option<&JsonValue> {
        match self {
            JsonValue::Object(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<JsonValue, E> {
                Ok(JsonValue::Null)
            }
            fn visit_none<E>(self) -> Result<JsonValue, E> {
                Ok(JsonValue::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<JsonValue, E> {
                Ok(JsonValue::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<JsonValue, E> {
                Ok(JsonValue::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<JsonValue, E> {
                Ok(i64::try_from(v)
                    .map(JsonValue::Int)
                    .unwrap_or(JsonValue::Float(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<JsonValue, E> {
                Ok(JsonValue::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonValue, E> {
                Ok(JsonValue::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<JsonValue, E> {
                Ok(JsonValue::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<JsonValue, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(JsonValue::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<JsonValue, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, JsonValue>()? {
                    v.push((k, x));
                }
                Ok(JsonValue::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Blank out `/* */` and `//` comments and trailing commas (before `}` or `]`), outside string
/// literals, replacing them with spaces so positions in error messages stay right.
fn strip_json_c_extensions(text: &str) -> Result<String, String> {
    let mut out = blank_comments(text.as_bytes())?;
    blank_trailing_commas(&mut out);
    // Only ASCII bytes were replaced by ASCII spaces, so this stays valid UTF-8.
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// First pass: `/* */` and `//` comments outside strings become spaces (newlines kept, so
/// line numbers in later errors stay right).
fn blank_comments(b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = b.to_vec();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                if i + 1 >= b.len() {
                    return Err("unterminated /* comment".into());
                }
                i += 2;
                for x in &mut out[start..i] {
                    if *x != b'\n' {
                        *x = b' ';
                    }
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// Second pass: a comma outside strings followed (after white space) by `}` or `]` becomes
/// a space.
fn blank_trailing_commas(out: &mut [u8]) {
    let mut in_str = false;
    let mut i = 0;
    while i < out.len() {
        let c = out[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == b',' {
            let mut j = i + 1;
            while j < out.len() && out[j].is_ascii_whitespace() {
                j += 1;
            }
            if j < out.len() && (out[j] == b'}' || out[j] == b']') {
                out[i] = b' ';
            }
        }
        i += 1;
    }
}

/// Parse json-c flavoured JSON (comments, trailing commas) keeping member order.
pub fn parse_json_c(text: &str, origin: &str) -> InputResult<JsonValue> {
    let clean = strip_json_c_extensions(text).map_err(|m| InputError::new(origin, m))?;
    let mut de = serde_json::Deserializer::from_str(&clean);
    let v = JsonValue::deserialize(&mut de)
        .map_err(|e| InputError::new(origin, format!("invalid JSON: {e}")))?;
    de.end()
        .map_err(|e| InputError::new(origin, format!("invalid JSON: {e}")))?;
    Ok(v)
}

// ---------------------------------------------------------------------------------------------
// The typed description.

/// A scheduling policy as rt-app names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RtAppPolicy {
    #[serde(rename = "SCHED_OTHER")]
    Other,
    #[serde(rename = "SCHED_BATCH")]
    Batch,
    #[serde(rename = "SCHED_IDLE")]
    Idle,
    #[serde(rename = "SCHED_RR")]
    Rr,
    #[serde(rename = "SCHED_FIFO")]
    Fifo,
    #[serde(rename = "SCHED_DEADLINE")]
    Deadline,
}

impl RtAppPolicy {
    const ALL: [RtAppPolicy; 6] = [
        RtAppPolicy::Other,
        RtAppPolicy::Batch,
        RtAppPolicy::Idle,
        RtAppPolicy::Rr,
        RtAppPolicy::Fifo,
        RtAppPolicy::Deadline,
    ];

    /// The kernel's name of the policy (`include/uapi/linux/sched.h`), as rt-app writes it.
    pub fn kernel_name(self) -> &'static str {
        match self {
            RtAppPolicy::Other => "SCHED_OTHER",
            RtAppPolicy::Batch => "SCHED_BATCH",
            RtAppPolicy::Idle => "SCHED_IDLE",
            RtAppPolicy::Rr => "SCHED_RR",
            RtAppPolicy::Fifo => "SCHED_FIFO",
            RtAppPolicy::Deadline => "SCHED_DEADLINE",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.kernel_name() == s)
    }

    /// Fair-class policies, whose `priority` is a nice value.
    pub fn is_fair(self) -> bool {
        matches!(
            self,
            RtAppPolicy::Other | RtAppPolicy::Batch | RtAppPolicy::Idle
        )
    }
}

/// Scheduling parameters of a task or a phase.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SchedParams {
    /// None at phase level = keep the current policy ("same").
    pub policy: Option<RtAppPolicy>,
    /// `priority`: the nice value for fair policies, the RT priority for FIFO/RR; None = keep.
    pub priority: Option<i32>,
    pub dl_runtime_us: u64,
    pub dl_period_us: u64,
    pub dl_deadline_us: u64,
    /// `util_min`/`util_max` (0..=1024); None = unchanged.
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
}

/// `calibration`: which CPU to calibrate on, or the ns-per-loop value directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Calibration {
    Cpu(u32),
    NsPerLoop(u32),
}

/// `log_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LogSize {
    /// Per-thread buffer of N MB.
    Mb(u32),
    /// Write through the file system (`"file"`, `"auto"`, or absent).
    File,
    /// `"disable"`.
    Disabled,
}

/// The `global` object, with rt-app's defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RtAppGlobal {
    /// Seconds; None = −1 (run until every thread finishes).
    pub duration_s: Option<u32>,
    pub calibration: Calibration,
    pub default_policy: RtAppPolicy,
    pub pi_enabled: bool,
    pub lock_pages: bool,
    pub logdir: String,
    pub log_basename: String,
    pub log_size: LogSize,
    /// Enabled ftrace categories (main, task, loop, event, stats); empty = none.
    pub ftrace: Vec<String>,
    pub gnuplot: bool,
    pub io_device: String,
    pub mem_buffer_size: u64,
    pub cumulative_slack: bool,
}

impl Default for RtAppGlobal {
    fn default() -> Self {
        RtAppGlobal {
            duration_s: None,
            calibration: Calibration::Cpu(0),
            default_policy: RtAppPolicy::Other,
            pi_enabled: false,
            lock_pages: true,
            logdir: "./".into(),
            log_basename: "rt-app".into(),
            log_size: LogSize::File,
            ftrace: Vec::new(),
            gnuplot: false,
            io_device: "/dev/null".into(),
            mem_buffer_size: 4 * 1024 * 1024,
            cumulative_slack: false,
        }
    }
}

/// `timer` `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum TimerMode {
    /// When late, the next expiry restarts from now (default).
    Relative,
    /// When late, keep the original schedule.
    Absolute,
}

/// One event of a phase, in file order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Event {
    /// `run`: a fixed amount of work, calibrated as µs on the calibration CPU; takes longer on
    /// slower CPUs or when preempted.
    Run {
        work_us: u64,
    },
    /// `runtime`: spin until this much wall-clock time has passed (preemption counts).
    Runtime {
        wall_us: u64,
    },
    /// `sleep`: relative sleep.
    Sleep {
        us: u64,
    },
    /// `timer`: absolute periodic wakeup; `unique` (ref starting with "unique") = one timer per
    /// thread, else shared by every thread naming `reference`.
    Timer {
        reference: String,
        unique: bool,
        period_us: u64,
        mode: TimerMode,
    },
    Lock {
        mutex: String,
    },
    Unlock {
        mutex: String,
    },
    /// `pthread_cond_wait(cond, mutex)`.
    Wait {
        cond: String,
        mutex: String,
    },
    /// `pthread_cond_signal` — lost if nobody waits.
    Signal {
        cond: String,
    },
    /// `pthread_cond_broadcast`.
    Broad {
        cond: String,
    },
    /// Signal `cond`, then wait on it.
    Sync {
        cond: String,
        mutex: String,
    },
    /// Wait until every referencing thread arrives.
    Barrier {
        name: String,
    },
    /// Wait on the condition named after the task itself (the value is ignored by rt-app).
    Suspend {
        value: Option<String>,
    },
    /// Broadcast the condition named after `task`.
    Resume {
        task: String,
    },
    SemPost {
        sem: String,
    },
    SemWait {
        sem: String,
    },
    Yield,
    /// memset of this many bytes into the per-thread buffer.
    Mem {
        bytes: u64,
    },
    /// Start a new thread from `task`'s template.
    Fork {
        task: String,
    },
}

/// One phase: its events run in order, `loop_count` times (None = forever).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Phase {
    pub name: String,
    pub loop_count: Option<u64>,
    pub events: Vec<Event>,
    /// Phase affinity (overrides the task's while the phase runs).
    pub cpus: Option<CpuMask>,
    /// Phase scheduling change, if any key was given.
    pub sched: Option<SchedParams>,
    pub taskgroup: Option<String>,
}

/// One task (a thread template, started `instances` times).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RtAppTask {
    pub name: String,
    /// 0 = only started by `fork` events.
    pub instances: u32,
    /// Iterations of the phase list (None = forever; Some(0) = never runs).
    pub loop_count: Option<u64>,
    pub cpus: Option<CpuMask>,
    pub policy: RtAppPolicy,
    /// The nice value for fair policies (`priority`, default 0).
    pub nice: Option<i32>,
    /// The RT priority for FIFO/RR (`priority`, default 10).
    pub rt_priority: Option<i32>,
    pub sched: SchedParams,
    pub delay_us: u64,
    pub taskgroup: Option<String>,
    pub phases: Vec<Phase>,
}

/// One thread created at start: task index, global index, and its name `task-index`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RtAppThread {
    pub task: usize,
    pub index: u32,
    pub name: String,
}

/// A whole rt-app file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RtAppSpec {
    pub global: RtAppGlobal,
    pub tasks: Vec<RtAppTask>,
    /// Keys accepted for rt-app compatibility but without effect (unknown global keys, the
    /// legacy top-level `resources`), as dotted paths.
    pub ignored_keys: Vec<String>,
}

impl RtAppSpec {
    /// The threads started at time 0, instance by instance in file order (`X-0`, `X-1`, `Y-2`).
    pub fn threads(&self) -> Vec<RtAppThread> {
        let mut out = Vec::new();
        let mut ind = 0u32;
        for (ti, t) in self.tasks.iter().enumerate() {
            for _ in 0..t.instances {
                out.push(RtAppThread {
                    task: ti,
                    index: ind,
                    name: format!("{}-{ind}", t.name),
                });
                ind += 1;
            }
        }
        out
    }

    /// Threads started at time 0.
    pub fn nr_threads(&self) -> u64 {
        self.tasks.iter().map(|t| u64::from(t.instances)).sum()
    }

    /// Index of the task named `name`.
    pub fn task_index(&self, name: &str) -> Option<usize> {
        self.tasks.iter().position(|t| t.name == name)
    }

    /// Arrivals a barrier waits for: for every event referencing it, the instances of its task
    /// (rt-app adds `num_instances` per reference).
    pub fn barrier_participants(&self, barrier: &str) -> u64 {
        let mut n = 0;
        for t in &self.tasks {
            for p in &t.phases {
                for e in &p.events {
                    if matches!(e, Event::Barrier { name } if name == barrier) {
                        n += u64::from(t.instances);
                    }
                }
            }
        }
        n
    }
}

impl RtAppTask {
    /// Phase iterations one thread runs in total (None = unbounded).
    pub fn phase_iterations(&self) -> Option<u64> {
        let per_pass: Option<u64> = self.phases.iter().map(|p| p.loop_count).sum();
        match (self.loop_count, per_pass) {
            (Some(0), _) => Some(0),
            (Some(l), Some(p)) => Some(l * p),
            _ => None,
        }
    }

    /// Events one thread executes in total (None = unbounded).
    pub fn event_count(&self) -> Option<u64> {
        if self.loop_count == Some(0) {
            return Some(0);
        }
        let per_pass: Option<u64> = self
            .phases
            .iter()
            .map(|p| p.loop_count.map(|l| l * p.events.len() as u64))
            .sum();
        Some(self.loop_count? * per_pass?)
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing.

/// Event names the simulator models, for error messages.
pub const MODELLED_EVENTS: &[&str] = &[
    "run", "runtime", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "sync",
    "barrier", "suspend", "resume", "sem_post", "sem_wait", "yield", "mem", "fork",
];

/// Events rt-app has but the simulator does not model.
pub const UNMODELLED_EVENTS: &[&str] = &["iorun", "memrun"];

const SCHED_KEYS: &[&str] = &[
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "taskgroup",
    "cpus",
    "nodes_membind",
];
const TASK_ONLY_KEYS: &[&str] = &["instance", "loop", "delay", "phases", "period", "deadline"];
const PHASE_ONLY_KEYS: &[&str] = &["loop"];
const GLOBAL_KEYS: &[&str] = &[
    "duration",
    "calibration",
    "default_policy",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];

/// rt-app's event classes, recognised by key prefix in rt-app's own test order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EvClass {
    Run,
    Runtime,
    Sleep,
    Memrun,
    Mem,
    Iorun,
    Lock,
    Unlock,
    Signal,
    Broad,
    Wait,
    Sync,
    Barrier,
    Timer,
    Resume,
    Suspend,
    Yield,
    Fork,
    SemPost,
    SemWait,
}

fn classify(key: &str) -> Option<EvClass> {
    let s = |p: &str| key.starts_with(p);
    Some(if s("run") || s("sleep") {
        if s("sleep") {
            EvClass::Sleep
        } else if s("runtime") {
            EvClass::Runtime
        } else {
            EvClass::Run
        }
    } else if s("memrun") {
        EvClass::Memrun
    } else if s("mem") {
        EvClass::Mem
    } else if s("iorun") {
        EvClass::Iorun
    } else if s("lock") {
        EvClass::Lock
    } else if s("unlock") {
        EvClass::Unlock
    } else if s("signal") {
        EvClass::Signal
    } else if s("broad") {
        EvClass::Broad
    } else if s("wait") {
        EvClass::Wait
    } else if s("sync") {
        EvClass::Sync
    } else if s("barrier") {
        EvClass::Barrier
    } else if s("timer") {
        EvClass::Timer
    } else if s("resume") {
        EvClass::Resume
    } else if s("suspend") {
        EvClass::Suspend
    } else if s("yield") {
        EvClass::Yield
    } else if s("fork") {
        EvClass::Fork
    } else if s("sem_post") {
        EvClass::SemPost
    } else if s("sem_wait") {
        EvClass::SemWait
    } else {
        return None;
    })
}

struct Ctx<'a> {
    origin: &'a str,
    nr_cpus: usize,
    unmodelled: Vec<String>,
    ignored: Vec<String>,
}

impl Ctx<'_> {
    fn err(&self, key: &str, msg: impl Into<String>) -> InputError {
        InputError::with_key(self.origin, key, msg)
    }

    fn type_err(&self, key: &str, want: &str, got: &JsonValue) -> InputError {
        self.err(
            key,
            format!(
                "Invalid type for key: expected {want}, found {}",
                got.type_name()
            ),
        )
    }

    fn int(&self, obj: &JsonValue, key: &str, path: &str) -> InputResult<Option<i64>> {
        match obj.get(key) {
            None => Ok(None),
            Some(JsonValue::Int(i)) => Ok(Some(*i)),
            Some(v) => Err(self.type_err(&format!("{path}.{key}"), "int", v)),
        }
    }

    fn bool(&self, obj: &JsonValue, key: &str, path: &str) -> InputResult<Option<bool>> {
        match obj.get(key) {
            None => Ok(None),
            Some(JsonValue::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.type_err(&format!("{path}.{key}"), "boolean", v)),
        }
    }

    fn string(&self, obj: &JsonValue, key: &str, path: &str) -> InputResult<Option<String>> {
        match obj.get(key) {
            None | Some(JsonValue::Null) => Ok(None),
            Some(JsonValue::Str(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.type_err(&format!("{path}.{key}"), "string", v)),
        }
    }

    fn cpus(&self, obj: &JsonValue, path: &str) -> InputResult<Option<CpuMask>> {
        let key = format!("{path}.cpus");
        match obj.get("cpus") {
            None => Ok(None),
            Some(JsonValue::Array(items)) => {
                let mut m = CpuMask::new();
                for it in items {
                    match it {
                        JsonValue::Int(c)
                            if *c >= 0 && (*c as usize) < self.nr_cpus.min(NR_CPUS_MAX) =>
                        {
                            m.set(*c as usize)
                        }
                        JsonValue::Int(c) => {
                            return Err(self.err(
                                &key,
                                format!(
                                    "Invalid cpu {c}: the machine has CPUs 0-{}",
                                    self.nr_cpus.saturating_sub(1)
                                ),
                            ));
                        }
                        v => return Err(self.type_err(&key, "array of int", v)),
                    }
                }
                Ok(Some(m))
            }
            Some(v) => Err(self.type_err(&key, "array", v)),
        }
    }

    /// `parse_sched_data`: `default_policy` is None at phase level ("same").
    fn sched(
        &self,
        obj: &JsonValue,
        path: &str,
        default_policy: Option<RtAppPolicy>,
    ) -> InputResult<SchedParams> {
        let policy = self.sched_policy(obj, path, default_policy)?;
        let priority = self.sched_priority(obj, path, policy)?;
        let (runtime, period, deadline) = self.sched_dl_us(obj, path, default_policy.is_some())?;
        let clamp = |k: &str| -> InputResult<Option<u32>> {
            match self.int(obj, k, path)? {
                None | Some(-1) => Ok(None),
                Some(v) if (0..=1024).contains(&v) => Ok(Some(v as u32)),
                Some(v) => {
                    Err(self.err(&format!("{path}.{k}"), format!("Invalid {k} {v} (0..1024)")))
                }
            }
        };
        Ok(SchedParams {
            policy,
            priority,
            dl_runtime_us: runtime,
            dl_period_us: period,
            dl_deadline_us: deadline,
            util_min: clamp("util_min")?,
            util_max: clamp("util_max")?,
        })
    }

    /// The policy: the object's own `policy`, else `global.default_policy` (then errors name
    /// that key); SCHED_DEADLINE is refused (no deadline class for tasks).
    fn sched_policy(
        &self,
        obj: &JsonValue,
        path: &str,
        default_policy: Option<RtAppPolicy>,
    ) -> InputResult<Option<RtAppPolicy>> {
        let own_policy = self.string(obj, "policy", path)?;
        let policy_key = match (&own_policy, default_policy) {
            (None, Some(_)) => "global.default_policy".to_string(),
            _ => format!("{path}.policy"),
        };
        let policy = match own_policy {
            Some(p) => Some(RtAppPolicy::parse(&p).ok_or_else(|| {
                self.err(
                    &format!("{path}.policy"),
                    format!("Invalid policy {p}; accepted: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR, SCHED_FIFO, SCHED_DEADLINE"),
                )
            })?),
            None => default_policy,
        };
        if policy == Some(RtAppPolicy::Deadline) {
            return Err(self.err(
                &policy_key,
                "SCHED_DEADLINE is not modelled (schedlab has no deadline class for tasks); \
                 accepted: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR, SCHED_FIFO",
            ));
        }
        Ok(policy)
    }

    /// `priority`: a nice value for the fair policies, an RT priority for FIFO/RR (whose
    /// default is 10), checked as `sched_setattr()` would (EINVAL, and rt-app stops).
    fn sched_priority(
        &self,
        obj: &JsonValue,
        path: &str,
        policy: Option<RtAppPolicy>,
    ) -> InputResult<Option<i32>> {
        let prio_default = match policy {
            None => None,
            Some(p) if p.is_fair() => Some(0),
            Some(RtAppPolicy::Fifo | RtAppPolicy::Rr) => Some(10),
            Some(_) => Some(0),
        };
        let given_priority = self.int(obj, "priority", path)?;
        if let (Some(v), Some(p)) = (given_priority, policy) {
            let (lo, hi, what) = if p.is_fair() {
                (-20, 19, "a nice value")
            } else {
                (1, 99, "an RT priority")
            };
            if !(lo..=hi).contains(&v) {
                return Err(self.err(
                    &format!("{path}.priority"),
                    format!(
                        "{v} is out of range for {}; accepted: {what} from {lo} to {hi}",
                        p.kernel_name()
                    ),
                ));
            }
        }
        Ok(given_priority.map(|v| v as i32).or(prio_default))
    }

    /// `dl-runtime`, `dl-period`, `dl-deadline` in µs (each defaulting to the one before);
    /// at task level (`legacy`) also the old names `runtime`, `period`, `deadline` (a
    /// task-level "runtime" is also a runtime event, as in rt-app).
    fn sched_dl_us(
        &self,
        obj: &JsonValue,
        path: &str,
        legacy: bool,
    ) -> InputResult<(u64, u64, u64)> {
        let us = |k: &str| -> InputResult<Option<u64>> {
            match self.int(obj, k, path)? {
                Some(v) if v < 0 => {
                    Err(self.err(&format!("{path}.{k}"), "must not be negative (µs)"))
                }
                Some(v) => Ok(Some(v as u64)),
                None => Ok(None),
            }
        };
        let mut runtime = us("dl-runtime")?.unwrap_or(0);
        let mut period = us("dl-period")?.unwrap_or(runtime);
        let mut deadline = us("dl-deadline")?.unwrap_or(period);
        if legacy {
            if runtime == 0
                && let Some(JsonValue::Int(v)) = obj.get("runtime")
            {
                runtime = (*v).max(0) as u64;
            }
            if period == 0 {
                period = us("period")?.unwrap_or(runtime);
            }
            if deadline == 0 {
                deadline = us("deadline")?.unwrap_or(period);
            }
        }
        Ok((runtime, period, deadline))
    }

    fn event(
        &mut self,
        class: EvClass,
        key: &str,
        v: &JsonValue,
        path: &str,
    ) -> InputResult<Option<Event>> {
        let kpath = format!("{path}.{key}");
        let mismatch = |this: &Self| this.event_mismatch(&kpath, key, v);
        let int = |this: &Self| -> InputResult<u64> {
            match v {
                JsonValue::Int(i) if *i >= 0 => Ok(*i as u64),
                JsonValue::Int(_) => Err(this.err(&kpath, "must not be negative")),
                _ => Err(mismatch(this)),
            }
        };
        let string = |this: &Self| -> InputResult<String> {
            match v {
                JsonValue::Str(s) => Ok(s.clone()),
                _ => Err(mismatch(this)),
            }
        };
        Ok(Some(match class {
            EvClass::Run => Event::Run {
                work_us: int(self)?,
            },
            EvClass::Runtime => Event::Runtime {
                wall_us: int(self)?,
            },
            EvClass::Sleep => Event::Sleep { us: int(self)? },
            EvClass::Mem => Event::Mem { bytes: int(self)? },
            EvClass::Iorun | EvClass::Memrun => {
                self.unmodelled.push(kpath);
                return Ok(None);
            }
            EvClass::Lock => Event::Lock {
                mutex: string(self)?,
            },
            EvClass::Unlock => Event::Unlock {
                mutex: string(self)?,
            },
            EvClass::Signal => Event::Signal {
                cond: string(self)?,
            },
            EvClass::Broad => Event::Broad {
                cond: string(self)?,
            },
            EvClass::Wait | EvClass::Sync => self.wait_event(class, key, v, &kpath)?,
            EvClass::Barrier => Event::Barrier {
                name: string(self)?,
            },
            EvClass::Timer => self.timer_event(key, v, &kpath)?,
            EvClass::Resume => Event::Resume {
                task: string(self)?,
            },
            EvClass::Suspend => Event::Suspend {
                value: match v {
                    JsonValue::Str(s) => Some(s.clone()),
                    _ => None,
                },
            },
            EvClass::Yield => Event::Yield,
            EvClass::Fork => Event::Fork {
                task: string(self)?,
            },
            EvClass::SemPost => Event::SemPost { sem: string(self)? },
            EvClass::SemWait => Event::SemWait { sem: string(self)? },
        }))
    }

    /// The error for an event whose value has the wrong JSON type.
    fn event_mismatch(&self, kpath: &str, key: &str, v: &JsonValue) -> InputError {
        self.err(
            kpath,
            format!(
                "Unknown or mismatch {key} event type ({} value)",
                v.type_name()
            ),
        )
    }

    /// A `wait` or `sync` event: `{"ref": condition, "mutex": name}`.
    fn wait_event(
        &self,
        class: EvClass,
        key: &str,
        v: &JsonValue,
        kpath: &str,
    ) -> InputResult<Event> {
        if !matches!(v, JsonValue::Object(_)) {
            return Err(self.event_mismatch(kpath, key, v));
        }
        let obj_str = |k: &str| -> InputResult<String> {
            Ok(self
                .string(v, k, kpath)?
                .unwrap_or_else(|| "unknown".to_string()))
        };
        let cond = obj_str("ref")?;
        let mutex = obj_str("mutex")?;
        Ok(if class == EvClass::Wait {
            Event::Wait { cond, mutex }
        } else {
            Event::Sync { cond, mutex }
        })
    }

    /// A `timer` event: `{"ref": name, "period": µs > 0, "mode": "relative"|"absolute"}`.
    fn timer_event(&self, key: &str, v: &JsonValue, kpath: &str) -> InputResult<Event> {
        if !matches!(v, JsonValue::Object(_)) {
            return Err(self.event_mismatch(kpath, key, v));
        }
        let obj_str = |k: &str, def: &str| -> InputResult<String> {
            Ok(self.string(v, k, kpath)?.unwrap_or_else(|| def.to_string()))
        };
        let reference = obj_str("ref", "unknown")?;
        let period = self.int(v, "period", kpath)?.unwrap_or(0);
        if period <= 0 {
            return Err(self.err(
                &format!("{kpath}.period"),
                format!("{period}: a timer needs a period; accepted: microseconds > 0"),
            ));
        }
        let mode = obj_str("mode", "relative")?;
        Ok(Event::Timer {
            unique: reference.starts_with("unique"),
            reference,
            period_us: period as u64,
            mode: if mode.starts_with("absolute") {
                TimerMode::Absolute
            } else {
                TimerMode::Relative
            },
        })
    }

    /// `parse_task_phase_data`: events (in order) plus phase-level keys.
    fn phase(
        &mut self,
        obj: &JsonValue,
        name: &str,
        path: &str,
        task_level: bool,
    ) -> InputResult<Phase> {
        let JsonValue::Object(members) = obj else {
            return Err(self.type_err(path, "object", obj));
        };
        let mut events = Vec::new();
        let mut n_events = 0;
        for (k, v) in members {
            if let Some(class) = classify(k) {
                n_events += 1;
                if let Some(e) = self.event(class, k, v, path)? {
                    events.push(e);
                }
            } else {
                let ok = SCHED_KEYS.contains(&k.as_str())
                    || PHASE_ONLY_KEYS.contains(&k.as_str())
                    || (task_level && TASK_ONLY_KEYS.contains(&k.as_str()));
                if !ok {
                    return Err(self.unknown_phase_key(path, k, task_level));
                }
            }
        }
        if n_events == 0 {
            return Err(self.err(
                path,
                "No events found. Task must have events or it's useless",
            ));
        }
        let loop_count = match self.int(obj, "loop", path)? {
            None => Some(1),
            Some(l) if l > 0 => Some(l as u64),
            // rt-app's `phase_loop == loop` never holds for loop <= 0: runs forever.
            Some(_) => None,
        };
        Ok(Phase {
            name: name.to_string(),
            loop_count,
            events,
            cpus: self.cpus(obj, path)?,
            sched: if task_level {
                None
            } else {
                self.phase_sched(obj, path)?
            },
            taskgroup: self.string(obj, "taskgroup", path)?,
        })
    }

    /// The error for a key a phase (or a task used as its own phase) does not accept.
    fn unknown_phase_key(&self, path: &str, k: &str, task_level: bool) -> InputError {
        let mut accepted: Vec<&str> = SCHED_KEYS.to_vec();
        accepted.extend(if task_level {
            TASK_ONLY_KEYS
        } else {
            PHASE_ONLY_KEYS
        });
        let mut all = accepted.clone();
        all.extend(MODELLED_EVENTS);
        self.err(
            &format!("{path}.{k}"),
            format!(
                "unknown key{}; accepted: {} and events ({})",
                crate::input::did_you_mean(k, &all),
                accepted.join(", "),
                MODELLED_EVENTS.join(", ")
            ),
        )
    }

    /// A phase's own scheduling parameters, when it sets any.
    fn phase_sched(&self, obj: &JsonValue, path: &str) -> InputResult<Option<SchedParams>> {
        let s = self.sched(obj, path, None)?;
        let any = s.policy.is_some()
            || s.priority.is_some()
            || s.dl_runtime_us > 0
            || s.dl_period_us > 0
            || s.util_min.is_some()
            || s.util_max.is_some();
        Ok(any.then_some(s))
    }

    fn task(
        &mut self,
        name: &str,
        obj: &JsonValue,
        global: &RtAppGlobal,
    ) -> InputResult<RtAppTask> {
        let path = format!("tasks.{name}");
        if !matches!(obj, JsonValue::Object(_)) {
            return Err(self.type_err(&path, "object", obj));
        }
        let sched = self.sched(obj, &path, Some(global.default_policy))?;
        let policy = sched.policy.unwrap_or(global.default_policy);
        let instances = self.task_instances(obj, &path)?;
        let delay_us = match self.int(obj, "delay", &path)? {
            None => 0,
            Some(d) if d >= 0 => d as u64,
            Some(_) => return Err(self.err(&format!("{path}.delay"), "must not be negative (µs)")),
        };
        let (phases, loop_count) = self.task_phases(name, obj, &path)?;
        let fair = policy.is_fair();
        Ok(RtAppTask {
            name: name.to_string(),
            instances,
            loop_count,
            cpus: self.cpus(obj, &path)?,
            policy,
            nice: if fair { sched.priority } else { None },
            rt_priority: if matches!(policy, RtAppPolicy::Fifo | RtAppPolicy::Rr) {
                sched.priority
            } else {
                None
            },
            taskgroup: self.string(obj, "taskgroup", &path)?,
            sched,
            delay_us,
            phases,
        })
    }

    /// A task's `instance` count: 1 by default, at most `MAX_RTAPP_INSTANCES`.
    fn task_instances(&self, obj: &JsonValue, path: &str) -> InputResult<u32> {
        match self.int(obj, "instance", path)? {
            None => Ok(1),
            Some(i) if i >= 0 && i as u64 <= crate::input::limits::MAX_RTAPP_INSTANCES => {
                Ok(i as u32)
            }
            Some(i) if i >= 0 => Err(self.err(
                &format!("{path}.instance"),
                format!(
                    "{i} instances is above the limit of {} (accepted: 0 to {0})",
                    crate::input::limits::MAX_RTAPP_INSTANCES
                ),
            )),
            Some(i) => Err(self.err(
                &format!("{path}.instance"),
                format!("Invalid num_instances value: {i}"),
            )),
        }
    }

    /// A task's phases and loop count: its `phases` object, or the task itself as its one
    /// phase (with `loop`, that phase runs `loop` times once; without, forever).
    fn task_phases(
        &mut self,
        name: &str,
        obj: &JsonValue,
        path: &str,
    ) -> InputResult<(Vec<Phase>, Option<u64>)> {
        match obj.get("phases") {
            Some(JsonValue::Object(ph)) => {
                self.check_keys_beside_phases(obj, path)?;
                let mut phases = Vec::new();
                for (pname, pobj) in ph {
                    phases.push(self.phase(
                        pobj,
                        pname,
                        &format!("{path}.phases.{pname}"),
                        false,
                    )?);
                }
                if phases.is_empty() {
                    return Err(self.err(&format!("{path}.phases"), "no phases"));
                }
                let l = self.int(obj, "loop", path)?.unwrap_or(-1);
                Ok((phases, if l < 0 { None } else { Some(l as u64) }))
            }
            Some(v) => Err(self.type_err(&format!("{path}.phases"), "object", v)),
            None => {
                let ph = self.phase(obj, name, path, true)?;
                let has_loop = obj.get("loop").is_some();
                Ok((vec![ph], if has_loop { Some(1) } else { None }))
            }
        }
    }

    /// Beside `phases`, a task's keys are still checked for typos; events there would be
    /// ignored by rt-app, which we refuse rather than drop.
    fn check_keys_beside_phases(&self, obj: &JsonValue, path: &str) -> InputResult<()> {
        let JsonValue::Object(members) = obj else {
            return Ok(());
        };
        for (k, _) in members {
            if classify(k).is_some() {
                return Err(self.err(
                    &format!("{path}.{k}"),
                    "event outside `phases` in a task that has `phases` (rt-app ignores it)",
                ));
            }
            if !SCHED_KEYS.contains(&k.as_str()) && !TASK_ONLY_KEYS.contains(&k.as_str()) {
                let all: Vec<&str> = SCHED_KEYS.iter().chain(TASK_ONLY_KEYS).copied().collect();
                return Err(self.err(
                    &format!("{path}.{k}"),
                    format!(
                        "unknown key{}; accepted: {}, {}",
                        crate::input::did_you_mean(k, &all),
                        SCHED_KEYS.join(", "),
                        TASK_ONLY_KEYS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn global(&mut self, g: Option<&JsonValue>) -> InputResult<RtAppGlobal> {
        let mut out = RtAppGlobal::default();
        let Some(g) = g else { return Ok(out) };
        let JsonValue::Object(members) = g else {
            return Err(self.type_err("global", "object", g));
        };
        for (k, _) in members {
            if !GLOBAL_KEYS.contains(&k.as_str()) {
                let p = format!("global.{k}");
                if !self.ignored.contains(&p) {
                    self.ignored.push(p);
                }
            }
        }
        let p = "global";
        if let Some(d) = self.int(g, "duration", p)? {
            out.duration_s = if d < 0 {
                None
            } else {
                Some(d.min(i64::from(u32::MAX)) as u32)
            };
        }
        if let Some(v) = self.bool(g, "gnuplot", p)? {
            out.gnuplot = v;
        }
        if let Some(s) = self.string(g, "default_policy", p)? {
            out.default_policy = RtAppPolicy::parse(&s)
                .ok_or_else(|| self.err("global.default_policy", format!("Invalid policy {s}")))?;
        }
        self.global_calibration(g, &mut out)?;
        self.global_log_size(g, &mut out)?;
        if let Some(s) = self.string(g, "logdir", p)? {
            out.logdir = s;
        }
        if let Some(s) = self.string(g, "log_basename", p)? {
            out.log_basename = s;
        }
        self.global_ftrace(g, &mut out)?;
        if let Some(v) = self.bool(g, "lock_pages", p)? {
            out.lock_pages = v;
        }
        if let Some(v) = self.bool(g, "pi_enabled", p)? {
            out.pi_enabled = v;
        }
        if let Some(s) = self.string(g, "io_device", p)? {
            out.io_device = s;
        }
        if let Some(v) = self.int(g, "mem_buffer_size", p)? {
            if v <= 0 {
                return Err(self.err("global.mem_buffer_size", "must be positive"));
            }
            out.mem_buffer_size = v as u64;
        }
        if let Some(v) = self.bool(g, "cumulative_slack", p)? {
            out.cumulative_slack = v;
        }
        Ok(out)
    }

    /// `global.calibration`: "CPUn" or a number of ns per loop.
    fn global_calibration(&self, g: &JsonValue, out: &mut RtAppGlobal) -> InputResult<()> {
        match g.get("calibration") {
            None => {}
            Some(JsonValue::Int(ns)) if *ns >= 0 => {
                out.calibration = Calibration::NsPerLoop(*ns as u32)
            }
            Some(JsonValue::Str(s)) => {
                let cpu = s
                    .strip_prefix("CPU")
                    .and_then(|n| n.parse::<u32>().ok())
                    .ok_or_else(|| {
                        self.err(
                            "global.calibration",
                            format!("Invalid calibration '{s}' (\"CPUn\" or ns per loop)"),
                        )
                    })?;
                if cpu as usize >= self.nr_cpus {
                    return Err(self.err("global.calibration", format!("CPU{cpu} does not exist")));
                }
                out.calibration = Calibration::Cpu(cpu);
            }
            Some(v) => return Err(self.type_err("global.calibration", "\"CPUn\" or int", v)),
        }
        Ok(())
    }

    /// `global.log_size`: a number of MB, `file`, `auto` or `disable`.
    fn global_log_size(&self, g: &JsonValue, out: &mut RtAppGlobal) -> InputResult<()> {
        match g.get("log_size") {
            None => {}
            Some(JsonValue::Int(mb)) if *mb >= 0 => out.log_size = LogSize::Mb(*mb as u32),
            Some(JsonValue::Str(s)) => {
                out.log_size =
                    match s.as_str() {
                        "disable" => LogSize::Disabled,
                        "file" | "auto" => LogSize::File,
                        _ => return Err(self.err(
                            "global.log_size",
                            format!(
                                "unknown log_size '{s}'; accepted: MB count, file, auto, disable"
                            ),
                        )),
                    }
            }
            Some(v) => return Err(self.type_err("global.log_size", "int or string", v)),
        }
        Ok(())
    }

    /// `global.ftrace`: true/false, or a comma-separated list of categories.
    fn global_ftrace(&self, g: &JsonValue, out: &mut RtAppGlobal) -> InputResult<()> {
        match g.get("ftrace") {
            None => {}
            Some(JsonValue::Bool(b)) => {
                out.ftrace = if *b {
                    ["main", "task", "loop", "event", "stats"]
                        .map(String::from)
                        .to_vec()
                } else {
                    Vec::new()
                };
            }
            Some(JsonValue::Str(s)) => {
                for cat in s.split(',').filter(|c| !c.is_empty()) {
                    let c = cat.to_ascii_lowercase();
                    match c.as_str() {
                    "main" | "task" | "loop" | "event" | "stats" => out.ftrace.push(c),
                    "none" => {}
                    _ => return Err(self.err("global.ftrace", format!("Invalid ftrace category '{cat}'; accepted: main, task, loop, event, stats, none"))),
                }
                }
            }
            Some(v) => return Err(self.type_err("global.ftrace", "string", v)),
        }
        Ok(())
    }
}

/// The resource types rt-app's top-level `resources` section accepts (`string_to_resource()`
/// in rt-app_utils.c; a missing `type` is `mutex`). `barrier` and the event-only kinds are
/// not among them: rt-app stops with "Invalid type of resource".
pub const RESOURCE_TYPES: &[&str] = &[
    "mutex",
    "signal",
    "wait",
    "broadcast",
    "sync",
    "sleep",
    "run",
    "timer",
];

impl Ctx<'_> {
    /// The legacy top-level `resources` section (`parse_resources()`): an object of named
    /// resources whose `type` must be one rt-app knows. rt-app creates resources on first use
    /// by an event anyway, so a valid section changes nothing; a section that is not an object
    /// is skipped, as rt-app skips it.
    fn resources(&self, section: Option<&JsonValue>) -> InputResult<()> {
        let Some(JsonValue::Object(members)) = section else {
            return Ok(());
        };
        for (name, res) in members {
            let path = format!("resources.{name}");
            let Some(t) = self.string(res, "type", &path)? else {
                continue;
            };
            if !RESOURCE_TYPES.contains(&t.as_str()) {
                return Err(self.err(
                    &format!("{path}.type"),
                    format!(
                        "Invalid type of resource '{}'{}; accepted: {}",
                        crate::input::limits::clip(&t),
                        crate::input::did_you_mean(&t, RESOURCE_TYPES),
                        RESOURCE_TYPES.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The top level accepts `tasks`, `global` and `resources` (checked, then ignored).
    fn top_level_keys(&mut self, top: &[(String, JsonValue)], root: &JsonValue) -> InputResult<()> {
        for (k, _) in top {
            match k.as_str() {
                "tasks" | "global" => {}
                "resources" => {
                    self.resources(root.get("resources"))?;
                    self.ignored.push("resources".into());
                }
                _ => {
                    return Err(self.err(
                        k,
                        "unknown top-level key; accepted: tasks, global, resources",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Parse rt-app JSON text. `origin` names the file in errors; `nr_cpus` bounds `cpus`.
pub fn parse_str(text: &str, origin: &str, nr_cpus: usize) -> InputResult<RtAppSpec> {
    let root = parse_json_c(text, origin)?;
    let JsonValue::Object(top) = &root else {
        return Err(InputError::new(
            origin,
            format!("top level must be an object, found {}", root.type_name()),
        ));
    };
    let mut cx = Ctx {
        origin,
        nr_cpus,
        unmodelled: Vec::new(),
        ignored: Vec::new(),
    };
    cx.top_level_keys(top, &root)?;
    let global = cx.global(root.get("global"))?;
    let tasks_v = match root.get("tasks") {
        Some(t @ JsonValue::Object(_)) => t,
        Some(v) => return Err(cx.type_err("tasks", "object", v)),
        None => return Err(cx.err("tasks", "missing: an rt-app file needs a \"tasks\" object")),
    };
    let JsonValue::Object(task_members) = tasks_v else {
        unreachable!()
    };
    let mut tasks = Vec::new();
    for (i, (name, obj)) in task_members.iter().enumerate() {
        if task_members[..i].iter().any(|(other, _)| other == name) {
            // json-c keeps only the last value of a repeated key: the first task would vanish.
            return Err(InputError::with_key(
                origin,
                format!("tasks.{name}"),
                "this task name appears twice; rt-app (json-c) would keep only the last \
                 definition; accepted: unique task names",
            ));
        }
        tasks.push(cx.task(name, obj, &global)?);
    }
    if !cx.unmodelled.is_empty() {
        return Err(InputError::new(
            origin,
            format!(
                "rt-app events not modelled by schedlab: {}; modelled events: {}",
                cx.unmodelled.join(", "),
                MODELLED_EVENTS.join(", ")
            ),
        ));
    }
    let spec = RtAppSpec {
        global,
        tasks,
        ignored_keys: cx.ignored,
    };
    check_forks(&spec, origin)?;
    if spec.tasks.is_empty() {
        return Err(InputError::with_key(origin, "tasks", "no tasks"));
    }
    Ok(spec)
}

/// Every `fork` event names a task of the file (rt-app: "Can't fork unknown task").
fn check_forks(spec: &RtAppSpec, origin: &str) -> InputResult<()> {
    for t in &spec.tasks {
        for p in &t.phases {
            for e in &p.events {
                if let Event::Fork { task } = e
                    && spec.task_index(task).is_none()
                {
                    return Err(InputError::with_key(
                        origin,
                        format!("tasks.{}", t.name),
                        format!("Can't fork unknown task {task}"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Read and parse an rt-app file.
pub fn load(path: &Path, nr_cpus: usize) -> InputResult<RtAppSpec> {
    let origin = path.display().to_string();
    let text = crate::input::limits::read_input(path, &origin)?;
    parse_str(&text, &origin, nr_cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_c_extensions_are_accepted_and_positions_kept() {
        let v = parse_json_c(
            "{ /* c */ \"a\": [1, 2,], // x\n \"b\": \"/*not*/\", }",
            "t",
        )
        .unwrap();
        assert_eq!(
            v,
            JsonValue::Object(vec![
                (
                    "a".into(),
                    JsonValue::Array(vec![JsonValue::Int(1), JsonValue::Int(2)])
                ),
                ("b".into(), JsonValue::Str("/*not*/".into())),
            ])
        );
        let e = parse_json_c("{\n/* long\ncomment */ \"a\": x }", "f.json").unwrap_err();
        assert!(e.message.contains("line 3"), "{e}");
    }

    #[test]
    fn order_and_duplicates_kept() {
        let s = parse_str(
            r#"{"tasks": {"t": {"loop": 2, "run": 10, "sleep": 5, "run": 20, "runtime3": 7, "sleep_long": 9}}}"#,
            "t",
            4,
        )
        .unwrap();
        let t = &s.tasks[0];
        assert_eq!(
            t.phases[0].events,
            vec![
                Event::Run { work_us: 10 },
                Event::Sleep { us: 5 },
                Event::Run { work_us: 20 },
                Event::Runtime { wall_us: 7 },
                Event::Sleep { us: 9 },
            ]
        );
        // No phases + loop: the implicit phase runs `loop` times, once.
        assert_eq!((t.loop_count, t.phases[0].loop_count), (Some(1), Some(2)));
        assert_eq!(t.event_count(), Some(10));
    }

    #[test]
    fn unmodelled_events_listed_by_name() {
        let e = parse_str(
            r#"{"tasks": {
                "a": {"run": 10, "iorun": 4096},
                "b": {"phases": {"p": {"memrun0": {"type": "read", "size": 64, "count": 1}, "run": 1}}}
            }}"#,
            "x.json",
            4,
        )
        .unwrap_err();
        assert_eq!(e.origin, "x.json");
        assert!(
            e.message.starts_with(
                "rt-app events not modelled by schedlab: tasks.a.iorun, tasks.b.phases.p.memrun0;"
            ),
            "{e}"
        );
    }

    #[test]
    fn errors_name_key() {
        let e = parse_str(r#"{"tasks": {"a": {"run": "x"}}}"#, "f", 4).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tasks.a.run"));
        let e = parse_str(r#"{"tasks": {"a": {"run": 1, "prority": 3}}}"#, "f", 4).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tasks.a.prority"));
        assert!(e.message.contains("accepted: policy, priority"), "{e}");
        let e = parse_str(r#"{"tasks": {"a": {"run": 1, "cpus": [9]}}}"#, "f", 4).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tasks.a.cpus"));
        let e = parse_str(r#"{"tasks": {"a": {"loop": 3}}}"#, "f", 4).unwrap_err();
        assert!(e.message.contains("No events found"), "{e}");
        let e = parse_str(r#"{"tasks": {"a": {"fork": "zz", "run": 1}}}"#, "f", 4).unwrap_err();
        assert!(e.message.contains("Can't fork unknown task zz"), "{e}");
        let e = parse_str(
            r#"{"global": {"default_policy": "SCHED_FOO"}, "tasks": {"a": {"run": 1}}}"#,
            "f",
            4,
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("global.default_policy"));
    }

    #[test]
    fn sched_and_expansion() {
        let s = parse_str(
            r#"{"global": {"default_policy": "SCHED_OTHER", "frag": 1},
                "tasks": {
                  "x": {"instance": 2, "priority": -5, "delay": 1000, "run": 1},
                  "y": {"policy": "SCHED_FIFO", "run": 1, "barrier": "B"},
                  "z": {"instance": 3, "phases": {"p1": {"loop": 4, "run": 1, "barrier": "B"},
                                                  "p2": {"cpus": [1], "policy": "SCHED_RR", "priority": 20, "sleep": 1}},
                        "loop": 5}
                }}"#,
            "f",
            4,
        )
        .unwrap();
        assert_eq!(s.ignored_keys, vec!["global.frag".to_string()]);
        let names: Vec<String> = s.threads().into_iter().map(|t| t.name).collect();
        assert_eq!(names, vec!["x-0", "x-1", "y-2", "z-3", "z-4", "z-5"]);
        assert_eq!(s.nr_threads(), 6);
        assert_eq!(
            (s.tasks[0].nice, s.tasks[0].rt_priority, s.tasks[0].delay_us),
            (Some(-5), None, 1000)
        );
        assert_eq!(
            (s.tasks[1].policy, s.tasks[1].rt_priority),
            (RtAppPolicy::Fifo, Some(10))
        );
        // Implicit phase without `loop`: forever.
        assert_eq!(
            (s.tasks[1].loop_count, s.tasks[1].phase_iterations()),
            (None, None)
        );
        let z = &s.tasks[2];
        assert_eq!(
            (z.loop_count, z.phase_iterations(), z.event_count()),
            (Some(5), Some(25), Some(5 * (4 * 2 + 1)))
        );
        assert_eq!(z.phases[0].sched, None);
        let p2 = z.phases[1].sched.as_ref().unwrap();
        assert_eq!((p2.policy, p2.priority), (Some(RtAppPolicy::Rr), Some(20)));
        assert_eq!(z.phases[1].cpus.unwrap().to_string(), "1");
        // y (1 instance) + z (3 instances) reference barrier B.
        assert_eq!(s.barrier_participants("B"), 4);
    }
}
