//! Images read by a vision model through llama.cpp's multimodal library (mtmd): the projector
//! (`mmproj-*.gguf`) that turns an image into embeddings the model reads like tokens, the tokens
//! an image stands for in a prompt, and an image read into a KV sequence.
//!
//! In a prompt's token list an image is a run of one negative id per embedding it is read as
//! ([`image_token`], from the image's hash): no real token is negative, the same image is the
//! same run wherever it appears, so the cache's prefix comparison reuses an image's cells on the
//! next turn exactly as it reuses text, and another image differs from its first cell on.
//!
//! A model that places an image in two dimensions (Qwen2-VL's M-RoPE) gives all its cells one
//! position and moves on by the larger side of its grid, not by its cells: such a run ends in
//! [`shadow`]s, one per cell that takes no position of its own, so a token's position is read
//! from the list alone ([`position`]) — across restarts and parked caches too — and a cut inside
//! such an image takes it whole ([`cut_point`]).

use std::collections::HashMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::mtmd::{
    MtmdBitmap, MtmdContext, MtmdContextParams, MtmdInputChunk, MtmdInputChunkType, MtmdInputText, mtmd_default_marker,
};
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::vocab::LlamaVocab;

use hearth_core::{BackendError, ChatMessage, ImageInput, LoadParams, MAX_IMAGE_PIXELS};

/// A model's projector, loaded beside it.
pub(crate) struct Projector {
    context: MtmdContext,
    /// Its file, as the model's info names it.
    pub path: String,
    /// Whether the model reads an image's cells all at once (each sees the others: Gemma 3's
    /// projector), so an image must fit in one micro-batch; llama.cpp aborts on one that does not.
    reads_whole: bool,
}

/// How many tokens an image may become: the load's bounds (`None`: the projector's own), and the
/// most one decode step of the context takes (its micro-batch, at most its batch).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ImageTokens {
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub step: u32,
}

impl ImageTokens {
    pub fn of(params: &LoadParams, step: u32) -> ImageTokens {
        ImageTokens { min: params.image_min_tokens, max: params.image_max_tokens, step }
    }
}

/// Why a projector could not be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProjectorError {
    #[error("{name} cannot be read as this model's image projector: {reason}")]
    Refused { name: String, reason: String },
    #[error("{name} reads no images (an audio projector)")]
    NoVision { name: String },
}

impl Projector {
    /// The projector to load: the one chosen, else the one beside the model file
    /// (`mmproj*.gguf` in its folder, as vision models' repositories keep them), if any.
    pub fn find(chosen: Option<&str>, model: &Path) -> Option<PathBuf> {
        match chosen {
            Some(chosen) => Some(PathBuf::from(chosen)),
            None => Projector::beside(model).into_iter().next(),
        }
    }

