//! The toolkit for designing promotion rules: [`check`] a lattice or table definition, [`audit`]
//! a rule set against the design note's criteria, draw a lattice as a Hasse diagram
//! ([`graph`]).

pub mod audit;
pub mod check;
pub mod graph;
