//! Command-line plumbing shared by the benchmark parsers: shell-style word splitting, a
//! getopt_long work-alike (glibc semantics: argument permutation, `--` terminator, clustered
//! short options, attached or separate option arguments, unique-prefix abbreviation of long
//! options) and C's `atoi`.
//!
//! The benchmarks we model parse their options with glibc `getopt_long` (schbench, rt-tests
//! hackbench, stress-ng) or perf's `parse_options` (perf bench). To accept exactly what they
//! accept, and to complain the way they complain, we re-implement that behaviour here rather
//! than use clap, whose rules (and messages) differ.
//!
//! Left out: `POSIXLY_CORRECT` (no permutation), optional arguments (`::` in optstring), and
//! `-W foo` long-option syntax; none of the modelled programs use them.

/// Split a command line into words the way a POSIX shell does for a simple command:
/// whitespace separates words; `'...'` quotes literally; `"..."` quotes with `\"`, `\\`, `\$`,
/// `` \` `` and `\<newline>` escapes; a backslash outside quotes escapes the next character.
/// No expansion (variables, globs, tildes) is performed — the simulator has no environment.
pub fn split_words(cmdline: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmdline.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(ch) => {
                    in_word = true;
                    cur.push(ch);
                }
                None => return Err("trailing backslash".into()),
            },
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// The last path component of a program name (`/usr/bin/hackbench` → `hackbench`), as the
/// programs print `argv[0]` in some messages but users type paths.
pub fn basename(prog: &str) -> &str {
    prog.rsplit('/').next().unwrap_or(prog)
}

/// C `atoi`: skip leading whitespace, optional sign, then as many decimal digits as follow;
/// anything after is ignored and no digits gives 0. Saturates instead of overflowing (C's
/// behaviour is undefined there).
pub fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in rest.bytes() {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -v } else { v }
}

/// One long option: its name, whether it takes an argument, and the id it returns (the
/// short-option letter it aliases, or a private id).
#[derive(Debug, Clone, Copy)]
pub struct LongOpt {
    pub name: &'static str,
    pub has_arg: bool,
    pub id: char,
}

/// `LongOpt` constructor, for compact tables.
pub const fn lo(name: &'static str, has_arg: bool, id: char) -> LongOpt {
    LongOpt { name, has_arg, id }
}

/// Which program's parser (and so which error wording) to imitate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptStyle {
    /// glibc `getopt_long` with `opterr = 1`.
    Glibc,
    /// perf's `tools/lib/subcmd/parse-options.c`.
    Perf,
}

/// One option occurrence: the id and its argument, if it takes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptHit {
    pub id: char,
    pub arg: Option<String>,
    /// How the user spelled it (`-g`, `--groups`), for error messages.
    pub spelled: String,
}

/// Result of [`getopt_long`]: options in order, then the non-option words in order.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub opts: Vec<OptHit>,
    pub positional: Vec<String>,
}

fn short_spec(optstring: &str, c: char) -> Option<bool> {
    let b: Vec<char> = optstring.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let ch = b[i];
        let takes = b.get(i + 1) == Some(&':');
        if ch == c && ch != ':' && ch != '+' {
            return Some(takes);
        }
        i += if takes { 2 } else { 1 };
    }
    None
}

/// Parse `args` (without argv\[0\]) like glibc `getopt_long(argc, argv, optstring, longopts)`
/// does, permuting non-options to the end — or, with an optstring starting with `+`
/// (POSIXLY_CORRECT mode, as `taskset` and `numactl` use), stopping at the first non-option:
/// it and everything after it are positional (the command to run). Errors carry the wording the real parser prints
/// (glibc: `prog: invalid option -- 'x'`; perf: `Error: unknown switch `x'`).
pub fn getopt_long(
    prog: &str,
    args: &[String],
    optstring: &str,
    longopts: &[LongOpt],
    style: OptStyle,
) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = a.strip_prefix("--") {
            let hit = long_option(prog, body, args, &mut i, longopts, style)?;
            out.opts.push(hit);
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            short_cluster(prog, a, args, &mut i, optstring, style, &mut out)?;
            continue;
        }
        out.positional.push(a.clone());
        if optstring.starts_with('+') {
            out.positional.extend(args[i..].iter().cloned());
            break;
        }
    }
    Ok(out)
}

