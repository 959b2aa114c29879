//! The cache's entries and its file format: round trips, damage, what is kept, the delta.

use super::*;

fn filled() -> LoweredCache {
    let mut c = LoweredCache::default();
    c.insert(7, b"seven".to_vec());
    c.insert(u128::MAX, vec![1, 2, 3]);
    c
}

#[test]
fn round_trips_and_rejects_other_files() {
    let bytes = filled().to_bytes(42).unwrap();
    let back = LoweredCache::from_bytes(bytes.clone(), 42);
    assert_eq!(back.get(7), Some(&b"seven"[..]));
    assert_eq!(back.get(u128::MAX), Some(&[1u8, 2, 3][..]));
    assert_eq!(back.len(), 2);
    // Another build, every truncation, every flipped byte: an empty cache.
    assert!(LoweredCache::from_bytes(bytes.clone(), 43).is_empty());
    for n in 0..bytes.len() {
        assert!(
            LoweredCache::from_bytes(bytes[..n].to_vec(), 42).is_empty(),
            "{n}"
        );
        let mut bad = bytes.clone();
        bad[n] ^= 0x20;
        assert!(LoweredCache::from_bytes(bad, 42).is_empty(), "{n}");
    }
    assert!(LoweredCache::from_bytes(b"{\"json\": true}".to_vec(), 42).is_empty());
}

#[test]
fn writes_only_what_changed_and_drops_what_is_stale() {
    let bytes = filled().to_bytes(1).unwrap();
    let mut back = LoweredCache::from_bytes(bytes.clone(), 1);
    back.mark_used(7);
    back.mark_used(u128::MAX);
    assert_eq!(back.to_bytes(1), None);
    // One used, one unused and kept, nothing added: the file would be the same.
    let mut back = LoweredCache::from_bytes(bytes.clone(), 1);
    back.mark_used(7);
    assert_eq!(back.to_bytes(1), None);
    // One found, one added, one unused: the unused one is kept (no more than the used).
    let mut back = LoweredCache::from_bytes(bytes.clone(), 1);
    back.mark_used(7);
    back.insert(8, vec![8]);
    let kept = LoweredCache::from_bytes(back.to_bytes(1).unwrap(), 1);
    assert_eq!(kept.len(), 3);
    // One added, two unused: those two are dropped.
    let mut back = LoweredCache::from_bytes(bytes.clone(), 1);
    back.insert(9, vec![9]);
    let kept = LoweredCache::from_bytes(back.to_bytes(1).unwrap(), 1);
    assert_eq!((kept.len(), kept.get(9)), (1, Some(&[9u8][..])));
}

