//! Exact rational numbers for permission amounts (LANGUAGE.md section 11): a
//! numerator and a positive denominator in lowest terms, over unbounded integers.
//!
//! Architecture invariant: every `Rat` is normalized (denominator positive, numerator
//! and denominator coprime), so derived equality and hashing are numeric equality.
//! No floating point anywhere.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rat {
    num: BigInt,
    den: BigInt,
}

impl Rat {
    /// `n / d`, or `None` when `d` is zero.
    pub fn new(n: BigInt, d: BigInt) -> Option<Rat> {
        if d.is_zero() {
            return None;
        }
        let g = n.gcd(&d);
        let (mut n, mut d) = if g.is_zero() { (n, d) } else { (n / &g, d / &g) };
        if d.is_negative() {
            n = -n;
            d = -d;
        }
        Some(Rat { num: n, den: d })
    }

    pub fn int(n: BigInt) -> Rat {
        Rat { num: n, den: BigInt::one() }
    }

    pub fn small(n: i64, d: i64) -> Rat {
        Rat::new(BigInt::from(n), BigInt::from(d)).unwrap_or_else(Rat::zero)
    }

    pub fn zero() -> Rat {
        Rat::int(BigInt::zero())
    }

    /// `write`.
    pub fn one() -> Rat {
        Rat::int(BigInt::one())
    }

    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    pub fn is_positive(&self) -> bool {
        self.num.is_positive()
    }

    pub fn is_negative(&self) -> bool {
        self.num.is_negative()
    }

    pub fn is_integer(&self) -> bool {
        self.den.is_one()
    }

    pub fn numer(&self) -> &BigInt {
        &self.num
    }

    pub fn denom(&self) -> &BigInt {
        &self.den
    }

    /// The size of the numbers (both together), for budgets.
    pub fn bits(&self) -> u64 {
        self.num.bits() + self.den.bits()
    }

    pub fn add(&self, o: &Rat) -> Rat {
        Rat::new(&self.num * &o.den + &o.num * &self.den, &self.den * &o.den)
            .unwrap_or_else(Rat::zero)
    }

    pub fn sub(&self, o: &Rat) -> Rat {
        self.add(&o.neg())
    }

    pub fn mul(&self, o: &Rat) -> Rat {
        Rat::new(&self.num * &o.num, &self.den * &o.den).unwrap_or_else(Rat::zero)
    }

    /// `None` for a zero divisor.
    pub fn div(&self, o: &Rat) -> Option<Rat> {
        Rat::new(&self.num * &o.den, &self.den * &o.num)
    }

    pub fn neg(&self) -> Rat {
        Rat { num: -self.num.clone(), den: self.den.clone() }
    }

    pub fn min(self, o: Rat) -> Rat {
        if o < self { o } else { self }
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        (&self.num * &o.den).cmp(&(&o.num * &self.den))
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den.is_one() {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_exact_arithmetic() {
        let half = Rat::small(1, 2);
        assert_eq!(Rat::small(2, 4), half);
        assert_eq!(Rat::small(-1, -2), half);
        assert_eq!(half.add(&half), Rat::one());
        assert_eq!(Rat::small(1, 3).add(&Rat::small(1, 6)), half);
        assert_eq!(Rat::one().sub(&Rat::small(1, 3)), Rat::small(2, 3));
        assert_eq!(half.mul(&Rat::small(2, 3)), Rat::small(1, 3));
        assert_eq!(half.div(&Rat::small(1, 4)), Some(Rat::int(BigInt::from(2))));
        assert_eq!(half.div(&Rat::zero()), None);
        assert!(Rat::small(1, 3) < half && half < Rat::one());
        assert!(Rat::small(-1, 2) < Rat::zero());
        assert_eq!(Rat::small(3, 4).to_string(), "3/4");
        assert_eq!(Rat::small(4, 2).to_string(), "2");
        assert!(Rat::small(4, 2).is_integer());
    }
}
