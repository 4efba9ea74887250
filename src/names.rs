//! One table per vocabulary: an enum whose every variant is written as
//! exactly one name, wherever it is stored, sent or shown.
//!
//! [`named_enum!`] declares the enum and both directions of its table
//! from one list, so a name and its variant cannot drift apart: `name()`
//! writes a variant, `parse()` reads one back and answers `None` for any
//! other text (a caller turns that into its own error, never a fallback),
//! `ALL` lists the variants in declaration order, and `Display` shows the
//! name. It is the only
//! place such a table is written by hand.

/// Declares a fieldless enum with one name per variant.
///
/// ```ignore
/// named_enum! {
///     /// Where a challenge stands.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum Status {
///         Pending => "pending",
///         /// Lifted by the right code.
///         Verified => "verified",
///     }
/// }
/// ```
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$variant_meta])* $variant ),+
        }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code, reason = "a vocabulary's list is there for whoever needs it")]
            $vis const ALL: [Self; [$($text),+].len()] = [$(Self::$variant),+];

            /// The one name this variant is written as.
            #[allow(dead_code, reason = "not every vocabulary is written out")]
            $vis const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// The variant written as `name`, or `None` for any other text.
            #[allow(dead_code, reason = "not every vocabulary is read back")]
            $vis fn parse(name: &str) -> Option<Self> {
                match name {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    named_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Colour {
            Red => "red",
            /// Two words, one name.
            DarkBlue => "dark_blue",
        }
    }

    #[test]
    fn every_variant_reads_back_as_itself_and_nothing_else_reads() {
        for colour in Colour::ALL {
            assert_eq!(Colour::parse(colour.name()), Some(colour));
        }
        assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
        assert_eq!(Colour::DarkBlue.name(), "dark_blue");
        assert_eq!(Colour::DarkBlue.to_string(), "dark_blue");
        for other in ["", "Red", "dark blue", "red ", "DarkBlue"] {
            assert_eq!(Colour::parse(other), None, "{other:?}");
        }
    }
}
