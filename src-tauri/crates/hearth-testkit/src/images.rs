//! Images made in the tests: BMP files, which llama.cpp's image reader (stb_image) takes and a
//! few lines write, and the image inputs a vision model is shown.

use hearth_core::ImageInput;

/// A 24-bit BMP of `width` × `height` pixels, each `pixel(x, y)` as RGB.
pub fn bmp(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let row = (width * 3).div_ceil(4) * 4;
    let pixels = row * height;
    let mut out = Vec::with_capacity(54 + pixels as usize);
    out.extend_from_slice(b"BM");
    out.extend_from_slice(&(54 + pixels).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&54u32.to_le_bytes());
    out.extend_from_slice(&40u32.to_le_bytes());
    out.extend_from_slice(&(width as i32).to_le_bytes());
    out.extend_from_slice(&(height as i32).to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&24u16.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // no compression
    out.extend_from_slice(&pixels.to_le_bytes());
    out.extend_from_slice(&[0; 16]);
    for y in (0..height).rev() {
        let start = out.len();
        for x in 0..width {
            let [r, g, b] = pixel(x, y);
            out.extend_from_slice(&[b, g, r]);
        }
        out.resize(start + row as usize, 0);
    }
    out
}

/// A BMP's header claiming `width` × `height` pixels, with none after it (a decoder that
/// believed it would allocate them all).
pub fn bmp_header(width: u32, height: u32) -> Vec<u8> {
    let mut header = bmp(1, 1, |_, _| [0; 3]);
    header[18..22].copy_from_slice(&(width as i32).to_le_bytes());
    header[22..26].copy_from_slice(&(height as i32).to_le_bytes());
    header
}

/// `bytes` as a model is shown them.
pub fn image(bytes: Vec<u8>) -> ImageInput {
    ImageInput::new(bytes)
}

/// Two 32 × 32 images that differ everywhere: a horizontal gradient and a checkerboard.
pub fn gradient() -> ImageInput {
    image(bmp(32, 32, |x, y| [(x * 8) as u8, (y * 8) as u8, 128]))
}

pub fn checkerboard() -> ImageInput {
    image(bmp(32, 32, |x, y| if (x / 4 + y / 4) % 2 == 0 { [255, 255, 255] } else { [0, 0, 0] }))
}
