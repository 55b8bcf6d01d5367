//! Request/response loopback pairs: netperf `TCP_RR`/`UDP_RR` and tbench, reduced to the
//! scheduling pattern they produce.
//!
//! Simplified model (reference/workloads.md §5): each client is a pair of tasks in strict
//! alternation — the client sends a request and blocks in `recv` until the whole response has
//! arrived; the server blocks in `recv`, then sends the response. One transaction is
//! outstanding per pair and there is no think time, so the critical path is wakeup latency +
//! syscall/stack time on both sides. Each wakeup comes from the loopback receive path
//! (softirq work charged to the sender's CPU, then a sync wakeup of the reader); the engine
//! charges that as a per-message cost that grows with the message size.
//!
//! * `netperf -t TCP_RR -l SECS -- -r REQ,RESP` is one pair (`-l` < 0 means a transaction
//!   count); `-T lcpu,rcpu` binds the two sides.
//! * `tbench N [server]` is N such pairs (client processes + forked server processes). Its
//!   varied SMB-like operations are replaced by one fixed transaction shape
//!   ([`TBENCH_REQUEST_BYTES`], [`TBENCH_RESPONSE_BYTES`]) — why: the operation mix changes the
//!   per-op CPU cost, not the strict one-outstanding ping-pong the scheduler sees. Throughput is
//!   reported as payload MB/s ([`TBENCH_PAYLOAD_BYTES`] per transaction).
//!
//! Left out: UDP loss, CPU-utilisation columns (`-c`/`-C`), confidence intervals (`-i`/`-I`),
//! the dbench version banner and per-second progress lines, the per-operation latency table.

use super::cmdline;
use crate::error::{InputError, InputResult};

/// Which program's command line and report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RrFlavor {
    Netperf,
    Tbench,
}

/// TCP_RR or UDP_RR (netperf).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RrProtocol {
    Tcp,
    Udp,
}

/// How long the test runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RrLength {
    Seconds(u32),
    Transactions(u64),
}

/// tbench's modelled request: the 59-byte SMB-like header (ReadX request size).
pub const TBENCH_REQUEST_BYTES: u32 = 59;
/// tbench's modelled response: a ReadX of 4 KiB (39 + 20 bytes of headers + payload).
pub const TBENCH_RESPONSE_BYTES: u32 = 39 + 20 + 4096;
/// Payload bytes per transaction counted in tbench's MB/s.
pub const TBENCH_PAYLOAD_BYTES: u32 = 4096;

/// A parsed request/response benchmark.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NetperfRrConfig {
    pub flavor: RrFlavor,
    pub protocol: RrProtocol,
    pub length: RrLength,
    pub request_bytes: u32,
    pub response_bytes: u32,
    /// Client/server pairs (1 for netperf).
    pub clients: u32,
    /// netperf `-T lcpu,rcpu`.
    pub local_cpu: Option<usize>,
    pub remote_cpu: Option<usize>,
    /// netperf test-specific `-D` (TCP_NODELAY; printed as " : nodelay").
    pub nodelay: bool,
    /// netperf `-P 0` suppresses the banner and titles.
    pub print_headers: bool,
    /// tbench warmup seconds (default `-t`/5).
    pub warmup_s: u32,
}

impl NetperfRrConfig {
    /// Tasks in the workload: 2 per client (client + server).
    pub fn nr_tasks(&self) -> u64 {
        2 * u64::from(self.clients)
    }
}

fn parse_cpu(s: &str, nr_cpus: usize, origin: &str) -> InputResult<Option<usize>> {
    if s.is_empty() {
        return Ok(None);
    }
    let v: usize = s
        .parse()
        .map_err(|_| InputError::new(origin, format!("-T: bad CPU number '{s}'")))?;
    if v >= nr_cpus {
        return Err(InputError::new(
            origin,
            format!("-T: CPU {v} does not exist (machine has {nr_cpus} CPUs)"),
        ));
    }
    Ok(Some(v))
}

/// `netperf [global options] [-- test options]`; `args` exclude the program name.
pub fn parse_netperf(args: &[String], nr_cpus: usize) -> InputResult<NetperfRrConfig> {
    let (global, test): (&[String], &[String]) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[]),
    };
    let mut c = NetperfRrConfig {
        flavor: RrFlavor::Netperf,
        protocol: RrProtocol::Tcp,
        length: RrLength::Seconds(10),
        request_bytes: 1,
        response_bytes: 1,
        clients: 1,
        local_cpu: None,
        remote_cpu: None,
        nodelay: false,
        print_headers: true,
        warmup_s: 0,
    };
    apply_global_opts(&mut c, global, nr_cpus)?;
    apply_test_opts(&mut c, test)?;
    Ok(c)
}

