//! Result files that are either complete or absent.
//!
//! Every file `schedlab` writes (`--json`, `--trace`, `--schedstat`) goes to a temporary file
//! in the destination's directory (`.NAME.tmp.PID`), is flushed and fsync'ed, and is renamed
//! over the destination only when it is complete; the directory is fsync'ed after the rename.
//! A write error (full disk, read-only directory), a stopped run or a `kill -9` therefore
//! never leaves a truncated file at the final path: on error the temporary file is removed
//! (on `kill -9` it stays behind under its temporary name, never under the final one).
//!
//! Write errors are reported as [`InputError`]s naming the option, the path and the OS error,
//! so they exit with code 2 like every other problem the user can fix (a full disk, a
//! read-only directory, a wrong path). Writing the text report to a full or closed stdout
//! is reported the same way ([`write_stdout`]); a closed pipe (`| head`) is not an error.
//!
//! A destination that is a device or FIFO (`/dev/null`, `/dev/full`, `/dev/stdout` behind a
//! pipe) is written in place instead: there is no file to make atomic, and a rename would
//! replace the device node.
//!
//! [`check_distinct`] rejects, before anything runs, an output path that names an input file
//! or another output.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{InputError, InputResult};

/// The longest part of a user-given string echoed in a message (bytes, cut on a char
/// boundary); longer names are shortened with `...` and their length.
pub const ECHO_MAX_BYTES: usize = 200;

/// `s`, shortened for an error message when it is longer than [`ECHO_MAX_BYTES`].
pub fn echo(s: &str) -> String {
    if s.chars().any(char::is_control) {
        // A newline or other control character is written as its escape (`\n`): a message
        // never spans two lines.
        return echo(&crate::error::escape_controls(s));
    }
    if s.len() <= ECHO_MAX_BYTES {
        return s.to_string();
    }
    let mut end = ECHO_MAX_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    // Keep a closing quote and punctuation (`'...';`) so the message still reads.
    let tail_len = s
        .bytes()
        .rev()
        .take(4)
        .take_while(|b| b.is_ascii_punctuation())
        .count();
    format!(
        "{}...({} bytes){}",
        &s[..end],
        s.len(),
        &s[s.len() - tail_len..]
    )
}

/// `text` with every word (run of non-blank characters) longer than [`ECHO_MAX_BYTES`]
/// shortened by [`echo`]: a message never echoes a huge name, value or path whole.
pub fn shorten_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut word_start: Option<usize> = None;
    let flush = |out: &mut String, w: &str| out.push_str(&echo(w));
    for (i, ch) in text.char_indices() {
        if ch.is_whitespace() {
            if let Some(st) = word_start.take() {
                flush(&mut out, &text[st..i]);
            }
            out.push(ch);
        } else if word_start.is_none() {
            word_start = Some(i);
        }
    }
    if let Some(st) = word_start {
        flush(&mut out, &text[st..]);
    }
    out
}

/// A path for messages (shortened, see [`echo`]).
fn shown(path: &Path) -> String {
    echo(&path.display().to_string())
}

/// The temporary name next to `dest`: `DIR/.NAME.tmp.PID`.
fn temp_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    let tmp = format!(".{name}.tmp.{}", std::process::id());
    match dest.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

/// A temporary file that becomes `dest` on [`Pending::commit`], and is removed if dropped
/// uncommitted.
#[derive(Debug)]
pub struct Pending {
    /// The option that names the file (`--json`), for messages.
    option: String,
    dest: PathBuf,
    /// The temporary file; `None` when `dest` is a device or FIFO written in place.
    tmp: Option<PathBuf>,
    committed: bool,
}

