//! lspgate's basics, shared by every layer above: text positions and
//! encodings, process facts from /proc, raw JSON capture, and the workspace's file watching.

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod procfs;
pub mod raw;
pub mod regular;
pub mod text;
pub mod watch;
