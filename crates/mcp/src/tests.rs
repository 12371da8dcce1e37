//! A session's own tasks end with the session: an MCP client over an in-memory pipe connects,
//! subscribes, and goes; nothing it started keeps listening for server events afterwards.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;

use super::serve_on;
use crate::ops::EngineOptions;

/// Waits (bounded) until `f` holds.
async fn until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: not within 2 s");
}

#[tokio::test]
async fn a_sessions_log_forwarding_and_subscriptions_end_with_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    let (registry, engine) =
        crate::ops::activity::dropped::engine_with(dir.path(), EngineOptions::default());
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(theirs);
    let served = tokio::spawn(serve_on(engine.clone(), read, write, 1 << 20));
    let client = ().serve(ours).await.expect("initialize");
    // The forwarding task starts once the client says it is initialized.
    until("the session forwards server events", || {
        registry.event_listeners() == 1
    })
    .await;
    // A subscription's follower listens to the event log.
    #[allow(deprecated)]
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new("lspgate://events"))
        .await
        .expect("subscribe");
    let followers = || engine.shared().events().followers();
    until("the subscription follows the log", || followers() == 1).await;

    // The client goes; no server event and no log event comes after.
    client.cancel().await.expect("cancel");
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the session did not end")
        .unwrap()
        .unwrap();
    until("the forwarding task ended with the session", || {
        registry.event_listeners() == 0
    })
    .await;
    until("the subscription ended with the session", || {
        followers() == 0
    })
    .await;
}

/// Two listen streams set up at once (each in its own task, as rmcp runs requests): each
/// follows the log from where it stood at its own acknowledgment, not the other's.
#[tokio::test]
async fn concurrent_listen_streams_keep_their_own_baseline() {
    let baselines = Arc::new(super::Baselines::default());
    let (a_set, a_go) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let first = {
        let (b, set, go) = (baselines.clone(), a_set.clone(), a_go.clone());
        tokio::spawn(async move {
            b.set(5);
            set.notify_one();
            go.notified().await;
            b.take()
        })
    };
    a_set.notified().await;
    let second = {
        let b = baselines.clone();
        tokio::spawn(async move {
            b.set(9);
            b.take()
        })
    };
    assert_eq!(second.await.unwrap(), Some(9));
    a_go.notify_one();
    assert_eq!(
        first.await.unwrap(),
        Some(5),
        "the first stream took the second's baseline"
    );
    assert_eq!(baselines.take(), None);
}

/// An MCP task follows its activity only while its session lasts, and says how long it lasts.
#[tokio::test]
async fn a_task_stops_following_its_activity_when_the_session_ends() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::ops::activity::dropped::engine(dir.path());
    crate::ops::activity::dropped::stuck(&engine, 1);
    let tasks = rmcp::task_manager::TaskManager::new();
    let (session, mut life) = tokio::sync::watch::channel(());
    let ended = async move { while life.changed().await.is_ok() {} };
    let created = super::tasks::follow(&tasks, engine.clone(), "act-1".into(), ended);
    assert_eq!(
        created.task.ttl_ms,
        Some(super::tasks::TTL.as_millis() as u64),
        "a finished task's result is dropped in time"
    );
    tokio::task::yield_now().await;
    assert_eq!(tasks.running_task_count(), 1);
    drop(session);
    until("the task ended with its session", || {
        tasks.running_task_count() == 0
    })
    .await;
    assert!(engine.shared().busy(), "the activity itself goes on");
}