    /// The projectors in the model file's folder, by name (the same first one every time when a
    /// folder holds several, their precisions).
    pub fn beside(model: &Path) -> Vec<PathBuf> {
        let Some(Ok(entries)) = model.parent().map(std::fs::read_dir) else { return Vec::new() };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(hearth_gguf::is_projector_name))
            .collect();
        found.sort();
        found
    }

    /// Loads `path` for `model`, its images made into as many tokens as `tokens` bounds them to:
    /// refused when it does not fit the model (its embeddings' width is not the model's) or reads
    /// no images.
    ///
    /// A model that reads an image whole must hold it in one step: unless the user bounded its
    /// images, the projector is loaded again with its largest image held to one (as llama.cpp's
    /// own CLI does), rather than refusing large images at the default settings.
    pub fn load(path: &Path, model: &LlamaModel, tokens: ImageTokens, threads: u32, use_gpu: bool) -> Result<Projector, ProjectorError> {
        let projector = Projector::init(path, model, (tokens.min, tokens.max), threads, use_gpu)?;
        if !projector.reads_whole || tokens.max.is_some() {
            return Ok(projector);
        }
        let largest = projector.largest_image();
        if largest <= tokens.step as usize {
            return Ok(projector);
        }
        tracing::info!(largest, step = tokens.step, "images held to one step: the model reads each whole");
        drop(projector);
        Projector::init(path, model, (tokens.min.map(|min| min.min(tokens.step)), Some(tokens.step)), threads, use_gpu)
    }

    fn init(
        path: &Path,
        model: &LlamaModel,
        (min, max): (Option<u32>, Option<u32>),
        threads: u32,
        use_gpu: bool,
    ) -> Result<Projector, ProjectorError> {
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let refused = |reason: String| ProjectorError::Refused { name: name.clone(), reason };
        if !path.is_file() {
            return Err(refused("the file is not there".into()));
        }
        let params = MtmdContextParams {
            use_gpu,
            print_timings: false,
            n_threads: threads as i32,
            media_marker: CString::new(mtmd_default_marker()).expect("the marker has no NUL"),
            image_min_tokens: tokens_bound(min),
            image_max_tokens: tokens_bound(max),
        };
        crate::llama_log::clear();
        let context = MtmdContext::init_from_file(&path.to_string_lossy(), model, &params).map_err(|_| {
            refused(crate::llama_log::last_error().unwrap_or_else(|| "llama.cpp gave no reason; the file may be damaged".into()))
        })?;
        if !context.support_vision() {
            return Err(ProjectorError::NoVision { name });
        }
        let reads_whole = context.decode_use_non_causal();
        Ok(Projector { context, path: path.display().to_string(), reads_whole })
    }

    /// The tokens the projector makes of an image larger than any it keeps whole (prepared,
    /// not encoded): its largest image's.
    fn largest_image(&self) -> usize {
        const SIDE: u32 = 2048;
        let pixels = vec![128; (SIDE * SIDE * 3) as usize];
        let Ok(bitmap) = MtmdBitmap::from_image_data(SIDE, SIDE, &pixels) else { return 0 };
        let input = MtmdInputText { text: mtmd_default_marker().to_owned(), add_special: false, parse_special: true };
        let Ok(chunks) = self.context.tokenize(input, &[&bitmap]) else { return 0 };
        (0..chunks.len()).filter_map(|i| chunks.get(i)).filter(|c| c.chunk_type() == MtmdInputChunkType::Image).map(|c| c.n_tokens()).sum()
    }

    /// The prompt `text` (an image marker where each of `images` goes, in order) as tokens, each
    /// image a run of [`image_token`]s, and the image chunks those runs stand for. `at_once`: the
    /// most tokens one decode takes (the context's micro-batch, at most its batch).
    pub fn tokenize(
        &self,
        text: &str,
        add_bos: bool,
        images: &[&ImageInput],
        at_once: usize,
    ) -> Result<(Vec<LlamaToken>, PromptImages), BackendError> {
        let bitmaps = images.iter().map(|image| self.bitmap(image)).collect::<Result<Vec<_>, _>>()?;
        let input = MtmdInputText { text: text.to_owned(), add_special: add_bos, parse_special: true };
        let chunks = self
            .context
            .tokenize(input, &bitmaps.iter().collect::<Vec<_>>())
            .map_err(|e| BackendError::InvalidRequest(format!("the images could not be prepared for the model: {e}")))?;
        let mut tokens = Vec::with_capacity(chunks.total_tokens());
        let mut read = PromptImages::default();
        for chunk in (0..chunks.len()).filter_map(|i| chunks.get(i)) {
            match chunk.chunk_type() {
                MtmdInputChunkType::Text => tokens.extend_from_slice(chunk.text_tokens().unwrap_or(&[])),
                MtmdInputChunkType::Image => {
                    let token = image_token(&chunk.id().unwrap_or_default());
                    let cells = chunk.n_tokens();
                    if self.reads_whole && cells > at_once {
                        return Err(BackendError::InvalidRequest(format!(
                            "this model reads an image whole, in one step: this image is {cells} tokens, and a step \
                             takes at most {at_once} (the micro-batch size). Raise the micro-batch size and the batch \
                             size to {cells} or more in the model's load settings"
                        )));
                    }
                    let positions = usize::try_from(chunk.n_positions()).unwrap_or(cells).clamp(1, cells);
                    tokens.extend(std::iter::repeat_n(token, positions));
                    tokens.extend(std::iter::repeat_n(shadow(token), cells - positions));
                    let owned = chunk.copy().map_err(|e| BackendError::Engine(format!("an image chunk could not be kept: {e}")))?;
                    read.0.insert(token, Arc::new(owned));
                }
                MtmdInputChunkType::Audio => return Err(BackendError::InvalidRequest("Hearth does not send audio to a model".into())),
            }
        }
        if tokens.last().is_some_and(|&t| is_image(t)) {
            // The reply's first token is sampled after text (the assistant's turn opening).
            return Err(BackendError::InvalidRequest("a prompt cannot end with an image".into()));
        }
        Ok((tokens, read))
    }

    /// `image` decoded, refused in words when it is not an image the library reads or too large.
    fn bitmap(&self, image: &ImageInput) -> Result<MtmdBitmap, BackendError> {
        let short = &image.hash[..image.hash.len().min(12)];
        let size = imagesize::blob_size(&image.bytes)
            .map_err(|_| BackendError::InvalidRequest(format!("image {short} is not a PNG, JPEG, GIF or BMP the model can read")))?;
        if size.width as u64 * size.height as u64 > MAX_IMAGE_PIXELS {
            return Err(BackendError::InvalidRequest(format!(
                "an image is {} × {} pixels; images up to {} megapixels can be read — scale it down first",
                size.width,
                size.height,
                MAX_IMAGE_PIXELS / 1_000_000
            )));
        }
        let mut bitmap = MtmdBitmap::from_buffer(&self.context, &image.bytes, false).map_err(|_| {
            BackendError::InvalidRequest(format!("image {short} could not be decoded (damaged, or a format the model cannot read)"))
        })?;
        bitmap.set_id(&image.hash).map_err(|_| BackendError::InvalidRequest("an image's hash has a NUL".into()))?;
        Ok(bitmap)
    }

    /// Encodes `chunk` and decodes its embeddings into sequence `seq` from position `n_past`;
    /// returns how many positions it took (its cells', or its grid's larger side in two dimensions).
    pub fn read(
        &mut self,
        chunk: &MtmdInputChunk<'_>,
        context: &mut LlamaContext<'_>,
        n_past: usize,
        seq: i32,
        n_batch: usize,
    ) -> Result<usize, BackendError> {
        let end = chunk
            .eval(&mut self.context, context, n_past as i32, seq, n_batch as i32, false)
            .map_err(|e| BackendError::Engine(format!("the image could not be read: {e}")))?;
        Ok(end as usize - n_past)
    }

    /// The embeddings the projector makes of `image` (what the model reads in its place).
    #[cfg(test)]
    pub fn embeddings(&mut self, image: &ImageInput, n_embd: usize) -> Result<Vec<f32>, BackendError> {
        let (_, read) = self.tokenize(&format!("{}\n", mtmd_default_marker()), false, &[image], usize::MAX)?;
        let chunk = read.0.into_values().next().ok_or_else(|| BackendError::Engine("the image made no chunk".into()))?;
        self.context.encode_chunk(&chunk).map_err(|e| BackendError::Engine(format!("the image could not be encoded: {e}")))?;
        Ok(self.context.output_embeddings(&chunk, n_embd).to_vec())
    }
}

