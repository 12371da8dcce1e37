//! Where the command line's output goes: stdout (the command's answer) and stderr (what went
//! wrong), each written whole; a closed stdout (`| head`) is not an error worth a panic.

use std::io::Write as _;

/// Writes `text` to stdout.
pub fn stdout(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes `text` to stderr.
pub fn stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