/// The long option `--body` (`--name` or `--name=value`, unambiguous prefixes accepted),
/// taking its argument from the next word when it needs one (advancing `*i`).
fn long_option(
    prog: &str,
    body: &str,
    args: &[String],
    i: &mut usize,
    longopts: &[LongOpt],
    style: OptStyle,
) -> Result<OptHit, String> {
    let (name, attached) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    let opt = find_long(prog, name, longopts, style)?;
    let spelled = format!("--{}", opt.name);
    if !opt.has_arg {
        if attached.is_some() {
            return Err(match style {
                OptStyle::Glibc => {
                    format!("{prog}: option '--{}' doesn't allow an argument", opt.name)
                }
                OptStyle::Perf => format!("Error: option `{}' takes no value", opt.name),
            });
        }
        return Ok(OptHit {
            id: opt.id,
            arg: None,
            spelled,
        });
    }
    let arg = match attached {
        Some(v) => v,
        None if *i < args.len() => {
            *i += 1;
            args[*i - 1].clone()
        }
        None => {
            return Err(match style {
                OptStyle::Glibc => {
                    format!("{prog}: option '--{}' requires an argument", opt.name)
                }
                OptStyle::Perf => format!("Error: option `{}' requires a value", opt.name),
            });
        }
    };
    Ok(OptHit {
        id: opt.id,
        arg: Some(arg),
        spelled,
    })
}

/// The long option called `name`, or the one option it is a prefix of.
fn find_long(
    prog: &str,
    name: &str,
    longopts: &[LongOpt],
    style: OptStyle,
) -> Result<LongOpt, String> {
    if let Some(l) = longopts.iter().find(|l| l.name == name) {
        return Ok(*l);
    }
    let cands: Vec<&LongOpt> = longopts
        .iter()
        .filter(|l| l.name.starts_with(name))
        .collect();
    match cands.len() {
        1 => Ok(*cands[0]),
        0 => Err(match style {
            OptStyle::Glibc => format!("{prog}: unrecognized option '--{name}'"),
            OptStyle::Perf => format!("Error: unknown option `{name}'"),
        }),
        _ => {
            let list: Vec<String> = cands.iter().map(|l| format!("'--{}'", l.name)).collect();
            Err(match style {
                OptStyle::Glibc => format!(
                    "{prog}: option '--{name}' is ambiguous; possibilities: {}",
                    list.join(" ")
                ),
                OptStyle::Perf => format!("Error: Ambiguous option: {name}"),
            })
        }
    }
}

/// A cluster of short options (`-pT`, `-g4`, `-g 4`), taking an option's argument from the
/// rest of the word or the next word (advancing `*i`).
fn short_cluster(
    prog: &str,
    a: &str,
    args: &[String],
    i: &mut usize,
    optstring: &str,
    style: OptStyle,
    out: &mut Parsed,
) -> Result<(), String> {
    let chars: Vec<char> = a.chars().skip(1).collect();
    let mut j = 0;
    while j < chars.len() {
        let c = chars[j];
        j += 1;
        let spelled = format!("-{c}");
        match short_spec(optstring, c) {
            None => {
                return Err(match style {
                    OptStyle::Glibc => format!("{prog}: invalid option -- '{c}'"),
                    OptStyle::Perf => format!("Error: unknown switch `{c}'"),
                });
            }
            Some(false) => out.opts.push(OptHit {
                id: c,
                arg: None,
                spelled,
            }),
            Some(true) => {
                let arg = if j < chars.len() {
                    let v: String = chars[j..].iter().collect();
                    j = chars.len();
                    v
                } else if *i < args.len() {
                    *i += 1;
                    args[*i - 1].clone()
                } else {
                    return Err(match style {
                        OptStyle::Glibc => format!("{prog}: option requires an argument -- '{c}'"),
                        OptStyle::Perf => format!("Error: switch `{c}' requires a value"),
                    });
                };
                out.opts.push(OptHit {
                    id: c,
                    arg: Some(arg),
                    spelled,
                });
            }
        }
    }
    Ok(())
}