/// llama.cpp's form of an image-token bound: -1 for the projector's own.
fn tokens_bound(bound: Option<u32>) -> i32 {
    bound.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX))
}

/// The image chunks a prompt's image tokens stand for.
#[derive(Debug, Default, Clone)]
pub(crate) struct PromptImages(pub HashMap<LlamaToken, Arc<MtmdInputChunk<'static>>>);

impl PromptImages {
    /// Reads the image `token` stands for into sequence `seq` from position `n_past` (the
    /// caller notes its tokens); returns how many cells (tokens) it is.
    pub fn read(
        &self,
        token: LlamaToken,
        projector: Option<&mut Projector>,
        context: &mut LlamaContext<'_>,
        (n_past, seq): (usize, i32),
        n_batch: usize,
    ) -> Result<usize, BackendError> {
        let (Some(chunk), Some(projector)) = (self.0.get(&token), projector) else {
            return Err(BackendError::Engine("an image of the prompt was not kept for it".into()));
        };
        let n = projector.read(chunk, context, n_past, seq, n_batch)?;
        let positions = chunk.n_positions();
        if i32::try_from(n).ok() != Some(positions) {
            return Err(BackendError::Engine(format!("the image took {n} positions, not its {positions}")));
        }
        Ok(chunk.n_tokens())
    }
}

/// The token every position of an image is written as in a prompt: negative (no real token is),
/// below -1 (llama.cpp's "no token"), from the image's hash.
pub(crate) fn image_token(hash: &str) -> LlamaToken {
    let mut h: u32 = 0x811c_9dc5; // FNV-1a
    for byte in hash.bytes() {
        h = (h ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    LlamaToken(-2 - (h & 0x3fff_ffff) as i32)
}

pub(crate) fn is_image(token: LlamaToken) -> bool {
    token.0 < -1
}

/// Below every [`image_token`]: a shadow is an image token moved down by this.
const SHADOW: i32 = 1 << 30;

/// The token an image's cell that takes no position of its own is written as (an image read in
/// two dimensions): below every [`image_token`] (several images' may meet at the very bottom; a
/// shadow is never looked up, only counted).
pub(crate) fn shadow(token: LlamaToken) -> LlamaToken {
    LlamaToken(token.0.saturating_sub(SHADOW))
}

fn is_shadow(token: LlamaToken) -> bool {
    token.0 <= -SHADOW - 2
}

/// The image token a shadow stands behind (itself for any other token).
fn owner(token: LlamaToken) -> LlamaToken {
    if is_shadow(token) { LlamaToken(token.0.saturating_add(SHADOW)) } else { token }
}

/// The position of `tokens[index]` (of the token after them at `tokens.len()`): its index less
/// the shadows before it.
pub(crate) fn position(tokens: &[LlamaToken], index: usize) -> usize {
    index - tokens[..index.min(tokens.len())].iter().filter(|&&t| is_shadow(t)).count()
}

/// Whether `at` falls inside an image of `tokens` (after its first cell).
pub(crate) fn within_image(tokens: &[LlamaToken], at: usize) -> bool {
    at > 0 && tokens.get(at).is_some_and(|&t| is_image(t) && is_image(tokens[at - 1]) && owner(tokens[at - 1]) == owner(t))
}

/// Where a cut keeping `keep` of `tokens` may fall: `keep`, or the start of an image read in two
/// dimensions that it would cut through (its cells share one position: it goes whole).
pub(crate) fn cut_point(tokens: &[LlamaToken], keep: usize) -> usize {
    let Some(&at) = tokens.get(keep).filter(|&&t| is_image(t)) else { return keep };
    let image = owner(at);
    let same = |t: &LlamaToken| is_image(*t) && owner(*t) == image;
    let start = keep - tokens[..keep].iter().rev().take_while(|t| same(t)).count();
    let flat = !tokens[start..].iter().take_while(|t| same(t)).any(|&t| is_shadow(t));
    if flat { keep } else { start }
}

/// A token's text; an image's tokens have none (llama.cpp would abort on a negative id).
pub(crate) fn piece(vocab: &LlamaVocab, token: LlamaToken) -> Vec<u8> {
    if token.0 < 0 { Vec::new() } else { vocab.token_to_piece(token, true, None) }
}

/// Whether any message shows the model an image.
pub(crate) fn has_images(messages: &[ChatMessage]) -> bool {
    messages.iter().any(|m| !m.images.is_empty())
}

/// The messages with a marker before each message's text for each of its images, in order (as
/// llama.cpp's server puts image parts), any marker a message's own text holds defused (it would
/// stand for an image no one sent), and the images left out (they are the markers now).
pub(crate) fn marked(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let marker = mtmd_default_marker();
    messages
        .iter()
        .map(|message| {
            let marks: String = message.images.iter().map(|_| format!("{marker}\n")).collect();
            let content = marks + &message.content.replace(marker, "<_media_>");
            ChatMessage { content, images: Vec::new(), ..message.clone() }
        })
        .collect()
}

/// The images of `messages` in the order [`marked`] writes their markers.
pub(crate) fn images_of(messages: &[ChatMessage]) -> Vec<&ImageInput> {
    messages.iter().flat_map(|m| &m.images).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_testkit::images::{bmp_header, checkerboard, gradient, image};
    use llama_cpp_2::model::params::LlamaModelParams;

    /// The test model and the projectors made for it (scripts/make-test-models.py).
    fn vision_dir() -> PathBuf {
        let model = std::env::var("HEARTH_TEST_MODEL").expect("HEARTH_TEST_MODEL names the test model (scripts/test.sh sets it)");
        Path::new(&model).parent().expect("the model is in a folder").join("vision")
    }

    fn smollm2() -> LlamaModel {
        let backend = crate::devices::llama_backend().expect("llama.cpp starts");
        let path = vision_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf");
        LlamaModel::load_from_file(backend, path, &LlamaModelParams::default().with_n_gpu_layers(0)).expect("the test model loads")
    }

    #[test]
    fn the_projector_beside_a_model_reads_each_image_alike_and_one_for_another_model_is_refused() {
        let model = smollm2();
        let dir = vision_dir();
        let found = Projector::find(None, &dir.join("SmolLM2-135M-Instruct.Q4_1.gguf")).expect("the projector beside the model");
        assert_eq!(found, dir.join("mmproj-hearth-test.gguf"));
        assert_eq!(Projector::find(None, &dir.join("..").join("tiny-llama.gguf")), None, "no projector beside it");

        let mut projector =
            Projector::load(&found, &model, ImageTokens::of(&LoadParams::default(), 512), 2, false).expect("the projector fits SmolLM2");
        let n_embd = model.n_embd() as usize;
        let first = projector.embeddings(&gradient(), n_embd).unwrap();
        assert_eq!(first.len(), 16 * n_embd, "32 × 32 pixels in 8 × 8 patches: 16 tokens");
        assert!(first.iter().all(|x| x.is_finite()) && first.iter().any(|&x| x != 0.0));
        assert_eq!(projector.embeddings(&gradient(), n_embd).unwrap(), first, "the same image, the same embeddings");
        assert_ne!(projector.embeddings(&checkerboard(), n_embd).unwrap(), first);

        let (tokens, images) = projector.tokenize("<__media__>\nWhat is this?", true, &[&gradient()], 512).unwrap();
        let token = image_token(&gradient().hash);
        assert_eq!(tokens.iter().filter(|&&t| t == token).count(), 16);
        assert_eq!(images.0.len(), 1);
        assert!(images.0.contains_key(&token));

        let refused = |bytes: Vec<u8>| projector.tokenize("<__media__>\nhi", true, &[&image(bytes)], 512).unwrap_err().to_string();
        assert!(
            refused(bmp_header(30_000, 30_000)).contains("30000 × 30000 pixels; images up to 50 megapixels"),
            "{}",
            refused(bmp_header(30_000, 30_000))
        );
        assert!(refused(b"not an image at all".to_vec()).contains("is not a PNG, JPEG, GIF or BMP"));
        // A PNG whose header is whole and whose pixels are not compressed data.
        let mut damaged = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x20\0\0\0\x20\x08\x02\0\0\0\0\0\0\0".to_vec();
        damaged.extend_from_slice(b"\0\0\0\x08IDATjunkjunk\0\0\0\0\0\0\0\0IEND\xaeB`\x82");
        assert!(refused(damaged).contains("could not be decoded"));
        let ends = projector.tokenize("hi <__media__>", false, &[&gradient()], 512).unwrap_err().to_string();
        assert!(ends.contains("cannot end with an image"), "{ends}");

        let wrong =
            Projector::load(&dir.join("mismatched/mmproj-tiny.gguf"), &model, ImageTokens::of(&LoadParams::default(), 512), 2, false)
                .err()
                .expect("a 64-wide projector");
        let words = wrong.to_string();
        assert!(words.starts_with("mmproj-tiny.gguf cannot be read as this model's image projector: "), "{words}");
        let missing = Projector::load(&dir.join("mmproj-gone.gguf"), &model, ImageTokens::of(&LoadParams::default(), 512), 2, false)
            .err()
            .expect("no file");
        assert!(missing.to_string().contains("the file is not there"));
    }

    #[test]
    fn an_image_is_written_as_one_negative_token_of_its_own() {
        let a = image_token("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
        let b = image_token("60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752");
        assert!(is_image(a) && is_image(b));
        assert_ne!(a, b);
        assert_eq!(a, image_token("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"));
        assert!(!is_image(LlamaToken(-1)) && !is_image(LlamaToken(0)));
    }

    /// An image read in two dimensions: its 6 cells take 3 positions (a 3 × 2 grid), one
    /// shadow per cell beyond them; a flat image's cells take one each.
    #[test]
    fn positions_skip_the_shadows_and_a_cut_takes_a_two_dimensional_image_whole() {
        let t = LlamaToken;
        let grid = image_token("grid");
        let flat = image_token("flat");
        let s = shadow(grid);
        assert!(is_image(s) && is_shadow(s) && !is_shadow(grid) && owner(s) == grid && owner(grid) == grid);
        assert!(!is_shadow(LlamaToken(-2 - 0x3fff_ffff)), "no image token is a shadow");
        assert!(is_shadow(shadow(LlamaToken(-2 - 0x3fff_ffff))), "the lowest image's shadow is one");
        //            0     1     2     3     4     5  6  7  8     9    10    11    12
        let tokens = [t(5), grid, grid, grid, s, s, s, t(6), flat, flat, flat, t(7), t(8)];
        let positions: Vec<usize> = (0..=tokens.len()).map(|i| position(&tokens, i)).collect();
        assert_eq!(positions, [0, 1, 2, 3, 4, 4, 4, 4, 5, 6, 7, 8, 9, 10]);
        let cases = [(0, 0), (1, 1), (2, 1), (4, 1), (6, 1), (7, 7), (8, 8), (9, 9), (10, 10), (12, 12), (13, 13)];
        for (keep, cut) in cases {
            assert_eq!(cut_point(&tokens, keep), cut, "keep {keep}");
        }
        assert_eq!(position(&[], 0), 0);
        let within: Vec<usize> = (0..=tokens.len()).filter(|&at| within_image(&tokens, at)).collect();
        assert_eq!(within, [2, 3, 4, 5, 6, 9, 10]);
    }

    /// A projector that keeps an image's shape (Qwen2-VL's: tiny-qwen2vl beside it) makes as
    /// many tokens of an image as the load's bounds allow: a small one is enlarged to the fewest,
    /// a large one scaled down to the most; the projector's own bounds otherwise.
    #[test]
    fn an_images_tokens_keep_to_the_bounds_the_load_sets() {
        use hearth_testkit::images::bmp;
        let backend = crate::devices::llama_backend().expect("llama.cpp starts");
        let dir = vision_dir().with_file_name("vision-mrope");
        let params = LlamaModelParams::default().with_n_gpu_layers(0);
        let model = LlamaModel::load_from_file(backend, dir.join("tiny-qwen2vl.gguf"), &params).expect("the test model loads");
        let large = image(bmp(256, 256, |x, y| [x as u8, y as u8, 64]));
        let cells = |bounds: (Option<u32>, Option<u32>), image: &ImageInput| {
            let tokens = ImageTokens { min: bounds.0, max: bounds.1, step: 512 };
            let projector = Projector::load(&dir.join("mmproj-tiny-qwen2vl.gguf"), &model, tokens, 2, false).expect("it loads");
            let (tokens, _) = projector.tokenize("<__media__>\nhi", false, &[image], 512).unwrap();
            tokens.iter().filter(|&&t| is_image(t)).count()
        };
        // (bounds, image, cells): 28 × 28 pixels a cell, the image's aspect kept.
        let cases = [
            ((None, None), gradient(), 9),         // enlarged to the projector's fewest, 8: 3 × 3
            ((Some(16), None), gradient(), 16),    // 4 × 4
            ((None, None), large.clone(), 81),     // 252 × 252 pixels: 9 × 9
            ((None, Some(16)), large.clone(), 16), // scaled down to 112 × 112
            ((Some(4), Some(4)), large, 4),
        ];
        for (bounds, image, expected) in cases {
            assert_eq!(cells(bounds, &image), expected, "{bounds:?}");
        }
    }

    /// A model that reads an image whole (Gemma 4's larger ones: SmolLM2 beside a tiny `gemma4v`
    /// projector, between 70 and 1,120 tokens an image) has its largest image held to one
    /// micro-batch, unless the user bounded it; a batch that holds the projector's largest keeps it.
    #[test]
    fn images_a_model_reads_whole_are_held_to_one_micro_batch() {
        use hearth_testkit::images::bmp;
        let model = smollm2();
        let path = vision_dir().with_file_name("vision-gemma4").join("mmproj-tiny-gemma4.gguf");
        let large = image(bmp(1024, 1024, |x, y| [x as u8, y as u8, 64]));
        let cells = |load: LoadParams, image: &ImageInput| {
            let projector = Projector::load(&path, &model, ImageTokens::of(&load, load.n_ubatch), 2, false).expect("it loads");
            assert!(projector.reads_whole);
            let (tokens, _) = projector.tokenize("<__media__>\nhi", false, &[image], usize::MAX).unwrap();
            tokens.iter().filter(|&&t| is_image(t)).count()
        };
        let base = LoadParams::default();
        let wide = LoadParams { n_batch: 2048, n_ubatch: 2048, ..base.clone() };
        // (load, image, cells): 16 × 16 pixels a cell, the image's aspect kept.
        let cases = [
            (base.clone(), large.clone(), 484),                                         // 22 × 22, within 512
            (LoadParams { n_ubatch: 100, ..base.clone() }, large.clone(), 100),         // 10 × 10
            (wide.clone(), large.clone(), 1089),                                        // the projector's 1,120: 33 × 33
            (LoadParams { image_max_tokens: Some(900), ..wide }, large.clone(), 841),   // the user's: 29 × 29
            (LoadParams { image_max_tokens: Some(1024), ..base.clone() }, large, 1024), // the user's, refused when read
            (base, gradient(), 81),                                                     // enlarged to 70: 9 × 9
        ];
        for (load, image, expected) in cases {
            assert_eq!(cells(load.clone(), &image), expected, "{load:?}");
        }
    }

    #[test]
    fn markers_go_before_the_text_in_the_images_order_and_typed_markers_are_defused() {
        let image = |hash: &str| ImageInput { hash: hash.into(), bytes: vec![1] };
        let mut messages =
            vec![ChatMessage::new(hearth_core::Role::User, "what is <__media__>?"), ChatMessage::new(hearth_core::Role::User, "and this")];
        messages[0].images = vec![image("a"), image("b")];
        messages[1].images = vec![image("c")];
        let marked = marked(&messages);
        assert_eq!(images_of(&messages).iter().map(|i| i.hash.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(marked[0].content, "<__media__>\n<__media__>\nwhat is <_media_>?");
        assert_eq!(marked[1].content, "<__media__>\nand this");
        assert!(marked.iter().all(|m| m.images.is_empty()));
    }
}