/// Whether `dest` exists as something other than a regular file or directory (a character
/// device such as `/dev/null` or `/dev/full`, a FIFO, a socket), following symlinks. Such a
/// destination is written in place: renaming a temporary file over it would replace the
/// device node (as root, `--json /dev/null` would delete `/dev/null`).
fn is_special(dest: &Path) -> bool {
    std::fs::metadata(dest).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

impl Pending {
    /// Create the temporary file for `dest` (truncating a leftover one). Returns the open
    /// file and the handle that commits or removes it.
    pub fn create(option: &str, dest: &Path) -> InputResult<(File, Pending)> {
        if dest.as_os_str().is_empty() {
            return Err(InputError::new(
                option,
                "an empty path; accepted: a file path",
            ));
        }
        if dest.file_name().is_none() || dest.is_dir() {
            return Err(InputError::with_key(
                option,
                shown(dest),
                "is a directory; accepted: a file path",
            ));
        }
        if is_special(dest) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(dest)
                .map_err(|e| {
                    InputError::with_key(option, shown(dest), format!("cannot open: {e}"))
                })?;
            let pending = Pending {
                option: option.to_string(),
                dest: dest.to_path_buf(),
                tmp: None,
                committed: false,
            };
            return Ok((file, pending));
        }
        let tmp = temp_path(dest);
        let file = File::create(&tmp).map_err(|e| {
            InputError::with_key(
                option,
                shown(dest),
                format!("cannot create a file in its directory: {e}"),
            )
        })?;
        Ok((
            file,
            Pending {
                option: option.to_string(),
                dest: dest.to_path_buf(),
                tmp: Some(tmp),
                committed: false,
            },
        ))
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    fn error(&self, what: &str, e: io::Error) -> InputError {
        InputError::with_key(
            self.option.clone(),
            shown(&self.dest),
            if self.in_place() {
                format!("{what}: {e}")
            } else {
                format!("{what}: {e}; nothing was written at this path")
            },
        )
    }

    /// Whether the destination is a device or FIFO written in place (nothing to rename or
    /// fsync).
    pub fn in_place(&self) -> bool {
        self.tmp.is_none()
    }

    /// fsync the (already written and closed) temporary file, rename it to the destination
    /// and fsync the directory. A destination written in place has nothing left to do.
    pub fn commit(mut self) -> InputResult<()> {
        let Some(tmp) = self.tmp.clone() else {
            self.committed = true;
            return Ok(());
        };
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| self.error("cannot write", e))?;
        std::fs::rename(&tmp, &self.dest).map_err(|e| self.error("cannot rename", e))?;
        self.committed = true;
        if let Some(dir) = self.dest.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            // Durability of the rename; some filesystems refuse fsync on a directory.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A result file opened (as its temporary file) before the work that fills it, so that an
/// unwritable destination is reported before a long run rather than after it.
#[derive(Debug)]
pub struct AtomicFile {
    file: File,
    pending: Pending,
}

impl AtomicFile {
    pub fn create(option: &str, dest: &Path) -> InputResult<AtomicFile> {
        let (file, pending) = Pending::create(option, dest)?;
        Ok(AtomicFile { file, pending })
    }

    /// The directory the destination (and its temporary file) is in.
    pub fn dir(&self) -> PathBuf {
        match self.pending.dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// Write the contents with `write` (buffered), fsync, and rename into place; errors as
    /// [`AtomicFile::write_commit`].
    pub fn write_with(
        self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> InputResult<()> {
        let pending = self.pending;
        let in_place = pending.in_place();
        let mut out = io::BufWriter::with_capacity(1 << 16, self.file);
        let file = write(&mut out)
            .and_then(|()| out.into_inner().map_err(|e| e.into_error()))
            // A device or FIFO written in place is not fsynced (`/dev/null` refuses it).
            .and_then(|f| {
                if in_place {
                    Ok(f)
                } else {
                    f.sync_all().map(|()| f)
                }
            })
            .map_err(|e| pending.error("cannot write", e))?;
        drop(file);
        pending.commit()
    }

    /// Write `bytes`, fsync, and rename into place. On error nothing is left at the final
    /// path (a previous file there is kept) and the message names the option and the path.
    pub fn write_commit(mut self, bytes: &[u8]) -> InputResult<()> {
        let pending = self.pending;
        let in_place = pending.in_place();
        self.file
            .write_all(bytes)
            .and_then(|()| {
                if in_place {
                    Ok(())
                } else {
                    self.file.sync_all()
                }
            })
            .map_err(|e| pending.error("cannot write", e))?;
        drop(self.file);
        pending.commit()
    }
}

/// Write `bytes` to `dest` atomically (temporary file, fsync, rename); see
/// [`AtomicFile::write_commit`].
pub fn write_atomic(option: &str, dest: &Path, bytes: &[u8]) -> InputResult<()> {
    AtomicFile::create(option, dest)?.write_commit(bytes)
}

/// Write the text report to stdout. A closed pipe (`| head`) ends quietly; any other error
/// (a full disk behind `> file`, `/dev/full`) is a one-line error naming stdout.
pub fn write_stdout(text: &str) -> InputResult<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(InputError::new(
            "stdout",
            format!("cannot write the report: {e}"),
        )),
    }
}

/// Write the text produced by `write` to stdout (buffered); errors as [`write_stdout`].
pub fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> InputResult<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(InputError::new(
            "stdout",
            format!("cannot write the report: {e}"),
        )),
    }
}

