//! The integration tests, one binary: a module per former `tests/NAME.rs` (each linked the
//! whole crate on its own), the shared harness in `common/` and the raw HTTP client in
//! `raw_http/`. Tests of all modules run as threads of this one process: a test changes no
//! process-wide state (environment, current folder), and passes its own to the children it
//! starts (`Command::env`, `current_dir`). Fixtures stay beside, in `tests/` (`tests/hooks/`,
//! `tests/golden/`, `tests/lsp_face/`, …), found through `common::repo()`.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

mod common;
mod raw_http;

mod activities;
mod annotations;
mod answers;
mod clangd;
mod cli;
mod confinement;
mod daemon;
mod edits;
mod events;
mod fixture;
mod freshness;
mod gates;
mod go_peers;
mod golang;
mod golden;
mod harnesses;
mod hook_turns;
mod hooks;
mod hostile_reads;
mod http;
mod lsp_face;
mod lsp_face_eglot;
mod lsp_face_faithful;
mod lsp_face_go;
mod lsp_face_lean;
mod lsp_face_protocol;
mod polyglot;
mod private_modes;
mod protocol;
mod pyright;
mod real_projects;
mod recheck;
mod roots;
mod session_env;
mod setup;
mod status_page;
mod supervision;
mod tidy;
mod tool_list;
mod trust;
mod typescript;
mod workspace_diagnostics;