/// A run that adds little writes the delta only: with the whole file it gives every
/// entry; a delta entry the next run does not use leaves the delta; a run that adds
/// much, or has stale entries to drop, writes the whole.
#[test]
fn a_small_change_is_written_as_a_delta() {
    let mut c = LoweredCache::default();
    for k in 0..8 {
        c.insert(k, vec![k as u8; 100]);
    }
    let whole = c.to_bytes(1).unwrap();
    let run = |delta: &[u8], used: &[Key], added: &[(Key, usize)]| {
        let mut c = LoweredCache::from_files(whole.clone(), delta.to_vec(), 1);
        used.iter().for_each(|&k| c.mark_used(k));
        added
            .iter()
            .for_each(|&(k, n)| c.insert(k, vec![k as u8; n]));
        c
    };
    let written = |c: &LoweredCache, delta| {
        let mut out = Vec::new();
        c.write_to(1, delta, &mut out).unwrap();
        out
    };
    let all: Vec<Key> = (0..8).collect();
    let first = run(&[], &all, &[(100, 10)]);
    assert!(first.writes_delta());
    let delta = written(&first, true);
    let back = LoweredCache::from_files(whole.clone(), delta.clone(), 1);
    assert_eq!((back.len(), back.get(100)), (9, Some(&[100u8; 10][..])));
    // 100 not used again: the next delta holds 101 only.
    let second = run(&delta, &all, &[(101, 10)]);
    let delta = written(&second, true);
    let back = LoweredCache::from_files(whole.clone(), delta, 1);
    assert_eq!(
        (back.len(), back.get(100), back.get(101).map(<[u8]>::len)),
        (9, None, Some(10))
    );
    // A key the delta holds again (the cache of walks re-stores a node): the delta's.
    let third = run(&[], &all, &[(3, 10)]);
    let back = LoweredCache::from_files(whole.clone(), written(&third, true), 1);
    assert_eq!((back.len(), back.get(3)), (8, Some(&[3u8; 10][..])));
    // Past a quarter of the whole, or with stale entries to drop: the whole.
    assert!(run(&[], &all, &[(102, 200)]).writes_delta());
    assert!(!run(&[], &all, &[(102, 300)]).writes_delta());
    assert!(!run(&[], &[0, 1], &[(103, 1)]).writes_delta());
    // A delta of another build, or without a whole: not read, then the whole written.
    let foreign = written(&run(&[], &all, &[(104, 1)]), true);
    assert_eq!(
        LoweredCache::from_files(whole.clone(), foreign.clone(), 2).len(),
        0
    );
    assert_eq!(LoweredCache::from_files(whole, foreign.clone(), 1).len(), 9);
    let alone = LoweredCache::from_files(Vec::new(), foreign, 1);
    assert_eq!((alone.len(), alone.writes_delta()), (1, false));
}

#[test]
fn kept_entries_survive_without_counting_as_used() {
    let mut c = LoweredCache::default();
    for k in 0..6 {
        c.insert(k, vec![k as u8]);
    }
    let bytes = c.to_bytes(1).unwrap();
    // Used 0 and 9 (added), kept 1 and 2 (99 is not stored: nothing to keep): the three
    // unused are no more than the four live, all seven are written.
    let mut back = LoweredCache::from_bytes(bytes.clone(), 1);
    back.mark_used(0);
    back.keep(1);
    back.keep(2);
    back.keep(99);
    back.insert(9, vec![9]);
    assert_eq!(back.counts(), (2, 1));
    assert_eq!(
        LoweredCache::from_bytes(back.to_bytes(1).unwrap(), 1).len(),
        7
    );
    // Kept 1 only: the four unused outnumber the three live and are dropped, 1 is not.
    let mut back = LoweredCache::from_bytes(bytes, 1);
    back.mark_used(0);
    back.keep(1);
    back.insert(9, vec![9]);
    let kept = LoweredCache::from_bytes(back.to_bytes(1).unwrap(), 1);
    assert_eq!(
        (kept.len(), kept.get(1), kept.get(2)),
        (3, Some(&[1u8][..]), None)
    );
}

#[test]
fn entries_lowered_ahead_are_stored_only_when_used() {
    let mut c = LoweredCache::default();
    c.insert(1, b"one".to_vec());
    let mut ahead = LoweredCache::default();
    ahead.insert(1, b"other".to_vec());
    ahead.insert(2, b"two".to_vec());
    ahead.insert(3, b"three".to_vec());
    c.add_ahead(ahead);
    // What the cache had is kept; the others are found under their keys.
    assert_eq!(c.get(1), Some(&b"one"[..]));
    assert_eq!(c.get(2), Some(&b"two"[..]));
    c.mark_used(2);
    assert_eq!(c.counts(), (2, 2));
    let back = LoweredCache::from_bytes(c.to_bytes(9).unwrap(), 9);
    assert_eq!(
        (back.len(), back.get(2), back.get(3)),
        (2, Some(&b"two"[..]), None)
    );
    // Read-only: nothing lowered now is added, entries ahead are still found.
    let mut r = LoweredCache::read_only();
    assert!(!r.takes_new());
    let mut ahead = LoweredCache::default();
    ahead.insert(4, b"four".to_vec());
    r.add_ahead(ahead);
    assert_eq!(r.get(4), Some(&b"four"[..]));
}
