//! Which of the shipped flags' setters a text names, as a mask: every file read is searched
//! once, when it is read ([`crate::incremental::FileCaches::read`]), and the stamp table keeps
//! the mask with the text's hash, so that a warm run knows it for the files it does not read.
//! A mask is over [`names`]: bit `i` for the `i`-th name, the 64th and later sharing bit 63
//! (a text that names one of them counts as naming them all: never a missed wait).

use super::{Flag, shipped};
use std::sync::OnceLock;

/// The shipped flags' setter names ([`Flag::setter_names`]), each once, in order.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<&str> = Vec::new();
        for name in shipped().0.flags.iter().flat_map(Flag::setter_names) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    })
}

/// The bit of the `i`-th name.
fn bit(i: usize) -> u64 {
    1 << i.min(63)
}

/// The mask of the setter names `text` holds as whole identifiers, comments and strings
/// included.
pub fn named_in(text: &str) -> u64 {
    (names().iter().enumerate())
        .filter(|(_, name)| names_ident(text, name))
        .fold(0, |mask, (i, _)| mask | bit(i))
}

/// The mask of `flag`'s setters (a flag not shipped: none).
pub fn of(flag: &Flag) -> u64 {
    let names = names();
    (flag.setter_names())
        .filter_map(|name| names.iter().position(|n| *n == name))
        .fold(0, |mask, i| mask | bit(i))
}

/// Whether `text` holds the identifier `name` (not inside a longer identifier).
fn names_ident(text: &str, name: &str) -> bool {
    let ident = |c: char| c == '_' || c.is_alphanumeric();
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_whole_identifier() {
        assert!(names_ident("set_force_dmmv(true);", "set_force_dmmv"));
        assert!(names_ident("cuda::set_force_dmmv", "set_force_dmmv"));
        assert!(!names_ident("reset_force_dmmv()", "set_force_dmmv"));
        assert!(!names_ident("set_force_dmmv2()", "set_force_dmmv"));
        assert!(!names_ident("", "set_force_dmmv"));
    }

    #[test]
    fn a_text_that_names_a_flags_setter_has_its_bit() {
        let flags = &shipped().0.flags;
        let dmmv = (flags.iter())
            .find(|f| f.path.ends_with("::FORCE_DMMV"))
            .expect("candle's FORCE_DMMV is shipped");
        let mask = of(dmmv);
        assert_ne!(mask, 0);
        assert_eq!(named_in("// set_force_dmmv(true) first") & mask, mask);
        assert_eq!(named_in("fn reset_force_dmmv() {}") & mask, 0);
        assert_eq!(named_in(""), 0);
        // Every shipped flag has a bit, so that a text naming its setter is found.
        assert!(flags.iter().all(|f| of(f) != 0));
    }

    #[test]
    fn names_past_the_64th_share_the_last_bit() {
        assert_eq!(bit(0), 1);
        assert_eq!(bit(63), 1 << 63);
        assert_eq!(bit(64), bit(63));
        assert_eq!(bit(1000), bit(63));
    }
}
