//! Page protections: an install leaves every page of the process with exactly the protection
//! it had (read from `/proc/self/maps`), for ordinary import slots (read-only after load, or
//! writable) and for the layouts where a guess goes wrong: the last, partial page of
//! `PT_GNU_RELRO` that the loader leaves writable beside `.data` (GNU ld before 2.39, 64 KiB
//! pages), and a slot in executable text (a text relocation).
#![cfg(target_os = "linux")]

mod stand_in;

use stand_in::libs::{Fn0, defect, install, sync_seen};
use stand_in::{Recorder, elf, get, open, stand_in};

// --- 7. page protections ---

#[test]
fn every_page_keeps_its_protection() {
    defect("child_page_protections", &[]);
}

#[test]
fn a_relro_tail_page_and_a_text_relocation_keep_their_protection() {
    defect("child_page_protections_edges", &[]);
}

/// The protection of every page of the stand-in's libraries and of this program.
fn our_pages() -> std::collections::BTreeMap<usize, String> {
    let dir = stand_in().display().to_string();
    let exe = std::env::current_exe().unwrap().display().to_string();
    elf::pages(|p| p.starts_with(&dir) || p == exe)
}

/// The address of the `cuStreamSynchronize` slot of the loaded library `file`.
fn sync_slot(file: &str) -> usize {
    elf::slots(|n| n.ends_with(file))
        .into_iter()
        .find(|s| s.symbol == "cuStreamSynchronize")
        .unwrap_or_else(|| panic!("{file}'s slot"))
        .addr
}

/// The protection of the page of `at` in `pages`.
fn perms_at(pages: &std::collections::BTreeMap<usize, String>, at: usize) -> String {
    pages[&(at & !(elf::page() - 1))].clone()
}

/// Installs the hook; fails with every page whose protection changed.
fn install_keeping(before: &std::collections::BTreeMap<usize, String>) -> nosync::hook::Hook {
    let (hook, _driver) = install();
    let after = our_pages();
    let changed: Vec<String> = before
        .iter()
        .filter(|(at, p)| after.get(at) != Some(p))
        .map(|(at, p)| format!("{at:#x}: {p} -> {:?}", after.get(at)))
        .collect();
    assert!(
        changed.is_empty(),
        "pages whose protection changed:\n{}",
        changed.join("\n")
    );
    hook
}

#[test]
#[ignore = "run in a child by `every_page_keeps_its_protection`"]
fn child_page_protections() {
    // Slots in read-only-after-load pages (`-z now`, and this program's own) and in writable ones.
    let now = open("libapp_now.so");
    let lazy = open("libapp.so");
    let before = our_pages();
    let slot = sync_slot("/libapp_now.so");
    let (from, to) = elf::relro("/libapp_now.so").unwrap();
    assert!(
        (from..to).contains(&slot),
        "{slot:#x} in {from:#x}..{to:#x}"
    );
    assert!(
        perms_at(&before, slot).starts_with("r--"),
        "{}",
        perms_at(&before, slot)
    );
    let _hook = install_keeping(&before);
    let rec = Recorder::new();
    for (lib, what) in [(&now, "bound at load"), (&lazy, "bound lazily")] {
        let f = get::<Fn0>(lib, "app_sync");
        // SAFETY: the library's function, C signature.
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{what}");
    }
}

#[test]
#[ignore = "run in a child by `a_relro_tail_page_and_a_text_relocation_keep_their_protection`"]
fn child_page_protections_edges() {
    let relro = open("libprot_relro.so");
    let textrel = open("libprot_textrel.so");
    let before = our_pages();
    // The layout the test needs: the relro library's slot inside its `PT_GNU_RELRO` but on a
    // page the loader left writable; the text library's slot on an executable page.
    let (relro_slot, textrel_slot) = (
        sync_slot("/libprot_relro.so"),
        sync_slot("/libprot_textrel.so"),
    );
    let (from, to) = elf::relro("/libprot_relro.so").unwrap();
    assert!(
        (from..to).contains(&relro_slot),
        "{relro_slot:#x} in {from:#x}..{to:#x}"
    );
    let (tail, text) = (
        perms_at(&before, relro_slot),
        perms_at(&before, textrel_slot),
    );
    assert!(tail.starts_with("rw-"), "{tail}");
    assert!(text.starts_with("r-x"), "{text}");
    let _hook = install_keeping(&before);
    let rec = Recorder::new();
    let write = get::<unsafe extern "C" fn(i32) -> i32>(&relro, "relro_write");
    // SAFETY: the library's function: the global beside the slot stays writable.
    assert_eq!(unsafe { write(7) }, 7);
    for (lib, name) in [(&relro, "relro_call"), (&textrel, "textrel_call")] {
        let f = get::<Fn0>(lib, name);
        // SAFETY: the library's function, C signature (its page stays executable).
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{name}");
    }
}
