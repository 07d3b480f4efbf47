//! Threads for the CPU work on large documents: a page at the content limits is 20 MB of JSON,
//! and parsing, hashing or freeing it takes a tenth of a second or more, which a merge does for
//! three versions at once.

/// Runs `a` here and `b` on a scoped thread, and returns both results. Like `std::thread::spawn`,
/// it panics when the process cannot start a thread; a panic in `b` resumes here.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    std::thread::scope(|scope| {
        let handle = scope.spawn(b);
        let ra = a();
        let rb = handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (ra, rb)
    })
}

/// Frees `value` on another thread: dropping a parsed document at the limits (millions of
/// allocations) would otherwise add its cost to the request that is done with it.
pub fn drop_later<T: Send + 'static>(value: T) {
    // When no thread can be started, the value is dropped here, with the failed closure.
    let _ = std::thread::Builder::new()
        .name("quire-drop".into())
        .spawn(move || drop(value));
}

/// Parses the versions of a page's document (stored JSON), the larger ones on their own threads:
/// a page at the content limits takes a quarter of a second to parse.
pub fn parse_documents(texts: [Option<String>; 3]) -> [Option<serde_json::Result<crate::Document>>; 3] {
    const WORTH_A_THREAD: usize = 1 << 20;
    let parse = |text: Option<String>| text.map(|t| serde_json::from_str::<crate::Document>(&t));
    let [a, b, c] = texts;
    if [&a, &b, &c]
        .iter()
        .all(|t| t.as_ref().is_none_or(|t| t.len() < WORTH_A_THREAD))
    {
        return [parse(a), parse(b), parse(c)];
    }
    let ((a, b), c) = join(|| join(|| parse(a), || parse(b)), || parse(c));
    [a, b, c]
}
