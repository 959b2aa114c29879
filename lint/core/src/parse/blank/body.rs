//! Which fn bodies the scanner keeps lazy: [`Scanner::eligible`] reads a body's tokens, and
//! [`Scanner::use_decl`] the `use` declarations a lazy body may have among its top-level
//! statements (see [`crate::parse::lazy`]).

use super::{Scanner, Tok};
use crate::parse::lazy::blocks_laziness;

impl Scanner<'_> {
    /// Whether the tokens of a body (at any depth, in order, each with where it starts) can
    /// neither declare an item, carry an attribute nor name an escape, but for `use`
    /// declarations among its top-level statements, whose byte ranges go to `uses` (their
    /// lowering is the fn's `nested` items, as an eager lowering makes them: [`use_decl`]);
    /// collects the names of the macros invoked.
    pub(super) fn eligible(
        &self,
        toks: &[(Tok, usize)],
        macros: &mut Vec<String>,
        uses: &mut Vec<(usize, usize)>,
    ) -> bool {
        let (mut i, mut depth) = (0, 0usize);
        while let Some(&(tok, at)) = toks.get(i) {
            i += 1;
            match tok {
                Tok::Open(_) => depth += 1,
                Tok::Close(_) => depth = depth.saturating_sub(1),
                Tok::Punct { ch: b'#', .. } | Tok::Doc => return false,
                Tok::Ident(a, b) if depth == 0 && &self.text[a..b] == "use" => {
                    let statement = matches!(
                        i.checked_sub(2).map(|j| toks[j].0),
                        None | Some(Tok::Punct { ch: b';', .. } | Tok::Close(b'}'))
                    );
                    let Some((end, next)) = statement.then(|| self.use_decl(toks, i)).flatten()
                    else {
                        return false;
                    };
                    uses.push((at, end));
                    i = next;
                }
                Tok::Ident(a, b) => {
                    let name = &self.text[a..b];
                    let prev = match i.checked_sub(2).map(|j| toks[j].0) {
                        Some(Tok::Punct { ch, .. }) => Some(ch as char),
                        _ => None,
                    };
                    let next = toks.get(i).map(|t| t.0);
                    if blocks_laziness(name, prev, matches!(next, Some(Tok::Ident(..)))) {
                        return false;
                    }
                    if next
                        == Some(Tok::Punct {
                            ch: b'!',
                            joint: false,
                        })
                    {
                        macros.push(name.to_owned());
                    }
                }
                _ => {}
            }
        }
        true
    }

    /// The `use` declaration whose tree starts at token `i` (after `use`): one past its `;`
    /// and the token after it, when it is a plain path tree (identifiers that name no item
    /// keyword or escape, `::`, `,`, `*` and braces: `use a::{b as _, c::*};`), else `None`
    /// (`use<'a>` in a type, anything the scanner is not sure of: the body stays eager).
    fn use_decl(&self, toks: &[(Tok, usize)], mut i: usize) -> Option<(usize, usize)> {
        let mut depth = 0usize;
        while let Some(&(tok, at)) = toks.get(i) {
            i += 1;
            match tok {
                Tok::Punct { ch: b';', .. } if depth == 0 => return Some((at + 1, i)),
                Tok::Punct {
                    ch: b':' | b',' | b'*',
                    ..
                } => {}
                Tok::Open(b'{') => depth += 1,
                Tok::Close(b'}') => depth = depth.checked_sub(1)?,
                Tok::Ident(a, b) if !blocks_laziness(&self.text[a..b], None, false) => {}
                _ => return None,
            }
        }
        None
    }
}