/// Format like C's `%g` (precision 6): the shorter of `%e`/`%f` with trailing zeros removed.
/// Used by dbench/tbench's `Throughput %g MB/sec` line.
pub fn c_format_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    const P: i32 = 6;
    let e_repr = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = e_repr.split_once('e').unwrap_or((&e_repr, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..P).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip(mant), sign, exp.abs())
    } else {
        strip(&format!("{:.*}", (P - 1 - exp) as usize, x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn shell_words() {
        assert_eq!(split_words("a  b\tc").unwrap(), s(&["a", "b", "c"]));
        assert_eq!(
            split_words(r#"x 'a b' "c \"d\"" e\ f"#).unwrap(),
            s(&["x", "a b", "c \"d\"", "e f"])
        );
        assert_eq!(split_words(r#"'' """#).unwrap(), s(&["", ""]));
        assert!(split_words("'abc").is_err());
        assert!(split_words("\"abc").is_err());
    }

    #[test]
    fn atoi_is_c_atoi() {
        assert_eq!(atoi("10x"), 10);
        assert_eq!(atoi("  -7"), -7);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi("+3"), 3);
    }

    #[test]
    fn getopt_permutes_and_clusters() {
        let longs = [lo("groups", true, 'g'), lo("threads", false, 'T')];
        let p = getopt_long(
            "hb",
            &s(&["x", "-Tg5", "--gro=7", "y", "--", "-T"]),
            "g:T",
            &longs,
            OptStyle::Glibc,
        )
        .unwrap();
        let ids: Vec<(char, Option<String>)> =
            p.opts.iter().map(|o| (o.id, o.arg.clone())).collect();
        assert_eq!(
            ids,
            vec![
                ('T', None),
                ('g', Some("5".into())),
                ('g', Some("7".into()))
            ]
        );
        assert_eq!(p.positional, s(&["x", "y", "-T"]));
    }

    #[test]
    fn getopt_error_texts() {
        let longs = [lo("groups", true, 'g'), lo("group-x", false, 'x')];
        let e = getopt_long("hackbench", &s(&["-q"]), "g:", &longs, OptStyle::Glibc).unwrap_err();
        assert_eq!(e, "hackbench: invalid option -- 'q'");
        let e = getopt_long("hackbench", &s(&["-g"]), "g:", &longs, OptStyle::Glibc).unwrap_err();
        assert_eq!(e, "hackbench: option requires an argument -- 'g'");
        let e =
            getopt_long("hackbench", &s(&["--nope"]), "g:", &longs, OptStyle::Glibc).unwrap_err();
        assert_eq!(e, "hackbench: unrecognized option '--nope'");
        let e = getopt_long("hackbench", &s(&["--gr"]), "g:", &longs, OptStyle::Glibc).unwrap_err();
        assert!(
            e.starts_with("hackbench: option '--gr' is ambiguous"),
            "{e}"
        );
        let e = getopt_long("perf", &s(&["-x"]), "g:", &longs, OptStyle::Perf).unwrap_err();
        assert_eq!(e, "Error: unknown switch `x'");
    }

    #[test]
    fn percent_g() {
        assert_eq!(c_format_g(1450.12), "1450.12");
        assert_eq!(c_format_g(1234567.0), "1.23457e+06");
        assert_eq!(c_format_g(0.0001), "0.0001");
        assert_eq!(c_format_g(0.00001), "1e-05");
        assert_eq!(c_format_g(100.0), "100");
        assert_eq!(c_format_g(999999.5), "1e+06");
    }
}
