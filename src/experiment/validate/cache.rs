//! Validation results cached per binary and case: a case re-runs only when the binary or
//! the case file changed. The key is [`crate::experiment::sweep::fnv1a_128`] over the
//! binary's bytes and the case file's text; a cached entry is the case's [`SimResult`]
//! as JSON, written atomically. A missing, unreadable or corrupt entry is a miss.

use std::path::{Path, PathBuf};

use super::SimResult;
use super::case::Case;
use crate::experiment::sweep::fnv1a_128;

/// A cache directory and the identity of the running binary.
pub struct Cache {
    dir: PathBuf,
    binary: String,
}

impl Cache {
    /// The cache in `dir` for the binary at `exe` (its bytes are hashed once here).
    pub fn open(dir: &Path, exe: &Path) -> std::io::Result<Cache> {
        let bytes = std::fs::read(exe)?;
        std::fs::create_dir_all(dir)?;
        Ok(Cache {
            dir: dir.to_path_buf(),
            binary: format!("{:032x}", fnv1a_128(&bytes)),
        })
    }

    fn entry(&self, case: &Case) -> PathBuf {
        let key =
            fnv1a_128(format!("schedlab-validate-v1\n{}\n{}", self.binary, case.text).as_bytes());
        self.dir.join(format!("{}-{key:032x}.json", case.id))
    }

    /// The cached result of `case`, if any.
    pub fn get(&self, case: &Case) -> Option<SimResult> {
        let text = std::fs::read_to_string(self.entry(case)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Keep `sim` for `case` (a failure to write only loses the cache entry).
    pub fn put(&self, case: &Case, sim: &SimResult) {
        if let Ok(text) = serde_json::to_string(sim) {
            let _ =
                crate::output::write_atomic("validate cache", &self.entry(case), text.as_bytes());
        }
    }
}