// ---------------------------------------------------------------------------------
// Streamed JSON: serde_json's pretty layout (two-space indent), written piece by piece.

/// Write `value` as `serde_json::to_string_pretty` lays it out when it sits `indent`
/// spaces deep in a document: the same bytes as the whole document's pretty print
/// (JSON strings hold no raw newline, so every line break is layout).
///
/// Why a formatter: serde_json's pretty formatter writes every line break itself, as a
/// write ending in `\n`; `IndentedPretty` adds the `indent` spaces after each one while
/// serializing into one buffer, written once. Printing the value alone and re-indenting
/// its lines cost a split and three writes per line (~15 M instructions for a 768-CPU
/// run's results).
pub fn write_pretty_at(
    out: &mut dyn Write,
    value: &impl serde::Serialize,
    indent: usize,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(128);
    let formatter = IndentedPretty {
        inner: serde_json::ser::PrettyFormatter::new(),
        pad: indent,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    value.serialize(&mut ser).map_err(io::Error::other)?;
    out.write_all(&buf)
}

/// serde_json's [`PrettyFormatter`](serde_json::ser::PrettyFormatter) with `pad` more
/// spaces after every line break: the layout methods (the only ones that write line
/// breaks) go to the pretty formatter through [`PadAfterNewline`].
struct IndentedPretty {
    inner: serde_json::ser::PrettyFormatter<'static>,
    pad: usize,
}

/// A writer that follows every write ending in `\n` with `pad` spaces.
struct PadAfterNewline<'a, W: ?Sized> {
    out: &'a mut W,
    pad: usize,
}

impl<W: ?Sized + Write> Write for PadAfterNewline<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)?;
        if buf.last() == Some(&b'\n') {
            const SPACES: [u8; 64] = [b' '; 64];
            let mut left = self.pad;
            while left > 0 {
                let n = left.min(SPACES.len());
                self.out.write_all(&SPACES[..n])?;
                left -= n;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Forward a layout method to the pretty formatter through the padding writer.
macro_rules! padded {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name<W: ?Sized + Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                let mut w = PadAfterNewline { out: writer, pad: self.pad };
                self.inner.$name(&mut w $(, $arg)*)
            }
        )*
    };
}

impl serde_json::ser::Formatter for IndentedPretty {
    padded! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        begin_object_value();
        end_object_value();
    }
}

/// A JSON object or array written entry by entry in serde_json's pretty layout, its
/// opening bracket `indent` spaces deep: `{}`/`[]` when empty, else one entry per line.
pub struct PrettyContainer<'w> {
    out: &'w mut dyn Write,
    indent: usize,
    close: &'static [u8],
    empty: bool,
}

impl<'w> PrettyContainer<'w> {
    /// Open an object (`{`).
    pub fn object(out: &'w mut dyn Write, indent: usize) -> io::Result<Self> {
        out.write_all(b"{")?;
        Ok(PrettyContainer {
            out,
            indent,
            close: b"}",
            empty: true,
        })
    }

