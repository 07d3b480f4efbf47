//! The images a book shows: which files the caller loads ([`images_used`]), and which of the
//! bytes it gave decode within the limits ([`check`]). An image that does not decode would stop
//! Typst's whole compile, so each is decoded here first, with Typst's own decoders (memoized: the
//! compile that follows reuses the work), and one that fails is a note in the PDF instead.

use std::collections::{HashMap, HashSet};

use quire_content::{ContentRef, Document, Node};
use typst::foundations::Bytes;
use typst::visualize::{ImageFormat, RasterImage, SvgImage, VectorFormat};

use crate::{MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, MAX_IMAGES, MAX_TOTAL_PIXELS};

/// The files of the space that `documents` show as images (image blocks, inline images,
/// drawings), each once, in order, at most [`MAX_IMAGES`].
pub fn images_used<'a>(documents: impl IntoIterator<Item = &'a Document>) -> Vec<String> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for document in documents {
        collect(&document.nodes, &mut found, &mut seen);
        if found.len() >= MAX_IMAGES {
            found.truncate(MAX_IMAGES);
            break;
        }
    }
    found
}

fn collect(nodes: &[Node], found: &mut Vec<String>, seen: &mut HashSet<String>) {
    for node in nodes {
        if matches!(node.node_type(), "image" | "inline-image" | "drawing") {
            for key in ["ref", "refDark"] {
                if let Some(ContentRef::File { file, space: None }) =
                    node.data_value(key).and_then(ContentRef::from_value)
                {
                    if seen.insert(file.clone()) {
                        found.push(file);
                    }
                    // The dark variant only when there is no light one.
                    break;
                }
            }
        }
        collect(node.children(), found, seen);
        for fragment in node.fragments() {
            collect(&fragment.nodes, found, seen);
        }
    }
}

/// An image as the source refers to it.
pub(crate) enum Checked {
    /// Served at `/img/{index}`.
    Ready { index: usize, bytes: Bytes },
    /// Why it is a note.
    Refused(String),
}

/// Decodes each image within the limits, in the order given.
pub(crate) fn check(images: &[(String, Vec<u8>)]) -> HashMap<String, Checked> {
    let mut checked = HashMap::new();
    let mut pixels_left = MAX_TOTAL_PIXELS;
    for (id, data) in images.iter().take(MAX_IMAGES) {
        let verdict = match decode(data, &mut pixels_left) {
            Ok(bytes) => Checked::Ready {
                index: checked.len(),
                bytes,
            },
            Err(why) => Checked::Refused(why),
        };
        checked.insert(id.clone(), verdict);
    }
    checked
}

fn decode(data: &[u8], pixels_left: &mut u64) -> Result<Bytes, String> {
    if data.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "image left out: {} MB, over the {} MB an image may have in a PDF",
            data.len() / (1024 * 1024),
            MAX_IMAGE_BYTES / (1024 * 1024)
        ));
    }
    let bytes = Bytes::new(data.to_vec());
    match ImageFormat::detect(data) {
        Some(ImageFormat::Raster(format)) => {
            // The size from the header, before anything is decoded.
            let size =
                imagesize::blob_size(data).map_err(|_| "image left out: it does not decode".to_string())?;
            let pixels = (size.width as u64).saturating_mul(size.height as u64);
            if pixels > MAX_IMAGE_PIXELS {
                return Err(format!(
                    "image left out: {} × {} pixels, over the {} megapixels an image may have in a PDF",
                    size.width,
                    size.height,
                    MAX_IMAGE_PIXELS / 1_000_000
                ));
            }
            if pixels > *pixels_left {
                return Err(format!(
                    "image left out: this PDF's images reached their {} megapixels",
                    MAX_TOTAL_PIXELS / 1_000_000
                ));
            }
            RasterImage::plain(bytes.clone(), format)
                .map_err(|e| format!("image left out: it does not decode ({e})"))?;
            *pixels_left -= pixels;
            Ok(bytes)
        }
        Some(ImageFormat::Vector(VectorFormat::Svg)) => {
            SvgImage::new(bytes.clone()).map_err(|_| "image left out: the SVG does not read".to_string())?;
            Ok(bytes)
        }
        Some(ImageFormat::Vector(_)) | None => Err(format!(
            "image left out: not an image format a PDF shows ({})",
            ["PNG", "JPEG", "GIF", "WebP", "SVG"].join(", ")
        )),
    }
}
