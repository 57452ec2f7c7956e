//! Graphviz DOT export.

use std::fmt::Write;

use super::{TaskId, TaskState};

/// Renders nodes given as `(id, dependency ids, final state if known)`.
/// Edges point from a dependency to its dependent; states colour the nodes.
pub(crate) fn render<'a, I, D>(nodes: I) -> String
where
    I: Iterator<Item = (&'a TaskId, D, Option<TaskState>)>,
    D: Iterator<Item = &'a TaskId>,
{
    let mut out = String::from("digraph tasks {\n  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n");
    let mut edges = String::new();
    for (raw, deps, state) in nodes {
        let id = quote(raw.as_str());
        match state {
            Some(s) => {
                let label = quote(&format!("{raw}\n{s}"));
                let _ = writeln!(out, "  {id} [label={label}, fillcolor=\"{}\"];", colour(s));
            }
            None => {
                let _ = writeln!(out, "  {id};");
            }
        }
        for dep in deps {
            let _ = writeln!(edges, "  {} -> {id};", quote(dep.as_str()));
        }
    }
    out.push_str(&edges);
    out.push_str("}\n");
    out
}

/// A DOT double-quoted string. A NUL, which a DOT string cannot hold
/// (Graphviz's scanner ends the string there), is spelled `\0`. Distinct
/// strings stay distinct: each backslash is doubled, so the pairs `\"`,
/// `\n` and `\0` cannot come from other characters.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\0' => q.push_str("\\0"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

fn colour(s: TaskState) -> &'static str {
    match s {
        TaskState::Completed => "palegreen",
        TaskState::Failed => "salmon",
        TaskState::UpstreamFailed => "lightpink",
        TaskState::Cancelled => "lightgrey",
        TaskState::Running => "lightskyblue",
        TaskState::Paused => "khaki",
        TaskState::Pending | TaskState::Ready => "white",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_ids_and_draws_edges_in_flow_direction() {
        let a = TaskId::from("a\"1");
        let b = TaskId::from("b");
        let dot = render(
            [
                (&a, Vec::new().into_iter(), None),
                (&b, vec![&a].into_iter(), Some(TaskState::Failed)),
            ]
            .into_iter(),
        );
        assert!(dot.starts_with("digraph tasks {"));
        assert!(dot.contains("  \"a\\\"1\";\n"), "{dot}");
        assert!(dot.contains("\"a\\\"1\" -> \"b\";"), "{dot}");
        assert!(
            dot.contains("\"b\" [label=\"b\\nfailed\", fillcolor=\"salmon\"]"),
            "{dot}"
        );
        assert!(dot.ends_with("}\n"));
    }
}