    /// Open an array (`[`).
    pub fn array(out: &'w mut dyn Write, indent: usize) -> io::Result<Self> {
        out.write_all(b"[")?;
        Ok(PrettyContainer {
            out,
            indent,
            close: b"]",
            empty: true,
        })
    }

    /// Start the next entry (separator, line break, indentation); returns the writer and
    /// the indentation the entry's own value sits at.
    pub fn next_entry(&mut self) -> io::Result<(&mut dyn Write, usize)> {
        let sep: &[u8] = if self.empty { b"\n" } else { b",\n" };
        self.empty = false;
        self.out.write_all(sep)?;
        let inner = self.indent + 2;
        self.out.write_all(" ".repeat(inner).as_bytes())?;
        Ok((&mut *self.out, inner))
    }

    /// Start an object member: `"key": `.
    pub fn key(&mut self, key: &str) -> io::Result<(&mut dyn Write, usize)> {
        let (out, inner) = self.next_entry()?;
        serde_json::to_writer(&mut *out, key).map_err(io::Error::other)?;
        out.write_all(b": ")?;
        Ok((out, inner))
    }

    /// A whole member `"key": value`.
    pub fn member(&mut self, key: &str, value: &impl serde::Serialize) -> io::Result<()> {
        let (out, inner) = self.key(key)?;
        write_pretty_at(out, value, inner)
    }

    /// A whole array element.
    pub fn element(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        let (out, inner) = self.next_entry()?;
        write_pretty_at(out, value, inner)
    }

    /// Close the container.
    pub fn end(self) -> io::Result<()> {
        if !self.empty {
            self.out.write_all(b"\n")?;
            self.out.write_all(" ".repeat(self.indent).as_bytes())?;
        }
        self.out.write_all(self.close)
    }
}

/// An unnamed scratch file in `dir` (created, then unlinked at once: nothing is left
/// behind, even after `kill -9`), for parts of a result assembled at the end.
pub fn scratch_file(dir: &Path) -> io::Result<File> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".schedlab-scratch.{}.{n}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// The absolute, symlink-free form of `p`, also when `p` does not exist yet (its directory
/// is resolved, its name kept).
fn normalize(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    dir.canonicalize().ok().map(|d| d.join(name))
}

