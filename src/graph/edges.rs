//! [`Edges`]: a node's dependencies or dependents, by index.

use std::ops::Deref;

/// A short list of node indices, kept inline up to two: most tasks have
/// one or two dependencies and dependents, and an inline list costs no
/// allocation when the graph is built and no pointer to chase when a
/// completion releases its dependents.
#[derive(Clone, Debug)]
pub(crate) enum Edges {
    Inline { len: u8, ids: [u32; 2] },
    Heap(Vec<u32>),
}

impl Default for Edges {
    fn default() -> Self {
        Edges::Inline {
            len: 0,
            ids: [0; 2],
        }
    }
}

impl Edges {
    #[inline]
    pub(crate) fn push(&mut self, id: u32) {
        match self {
            Edges::Inline { len, ids } if (*len as usize) < ids.len() => {
                ids[*len as usize] = id;
                *len += 1;
            }
            Edges::Inline { ids, .. } => {
                let mut heap = Vec::with_capacity(4);
                heap.extend_from_slice(ids);
                heap.push(id);
                *self = Edges::Heap(heap);
            }
            Edges::Heap(heap) => heap.push(id),
        }
    }
}

impl Deref for Edges {
    type Target = [u32];

    #[inline]
    fn deref(&self) -> &[u32] {
        match self {
            Edges::Inline { len, ids } => &ids[..*len as usize],
            Edges::Heap(heap) => heap,
        }
    }
}

impl FromIterator<u32> for Edges {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut edges = Edges::default();
        for id in iter {
            edges.push(id);
        }
        edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_then_heap_keeps_order() {
        let mut e = Edges::default();
        assert!(e.is_empty());
        for i in 0..5 {
            e.push(i * 10);
            assert_eq!(e.len(), i as usize + 1);
        }
        assert_eq!(&*e, &[0, 10, 20, 30, 40]);
        assert!(matches!(e, Edges::Heap(_)));
        let two: Edges = [7, 8].into_iter().collect();
        assert!(matches!(two, Edges::Inline { len: 2, .. }));
        assert_eq!(&*two, &[7, 8]);
    }
}
