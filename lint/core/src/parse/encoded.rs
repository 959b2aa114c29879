//! Fn bodies lowered with their file and read back from a cache, kept encoded: a warm
//! run decodes every cached file's items, but the call graph reads only the bodies of the
//! fns it reaches (a few hundred of candle's thousands), so a body lowered with its file is
//! stored as its own encoded bytes inside the file's entry and decoded when the walk
//! needs it (`callgraph/bodies.rs`, in parallel), in the span context it was read in.
//!
//! The stored form is the same whichever way a body is held: `Lowered` with its block's
//! bytes, or `Lazy`. Equality compares blocks, so a body read back equals the one stored.

use super::ir::{Block, Body, LazyBody};
use crate::source::{SpanCtx, span_ctx, with_span_ctx};
use serde::de::{self, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::OnceLock;

/// A lowered block still encoded, the span context to decode it in, and, once decoded,
/// the block (`None`: the bytes do not decode, which a cache checked by its checksum and
/// the lint's build cannot hold but a bug could).
#[derive(Debug, Clone)]
pub struct EncodedBody {
    bytes: Box<[u8]>,
    ctx: SpanCtx,
    block: OnceLock<Option<Block>>,
}

impl EncodedBody {
    /// The block, decoded on the first call.
    pub fn block(&self) -> Option<&Block> {
        let decode = || with_span_ctx(self.ctx, || postcard::from_bytes(&self.bytes).ok());
        self.block.get_or_init(decode).as_ref()
    }

    /// Whether the block was decoded already.
    pub fn is_decoded(&self) -> bool {
        self.block.get().is_some()
    }
}

impl Body {
    /// The lowered block: `None` for a lazy body (or an encoded one that does not decode).
    pub fn block(&self) -> Option<&Block> {
        match self {
            Body::Lowered(b) => Some(b),
            Body::Encoded(e) => e.block(),
            Body::Lazy(_) => None,
        }
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        match (self, other) {
            (Body::Lazy(a), Body::Lazy(b)) => a == b,
            (Body::Lazy(_), _) | (_, Body::Lazy(_)) => false,
            _ => self.block().is_some() && self.block() == other.block(),
        }
    }
}

impl Eq for Body {}

/// A block serialized as the bytes of its own encoding (in the current span context).
struct Nested<'b>(&'b Block);

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = postcard::to_stdvec(self.0).map_err(serde::ser::Error::custom)?;
        s.serialize_bytes(&bytes)
    }
}

impl Serialize for Body {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Lazy(l) => s.serialize_newtype_variant("Body", 1, "Lazy", l),
            // A digest (`parse::cache::digest`) counts a body by being there, not by its
            // statements: only the walk of its own fn reads them (resolution reads a fn's
            // `nested` items, and whether it has a body), and that walk is reused only while
            // the fn's file is the same text (`callgraph::reuse`).
            _ if span_ctx() == Some(SpanCtx::Erased) => {
                s.serialize_newtype_variant("Body", 0, "Lowered", &())
            }
            _ => {
                let block = self.block().ok_or_else(|| {
                    serde::ser::Error::custom("an encoded fn body that does not decode")
                })?;
                s.serialize_newtype_variant("Body", 0, "Lowered", &Nested(block))
            }
        }
    }
}

/// An owned byte string.
struct Bytes(Box<[u8]>);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an encoded block")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.into()))
            }
        }
        d.deserialize_bytes(V)
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Body, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a fn body")
            }
            fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Body, A::Error> {
                let (index, variant): (u32, _) = data.variant()?;
                match index {
                    0 => {
                        let Bytes(bytes) = variant.newtype_variant()?;
                        let ctx = span_ctx()
                            .ok_or_else(|| de::Error::custom("a fn body read outside a file"))?;
                        let block = OnceLock::new();
                        Ok(Body::Encoded(EncodedBody { bytes, ctx, block }))
                    }
                    1 => Ok(Body::Lazy(variant.newtype_variant::<LazyBody>()?)),
                    _ => Err(de::Error::custom("not a fn body")),
                }
            }
        }
        d.deserialize_enum("Body", &["Lowered", "Lazy"], V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ir::{Expr, PathIr, Seg, SpanIr, Stmt};
    use crate::source::{with_fixed_span, with_span_file};

    fn body(file: u32) -> Body {
        let span = SpanIr { file, lo: 4, hi: 9 };
        let path = PathIr {
            global: false,
            segs: Box::new([Seg {
                name: "wait".into(),
                generics: None,
            }]),
            qself: None,
        };
        let call = Expr::CallPath {
            path,
            args: Vec::new(),
            span,
        };
        Body::Lowered(Block {
            stmts: vec![Stmt::Expr(call)],
            close: Some(span),
        })
    }

    /// A body read back is encoded, decodes in the span context it was read in (another
    /// file id, or the one fixed span), equals the body stored, and stores as it did.
    #[test]
    fn a_body_read_back_decodes_where_it_was_read() {
        let stored = with_span_file(3, || postcard::to_stdvec(&body(3))).expect("encodes");
        let back: Body = with_span_file(7, || postcard::from_bytes(&stored)).expect("decodes");
        assert!(matches!(&back, Body::Encoded(e) if !e.is_decoded()));
        assert_eq!(back, body(7));
        assert_ne!(back, body(3));
        let again = with_span_file(7, || postcard::to_stdvec(&back)).expect("encodes");
        assert_eq!(again, stored);
        let at = SpanIr {
            file: 2,
            lo: 4,
            hi: 9,
        };
        let fixed = with_fixed_span(at, || postcard::to_stdvec(&body(2))).expect("encodes");
        let moved = SpanIr {
            file: 5,
            lo: 40,
            hi: 90,
        };
        let back: Body = with_fixed_span(moved, || postcard::from_bytes(&fixed)).expect("decodes");
        let Some(Stmt::Expr(Expr::CallPath { span, .. })) = back.block().map(|b| &b.stmts[0])
        else {
            panic!("not the call: {back:?}");
        };
        assert_eq!(
            (*span, back.block().and_then(|b| b.close)),
            (moved, Some(moved))
        );
    }
}
