//! Tag sets of a chain: which states are "outside" (O) tags, and — when tag names are given — the
//! B/I(/E/S) structure that defines entity chunks for the segment loss.
//!
//! Chunks are decoded with the rules of the CoNLL `conlleval` script, which read IOB1 and IOB2
//! identically (an `I-X` that does not continue an `X` chunk starts a new one) and extend to
//! IOBES. In this module's terms a token `c` *continues* the chunk of the previous token `p` iff
//!
//! ```text
//! cont(p, c) = kind(p) ∈ {B, I} ∧ kind(c) ∈ {I, E} ∧ type(p) = type(c)
//! ```
//!
//! and every non-O token that does not continue starts a chunk. A chunk is then a maximal run of a
//! starting token followed by continuing tokens: `(first, last, type)`. Both "starts a chunk at t"
//! and "continues at t" depend on the pair (y_{t-1}, y_t) only, which is what makes the segment
//! loss an exact dynamic program (see `super::dp` and the module documentation of `super`).

use bicrit_core::{Error, Result};

/// The role of a tag in its scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagKind {
    /// Not part of any entity (`O`).
    Outside,
    /// `B-X`: begins a chunk.
    Begin,
    /// `I-X`: inside a chunk (starts one when it does not continue the previous token's chunk).
    Inside,
    /// `E-X` (IOBES only): ends a chunk.
    End,
    /// `S-X` (IOBES only): a one-token chunk.
    Single,
}

/// How tag names encode chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagScheme {
    /// IOB1: `B-X` only between two adjacent chunks of the same type.
    Iob1,
    /// IOB2 (BIO): every chunk begins with `B-X`.
    Iob2,
    /// IOBES (BIOES): also `E-X` (chunk end) and `S-X` (single-token chunk).
    Iobes,
}

impl TagScheme {
    /// Parses `"iob1"`, `"iob2"` (alias `"bio"`) or `"iobes"` (alias `"bioes"`), case-insensitively.
    pub fn from_name(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "iob1" => Ok(TagScheme::Iob1),
            "iob2" | "bio" => Ok(TagScheme::Iob2),
            "iobes" | "bioes" => Ok(TagScheme::Iobes),
            _ => Err(Error::param(format!("unknown tag scheme {name:?}; expected iob1, iob2 or iobes"))),
        }
    }
}

/// One chunk of a tag sequence: tokens `first..=last`, entity type `kind`.
pub type Chunk = (usize, usize, u32);

/// The tag set of a chain structure.
#[derive(Clone, Debug)]
pub struct Tags {
    kind: Vec<TagKind>,
    typ: Vec<u32>,
    outside: Vec<bool>,
    named: bool,
    /// `cont[p * S + c]`: does tag `c` continue the chunk of tag `p`?
    cont: Vec<bool>,
}

impl Tags {
    /// Unnamed tags: `outside` lists the O states; the others are entity tags without chunk
    /// structure (enough for the Hamming loss, the label size and the indicator-set Hamming).
    pub fn from_outside(n_states: usize, outside: &[usize]) -> Result<Self> {
        let mut is_out = vec![false; n_states];
        for &o in outside {
            if o >= n_states {
                return Err(Error::param(format!("outside tag {o} is not a state (0..{n_states})")));
            }
            is_out[o] = true;
        }
        let kind = is_out.iter().map(|&o| if o { TagKind::Outside } else { TagKind::Single }).collect();
        let typ = (0..n_states as u32).collect();
        Ok(Tags::build(kind, typ, false))
    }