fn netperf_err(m: String) -> InputError {
    InputError::new("netperf", m)
}

/// netperf's global options (`-t -l -H -T -P`, before `--`); a test (`-t`) must be given.
fn apply_global_opts(
    c: &mut NetperfRrConfig,
    global: &[String],
    nr_cpus: usize,
) -> InputResult<()> {
    let err = netperf_err;
    let mut test_given = false;
    let p = cmdline::getopt_long(
        "netperf",
        global,
        "t:l:H:T:P:",
        &[],
        cmdline::OptStyle::Glibc,
    )
    .map_err(|m| {
        err(format!(
            "{m} (schedlab models -t, -l, -H, -T, -P and test options -r, -D)"
        ))
    })?;
    for o in &p.opts {
        let a = o.arg.clone().unwrap_or_default();
        match o.id {
            't' => {
                test_given = true;
                c.protocol = test_protocol(&a)?;
            }
            'l' => c.length = test_length(&a)?,
            'H' => {
                if !matches!(a.as_str(), "localhost" | "127.0.0.1" | "::1") {
                    return Err(err(format!(
                        "-H {a}: only loopback (localhost) runs are modelled"
                    )));
                }
            }
            'T' => {
                let (l, r) = a.split_once(',').unwrap_or((&a, &a));
                c.local_cpu = parse_cpu(l, nr_cpus, "netperf")?;
                c.remote_cpu = parse_cpu(r, nr_cpus, "netperf")?;
            }
            'P' => c.print_headers = a != "0",
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(w) = p.positional.first() {
        return Err(err(format!("unexpected argument '{w}'")));
    }
    if !test_given {
        return Err(err(
            "the default test is TCP_STREAM, which is not modelled; give -t TCP_RR or -t UDP_RR"
                .into(),
        ));
    }
    Ok(())
}

/// `-t`: the protocol of a modelled request/response test.
fn test_protocol(a: &str) -> InputResult<RrProtocol> {
    match a.to_ascii_uppercase().as_str() {
        "TCP_RR" => Ok(RrProtocol::Tcp),
        "UDP_RR" => Ok(RrProtocol::Udp),
        _ => Err(netperf_err(format!(
            "test '{a}' is not modelled; accepted: TCP_RR, UDP_RR"
        ))),
    }
}

/// `-l`: seconds when positive, a transaction count when negative; 0 is refused.
fn test_length(a: &str) -> InputResult<RrLength> {
    let err = netperf_err;
    let v: i64 = a
        .parse()
        .map_err(|_| err(format!("-l: bad test length '{a}'")))?;
    Ok(match v {
        0 => return Err(err("-l 0: a test length of 0 runs nothing".into())),
        v if v > 0 => RrLength::Seconds(v.min(i64::from(u32::MAX)) as u32),
        v => RrLength::Transactions(v.unsigned_abs()),
    })
}

/// netperf's test options (after `--`): `-r REQ,RESP` and `-D`.
fn apply_test_opts(c: &mut NetperfRrConfig, test: &[String]) -> InputResult<()> {
    let err = netperf_err;
    let t = cmdline::getopt_long("netperf", test, "r:D", &[], cmdline::OptStyle::Glibc)
        .map_err(|m| err(format!("{m} (schedlab models test options -r and -D)")))?;
    for o in &t.opts {
        match o.id {
            'r' => {
                let a = o.arg.clone().unwrap_or_default();
                // break_args: "A,B"; "A" sets both; ",B" sets only the response.
                let (q, s) = match a.split_once(',') {
                    Some((q, s)) => (q.to_string(), s.to_string()),
                    None => (a.clone(), a.clone()),
                };
                let num = |x: &str| -> InputResult<u32> {
                    x.parse::<u32>()
                        .map_err(|_| err(format!("-r: bad size '{x}' in '{a}'")))
                };
                if !q.is_empty() {
                    c.request_bytes = num(&q)?;
                }
                if !s.is_empty() {
                    c.response_bytes = num(&s)?;
                }
            }
            'D' => c.nodelay = true,
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    if let Some(w) = t.positional.first() {
        return Err(err(format!("unexpected test argument '{w}'")));
    }
    Ok(())
}

/// `tbench [-t SECS] [--warmup SECS] N [server]`.
pub fn parse_tbench(args: &[String]) -> InputResult<NetperfRrConfig> {
    let err = |m: String| InputError::new("tbench", m);
    let p = cmdline::getopt_long(
        "tbench",
        args,
        "t:",
        &[
            cmdline::lo("timelimit", true, 't'),
            cmdline::lo("warmup", true, 'w'),
        ],
        cmdline::OptStyle::Glibc,
    )
    .map_err(|m| err(format!("{m} (schedlab models -t/--timelimit and --warmup)")))?;
    let mut time_s: u32 = 600;
    let mut warmup: Option<u32> = None;
    for o in &p.opts {
        let a = o.arg.clone().unwrap_or_default();
        let v: u32 = a
            .parse()
            .map_err(|_| err(format!("{}: bad number '{a}'", o.spelled)))?;
        match o.id {
            't' => time_s = v,
            'w' => warmup = Some(v),
            _ => unreachable!("getopt only returns ids from the table"),
        }
    }
    let n = match p.positional.first() {
        Some(n) => n
            .parse::<u32>()
            .ok()
            .filter(|&v| v > 0 && u64::from(v) <= crate::input::limits::MAX_CLIENTS)
            .ok_or_else(|| {
                err(format!(
                    "bad client count '{}' (accepted: 1 to {})",
                    crate::input::limits::clip(n),
                    crate::input::limits::MAX_CLIENTS
                ))
            })?,
        None => return Err(err("usage: tbench [options] <nprocs> [server]".into())),
    };
    if let Some(server) = p.positional.get(1)
        && !matches!(server.as_str(), "localhost" | "127.0.0.1" | "::1")
    {
        return Err(err(format!(
            "server {server}: only loopback (localhost) runs are modelled"
        )));
    }
    if p.positional.len() > 2 {
        return Err(err(format!("unexpected argument '{}'", p.positional[2])));
    }
    if time_s == 0 {
        return Err(err("-t 0: a time limit of 0 runs nothing".into()));
    }
    Ok(NetperfRrConfig {
        flavor: RrFlavor::Tbench,
        protocol: RrProtocol::Tcp,
        length: RrLength::Seconds(time_s),
        request_bytes: TBENCH_REQUEST_BYTES,
        response_bytes: TBENCH_RESPONSE_BYTES,
        clients: n,
        local_cpu: None,
        remote_cpu: None,
        nodelay: true,
        print_headers: true,
        warmup_s: warmup.unwrap_or(time_s / 5),
    })
}

/// What the engine measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct NetperfRrResult {
    /// Transactions completed in the measured interval (all pairs).
    pub transactions: u64,
    /// Measured interval, seconds (for tbench: after warmup).
    pub elapsed_s: f64,
    /// Socket buffer sizes shown in the netperf table (local send/recv, remote send/recv).
    /// Linux loopback defaults after autotuning init are 16384 / 131072 (typical output).
    pub local_send_bytes: u32,
    pub local_recv_bytes: u32,
    pub remote_send_bytes: u32,
    pub remote_recv_bytes: u32,
    /// tbench: the worst single-transaction latency, ms.
    pub max_latency_ms: f64,
}

impl Default for NetperfRrResult {
    fn default() -> Self {
        NetperfRrResult {
            transactions: 0,
            elapsed_s: 0.0,
            local_send_bytes: 16384,
            local_recv_bytes: 131072,
            remote_send_bytes: 16384,
            remote_recv_bytes: 131072,
            max_latency_ms: 0.0,
        }
    }
}

impl NetperfRrResult {
    /// Transactions per second.
    pub fn rate(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.transactions as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
}

/// netperf's (stdout) or tbench's report.
pub fn format_report(cfg: &NetperfRrConfig, res: &NetperfRrResult) -> String {
    match cfg.flavor {
        RrFlavor::Netperf => format_netperf(cfg, res),
        RrFlavor::Tbench => {
            let mb_s = res.rate() * f64::from(TBENCH_PAYLOAD_BYTES) / 1e6;
            let secs = match cfg.length {
                RrLength::Seconds(s) => s,
                RrLength::Transactions(_) => 0,
            };
            format!(
                "Running for {secs} seconds with load 'client.txt' and minimum warmup {} secs\n\
                 Throughput {} MB/sec  {} clients  {} procs  max_latency={:.3} ms\n",
                cfg.warmup_s,
                cmdline::c_format_g(mb_s),
                cfg.clients,
                cfg.clients,
                res.max_latency_ms
            )
        }
    }
}

fn format_netperf(cfg: &NetperfRrConfig, res: &NetperfRrResult) -> String {
    let mut out = String::new();
    if cfg.print_headers {
        let name = match cfg.protocol {
            RrProtocol::Tcp => "MIGRATED TCP REQUEST/RESPONSE TEST",
            RrProtocol::Udp => "MIGRATED UDP REQUEST/RESPONSE TEST",
        };
        // print_top_test_header: inet_ntop into an 8-byte buffer prints "0.0.0.0" but leaves
        // "127.0.0.1" empty, hence the "()".
        out.push_str(&format!(
            "{name} from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost () port 0 AF_INET"
        ));
        if cfg.nodelay {
            out.push_str(" : nodelay");
        }
        out.push_str(" : first burst 0");
        if cfg.local_cpu.is_some() || cfg.remote_cpu.is_some() {
            out.push_str(" : cpu bind");
        }
        out.push('\n');
        out.push_str(
            "Local /Remote\n\
             Socket Size   Request  Resp.   Elapsed  Trans.\n\
             Send   Recv   Size     Size    Time     Rate         \n\
             bytes  Bytes  bytes    bytes   secs.    per sec   \n\n",
        );
        out.push_str(&format!(
            "{:<6} {:<6} {:<6}   {:<6}  {:<6.2}   {:7.2}   \n",
            res.local_send_bytes,
            res.local_recv_bytes,
            cfg.request_bytes,
            cfg.response_bytes,
            res.elapsed_s,
            res.rate()
        ));
        out.push_str(&format!(
            "{:<6} {:<6}\n",
            res.remote_send_bytes, res.remote_recv_bytes
        ));
    } else {
        // -P 0 with verbosity 1 still prints the two data lines.
        out.push_str(&format!(
            "{:<6} {:<6} {:<6}   {:<6}  {:<6.2}   {:7.2}   \n",
            res.local_send_bytes,
            res.local_recv_bytes,
            cfg.request_bytes,
            cfg.response_bytes,
            res.elapsed_s,
            res.rate()
        ));
        out.push_str(&format!(
            "{:<6} {:<6}\n",
            res.remote_send_bytes, res.remote_recv_bytes
        ));
    }
    out
}

/// `[workload] kind = "netperf"` / `"tbench"` keys: the same [`NetperfRrConfig`] fields as
/// the command lines' options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetperfKeys {
    pub protocol: Option<ProtocolKey>,
    pub duration_s: Option<u32>,
    pub transactions: Option<u64>,
    pub request_bytes: Option<u32>,
    pub response_bytes: Option<u32>,
    pub clients: Option<u64>,
    pub local_cpu: Option<u64>,
    pub remote_cpu: Option<u64>,
    pub nodelay: Option<bool>,
}

/// `protocol` key values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolKey {
    #[serde(alias = "TCP")]
    Tcp,
    #[serde(alias = "UDP")]
    Udp,
}

/// Apply `[workload]` keys to `base` (a parsed command line) or, without one, to the
/// defaults of `kind` (`netperf -t TCP_RR`, `tbench 1`).
pub fn from_keys(
    kind: &str,
    base: Option<NetperfRrConfig>,
    keys: &NetperfKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<NetperfRrConfig> {
    let mut c = match base {
        Some(c) => c,
        None if kind == "tbench" => parse_tbench(&["1".to_string()])?,
        None => parse_netperf(&["-t".into(), "TCP_RR".into()], nr_cpus)?,
    };
    let tbench = c.flavor == RrFlavor::Tbench;
    if let Some(p) = keys.protocol {
        c.protocol = match p {
            ProtocolKey::Tcp => RrProtocol::Tcp,
            ProtocolKey::Udp => RrProtocol::Udp,
        };
    }
    if let Some(d) = keys.duration_s {
        if d == 0 {
            return Err(err(
                "duration_s",
                crate::input::keys::expected("seconds from 1 to 4294967295", "integer 0"),
            ));
        }
        c.length = RrLength::Seconds(d);
        if tbench {
            c.warmup_s = d / 5;
        }
    }
    if let Some(t) = keys.transactions {
        c.length = RrLength::Transactions(t);
    }
    if let Some(v) = keys.request_bytes {
        c.request_bytes = v;
    }
    if let Some(v) = keys.response_bytes {
        c.response_bytes = v;
    }
    if let Some(v) = keys.clients {
        c.clients = clients_key(v, tbench, err)?;
    }
    apply_cpu_keys(&mut c, keys, nr_cpus, err)?;
    if let Some(b) = keys.nodelay {
        c.nodelay = b;
    }
    Ok(c)
}

/// The `clients` key: 1 for netperf, 1 to `MAX_CLIENTS` pairs for tbench.
fn clients_key(v: u64, tbench: bool, err: &dyn Fn(&str, String) -> InputError) -> InputResult<u32> {
    let max = if tbench {
        crate::input::limits::MAX_CLIENTS
    } else {
        1
    };
    if v == 0 || v > max {
        return Err(err(
            "clients",
            crate::input::keys::expected(
                &format!(
                    "{} (netperf runs 1 pair; tbench 1 to {} pairs)",
                    if tbench {
                        format!("an integer from 1 to {max}")
                    } else {
                        "1".into()
                    },
                    crate::input::limits::MAX_CLIENTS
                ),
                format!("integer {v}"),
            ),
        ));
    }
    Ok(v as u32)
}

/// The `local_cpu` and `remote_cpu` keys (`-T`): CPUs that exist.
fn apply_cpu_keys(
    c: &mut NetperfRrConfig,
    keys: &NetperfKeys,
    nr_cpus: usize,
    err: &dyn Fn(&str, String) -> InputError,
) -> InputResult<()> {
    for (k, v, slot) in [
        ("local_cpu", keys.local_cpu, &mut c.local_cpu),
        ("remote_cpu", keys.remote_cpu, &mut c.remote_cpu),
    ] {
        if let Some(v) = v {
            if v as usize >= nr_cpus {
                return Err(err(
                    k,
                    format!("CPU {v} does not exist (machine has {nr_cpus} CPUs)"),
                ));
            }
            *slot = Some(v as usize);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        cmdline::split_words(s).unwrap()
    }

    #[test]
    fn netperf_tcp_rr() {
        let c = parse_netperf(&w("-t TCP_RR -l 30 -- -r 64,1024"), 8).unwrap();
        assert_eq!(
            (c.protocol, c.length, c.request_bytes, c.response_bytes),
            (RrProtocol::Tcp, RrLength::Seconds(30), 64, 1024)
        );
        assert_eq!(c.nr_tasks(), 2);
        let c = parse_netperf(&w("-H localhost -t UDP_RR -l -100000 -T 1,3 -- -r 32"), 8).unwrap();
        assert_eq!(
            (c.length, c.request_bytes, c.response_bytes),
            (RrLength::Transactions(100_000), 32, 32)
        );
        assert_eq!((c.local_cpu, c.remote_cpu), (Some(1), Some(3)));
        let c = parse_netperf(&w("-t TCP_RR"), 8).unwrap();
        assert_eq!(
            (c.length, c.request_bytes, c.response_bytes),
            (RrLength::Seconds(10), 1, 1)
        );
        assert!(parse_netperf(&w("-t TCP_STREAM"), 8).is_err());
        assert!(parse_netperf(&w("-l 10"), 8).is_err());
        assert_eq!(
            parse_netperf(&w("-t TCP_RR -x"), 8)
                .unwrap_err()
                .message
                .split(" (")
                .next(),
            Some("netperf: invalid option -- 'x'")
        );
    }

    #[test]
    fn tbench_clients() {
        let c = parse_tbench(&w("8")).unwrap();
        assert_eq!(
            (c.clients, c.nr_tasks(), c.length, c.warmup_s),
            (8, 16, RrLength::Seconds(600), 120)
        );
        let c = parse_tbench(&w("-t 60 16 localhost")).unwrap();
        assert_eq!(
            (c.clients, c.length, c.warmup_s),
            (16, RrLength::Seconds(60), 12)
        );
        assert!(parse_tbench(&w("0")).is_err());
        assert!(parse_tbench(&[]).is_err());
    }

    /// Transcribed from nettest_omni.c's `tput_title` and `tput_fmt_1_line_*` (trailing
    /// spaces included) and the digest's example numbers.
    #[test]
    fn netperf_report() {
        let c = parse_netperf(&w("-t TCP_RR"), 2).unwrap();
        let res = NetperfRrResult {
            transactions: 512_341,
            elapsed_s: 10.0,
            ..Default::default()
        };
        assert_eq!(
            format_report(&c, &res),
            "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to localhost () port 0 AF_INET : first burst 0\n\
             Local /Remote\n\
             Socket Size   Request  Resp.   Elapsed  Trans.\n\
             Send   Recv   Size     Size    Time     Rate         \n\
             bytes  Bytes  bytes    bytes   secs.    per sec   \n\
             \n\
             16384  131072 1        1       10.00    51234.10   \n\
             16384  131072\n"
        );
    }

    #[test]
    fn tbench_report() {
        let c = parse_tbench(&w("8")).unwrap();
        let res = NetperfRrResult {
            transactions: 354_033_203,
            elapsed_s: 1000.0,
            max_latency_ms: 2.31,
            ..Default::default()
        };
        let out = format_report(&c, &res);
        assert!(
            out.ends_with("Throughput 1450.12 MB/sec  8 clients  8 procs  max_latency=2.310 ms\n"),
            "{out}"
        );
    }
}
