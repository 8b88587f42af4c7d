//! Keyword arguments of the registry's functions, as a command line writes them after the
//! function's name: `sort:axis=0,descending=True`, `take:axis=1,mode=clip`, `cumsum:dtype=int8`.
//! Each value is a Python literal: `None`, `True`/`False`, an integer, a dtype name or a string
//! (quoted or bare).

use std::fmt;
use std::str::FromStr;

use dtype_lattice::error::{Exception, Reason};
use dtype_lattice::{DType, Error, Value};

/// The keyword arguments of one call, in the order written.
///
/// ```
/// use dtype_lattice_array::numpy::Keywords;
/// let kw: Keywords = "axis=-1,descending=True".parse()?;
/// assert_eq!(kw.to_string(), "axis=-1,descending=True");
/// assert!("axis".parse::<Keywords>().is_err()); // no `=`
/// # Ok::<(), dtype_lattice::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keywords(Vec<(String, String)>);

impl FromStr for Keywords {
    type Err = Error;

    /// `name=value` pairs separated by commas (empty text: none).
    ///
    /// # Errors
    ///
    /// A pair without `=` or with an empty or non-identifier name, a name given twice.
    fn from_str(s: &str) -> Result<Keywords, Error> {
        let mut out: Vec<(String, String)> = Vec::new();
        for pair in s.split(',').filter(|p| !p.trim().is_empty()) {
            let bad = |why: &str| -> Error {
                Reason::InvalidArgument {
                    argument: "keywords".into(),
                    reason: format!("{pair:?}: {why}"),
                }
                .into()
            };
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| bad("expected name=value"))?;
            let (name, value) = (name.trim(), value.trim());
            let identifier = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                return Err(bad("the name is not an identifier"));
            }
            if out.iter().any(|(n, _)| n == name) {
                return Err(bad("keyword argument repeated"));
            }
            out.push((name.to_string(), value.to_string()));
        }
        Ok(Keywords(out))
    }
}

impl fmt::Display for Keywords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (n, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{n}={v}")?;
        }
        Ok(())
    }
}

fn bad_value(function: &str, name: &str, value: &str, want: &str) -> Error {
    Error::refused(
        Exception::TypeError,
        format!("{function}(): {name}={value} is not {want}"),
    )
}

impl Keywords {
    /// No keywords.
    pub fn new() -> Keywords {
        Keywords::default()
    }

    /// Whether none was given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Python's `TypeError` for a keyword `function` does not take.
    ///
    /// # Errors
    ///
    /// `TypeError: f() got an unexpected keyword argument 'x'`.
    pub fn allow(&self, function: &str, names: &[&str]) -> Result<(), Error> {
        match self.0.iter().find(|(n, _)| !names.contains(&n.as_str())) {
            Some((n, _)) => Err(Error::refused(
                Exception::TypeError,
                format!("{function}() got an unexpected keyword argument '{n}'"),
            )),
            None => Ok(()),
        }
    }

    fn raw(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// An integer or `None` (`default` when absent).
    ///
    /// # Errors
    ///
    /// `TypeError` for another value.
    pub fn int_or_none(
        &self,
        function: &str,
        name: &str,
        default: Option<isize>,
    ) -> Result<Option<isize>, Error> {
        match self.raw(name) {
            None => Ok(default),
            Some("None") => Ok(None),
            Some(v) => v
                .parse::<isize>()
                .map(Some)
                .map_err(|_| bad_value(function, name, v, "an integer or None")),
        }
    }

    /// `True` or `False` (`default` when absent; `None` is `default` too).
    ///
    /// # Errors
    ///
    /// `TypeError` for another value.
    pub fn bool(&self, function: &str, name: &str, default: bool) -> Result<bool, Error> {
        match self.raw(name) {
            None | Some("None") => Ok(default),
            Some("True") => Ok(true),
            Some("False") => Ok(false),
            Some(v) => Err(bad_value(function, name, v, "True or False")),
        }
    }

    /// A string (quotes taken off), or `None` when absent or `None`.
    pub fn string(&self, name: &str) -> Option<String> {
        let v = self.raw(name)?;
        if v == "None" {
            return None;
        }
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|&q| v.strip_prefix(q).and_then(|s| s.strip_suffix(q)));
        Some(unquoted.unwrap_or(v).to_string())
    }

    /// A Python scalar (`1`, `-2.5`, `nan`, `True`), or `None` when absent or `None`.
    ///
    /// # Errors
    ///
    /// Text that is not a Python scalar literal.
    pub fn value(&self, name: &str) -> Result<Option<Value>, Error> {
        match self.raw(name) {
            None | Some("None") => Ok(None),
            Some(v) => v.parse::<Value>().map(Some),
        }
    }

    /// A dtype, or `None` when absent or `None`.
    ///
    /// # Errors
    ///
    /// An unknown dtype name (with the closest known one).
    pub fn dtype(&self, name: &str) -> Result<Option<DType>, Error> {
        self.string(name).map(|s| s.parse::<DType>()).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_python_literals() {
        let kw: Keywords = "axis=None,stable=False,mode='clip',dtype=int8,k=-2"
            .parse()
            .unwrap();
        assert_eq!(kw.int_or_none("f", "axis", Some(-1)).unwrap(), None);
        assert_eq!(kw.int_or_none("f", "k", None).unwrap(), Some(-2));
        assert_eq!(kw.int_or_none("f", "absent", Some(-1)).unwrap(), Some(-1));
        assert!(!kw.bool("f", "stable", true).unwrap());
        assert_eq!(kw.string("mode").as_deref(), Some("clip"));
        assert_eq!(kw.dtype("dtype").unwrap(), Some(DType::Int8));
        assert!(kw.bool("f", "mode", true).is_err());
        assert!(kw.int_or_none("f", "mode", None).is_err());
        let e = kw.allow("sort", &["axis", "stable"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TypeError: sort() got an unexpected keyword argument 'mode'"
        );
        assert!("a=1,a=2".parse::<Keywords>().is_err());
        assert!("1a=2".parse::<Keywords>().is_err());
        assert!("".parse::<Keywords>().unwrap().is_empty());
    }
}
