//! The API's contract as a document, host-only (the Worker never carries it): the OpenAPI 3.1
//! document of the JSON API ([`openapi`]), built from its route table and the JSON Schemas of
//! `pipeline`'s DTOs. `cargo xtask build` writes it next to the SPA's files, the Worker serves
//! it from the assets, and the `openapi` suite holds the Worker's router and answers to it.

pub mod openapi;
