//! `sweep slurm`: the sbatch scripts of a sweep. `slurm/run.sbatch` is a job array with one
//! task per shard (task K runs `schedlab sweep run DIR --shard K/N`, reading
//! `$SLURM_ARRAY_TASK_ID`); `slurm/merge.sbatch` merges the results into
//! `DIR/results.sqlite` and is submitted with `--dependency=afterany:` on the array, so it
//! runs whatever happened to the tasks. The nodes need only the schedlab binary and the sweep
//! directory on a shared file system. Resubmitting `run.sbatch` after a failure runs only the
//! runs still without a result.

use std::path::{Path, PathBuf};

use crate::error::{InputError, InputResult};

/// The options of the scripts.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// The schedlab binary the nodes run (absolute).
    pub binary: PathBuf,
    /// The sweep directory (absolute).
    pub dir: PathBuf,
    pub partition: Option<String>,
    /// Array tasks (= shards).
    pub array_size: usize,
    /// `--time` of each array task (Slurm's format, e.g. `01:00:00`).
    pub time: Option<String>,
    /// CPUs per array task (the runs of a task use them all).
    pub cpus_per_task: usize,
}

/// Shell-quote a word for a bash script.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn header(o: &SlurmOptions, name: &str, log: &str) -> String {
    let logs = o.dir.join("slurm").join("logs");
    let mut s = format!(
        "#!/bin/bash\n# Written by `schedlab sweep slurm`; submit with sbatch.\n\
         #SBATCH --job-name={name}\n#SBATCH --output={}\n",
        sh_quote(&logs.join(log).display().to_string())
    );
    if let Some(p) = &o.partition {
        s.push_str(&format!("#SBATCH --partition={}\n", sh_quote(p)));
    }
    if let Some(t) = &o.time {
        s.push_str(&format!("#SBATCH --time={}\n", sh_quote(t)));
    }
    s
}

/// The job-array script.
pub fn run_script(o: &SlurmOptions) -> String {
    let mut s = header(o, "schedlab-sweep", "run-%A_%a.out");
    s.push_str(&format!(
        "#SBATCH --array=0-{}\n#SBATCH --cpus-per-task={}\n#SBATCH --ntasks=1\nset -eu\n\
         exec {} sweep run {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" --jobs \"${{SLURM_CPUS_PER_TASK:-{}}}\"\n",
        o.array_size - 1,
        o.cpus_per_task,
        sh_quote(&o.binary.display().to_string()),
        sh_quote(&o.dir.display().to_string()),
        o.array_size,
        o.cpus_per_task,
    ));
    s
}

/// The merge script (submitted after the array).
pub fn merge_script(o: &SlurmOptions) -> String {
    let mut s = header(o, "schedlab-sweep-merge", "merge-%j.out");
    s.push_str(&format!(
        "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\nset -eu\nexec {} sweep merge {} -o {}\n",
        sh_quote(&o.binary.display().to_string()),
        sh_quote(&o.dir.display().to_string()),
        sh_quote(&o.dir.join("results.sqlite").display().to_string()),
    ));
    s
}

/// Write `slurm/run.sbatch` and `slurm/merge.sbatch` (and `slurm/logs/`); returns their paths.
pub fn write_scripts(o: &SlurmOptions) -> InputResult<(PathBuf, PathBuf)> {
    let dir = o.dir.join("slurm");
    std::fs::create_dir_all(dir.join("logs"))
        .map_err(|e| InputError::new(dir.display().to_string(), format!("cannot create: {e}")))?;
    let run = dir.join("run.sbatch");
    let merge = dir.join("merge.sbatch");
    crate::output::AtomicFile::create("sweep slurm", &run)?
        .write_commit(run_script(o).as_bytes())?;
    crate::output::AtomicFile::create("sweep slurm", &merge)?
        .write_commit(merge_script(o).as_bytes())?;
    Ok((run, merge))
}

/// `sbatch --parsable [ARGS] SCRIPT`; returns the job id.
pub fn sbatch(script: &Path, args: &[String]) -> InputResult<String> {
    let out = std::process::Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .map_err(|e| {
            InputError::new(
                "--submit",
                format!("cannot run sbatch: {e}; accepted: a host with Slurm's sbatch on PATH"),
            )
        })?;
    if !out.status.success() {
        return Err(InputError::new(
            "--submit",
            format!(
                "sbatch {} failed: {}",
                script.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
    Ok(text
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string())
}

/// Submit the array, then the merge job depending on it; returns both job ids.
pub fn submit(run: &Path, merge: &Path) -> InputResult<(String, String)> {
    let array = sbatch(run, &[])?;
    let merge = sbatch(merge, &[format!("--dependency=afterany:{array}")])?;
    Ok((array, merge))
}
