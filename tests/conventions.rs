//! The command line's conventions: shell completions, the man pages, defaults in `--help`.

use std::process::Command;

fn schedlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .output()
        .expect("schedlab runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bash_completion_names_the_subcommands_and_their_options() {
    let (code, script, err) = schedlab(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(script.contains("complete -F _schedlab"), "{script}");
    for word in [
        "run",
        "compare",
        "topo",
        "sweep",
        "--variant",
        "--runs",
        "--seed",
    ] {
        assert!(script.contains(word), "bash completion lacks {word}");
    }
}

#[test]
fn zsh_and_fish_completions_exist_and_an_unknown_shell_is_refused() {
    let (code, zsh, _) = schedlab(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef schedlab"), "{zsh}");
    let (code, fish, _) = schedlab(&["completions", "fish"]);
    assert_eq!(code, 0);
    assert!(fish.contains("complete -c schedlab"), "{fish}");
    let (code, _, err) = schedlab(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("possible values"), "{err}");
}

#[test]
fn man_page_lists_every_subcommand() {
    let (code, page, err) = schedlab(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        page.starts_with(".ie") || page.contains(".TH schedlab"),
        "{page}"
    );
    for sub in [
        "run",
        "compare",
        "topo",
        "list",
        "sweep",
        "report",
        "completions",
    ] {
        assert!(
            page.contains(&format!("schedlab\\-{sub}")) || page.contains(&format!("\n{sub}\n")),
            "man page lacks {sub}: {page}"
        );
    }
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let dir = std::env::temp_dir().join(format!("schedlab-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _, err) = schedlab(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let run = std::fs::read_to_string(dir.join("schedlab-run.1")).expect("schedlab-run.1");
    assert!(run.contains(".TH schedlab-run"), "{run}");
    assert!(run.contains("runs"), "{run}");
    assert!(dir.join("schedlab.1").exists());
    assert!(dir.join("schedlab-compare.1").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_shows_the_defaults_of_runs_and_seed() {
    for sub in ["run", "compare"] {
        let (code, help, _) = schedlab(&[sub, "--help"]);
        assert_eq!(code, 0);
        let runs = help.find("--runs").expect("--runs in help");
        let seed = help.find("--seed").expect("--seed in help");
        assert!(help[runs..].contains("[default:"), "{sub} --runs: {help}");
        assert!(
            help[seed..].contains("[default: the scenario's run.seed, else 1]"),
            "{help}"
        );
        // The kernel profile's default names the newest profile (clap joins the doc
        // comment's lines with a space).
        let kernel = help.find("--kernel").expect("--kernel in help");
        let default = format!(
            "[default: the scenario's kernel.profile, else {}, the newest]",
            schedlab::kconfig::profiles::DEFAULT_PROFILE
        );
        assert!(help[kernel..].contains(&default), "{sub} --kernel: {help}");
    }
}

#[test]
fn bisect_help_shows_the_library_defaults() {
    use schedlab::experiment::bisect::search::{DEFAULT_BUDGET_RUNS, DEFAULT_RUNS};
    let (code, help, _) = schedlab(&["bisect", "--help"]);
    assert_eq!(code, 0);
    let after = |opt: &str| &help[help.find(opt).expect(opt)..];
    assert!(
        after("--runs").contains(&format!("[default: {DEFAULT_RUNS}]")),
        "{help}"
    );
    assert!(
        after("--budget").contains(&format!("[default: {DEFAULT_BUDGET_RUNS}]")),
        "{help}"
    );
    assert!(
        after("--seed").contains("[default: the scenario's run.seed, else 1]"),
        "{help}"
    );
}
