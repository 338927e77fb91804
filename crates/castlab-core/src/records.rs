//! Records as tables: one way for an agent's or an extension's columnar records to leave Rust.
//!
//! A records struct (a receiver's `...Records`) keeps one `Vec` per column, appended to on the event
//! path (amortised, no per-packet allocation). The [`records_table!`](crate::records_table)
//! macro lists its columns and scalars once and implements [`Table`]; bindings turn any
//! [`Table`] into a dict of numpy arrays in one call, and the real-network driver writes the
//! same columns, so a simulated and a real run are analysed by the same code.

/// One column, borrowed from the records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Column<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    I64(&'a [i64]),
    F64(&'a [f64]),
    Bool(&'a [bool]),
}

impl Column<'_> {
    pub fn len(&self) -> usize {
        match self {
            Column::U8(c) => c.len(),
            Column::U16(c) => c.len(),
            Column::U32(c) => c.len(),
            Column::U64(c) => c.len(),
            Column::I64(c) => c.len(),
            Column::F64(c) => c.len(),
            Column::Bool(c) => c.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

macro_rules! column_from {
    ($($t:ty => $v:ident),*) => {$(
        impl<'a> From<&'a [$t]> for Column<'a> {
            fn from(c: &'a [$t]) -> Self {
                Column::$v(c)
            }
        }
        impl<'a> From<&'a Vec<$t>> for Column<'a> {
            fn from(c: &'a Vec<$t>) -> Self {
                Column::$v(c)
            }
        }
    )*};
}
column_from!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, i64 => I64, f64 => F64, bool => Bool);

/// A value beside the columns (a counter, a time in seconds, a flag).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    U64(u64),
    F64(f64),
    Bool(bool),
    /// None: not (yet) known.
    OptF64(Option<f64>),
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Scalar {
            fn from(x: $t) -> Self {
                Scalar::$v(x.into())
            }
        }
    )*};
}
scalar_from!(u64 => U64, u32 => U64, u16 => U64, u8 => U64, f64 => F64, bool => Bool, Option<f64> => OptF64);

impl From<usize> for Scalar {
    fn from(x: usize) -> Self {
        Scalar::U64(x as u64)
    }
}

/// Columnar records with named columns and scalars.
pub trait Table {
    /// Every column, by name, in declaration order.
    fn columns(&self) -> Vec<(&'static str, Column<'_>)>;
    /// Named scalars (counters and the like).
    fn scalars(&self) -> Vec<(&'static str, Scalar)> {
        Vec::new()
    }
}

/// Implements [`Table`] for a records struct by listing its columns (fields holding a `Vec` of
/// numbers) and, optionally, its scalars as `name = |records| expression`.
///
/// ```
/// #[derive(Default)]
/// struct Demo { t_ns: Vec<u64>, level: Vec<u8>, received: u64 }
/// castlab_core::records_table!(Demo { columns: [t_ns, level], scalars: [received = |r| r.received] });
/// use castlab_core::records::Table;
/// let d = Demo { t_ns: vec![1, 2], level: vec![3, 4], received: 7 };
/// assert_eq!(d.columns().len(), 2);
/// assert_eq!(d.scalars()[0].0, "received");
/// ```
#[macro_export]
macro_rules! records_table {
    ($ty:ty { columns: [$($c:ident),* $(,)?] $(, scalars: [$($s:ident = $f:expr),* $(,)?])? $(,)? }) => {
        impl $crate::records::Table for $ty {
            fn columns(&self) -> Vec<(&'static str, $crate::records::Column<'_>)> {
                vec![$((stringify!($c), $crate::records::Column::from(&self.$c)),)*]
            }
            fn scalars(&self) -> Vec<(&'static str, $crate::records::Scalar)> {
                vec![$($((stringify!($s), {
                    let f: fn(&$ty) -> _ = $f;
                    $crate::records::Scalar::from(f(self))
                }),)*)?]
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Rec {
        time_ns: Vec<u64>,
        level: Vec<u8>,
        rate: Vec<f64>,
        received: u64,
        lost: u32,
        done_s: Option<f64>,
    }
    crate::records_table!(Rec {
        columns: [time_ns, level, rate],
        scalars: [received = |r| r.received, lost = |r| r.lost, done_s = |r| r.done_s],
    });

    #[test]
    fn columns_and_scalars_come_out_by_name_in_order() {
        let r =
            Rec { time_ns: vec![5, 9], level: vec![1, 2], rate: vec![0.5, 1.5], received: 3, lost: 1, done_s: None };
        let c = r.columns();
        assert_eq!(c.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["time_ns", "level", "rate"]);
        assert_eq!(c[0].1, Column::U64(&[5, 9]));
        assert_eq!(c[1].1, Column::U8(&[1, 2]));
        assert_eq!(c[2].1.len(), 2);
        let s = r.scalars();
        assert_eq!(s, vec![("received", Scalar::U64(3)), ("lost", Scalar::U64(1)), ("done_s", Scalar::OptF64(None))]);
    }
}
