//! Sentences in compact form: every token field (form, lemma, UPOS, XPOS) becomes a 64-bit *atom*
//! once, at conversion; feature templates then combine atoms without touching strings.
//!
//! An atom is the FNV-1a 64-bit hash of the field's UTF-8 bytes (forms lower-cased first), passed
//! through MurmurHash3's 64-bit finaliser. Atoms depend on the string only — not on the corpus,
//! the process or a random seed — so the same word gets the same features in the training set, in
//! a test set converted later and in another process. (An atom is a stable interned id; 2⁻⁶⁴
//! collision odds make a vocabulary table unnecessary.)

use bicrit_core::{Error, Result};

/// FNV-1a 64-bit offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
pub const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// MurmurHash3's 64-bit finaliser (avalanche mixing).
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[inline]
fn fnv_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// The atom of a string (no case folding).
pub fn atom(s: &str) -> u64 {
    fmix64(fnv_bytes(FNV_OFFSET, s.as_bytes()))
}

/// The atom of a lower-cased string (Unicode lower case, computed without allocating).
pub fn atom_lower(s: &str) -> u64 {
    if s.is_ascii() {
        let mut h = FNV_OFFSET;
        for b in s.bytes() {
            h ^= b.to_ascii_lowercase() as u64;
            h = h.wrapping_mul(FNV_PRIME);
        }
        return fmix64(h);
    }
    let mut h = FNV_OFFSET;
    let mut buf = [0u8; 4];
    for c in s.chars() {
        for l in c.to_lowercase() {
            h = fnv_bytes(h, l.encode_utf8(&mut buf).as_bytes());
        }
    }
    fmix64(h)
}

/// Token fields in the order they are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Word form (lower-cased).
    Form = 0,
    /// Lemma ("_" when missing).
    Lemma = 1,
    /// Universal POS tag.
    Upos = 2,
    /// Language-specific POS tag ("_" when missing).
    Xpos = 3,
}

/// A dataset of sentences as token atoms (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Sentences {
    offsets: Vec<usize>,
    fields: [Vec<u64>; 4],
}

/// The atoms of one sentence; tokens are numbered 1..=n as in CoNLL-U.
#[derive(Clone, Copy, Debug)]
pub struct Sentence<'a> {
    fields: [&'a [u64]; 4],
}

impl<'a> Sentence<'a> {
    /// Number of tokens n.
    pub fn len(&self) -> usize {
        self.fields[0].len()
    }

    /// Is the sentence empty (never true for a validated dataset)?
    pub fn is_empty(&self) -> bool {
        self.fields[0].is_empty()
    }

    /// Atoms of `field` for tokens 1..=n (index 0 is token 1).
    pub fn field(&self, field: Field) -> &'a [u64] {
        self.fields[field as usize]
    }
}

impl Sentences {
    /// An empty dataset.
    pub fn new() -> Self {
        Sentences { offsets: vec![0], fields: Default::default() }
    }

    /// Appends one sentence from string fields; `lemmas`/`xpos` may be absent ("_" for every
    /// token). Errors: empty sentence, fields of different lengths.
    pub fn push_strs<S: AsRef<str>>(
        &mut self,
        words: &[S],
        lemmas: Option<&[S]>,
        upos: &[S],
        xpos: Option<&[S]>,
    ) -> Result<()> {
        let n = words.len();
        let which = self.len();
        if n == 0 {
            return Err(Error::input(format!("sentence {which} is empty")));
        }
        let check = |name: &str, len: usize| {
            if len != n {
                Err(Error::input(format!("sentence {which}: {name} has {len} entries but words has {n}")))
            } else {
                Ok(())
            }
        };
        check("upos", upos.len())?;
        if let Some(l) = lemmas {
            check("lemmas", l.len())?;
        }
        if let Some(x) = xpos {
            check("xpos", x.len())?;
        }
        let missing = atom("_");
        for j in 0..n {
            self.push_token(
                atom_lower(words[j].as_ref()),
                lemmas.map_or(missing, |l| atom(l[j].as_ref())),
                atom(upos[j].as_ref()),
                xpos.map_or(missing, |x| atom(x[j].as_ref())),
            );
        }
        self.end_sentence()
    }

    /// Appends one token's atoms to the sentence being built (see [`Sentences::end_sentence`]).
    pub fn push_token(&mut self, form: u64, lemma: u64, upos: u64, xpos: u64) {
        self.fields[0].push(form);
        self.fields[1].push(lemma);
        self.fields[2].push(upos);
        self.fields[3].push(xpos);
    }

    /// Closes the sentence being built; an empty sentence is an error.
    pub fn end_sentence(&mut self) -> Result<()> {
        let start = *self.offsets.last().unwrap_or(&0);
        let end = self.fields[0].len();
        if end == start {
            return Err(Error::input(format!("sentence {} is empty", self.len())));
        }
        self.offsets.push(end);
        Ok(())
    }

    /// Number of sentences.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Is the dataset empty?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of tokens.
    pub fn n_tokens(&self) -> usize {
        self.fields[0].len()
    }

    /// Sentence `i`, or an error naming the index when it is out of range.
    pub fn get(&self, i: usize) -> Result<Sentence<'_>> {
        if i >= self.len() {
            return Err(Error::input(format!("instance {i} is outside the {} sentences", self.len())));
        }
        let (a, b) = (self.offsets[i], self.offsets[i + 1]);
        Ok(Sentence {
            fields: [
                &self.fields[0][a..b],
                &self.fields[1][a..b],
                &self.fields[2][a..b],
                &self.fields[3][a..b],
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_are_stable_and_case_folded() {
        // FNV-1a of "" is the offset basis; the atom is its finalised value (fixed forever).
        assert_eq!(atom(""), fmix64(FNV_OFFSET));
        assert_eq!(atom_lower("The"), atom("the"));
        assert_eq!(atom_lower("ÉCOLE"), atom("école"));
        assert_ne!(atom("the"), atom("The"));
    }

    #[test]
    fn sentences_validate_lengths() {
        let mut s = Sentences::new();
        s.push_strs(&["A", "dog"], None, &["DET", "NOUN"], None).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s.get(0).unwrap().len(), 2);
        assert_eq!(s.get(0).unwrap().field(Field::Lemma)[0], atom("_"));
        let empty: [&str; 0] = [];
        assert!(s.push_strs(&empty, None, &empty, None).unwrap_err().to_string().contains("empty"));
        let e = s.push_strs(&["a"], None, &["X", "Y"], None).unwrap_err();
        assert!(e.to_string().contains("upos has 2 entries"));
        assert!(s.get(3).is_err());
    }
}
