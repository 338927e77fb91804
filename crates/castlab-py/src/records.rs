//! Records as tables, in one call: any [`Table`] (an agent's or extension's columnar records,
//! declared with `castlab_core::records_table!`) becomes a dict of numpy arrays and scalars.
//! The simulated and the real-network bindings both go through here.

use numpy::PyArray1;
use pyo3::prelude::*;

use crate::error::Result;
use pyo3::types::PyDict;

use castlab_core::records::{Column, Scalar, Table};

/// Append the table's columns (numpy arrays) and scalars to `d`.
pub(crate) fn fill<'py>(py: Python<'py>, d: &Bound<'py, PyDict>, t: &impl Table) -> Result<()> {
    for (name, c) in t.columns() {
        match c {
            Column::U8(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::U16(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::U32(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::U64(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::I64(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::F64(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
            Column::Bool(v) => d.set_item(name, PyArray1::from_slice(py, v))?,
        }
    }
    for (name, s) in t.scalars() {
        match s {
            Scalar::U64(x) => d.set_item(name, x)?,
            Scalar::F64(x) => d.set_item(name, x)?,
            Scalar::Bool(x) => d.set_item(name, x)?,
            Scalar::OptF64(x) => d.set_item(name, x)?,
        }
    }
    Ok(())
}

/// The table as a new dict.
pub(crate) fn table<'py>(py: Python<'py>, t: &impl Table) -> Result<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    fill(py, &d, t)?;
    Ok(d)
}
