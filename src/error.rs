//! User-facing errors.
//!
//! Anything the user can get wrong (a scenario key, a preset name, a CPU list, a malformed
//! file) becomes an [`InputError`]: one line naming where the input came from, the key, and
//! what is accepted. The binary prints it and exits with code 2 — never a panic or a
//! backtrace. Internal failures (a bug) are `anyhow` errors and exit 1.

use std::fmt;

/// Exit code for bad input, as the contract (ARCHITECTURE.md §3) requires.
pub const EXIT_BAD_INPUT: i32 = 2;

/// Exit code of a run that ended before its benchmark finished without the user asking for
/// the cut (`run.duration_s`): the default simulated-time cap ended it.
pub const EXIT_INCOMPLETE: i32 = 3;

/// Bad user input: where it came from, which key, what is wrong and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// A file path, `--set`, `--offline`, `command line`, ...
    pub origin: String,
    /// The dotted key or option at fault, when there is one.
    pub key: Option<String>,
    /// What is wrong, and what would be accepted.
    pub message: String,
}

impl InputError {
    pub fn new(origin: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            origin: origin.into(),
            key: None,
            message: message.into(),
        }
    }

    pub fn with_key(
        origin: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        InputError {
            origin: origin.into(),
            key: Some(key.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Origin and key echo user input: control characters (a newline in a `--set`
        // key or a variant spec) are escaped so the error stays on one line, and a
        // user-given name can be any size, so messages echo at most a clipped copy.
        use crate::input::limits::clip_words;
        let origin = escape_controls(&self.origin);
        let origin = clip_words(&origin);
        let message = escape_message(&self.message);
        let message = clip_words(&message);
        match &self.key {
            Some(key) => {
                let key = escape_controls(key);
                write!(f, "{origin}: {}: {message}", clip_words(&key))
            }
            None => write!(f, "{origin}: {message}"),
        }
    }
}

/// A message with its control characters escaped ([`escape_controls`]: a name echoed in it
/// never breaks the line), except the newline before an emulated tool's own closing
/// "Try '... --help'" line (taskset's wording).
fn escape_message(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(message);
    }
    match message.rfind("\nTry '") {
        Some(i) => std::borrow::Cow::Owned(format!(
            "{}\n{}",
            escape_controls(&message[..i]),
            escape_controls(&message[i + 1..])
        )),
        None => escape_controls(message),
    }
}

/// `text` with control characters written as Rust escapes (`\n`, `\u{1}`).
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl std::error::Error for InputError {}

/// Result of anything that reads user input.
pub type InputResult<T> = Result<T, InputError>;
