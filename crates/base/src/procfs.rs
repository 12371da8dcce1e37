//! What Linux's `/proc` says of a process (its state, parent, start time, resident memory) and
//! of this boot, read in one place.

// /proc is no workspace's: read directly.
#![allow(clippy::disallowed_methods)]

/// The fields of `/proc/PID/stat` lspgate uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// `R`, `S`, `D`, `Z` (a zombie: it has exited), `X` (dead) …
    pub state: char,
    pub ppid: u32,
    /// Clock ticks after boot: with the boot id, tells a process from a later one with its pid.
    pub start_time: u64,
}

/// `/proc/PID/stat`, or `None` when there is no such process.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The fields after the command name, which may itself hold spaces and parentheses: state is
/// field 3, the parent 4, the start time 22.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Whether process `pid` runs (a zombie, which has exited, does not).
pub fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
}

/// Every process's pid.
pub fn pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Resident memory of a process, in bytes (`VmRSS` of `/proc/PID/status`).
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// How long process `pid` has run, in seconds (its start time against `/proc/uptime`, at the
/// kernel's usual 100 clock ticks a second).
pub fn uptime_secs(pid: u32) -> Option<u64> {
    let started = stat(pid)?.start_time;
    let boot: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((boot - started as f64 / 100.0).max(0.0) as u64)
}

/// This boot's id (empty when the kernel does not say).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        let line = "42 (a (b) c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 1 2 3";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: 'S',
                ppid: 7,
                start_time: 12345
            })
        );
        assert_eq!(parse_stat("42 (x"), None);
        let me = stat(std::process::id()).expect("this process");
        assert!(alive(std::process::id()) && me.start_time > 0);
        assert!(resident_bytes(std::process::id()).is_some_and(|b| b > 0));
        assert!(pids().contains(&std::process::id()));
        assert!(uptime_secs(std::process::id()).is_some_and(|s| s < 3600));
    }
}
