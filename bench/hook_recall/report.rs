//! The hooks' later answers drained after each edit, and the recall report.

use super::*;

/// The session's next answers (a `Bash` call's hooks, one every second) until `wait` has
/// passed or, when scoring, every finding of the truth was named: the later findings they
/// carry into `out`, each with whether it was one of the truth's (other servers' into
/// `others`), and when the last hit came (from `since`).
pub(crate) fn drain(
    env: &Env,
    root: &Path,
    session: &str,
    wait: Duration,
    out: &mut Vec<(Named, bool)>,
    others: &mut Vec<String>,
    mut scoring: Option<(&mut HashMap<Key, usize>, Instant)>,
) -> Option<Duration> {
    let t = Instant::now();
    let mut last = None;
    while t.elapsed() < wait {
        std::thread::sleep(Duration::from_secs(1));
        env.run(
            root,
            &["hook", "pre-edit"],
            &bash_event(root, "PreToolUse", session),
        );
        let (_, answer) = env.run(
            root,
            &["hook", "post-edit", "--max-lines", "1000"],
            &bash_event(root, "PostToolUse", session),
        );
        let (named, other) = parse_all(root, &answer);
        note_others(others, "next answer", other);
        for n in named {
            let mut hit = false;
            if let Some((left, since)) = scoring.as_mut()
                && let Some(k) = left.get_mut(&n.item.key())
                && *k > 0
            {
                *k -= 1;
                hit = true;
                last = Some(since.elapsed());
            }
            out.push((n, hit));
        }
        if let Some((left, _)) = scoring.as_ref()
            && left.values().all(|n| *n == 0)
        {
            break;
        }
    }
    last
}

/// The table per kind and in all, then each miss and false positive.
pub(crate) fn report(cases: &[&Case], outcomes: &[Outcome], truths: &[Truth]) {
    println!(
        "\n{:<18} {:>5} {:>6} {:>9} {:>8} {:>7} {:>4} {:>7} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "kind",
        "edits",
        "truth",
        "post-edit",
        "+later",
        "gate",
        "FPs",
        "silent",
        "post p50",
        "post p95",
        "pre p50",
        "diag p50",
        "ratio"
    );
    let mut rows: Vec<(String, Vec<usize>)> = KINDS
        .iter()
        .map(|k| {
            (
                k.label().to_string(),
                (0..cases.len()).filter(|i| cases[*i].kind == *k).collect(),
            )
        })
        .collect();
    rows.push(("all".into(), (0..cases.len()).collect()));
    for (label, idx) in rows {
        if idx.is_empty() {
            continue;
        }
        let os: Vec<&Outcome> = idx.iter().map(|i| &outcomes[*i]).collect();
        let sum = |f: &dyn Fn(&Outcome) -> usize| os.iter().map(|o| f(o)).sum::<usize>();
        let truth = sum(&|o| o.truth);
        let pct = |n: usize, of: usize| {
            if of == 0 {
                "-".to_string()
            } else {
                format!("{:.0}%", 100.0 * n as f64 / of as f64)
            }
        };
        let fps =
            sum(&|o| o.post_fps.len() + o.later_fps.len() + o.gate_fps.len() + o.undo_fps.len());
        let silent: Vec<bool> = os.iter().filter_map(|o| o.silent).collect();
        let post: Vec<Duration> = os
            .iter()
            .flat_map(|o| o.post.iter().take(1).copied())
            .collect();
        let pre: Vec<Duration> = os.iter().flat_map(|o| o.pre.iter().copied()).collect();
        let diag: Vec<Duration> = os.iter().flat_map(|o| o.diag.iter().copied()).collect();
        let (p50, d50) = (percentile(&post, 0.5), percentile(&diag, 0.5));
        println!(
            "{:<18} {:>5} {:>6} {:>9} {:>8} {:>7} {:>4} {:>7} {:>8} {:>8} {:>8} {:>8} {:>6.2}x",
            label,
            os.len(),
            truth,
            pct(sum(&|o| o.post_hits), truth),
            pct(sum(&|o| o.post_hits + o.later_hits), truth),
            pct(sum(&|o| o.gate_hits), sum(&|o| o.gate_truth)),
            fps,
            if silent.is_empty() {
                "-".to_string()
            } else {
                format!("{}/{}", silent.iter().filter(|s| **s).count(), silent.len())
            },
            secs(p50),
            secs(percentile(&post, 0.95)),
            secs(percentile(&pre, 0.5)),
            secs(d50),
            p50.as_secs_f64() / d50.as_secs_f64().max(1e-9),
        );
    }
    let all_post: Vec<Duration> = outcomes
        .iter()
        .flat_map(|o| o.post.iter().copied())
        .collect();
    println!(
        "post-edit of edits and undos together: p50 {} s, p95 {} s; gate p50 {} s, p95 {} s",
        secs(percentile(&all_post, 0.5)),
        secs(percentile(&all_post, 0.95)),
        secs(percentile(
            &outcomes.iter().map(|o| o.gate).collect::<Vec<_>>(),
            0.5
        )),
        secs(percentile(
            &outcomes.iter().map(|o| o.gate).collect::<Vec<_>>(),
            0.95
        )),
    );
    for ((c, o), t) in cases.iter().zip(outcomes).zip(truths) {
        let mut lines = Vec::new();
        for m in &o.misses {
            lines.push(format!(
                "MISS (post-edit and later) {}:{} {} | {}",
                m.file, m.line, m.message, m.text
            ));
        }
        for m in &o.gate_misses {
            lines.push(format!(
                "MISS (gate) {}:{} {} | {}",
                m.file, m.line, m.message, m.text
            ));
        }
        for (what, list) in [
            ("post-edit", &o.post_fps),
            ("later", &o.later_fps),
            ("gate", &o.gate_fps),
            ("undo", &o.undo_fps),
        ] {
            for f in list.iter() {
                lines.push(format!(
                    "FALSE POSITIVE ({what}) {}:{} {} [{}] | {}",
                    f.file, f.line, f.message, f.severity, f.text
                ));
                for e in explain(t, f) {
                    lines.push(format!("    {e}"));
                }
            }
        }
        for x in &o.others {
            lines.push(format!("other server, not scored {x}"));
        }
        if o.silent == Some(false) {
            lines.push("NOT SILENT: a comment edit's hooks said something".into());
        }
        if let Some(d) = o.later_after {
            lines.push(format!(
                "later findings came {} s after the post-edit answer",
                secs(d)
            ));
        }
        if !lines.is_empty() {
            println!("\n{} ({}, {}):", c.name, c.kind.label(), c.module);
            for l in lines {
                println!("  {l}");
            }
        }
    }
}
