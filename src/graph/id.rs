//! Task identifiers.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

/// The name of a task in a [`Graph`](super::Graph).
///
/// A `TaskId` is a cheaply cloneable string (an `Arc<str>`): ids are copied
/// into dependency lists, inputs, errors and reports, so cloning must not
/// allocate. Anything string-like converts into one.
///
/// ```
/// use fastexec::graph::TaskId;
///
/// let id = TaskId::from("compile");
/// assert_eq!(id.as_str(), "compile");
/// assert_eq!(id, TaskId::from(String::from("compile")));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(Arc<str>);

impl TaskId {
    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for TaskId {
    fn from(s: &str) -> Self {
        TaskId(s.into())
    }
}

impl From<String> for TaskId {
    fn from(s: String) -> Self {
        TaskId(s.into())
    }
}

impl From<&String> for TaskId {
    fn from(s: &String) -> Self {
        TaskId(s.as_str().into())
    }
}

impl From<&TaskId> for TaskId {
    fn from(id: &TaskId) -> Self {
        id.clone()
    }
}

// Lets `HashMap<TaskId, _>` be looked up with a `&str`.
impl Borrow<str> for TaskId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}
