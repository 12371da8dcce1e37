//! Micro-benchmark of lspgate's hot paths, each with its figure: LSP framing (encode + read),
//! position conversion both ways on a non-ASCII line, the freshness check a document does on
//! every access (young file: stat + read + compare; settled file: stat), and rendering 120
//! references as text.
//!
//! Run: `cargo bench --bench hot_paths` (`BENCH_CALLS` sets the iterations).
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and measurements fail loudly

use std::time::{Duration, Instant};

use lspgate::documents::DiskCopy;
use lspgate::lsp::framing;
use lspgate::ops::render::Render;
use lspgate::ops::types::{Loc, ReferencesResult};
use lspgate::text::{self, Encoding, LineIndex};

fn iterations() -> u32 {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn per_op(n: u32, mut f: impl FnMut()) -> Duration {
    for _ in 0..(n / 10).max(1) {
        f();
    }
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed() / n
}

fn main() {
    let n = iterations();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let body = br#"{"jsonrpc":"2.0","id":7,"result":{"contents":{"kind":"markdown","value":"```python\n(method) def total() -> float\n```"}}}"#;
    let framing_t = per_op(n, || {
        let frame = framing::encode(body);
        let mut r = tokio::io::BufReader::new(frame.as_slice());
        let got = rt.block_on(framing::read_frame(&mut r, 1 << 20)).unwrap();
        std::hint::black_box(got);
    });

    let text: String = (0..200)
        .map(|i| format!("    label_{i} = \"Total: 😀 café\"; total = cart.total()  # {i}\n"))
        .collect();
    let index = LineIndex::new(&text);
    let positions_t = per_op(n, || {
        let (l, c) = text::to_wire(&text, &index, 150, 40, Encoding::Utf16).unwrap();
        std::hint::black_box(text::from_wire(&text, &index, l, c, Encoding::Utf16));
    });

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    std::fs::write(&file, &text).unwrap();
    // What `Documents::lease` does on every access of an open, unchanged document: while the
    // file is young, stat + read + compare; once its stamp has settled, stat alone.
    let (disk_text, copy) = DiskCopy::read(&file).unwrap();
    let young_t = per_op(n / 10, || {
        assert!(copy.is_fresh(&file, &disk_text));
    });
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (disk_text, copy) = DiskCopy::read(&file).unwrap();
    let settled_t = per_op(n / 10, || {
        assert!(copy.is_fresh(&file, &disk_text));
    });

    let locations: Vec<Loc> = (0..120)
        .map(|i| Loc {
            file: format!("pkg/caller_{}.py", i / 4),
            line: 10 + i,
            column: 12,
            end_line: 10 + i,
            end_column: 19,
            text: "total = compute(price, quantity) + compute(tax, 1)".into(),
            text_omitted: None,
        })
        .collect();
    let refs = ReferencesResult {
        total: 120,
        locations,
        next_cursor: None,
        partial: false,
        reason: None,
    };
    let mut chars = (0, 0);
    let render_t = per_op(n / 10, || {
        let full = refs.render(false);
        let terse = refs.render(true);
        chars = (full.chars().count(), terse.chars().count());
        std::hint::black_box((full, terse));
    });

    println!("hot paths, mean per operation over {n} iterations (fewer for I/O and rendering)");
    println!("| path | time |");
    println!("|---|---|");
    println!(
        "| frame encode + read (one hover answer) | {:.2} µs |",
        framing_t.as_secs_f64() * 1e6
    );
    println!(
        "| position to server and back (UTF-16, non-ASCII line) | {:.2} µs |",
        positions_t.as_secs_f64() * 1e6
    );
    println!(
        "| document freshness check, file changed in the last 2 s (stat + read + compare, 12 KB) | {:.2} µs |",
        young_t.as_secs_f64() * 1e6
    );
    println!(
        "| document freshness check, settled file (stat, stamp compare) | {:.2} µs |",
        settled_t.as_secs_f64() * 1e6
    );
    println!(
        "| render 120 references (text and terse) | {:.2} µs |",
        render_t.as_secs_f64() * 1e6
    );
    println!(
        "characters per reference: {:.1} (text), {:.1} (terse)",
        chars.0 as f64 / 120.0,
        chars.1 as f64 / 120.0
    );
}