/// Reject an output that names an input file or another output, before anything runs.
/// `outputs` and `inputs` are (option, path) pairs; inputs that do not exist are ignored.
pub fn check_distinct(outputs: &[(&str, &Path)], inputs: &[(&str, &Path)]) -> InputResult<()> {
    let outs: Vec<(&str, &Path, Option<PathBuf>)> =
        outputs.iter().map(|&(o, p)| (o, p, normalize(p))).collect();
    for (i, (opt, path, norm)) in outs.iter().enumerate() {
        let Some(norm) = norm else { continue };
        if is_special(path) {
            // Several outputs may go to /dev/null.
            continue;
        }
        for &(in_opt, in_path) in inputs {
            if in_path.is_file() && in_path.canonicalize().ok().as_ref() == Some(norm) {
                return Err(InputError::with_key(
                    *opt,
                    shown(path),
                    format!(
                        "is the input {in_opt} ({}); it would be overwritten; accepted: another path",
                        shown(in_path)
                    ),
                ));
            }
        }
        for (other_opt, other_path, other_norm) in &outs[..i] {
            if other_norm.as_ref() == Some(norm) {
                return Err(InputError::with_key(
                    *opt,
                    shown(path),
                    format!(
                        "is also the {other_opt} output ({}); accepted: a different path for each output",
                        shown(other_path)
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedlab-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn commit_renames_and_drop_removes() {
        let d = scratch("commit");
        let dest = d.join("r.json");
        write_atomic("--json", &dest, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"{}\n");
        // An uncommitted file leaves neither the destination nor the temporary file.
        let dest2 = d.join("t.txt");
        let (mut f, p) = Pending::create("--trace", &dest2).unwrap();
        f.write_all(b"partial").unwrap();
        drop(f);
        drop(p);
        assert!(!dest2.exists());
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(left.len(), 1, "only r.json remains: {left:?}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_device_destination_is_written_in_place_not_replaced() {
        // Through symlinks, so a regression replaces the link, never the device itself.
        let d = scratch("device");
        let null = d.join("null.json");
        let full = d.join("full.json");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        std::os::unix::fs::symlink("/dev/full", &full).unwrap();
        write_atomic("--json", &null, b"{}\n").unwrap();
        let e = write_atomic("--json", &full, b"{}\n").unwrap_err();
        assert!(e.message.contains("No space left on device"), "{e}");
        for link in [&null, &full] {
            let m = std::fs::symlink_metadata(link).unwrap();
            assert!(m.file_type().is_symlink(), "{link:?} was replaced");
        }
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        // Two outputs may both be discarded.
        check_distinct(&[("--json", &null), ("--trace", &null)], &[]).unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_option() {
        let e = write_atomic("--json", Path::new("/nonexistent-dir/x.json"), b"{}").unwrap_err();
        assert_eq!(e.origin, "--json");
        assert!(e.message.contains("cannot create"), "{e}");
    }

    #[test]
    fn same_output_and_input_are_rejected() {
        let d = scratch("distinct");
        let input = d.join("s.toml");
        std::fs::write(&input, "x").unwrap();
        let e = check_distinct(&[("--json", &input)], &[("scenario", &input)]).unwrap_err();
        assert!(e.message.contains("is the input scenario"), "{e}");
        // Two outputs naming the same new file, one through `./`.
        let a = d.join("out.json");
        let b = d.join(".").join("out.json");
        let e = check_distinct(&[("--json", &a), ("--trace", &b)], &[]).unwrap_err();
        assert_eq!(e.origin, "--trace");
        assert!(e.message.contains("also the --json output"), "{e}");
        check_distinct(
            &[("--json", &a), ("--trace", &d.join("t.txt"))],
            &[("scenario", &input)],
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Containers written entry by entry give serde_json's own pretty bytes.
    #[test]
    fn streamed_pretty_json_equals_serde_json() {
        let v = serde_json::json!({
            "a": [1, {"b": "x\ny", "c": []}, {}],
            "d": {"e": [[], [2.5, null]], "f": "z"},
            "g": []
        });
        let mut buf: Vec<u8> = Vec::new();
        let mut doc = PrettyContainer::object(&mut buf, 0).unwrap();
        {
            let (out, inner) = doc.key("a").unwrap();
            let mut arr = PrettyContainer::array(out, inner).unwrap();
            for e in v["a"].as_array().unwrap() {
                arr.element(e).unwrap();
            }
            arr.end().unwrap();
        }
        doc.member("d", &v["d"]).unwrap();
        {
            let (out, inner) = doc.key("g").unwrap();
            PrettyContainer::array(out, inner).unwrap().end().unwrap();
        }
        doc.end().unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        let mut empty: Vec<u8> = Vec::new();
        PrettyContainer::object(&mut empty, 4)
            .unwrap()
            .end()
            .unwrap();
        assert_eq!(empty, b"{}");
    }

    #[test]
    fn scratch_files_leave_nothing_behind() {
        let d = scratch("scratch");
        let mut f = scratch_file(&d).unwrap();
        f.write_all(b"abc").unwrap();
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn long_names_are_shortened() {
        let long = "é".repeat(60_000);
        let s = echo(&long);
        assert!(s.len() < ECHO_MAX_BYTES + 40, "{}", s.len());
        assert!(s.ends_with("...(120000 bytes)"), "{s}");
        assert_eq!(echo("short"), "short");
        let msg = format!("unknown preset '{}'; accepted: a, b", "x".repeat(100_000));
        let short = shorten_words(&msg);
        assert!(short.starts_with("unknown preset 'xxx"), "{short}");
        assert!(
            short.ends_with("...(100003 bytes)'; accepted: a, b"),
            "{short}"
        );
        assert!(short.len() < 300);
        assert_eq!(shorten_words("a  b\tc\n"), "a  b\tc\n");
    }
}
