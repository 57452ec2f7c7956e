//! A build-system-like pipeline on `fastexec::graph`: fetch sources, generate
//! code (a subflow that adds compile tasks it discovers), compile modules in
//! parallel, link, run flaky tests with retries, package. Prints the report
//! (a table with the critical path), then writes the Chrome trace and the DOT
//! graph of the finished run (states coloured, subflow tasks included).
//!
//! ```text
//! cargo run --release --example build_pipeline [TRACE_JSON_PATH]
//! ```
//! The trace goes to `TRACE_JSON_PATH` (default: `build_pipeline.trace.json`
//! in the temporary directory), the DOT graph beside it, with `.dot` added.
//! Open the trace in https://ui.perfetto.dev (or chrome://tracing).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fastexec::graph::{BoxError, Graph, Inputs, Task};

/// What the steps produce. One output type per graph: an enum lets each step
/// produce its own kind of artifact.
#[derive(Debug)]
enum Artifact {
    Sources(Vec<String>),
    Object { name: String, size: usize },
    Binary { size: usize },
    TestsPassed(u32),
    Package(String),
}

const MODULES: [&str; 6] = ["lexer", "parser", "types", "codegen", "runtime", "cli"];

/// Stands in for real work: keeps a worker busy for about `d`.
fn busy(d: Duration) -> usize {
    let start = Instant::now();
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let mut rounds = 0usize;
    while start.elapsed() < d {
        h.write_usize(rounds);
        rounds += 1;
    }
    (h.finish() as usize % 4096) + rounds % 7
}

async fn fetch(_: Inputs<Artifact>) -> Result<Artifact, BoxError> {
    busy(Duration::from_millis(5));
    Ok(Artifact::Sources(
        MODULES.iter().map(|m| format!("src/{m}.rs")).collect(),
    ))
}

fn compile(module: String, cost_ms: u64) -> Task<Artifact> {
    let id = format!("compile:{module}");
    Task::new(id, move |inp: Inputs<Artifact>| {
        let module = module.clone();
        async move {
            let Some(Artifact::Sources(files)) = inp.get("fetch") else {
                return Err("compile needs the fetched sources".into());
            };
            let size = files.len() * 1000 + busy(Duration::from_millis(cost_ms));
            Ok(Artifact::Object {
                name: format!("{module}.o"),
                size,
            })
        }
    })
    .after(["fetch"])
    .timeout(Duration::from_secs(5))
}

/// Discovers generated modules at run time and adds their compile steps to
/// the running graph (a subflow), then waits for them (`RunHandle::wait`);
/// `link`, which depends on `generate`, so runs after them too.
async fn generate(inp: Inputs<Artifact>) -> Result<Artifact, BoxError> {
    busy(Duration::from_millis(3));
    let generated: Vec<String> = (0..3).map(|i| format!("gen_{i}")).collect();
    inp.add_batch(generated.iter().map(|m| compile(m.clone(), 4)))?;
    let mut objects = Vec::new();
    for m in &generated {
        if let Artifact::Object { name, .. } = &*inp.run().wait(&format!("compile:{m}")).await? {
            objects.push(name.clone());
        }
    }
    Ok(Artifact::Sources(objects))
}

async fn link(inp: Inputs<Artifact>) -> Result<Artifact, BoxError> {
    let objects: usize = inp
        .values()
        .map(|a| match a {
            Artifact::Object { size, .. } => *size,
            Artifact::Sources(generated) => generated.len() * 500,
            _ => 0,
        })
        .sum();
    busy(Duration::from_millis(8));
    Ok(Artifact::Binary { size: objects })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let trace_path = std::env::args().nth(1).unwrap_or_else(|| {
        std::env::temp_dir()
            .join("build_pipeline.trace.json")
            .display()
            .to_string()
    });

    let mut g = Graph::<Artifact>::new();
    g.add(Task::new("fetch", fetch))?;
    g.add(Task::new("generate", generate).after(["fetch"]))?;
    // Module compiles, in a batch; their costs differ so the critical path shows.
    g.add_batch(
        MODULES
            .iter()
            .enumerate()
            .map(|(i, m)| compile(m.to_string(), 4 + 3 * i as u64)),
    )?;
    let mut link_deps: Vec<String> = MODULES.iter().map(|m| format!("compile:{m}")).collect();
    link_deps.push("generate".into());
    g.add(Task::new("link", link).after(&link_deps))?;

    // The integration tests are flaky: they fail twice, then pass.
    let runs = Arc::new(AtomicU32::new(0));
    g.add(
        Task::new("test", move |inp: Inputs<Artifact>| {
            let attempt = runs.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                busy(Duration::from_millis(6));
                if attempt < 3 {
                    return Err(format!("flaky test failed (attempt {})", inp.attempt()).into());
                }
                Ok(Artifact::TestsPassed(42))
            }
        })
        .after(["link"])
        .retries(3),
    )?;
    g.add(
        Task::new("package", |inp: Inputs<Artifact>| async move {
            let Some(Artifact::Binary { size }) = inp.get("link") else {
                return Err("nothing to package".into());
            };
            Ok(Artifact::Package(format!("app-1.0.tar.gz ({size} bytes)")))
        })
        .after(["link", "test"]),
    )?;
    let dot = g.to_dot();

    let report = g.run_blocking();
    println!("{report}");
    if let Some(Artifact::Package(name)) = report.output("package") {
        println!("built {name}");
    }
    if let Some(Artifact::TestsPassed(n)) = report.output("test") {
        println!("{n} tests passed");
    }

    report.write_chrome_trace(&trace_path)?;
    let dot_path = format!("{trace_path}.dot");
    std::fs::write(&dot_path, report.to_dot())?;
    println!(
        "trace: {trace_path}\ngraph: {dot_path} (after the run; before it: {} lines of DOT)",
        dot.lines().count()
    );
    if report.is_success() {
        Ok(())
    } else {
        Err("the build failed".into())
    }
}
