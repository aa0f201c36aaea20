//! The binary starts itself again with glibc's huge-page tunable when the kernel gives
//! huge pages to memory that asks (`madvise` mode), and never overrides tunables the
//! user set. Read from the running process's environment (`idf-verify lsp` waits on
//! its input, so it is alive to be read).
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn environment_of_running_lsp(tunables: Option<&str>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_idf-verify"));
    cmd.arg("lsp").stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
    cmd.env_remove("GLIBC_TUNABLES");
    if let Some(t) = tunables {
        cmd.env("GLIBC_TUNABLES", t);
    }
    let mut child = cmd.spawn().unwrap();
    let path = format!("/proc/{}/environ", child.id());
    // The start-up's own exec comes first: wait until the process runs the binary
    // with its final environment (its command line then names `lsp` and the server
    // waits on its input; the environment no longer changes).
    let start = Instant::now();
    let mut env = String::new();
    while start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
        env = String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
        if env.contains("GLIBC_TUNABLES=")
            || tunables.is_none() && start.elapsed() > Duration::from_secs(2)
        {
            break;
        }
    }
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
    env
}

#[test]
fn huge_pages_are_asked_for_and_the_users_tunables_kept() {
    let mode =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let env = environment_of_running_lsp(None);
    if mode.contains("[madvise]") {
        assert!(env.contains("GLIBC_TUNABLES=glibc.malloc.hugetlb=1"), "{env:?}");
    } else {
        assert!(!env.contains("GLIBC_TUNABLES="), "{env:?}");
    }
    let env = environment_of_running_lsp(Some("glibc.malloc.check=0"));
    assert!(env.contains("GLIBC_TUNABLES=glibc.malloc.check=0"), "{env:?}");
    assert!(!env.contains("hugetlb"), "{env:?}");
}
