//! Laying elements out as NumPy's `array2string` does: nested brackets, summarisation with
//! `...` and line wrapping.
//!
//! - **Summarisation**: an array of more than [`THRESHOLD`] elements shows, along every axis
//!   longer than `2 × EDGE_ITEMS`, only the first and last [`EDGE_ITEMS`] entries with `...`
//!   between them. The element formatter is set up from the shown elements only.
//! - **Rows** (the last axis) are filled word by word: a word that would pass the line width
//!   (less one column for the separator or bracket that may follow) starts a new line, indented
//!   to stand under the first element, unless the line holds nothing but its indentation.
//! - **Other axes** put one sub-array per line, with `axes left − 1` blank lines between them;
//!   each nesting level indents one more column and narrows the width by one (for its `]`).

/// NumPy's default `threshold`: arrays with more elements are summarised.
pub const THRESHOLD: usize = 1000;
/// NumPy's default `edgeitems`.
pub const EDGE_ITEMS: usize = 3;
/// NumPy's default `linewidth`.
pub const LINE_WIDTH: usize = 75;

/// The indices shown along an axis of length `len`: `(leading, trailing)` counts, with `...`
/// between them when `summarised`.
fn shown(len: usize, summarise: bool) -> (usize, usize, bool) {
    if summarise && len > 2 * EDGE_ITEMS {
        (EDGE_ITEMS, EDGE_ITEMS, true)
    } else {
        (0, len, false)
    }
}

/// The flat (row-major) indices of the elements shown, in printing order.
pub(crate) fn shown_indices(shape: &[usize], summarise: bool) -> Vec<usize> {
    let mut out = vec![0usize];
    for &len in shape {
        let (lead, trail, _) = shown(len, summarise);
        let along: Vec<usize> = (0..lead).chain(len - trail..len).collect();
        out = out
            .iter()
            .flat_map(|&base| along.iter().map(move |&i| base * len + i))
            .collect();
    }
    out
}

/// Lays out a non-empty array: `word(flat_index)` is an element's text; `prefix_width` is the
/// width of what precedes the opening bracket on the first line (`Array(`), `width` the line
/// width available (the line width less the suffix that follows the last bracket).
pub(crate) fn layout(
    shape: &[usize],
    word: &mut dyn FnMut(usize) -> String,
    separator: &str,
    prefix_width: usize,
    width: usize,
    summarise: bool,
) -> String {
    let mut l = Layout {
        shape,
        word,
        separator,
        summarise,
    };
    let hanging = " ".repeat(prefix_width + 1);
    l.nest(0, 0, &hanging, width)
}

struct Layout<'a> {
    shape: &'a [usize],
    word: &'a mut dyn FnMut(usize) -> String,
    separator: &'a str,
    summarise: bool,
}

/// Appends `word` to `line`, first moving `line` to `text` and starting a new one at `indent`
/// if the word would pass `width`, unless that would not help (the line is only indentation).
fn extend(text: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if line.len() + word.len() > width && line.len() > indent.len() {
        text.push_str(line.trim_end());
        text.push('\n');
        line.clear();
        line.push_str(indent);
    }
    line.push_str(word);
}

impl Layout<'_> {
    /// The sub-array at `axis` whose first element has flat index `base`; `hanging` is the
    /// indentation of its lines (its first line's is dropped: the caller places it).
    fn nest(&mut self, axis: usize, base: usize, hanging: &str, width: usize) -> String {
        if axis == self.shape.len() {
            return (self.word)(base);
        }
        let len = self.shape[axis];
        let stride: usize = self.shape[axis + 1..].iter().product();
        let (lead, trail, dots) = shown(len, self.summarise);
        let indices: Vec<Option<usize>> = (0..lead)
            .map(Some)
            .chain(dots.then_some(None))
            .chain((len - trail..len).map(Some))
            .collect();
        let inner_hanging = format!("{hanging} ");
        let inner_width = width.saturating_sub(1);
        let mut text = String::new();
        let axes_left = self.shape.len() - axis;
        if axes_left == 1 {
            let sep_width = self.separator.trim_end().len().max(1);
            let elem_width = width.saturating_sub(sep_width);
            let mut line = hanging.to_string();
            for (k, index) in indices.iter().enumerate() {
                let word = match index {
                    Some(i) => self.nest(axis + 1, base + i * stride, &inner_hanging, inner_width),
                    None => "...".to_string(),
                };
                extend(&mut text, &mut line, &word, elem_width, hanging);
                if k + 1 < indices.len() {
                    line.push_str(self.separator);
                }
            }
            text.push_str(&line);
        } else {
            let line_sep = format!(
                "{}{}",
                self.separator.trim_end(),
                "\n".repeat(axes_left - 1)
            );
            for (k, index) in indices.iter().enumerate() {
                text.push_str(hanging);
                match index {
                    Some(i) => {
                        let nested =
                            self.nest(axis + 1, base + i * stride, &inner_hanging, inner_width);
                        text.push_str(&nested);
                    }
                    None => text.push_str("..."),
                }
                if k + 1 < indices.len() {
                    text.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &text[hanging.len()..])
    }
}
