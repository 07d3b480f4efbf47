//! A message of a conversation, as a user writes it, to its questions and their clusters: the
//! limits hold (questions per message, characters per question, terms per question), every
//! question has terms, and clustering the questions, in either order, gives the same groups.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_content::conversations::{
    self, Item, MAX_QUESTION_CHARS, MAX_QUESTIONS_PER_MESSAGE, MAX_TERMS,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let questions = conversations::questions(text);
    assert!(questions.len() <= MAX_QUESTIONS_PER_MESSAGE);
    for q in &questions {
        assert!(q.text.chars().count() <= MAX_QUESTION_CHARS, "{q:?}");
        assert!(!q.terms.is_empty() && q.terms.len() <= MAX_TERMS, "{q:?}");
        let covered = conversations::coverage(&q.terms, &q.text);
        assert!((0.0..=1.0).contains(&covered), "{q:?}: {covered}");
    }
    // Every term of every question, and each question, as items to cluster.
    let ids: Vec<String> = (0..questions.len()).map(|i| format!("q{i}")).collect();
    let items: Vec<Item<'_>> = questions
        .iter()
        .zip(&ids)
        .map(|(q, id)| Item { id, terms: &q.terms })
        .collect();
    let forward = conversations::cluster(&items).unwrap();
    let mut reversed = items.clone();
    reversed.reverse();
    let backward = conversations::cluster(&reversed).unwrap();
    let named = |groups: Vec<Vec<usize>>, items: &[Item<'_>]| -> Vec<Vec<String>> {
        groups
            .into_iter()
            .map(|g| g.into_iter().map(|i| items[i].id.to_string()).collect())
            .collect()
    };
    assert_eq!(named(forward, &items), named(backward, &reversed));
});
