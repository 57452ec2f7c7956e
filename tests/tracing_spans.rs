//! Named tasks poll inside a `tracing` span named `task` that carries the
//! task's name and id (for a completion, the id its errors show); unnamed
//! tasks get no span. The subscriber is global
//! (worker threads must see it), so this binary holds a single test.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fastexec::task;
use support::with_timeout;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span as recorded: its name and the `name`/`id` fields.
#[derive(Debug, Default, Clone, PartialEq)]
struct Recorded {
    span: String,
    name: Option<String>,
    id: Option<u64>,
    entered: usize,
    entered_on: Vec<String>,
}

impl Visit for Recorded {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "name" {
            self.name = Some(value.to_string());
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "id" {
            self.id = Some(value);
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// Every span in creation order, and which entry the registry's (reusable)
/// id currently points to.
#[derive(Default)]
struct Spans {
    all: Vec<Recorded>,
    by_id: HashMap<u64, usize>,
}

/// Records every span and every entry into it.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Spans>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut recorded = Recorded {
            span: attrs.metadata().name().to_string(),
            ..Default::default()
        };
        attrs.record(&mut recorded);
        let mut spans = self.0.lock().unwrap();
        let index = spans.all.len();
        spans.all.push(recorded);
        spans.by_id.insert(id.into_u64(), index);
    }

    fn on_enter(&self, id: &Id, _: Context<'_, S>) {
        let thread = std::thread::current().name().unwrap_or("").to_string();
        let mut spans = self.0.lock().unwrap();
        let index = spans.by_id[&id.into_u64()];
        let span = &mut spans.all[index];
        span.entered += 1;
        span.entered_on.push(thread);
    }
}

#[test]
fn named_tasks_poll_inside_a_span() {
    let recorder = Recorder::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(recorder.clone()))
        .unwrap();
    let load_id = with_timeout(|| {
        let ex = fastexec::Executor::builder().threads(2).build().unwrap();
        let fetch = task::Builder::new().name("fetch").on(&ex).spawn(async {
            // Polled twice: the span is entered twice.
            fastexec::yield_now().await;
        });
        ex.block_on(fetch).unwrap();
        let parse = task::Builder::new().name("parse").on(&ex).spawn(async {});
        ex.block_on(parse).unwrap();
        // Unnamed: no span.
        ex.block_on(ex.spawn(async {})).unwrap();
        ex.block_on(task::Builder::new().on(&ex).spawn(async {}))
            .unwrap();
        // A named completion: its span shows the number its errors show.
        let load = task::Builder::new()
            .name("load")
            .on(&ex)
            .spawn_completion(async {});
        ex.block_on(load.clone()).unwrap();
        ex.block_on(ex.spawn_completion(async {})).unwrap();
        load.id()
    });
    let spans = recorder.0.lock().unwrap().all.clone();
    assert_eq!(spans.len(), 3, "{spans:?}");
    assert!(spans.iter().all(|s| s.span == "task"), "{spans:?}");
    assert_eq!(spans[0].name.as_deref(), Some("fetch"));
    assert_eq!(spans[1].name.as_deref(), Some("parse"));
    assert_eq!(spans[2].name.as_deref(), Some("load"));
    assert_eq!(spans[2].id, Some(load_id), "{spans:?}");
    let (a, b) = (spans[0].id.unwrap(), spans[1].id.unwrap());
    assert!(a > 0 && b > 0 && a != b, "{spans:?}");
    assert_eq!(spans[0].entered, 2, "{spans:?}");
    assert_eq!(spans[1].entered, 1, "{spans:?}");
    assert!(
        spans
            .iter()
            .flat_map(|s| &s.entered_on)
            .all(|t| t.starts_with("fastexec-worker")),
        "polled on the workers: {spans:?}"
    );
}
