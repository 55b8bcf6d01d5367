//! The score as a guard: docs/validation.md keeps, between two marker lines, one line per
//! case with the sign agreement and the within-2x verdict of the commit that last changed
//! them. `schedlab validate --check docs/validation.md` compares a fresh scoreboard with it
//! and reports every case that left 2x, changed sign, or is not recorded: a model change
//! that moves a case must update that block and say why in the same commit.

use super::{CaseScore, Scoreboard};

/// The line that opens the recorded block.
pub const BEGIN: &str = "<!-- validate-record: begin (schedlab validate --print-record) -->";
/// The line that closes it.
pub const END: &str = "<!-- validate-record: end -->";

/// One recorded case.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub id: String,
    pub sign_ok: bool,
    pub within_2x: bool,
}

/// The recorded block of `doc` (`None`: no block).
pub fn parse_record(doc: &str) -> Option<Vec<Recorded>> {
    let start = doc.find(BEGIN)? + BEGIN.len();
    let end = start + doc[start..].find(END)?;
    let rows = doc[start..end]
        .lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let id = f.next()?;
            let sign = f.next()?.strip_prefix("sign=")?;
            let within = f.next()?.strip_prefix("within2x=")?;
            Some(Recorded {
                id: id.to_string(),
                sign_ok: sign == "yes",
                within_2x: within == "yes",
            })
        })
        .collect();
    Some(rows)
}

/// The record block for `board` (the scored cases that ran), to paste into the doc.
pub fn render_record(board: &Scoreboard) -> String {
    let mut s = format!("{BEGIN}\n```text\n");
    for r in board.cases.iter().filter(|r| r.scored) {
        let (Some(sign), Some(within), Some(sim)) = (r.sign_ok, r.within_2x, r.sim_change_pct)
        else {
            continue;
        };
        let yn = |b: bool| if b { "yes" } else { "no" };
        s.push_str(&format!(
            "{} sign={} within2x={} sim={:+.2} real={:+.2}\n",
            r.id,
            yn(sign),
            yn(within),
            sim,
            r.real_change_pct
        ));
    }
    s.push_str("```\n");
    s.push_str(END);
    s.push('\n');
    s
}

/// What moved against the record: one line per case that left (or came within) 2x, changed
/// sign, or is not recorded. Cases not run this time (not selected) are not checked.
pub fn check(board: &Scoreboard, record: &[Recorded]) -> Vec<String> {
    let mut out = Vec::new();
    for r in board.cases.iter().filter(|r| r.scored) {
        let (Some(sign), Some(within)) = (r.sign_ok, r.within_2x) else {
            continue;
        };
        match record.iter().find(|x| x.id == r.id) {
            None => out.push(format!(
                "{}: not in the record (a new case: record it)",
                r.id
            )),
            Some(rec) => out.extend(moved(r, rec, sign, within)),
        }
    }
    out
}

fn moved(r: &CaseScore, rec: &Recorded, sign: bool, within: bool) -> Option<String> {
    let sim = r.sim_change_pct.unwrap_or(f64::NAN);
    if rec.sign_ok != sign {
        return Some(format!(
            "{}: sign agreement changed ({} -> {}; simulated {sim:+.2} % vs real {:+.2} %)",
            r.id,
            if rec.sign_ok { "right" } else { "wrong" },
            if sign { "right" } else { "wrong" },
            r.real_change_pct
        ));
    }
    if rec.within_2x != within {
        return Some(format!(
            "{}: {} (simulated {sim:+.2} % vs real {:+.2} %)",
            r.id,
            if within { "came within 2x" } else { "left 2x" },
            r.real_change_pct
        ));
    }
    None
}
