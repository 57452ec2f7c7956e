use fastexec::Completion;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
const SIDE: usize = 100;
struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BUILD: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 { ALLOCS.fetch_add(1, Relaxed); BYTES.fetch_add(l.size(), Relaxed); unsafe { std::alloc::System.alloc(l) } }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) { unsafe { std::alloc::System.dealloc(p, l) } }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 { ALLOCS.fetch_add(1, Relaxed); BYTES.fetch_add(n, Relaxed); unsafe { std::alloc::System.realloc(p, l, n) } }
}
#[global_allocator]
static A: Counting = Counting;
fn completion_lattice(ran: &Arc<AtomicUsize>) -> Completion<()> {
    let mut above: Vec<Option<Completion<()>>> = vec![None; SIDE];
    let mut left: Option<Completion<()>> = None;
    for _row in 0..SIDE {
        for slot in above.iter_mut() {
            let ran = ran.clone();
            let body = move || async move {
                ran.fetch_add(1, Relaxed);
            };
            let node = match (slot.take(), left.take()) {
                (None, None) => fastexec::spawn_completion(body()),
                (Some(dep), None) | (None, Some(dep)) => fastexec::spawn_after(dep, move |_| body()),
                (Some(up), Some(l)) => fastexec::spawn_after((up, l), move |_| body()),
            };
            *slot = Some(node.clone());
            left = Some(node);
        }
        left = None;
    }
    above.pop().flatten().unwrap()
}
fn probe() {
    let ran = Arc::new(AtomicUsize::new(0));
    let ex = fastexec::Executor::builder().threads(1).build().unwrap();
    let r = ran.clone();
    ex.block_on(ex.spawn(async move {
        let a0 = ALLOCS.load(Relaxed);
        let root = fastexec::spawn_completion(std::future::pending::<()>());
        let a1 = ALLOCS.load(Relaxed);
        let d1 = fastexec::spawn_after(root.clone(), move |_| async move { r.fetch_add(1, Relaxed); });
        let a2 = ALLOCS.load(Relaxed);
        let d2 = fastexec::spawn_after((root.clone(), d1.clone()), move |_| async move {});
        let a3 = ALLOCS.load(Relaxed);
        eprintln!("spawn_completion {} spawn_after(1 pending, first waiter) {} spawn_after(2 pending) {}", a1-a0, a2-a1, a3-a2);
        root.abort();
        let _ = d2.await;
    })).unwrap();
}
fn main() {
    probe();
    let iters: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(20);
    let ex = fastexec::Executor::builder().threads(1).build().unwrap();
    let t = std::time::Instant::now();
    let a0 = ALLOCS.load(Relaxed); let b0 = BYTES.load(Relaxed);
    for _ in 0..iters {
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        let built = ex.spawn(async move {
            let b0 = ALLOCS.load(Relaxed);
            let last = completion_lattice(&counter);
            BUILD.fetch_add(ALLOCS.load(Relaxed) - b0, Relaxed);
            last.await
        });
        ex.block_on(built).unwrap().unwrap();
        assert_eq!(ran.load(Relaxed), SIDE * SIDE);
    }
    let n = (iters * SIDE * SIDE) as f64;
    eprintln!("build allocs/node {:.2}", BUILD.load(Relaxed) as f64 / n);
    eprintln!("allocs/node {:.2} bytes/node {:.0}", (ALLOCS.load(Relaxed) - a0) as f64 / n, (BYTES.load(Relaxed) - b0) as f64 / n);
    eprintln!("{:.1} ns/node", t.elapsed().as_nanos() as f64 / (iters * SIDE * SIDE) as f64);
}
