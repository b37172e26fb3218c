//! How many of something were counted and how many survived: the unit every survival
//! figure is made of.

/// How many references there were and how many survived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// References counted.
    pub total: u64,
    /// Of those, present in the request.
    pub survived: u64,
}

impl Tally {
    /// The survival share, if any reference was counted.
    pub fn share(&self) -> Option<f64> {
        (self.total > 0).then(|| self.survived as f64 / self.total as f64)
    }

    pub(crate) fn add(&mut self, survived: bool) {
        self.total += 1;
        self.survived += u64::from(survived);
    }

    pub(crate) fn merge(&mut self, other: &Tally) {
        self.total += other.total;
        self.survived += other.survived;
    }
}
