//! Pure content logic of quire: the document model, markdown conversion, page trees,
//! three-way merges, link extraction and search sections. Nothing here does I/O.
