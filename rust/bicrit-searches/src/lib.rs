//! Searches: loss-augmented inference `max_y ψ(h(y), g(y))` using only a λ-oracle
//! (thesis chapters `cha:inference` and `cha:inference2`; DESIGN §3).
