//! The cpu stressor's methods (stress-cpu.c `stress_cpu_methods[]`, HEAD 291fc4341, the 83
//! methods a gcc x86-64 build compiles, in table order — the order `--cpu-method all` calls
//! them) with their per-method call cost measured on this project's VM.
//!
//! `bogo_op_rate` is stress-ng's own number (calls per second on its i5-8350U); a call adds
//! `1484.5 / bogo_op_rate` bogo ops. `vm_bogo_ops_per_cpu_s` is what
//! `stress-ng --cpu 1 --cpu-method M --metrics-brief -t 1` reported as "bogo ops/s (usr+sys
//! time)" for each method on the project VM (stress-ng 0.15.06 from Debian bookworm, gcc 12,
//! AMD EPYC vCPU at 2.6 GHz, 2026-12-01, load average 5–7 from other sessions; CPU time, so
//! competition for the CPU does not enter). A call then takes
//! `1484.5 / (vm_bogo_ops_per_cpu_s × bogo_op_rate)` s of VM CPU time. The methods' costs
//! relative to each other differ from stress-ng's i5-8350U table by up to 60× (e.g. this
//! build's `callfunc` takes 0.3 µs where the table says 802 µs; `nsqrt` 0.5 µs vs 30 µs;
//! `matrixprod` 4.3 ms vs 3.8 ms), which is why `--cpu-method all`'s slices are uneven.
//! `float16` is not built by 0.15.06; it uses `float32`'s measurement (same table rate).

/// One method: name, stress-ng's `bogo_op_rate`, bogo ops per CPU second measured here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuMethod {
    pub name: &'static str,
    pub bogo_op_rate: f64,
    pub vm_bogo_ops_per_cpu_s: f64,
}

const fn m(name: &'static str, bogo_op_rate: f64, vm_bogo_ops_per_cpu_s: f64) -> CpuMethod {
    CpuMethod {
        name,
        bogo_op_rate,
        vm_bogo_ops_per_cpu_s,
    }
}

/// The 83 methods in table order (`--cpu-method all` starts at the first and wraps).
pub const METHODS: &[CpuMethod] = &[
    m("ackermann", 2008.64, 2996.46),
    m("apery", 9344.95, 1412.29),
    m("bitops", 6573.24, 2571.44),
    m("callfunc", 1246.34, 3559466.94),
    m("cdouble", 8969.40, 1100.97),
    m("cfloat", 2656.19, 1894.59),
    m("clongdouble", 794.78, 1049.81),
    m("collatz", 860193.45, 3388.03),
    m("correlate", 216.02, 3241.41),
    m("crc16", 249.93, 1882.51),
    m("decimal32", 724.47, 2242.49),
    m("decimal64", 916.39, 2191.89),
    m("decimal128", 330.52, 1895.22),
    m("dither", 234.77, 2204.64),
    m("div8", 8815.50, 2228.83),
    m("div16", 8843.39, 3276.53),
    m("div32", 9937.25, 1980.10),
    m("div64", 2833.72, 5908.42),
    m("div128", 1536.66, 8136.40),
    m("double", 11172.11, 1990.99),
    m("euler", 26895846.22, 1497.90),
    m("explog", 343.85, 2165.91),
    m("factorial", 9474.40, 2107.82),
    m("fibonacci", 35976352.02, 1690.92),
    m("fft", 1516.20, 3489.03),
    m("fletcher16", 650.59, 1917.60),
    m("float", 11085.77, 2076.61),
    m("float16", 8885.55, 2389.61), // not in 0.15.06: float32's
    m("float32", 8885.55, 2389.61),
    m("float64", 10582.13, 2157.72),
    m("float80", 1699.80, 1498.11),
    m("float128", 725.41, 1852.04),
    m("floatconversion", 2705.07, 4452.99),
    m("gamma", 492.74, 2203.32),
    m("gcd", 1586.81, 5782.51),
    m("gray", 62248.86, 1709.72),
    m("hamming", 1036.58, 2357.96),
    m("hanoi", 54804.26, 6501.51),
    m("hyperbolic", 1556.08, 5160.56),
    m("idct", 71989.07, 2370.55),
    m("int128", 30658.82, 2732.64),
    m("int64", 61950.47, 3604.46),
    m("int32", 65527.15, 3614.41),
    m("int16", 65656.46, 3350.80),
    m("int8", 65610.66, 3714.42),
    m("int128float", 18312.51, 2530.79),
    m("int128double", 9798.38, 2412.56),
    m("int128longdouble", 1397.33, 1403.22),
    m("int128decimal32", 1696.86, 3715.06),
    m("int128decimal64", 2242.01, 3372.70),
    m("int128decimal128", 347.19, 2007.05),
    m("int64float", 25297.02, 2203.03),
    m("int64double", 11390.72, 2255.91),
    m("int64longdouble", 1399.64, 1415.28),
    m("int32float", 26033.76, 2149.78),
    m("int32double", 11617.23, 2271.96),
    m("int32longdouble", 1408.24, 1425.18),
    m("intconversion", 1390.75, 1720.24),
    m("ipv4checksum", 23394.01, 4245.91),
    m("jmp", 122704.94, 3307.61),
    m("lfsr32", 52110.43, 1788.73),
    m("ln2", 118136.97, 1601.24),
    m("logmap", 23417.85, 2648.49),
    m("longdouble", 1801.60, 1455.62),
    m("loop", 31424.67, 7264.28),
    m("matrixprod", 263.84, 1297.61),
    m("nsqrt", 32783.07, 96929.53),
    m("omega", 4038977.72, 2656.81),
    m("parity", 30013.93, 2566.58),
    m("phi", 20462354.45, 1498.41),
    m("pi", 469787.65, 1099.58),
    m("prime", 443.99, 2200.07),
    m("psi", 6121992.09, 1242.92),
    m("queens", 637.03, 1823.97),
    m("rand", 16530.45, 4315.77),
    m("rand48", 5037.84, 2298.36),
    m("rgb", 71888.49, 2210.66),
    m("sieve", 3437.93, 3291.61),
    m("stats", 428002.41, 2847.45),
    m("sqrt", 5821.64, 3112.87),
    m("trig", 1200.32, 6086.41),
    m("union", 30434.40, 1782.49),
    m("zeta", 1339.96, 2719.52),
];
