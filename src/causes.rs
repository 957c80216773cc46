//! An error and its causes, written out in one place.
//!
//! Every error's own message leaves its cause out: the cause is its `#[source]` (thiserror),
//! never also interpolated into the message, and a `transparent` wrapper adds no text of its
//! own. So walking the chain repeats nothing, and nothing needs to be de-duplicated by
//! comparing texts (which could drop a real cause whose text happens to appear earlier).

use std::error::Error;

/// The error's causes, outermost first (the error itself not included).
pub fn causes<'e>(
    error: &'e (dyn Error + 'static),
) -> impl Iterator<Item = &'e (dyn Error + 'static)> {
    std::iter::successors(error.source(), |&cause| cause.source())
}

/// `message: cause: cause`: an error on one line, for the journal, a list of failures, a
/// notification's `{reason}`.
pub fn one_line(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    for cause in causes(error) {
        text.push_str(": ");
        text.push_str(&cause.to_string());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{causes, one_line};

    #[derive(Debug, thiserror::Error)]
    #[error("cannot append to journal x")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    enum Wrapper {
        #[error(transparent)]
        Inner(#[from] Outer),
    }

    /// A cause whose text also appears in its parent's message is still shown: nothing is
    /// de-duplicated by text.
    #[test]
    fn every_cause_is_shown_once_in_order() {
        let io = std::io::Error::other("cannot append to journal x");
        let wrapped = Wrapper::from(Outer(io));
        assert_eq!(
            one_line(&wrapped),
            "cannot append to journal x: cannot append to journal x"
        );
        assert_eq!(causes(&wrapped).count(), 1);
        let plain = std::io::Error::other("no space left");
        assert_eq!(one_line(&plain), "no space left");
    }
}