    /// Named tags under `scheme`: `"O"` is outside, `"B-X"`, `"I-X"` (and `"E-X"`, `"S-X"` under
    /// IOBES) are entity tags of type `X`. Any other name is an error naming it.
    pub fn from_names<S: AsRef<str>>(names: &[S], scheme: TagScheme) -> Result<Self> {
        let mut types: Vec<String> = Vec::new();
        let mut kind = Vec::with_capacity(names.len());
        let mut typ = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let name = name.as_ref();
            if name == "O" {
                kind.push(TagKind::Outside);
                typ.push(u32::MAX);
                continue;
            }
            let parsed = name.split_once('-').and_then(|(prefix, ty)| {
                let k = match (prefix, scheme) {
                    ("B", _) => TagKind::Begin,
                    ("I", _) => TagKind::Inside,
                    ("E", TagScheme::Iobes) => TagKind::End,
                    ("S", TagScheme::Iobes) => TagKind::Single,
                    _ => return None,
                };
                (!ty.is_empty()).then_some((k, ty))
            });
            let Some((k, ty)) = parsed else {
                let allowed = if scheme == TagScheme::Iobes { "B-X, I-X, E-X or S-X" } else { "B-X or I-X" };
                return Err(Error::param(format!(
                    "tag_names[{i}] = {name:?} is neither \"O\" nor {allowed} (scheme {scheme:?})"
                )));
            };
            let t = match types.iter().position(|x| x == ty) {
                Some(t) => t,
                None => {
                    types.push(ty.to_string());
                    types.len() - 1
                }
            };
            kind.push(k);
            typ.push(t as u32);
        }
        Ok(Tags::build(kind, typ, true))
    }

    fn build(kind: Vec<TagKind>, typ: Vec<u32>, named: bool) -> Self {
        let n = kind.len();
        let outside = kind.iter().map(|&k| k == TagKind::Outside).collect();
        let mut cont = vec![false; n * n];
        if named {
            for p in 0..n {
                for c in 0..n {
                    cont[p * n + c] = matches!(kind[p], TagKind::Begin | TagKind::Inside)
                        && matches!(kind[c], TagKind::Inside | TagKind::End)
                        && typ[p] == typ[c];
                }
            }
        }
        Tags { kind, typ, outside, named, cont }
    }

    /// Number of states.
    pub fn n_states(&self) -> usize {
        self.kind.len()
    }

    /// Were tag names given (chunk structure known)?
    pub fn named(&self) -> bool {
        self.named
    }

    /// Is `s` an O tag?
    #[inline]
    pub fn is_outside(&self, s: usize) -> bool {
        self.outside[s]
    }

    /// Ids of the O tags.
    pub fn outside_ids(&self) -> Vec<usize> {
        (0..self.n_states()).filter(|&s| self.outside[s]).collect()
    }

    /// Entity type of a non-O named tag.
    #[inline]
    pub fn entity_type(&self, s: usize) -> u32 {
        self.typ[s]
    }

    /// Role of tag `s`.
    pub fn kind(&self, s: usize) -> TagKind {
        self.kind[s]
    }

    /// Does tag `c` continue the chunk of the previous tag `p`? (named tags only)
    #[inline]
    pub fn cont(&self, p: usize, c: usize) -> bool {
        self.cont[p * self.kind.len() + c]
    }

    /// Does tag `c` start a chunk after `p` (`None`: `c` is the first token)?
    #[inline]
    pub fn starts(&self, p: Option<usize>, c: usize) -> bool {
        !self.outside[c] && !p.is_some_and(|p| self.cont(p, c))
    }

    /// The chunks of a tag sequence, in order (named tags only).
    pub fn chunks(&self, y: &[usize]) -> Vec<Chunk> {
        let mut out: Vec<Chunk> = Vec::new();
        for (t, &c) in y.iter().enumerate() {
            let p = if t == 0 { None } else { Some(y[t - 1]) };
            if self.starts(p, c) {
                out.push((t, t, self.typ[c]));
            } else if !self.outside[c] {
                // continues: extend the open chunk (it exists, since cont(p, c) held)
                if let Some(last) = out.last_mut() {
                    last.1 = t;
                }
            }
        }
        out
    }

    /// |C(y) △ C(g)|: chunks of `y` not in `g` (spurious or wrong) plus chunks of `g` not in `y`
    /// (missed), chunks compared as exact (first, last, type) triples.
    pub fn chunk_symmetric_difference(&self, y: &[usize], g: &[usize]) -> usize {
        let a = self.chunks(y);
        let b = self.chunks(g);
        // both lists are sorted by first token and chunks of one sequence do not overlap
        let (mut i, mut j, mut common) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if a[i] == b[j] {
                        common += 1;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        a.len() + b.len() - 2 * common
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iob() -> Tags {
        Tags::from_names(&["O", "B-PER", "I-PER", "B-LOC", "I-LOC"], TagScheme::Iob2).unwrap()
    }

    #[test]
    fn conlleval_chunks() {
        let t = iob();
        // O B-PER I-PER I-LOC I-LOC B-LOC O I-PER
        let y = [0, 1, 2, 4, 4, 3, 0, 2];
        assert_eq!(t.chunks(&y), vec![(1, 2, 0), (3, 4, 1), (5, 5, 1), (7, 7, 0)]);
        // B-PER B-PER: two chunks (IOB1 adjacency)
        assert_eq!(t.chunks(&[1, 1]), vec![(0, 0, 0), (1, 1, 0)]);
        assert_eq!(t.chunk_symmetric_difference(&[0, 1, 2], &[0, 1, 2]), 0);
        // span differs: one spurious + one missed
        assert_eq!(t.chunk_symmetric_difference(&[1, 2, 2], &[0, 1, 2]), 2);
        // type differs: counted twice
        assert_eq!(t.chunk_symmetric_difference(&[0, 3, 4], &[0, 1, 2]), 2);
        assert_eq!(t.chunk_symmetric_difference(&[0, 0, 0], &[1, 0, 3]), 2);
    }

    #[test]
    fn iobes_chunks() {
        let t = Tags::from_names(&["O", "B-A", "I-A", "E-A", "S-A"], TagScheme::Iobes).unwrap();
        assert_eq!(t.chunks(&[1, 2, 3, 4, 3]), vec![(0, 2, 0), (3, 3, 0), (4, 4, 0)]);
        assert_eq!(t.chunks(&[4, 2, 3]), vec![(0, 0, 0), (1, 2, 0)]);
    }

    #[test]
    fn bad_names() {
        assert!(Tags::from_names(&["O", "E-PER"], TagScheme::Iob2).is_err());
        assert!(Tags::from_names(&["O", "B-"], TagScheme::Iob2).is_err());
        let e = Tags::from_names(&["O", "PER"], TagScheme::Iob1).unwrap_err();
        assert!(e.to_string().contains("tag_names[1]"), "{e}");
        assert!(TagScheme::from_name("bilou").is_err());
        assert!(Tags::from_outside(3, &[3]).is_err());
    }
}
