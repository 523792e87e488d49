//! Learners for structured SVMs with bi-criteria surrogates (DESIGN §5).
