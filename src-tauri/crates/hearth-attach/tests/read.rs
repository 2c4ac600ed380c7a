//! Files made here with real writers (lopdf's PDF writer, a zip of WordprocessingML) and the text
//! read out of them; every hostile file refused in words.

use std::io::Write;
use std::path::Path;

use hearth_attach::{AttachError, Limits, read_bytes, read_file};
use hearth_core::AttachmentKind;
use hearth_testkit::images::bmp_header;
use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

/// A PDF with one page per entry of `pages`, each a line of Helvetica.
fn pdf(pages: &[&str]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for text in pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(*text)]),
                Operation::new("ET", vec![]),
            ],
        };
        let content = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        kids.push(doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content }).into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc
}

fn pdf_bytes(mut doc: Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

/// A DOCX whose body is `paragraphs`, each a run of text.
fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs.iter().map(|p| format!("<w:p><w:r><w:t xml:space=\"preserve\">{p}</w:t></w:r></w:p>")).collect();
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
         <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}</w:body></w:document>"
    );
    zip_of(&[("[Content_Types].xml", b"<Types/>".to_vec()), ("word/document.xml", xml.into_bytes())])
}

fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

fn read(name: &str, data: Vec<u8>) -> Result<String, AttachError> {
    read_bytes(name.into(), data, &Limits::default()).map(|file| file.text)
}

#[test]
fn documents_read_as_their_text() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("notes.txt", b"The kettle boils at 100 C.\r\nIt whistles.  \n\n\n\n\nEnd.".to_vec(), "The kettle boils at 100 C.\nIt whistles.\n\n\nEnd."),
        ("README.md", b"# Kettle\n\n- **boils** fast\n".to_vec(), "# Kettle\n\n- **boils** fast"),
        ("main.rs", b"fn main() {\n    println!(\"boil\");\n}\n".to_vec(), "fn main() {\n    println!(\"boil\");\n}"),
        ("bom.txt", b"\xEF\xBB\xBFcaf\xC3\xA9".to_vec(), "café"),
        ("utf16.txt", b"\xFF\xFEh\0i\0".to_vec(), "hi"),
        ("latin1.txt", b"caf\xE9 cr\xE8me".to_vec(), "café crème"),
        ("page.html", b"<html><head><title>Kettles</title><script>var a = '<p>';</script></head><body><p>Water boils at <b>100</b> &deg;C.</p></body></html>".to_vec(), "Kettles\nWater boils at 100 °C."),
        ("report.docx", docx(&["The kettle &amp; the pot.", "Second paragraph."]), "The kettle & the pot.\nSecond paragraph."),
        ("report.pdf", pdf_bytes(pdf(&["The kettle holds 1.7 litres.", "Page two says 2200 watts."])), "The kettle holds 1.7 litres.\n\nPage two says 2200 watts."),
    ];
    for (name, data, expected) in cases {
        assert_eq!(read(name, data).unwrap_or_else(|e| panic!("{name}: {e}")), expected, "{name}");
    }
}

#[test]
fn a_file_is_named_by_its_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "abc").unwrap();
    let file = read_file(&path, &Limits::default()).unwrap();
    assert_eq!(file.attachment.hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!((file.attachment.name.as_str(), file.attachment.bytes, file.attachment.chars), ("a.txt", 3, 3));
    assert_eq!(file.data, b"abc");
}

/// Each hostile file, and what the user is told.
#[test]
fn hostile_files_are_refused_in_words() {
    let small = Limits { max_file_bytes: 1 << 20, max_unpacked_bytes: 1 << 20, max_text_chars: 1000, max_image_pixels: 1_000_000 };
    let mut encrypted = pdf(&["secret"]);
    let id = Object::string_literal(&b"0123456789abcdef"[..]);
    encrypted.trailer.set("ID", vec![id.clone(), id]);
    let state = lopdf::EncryptionState::try_from(lopdf::EncryptionVersion::V2 {
        document: &encrypted,
        owner_password: "owner",
        user_password: "user",
        key_length: 128,
        permissions: lopdf::Permissions::all(),
    })
    .unwrap();
    encrypted.encrypt(&state).unwrap();
    let whole = pdf_bytes(pdf(&["The kettle holds 1.7 litres."]));
    // A zip bomb: 2 MiB of zeros inflating from a few kilobytes, over the 1 MiB bound.
    let bomb = zip_of(&[("word/document.xml", vec![b' '; 2 << 20])]);
    let cases: Vec<(&str, Vec<u8>, Limits, &str)> = vec![
        ("program.txt", b"\x7FELF\x02\x01\x01\0\0\0\0\0".to_vec(), Limits::default(), "program.txt looks like a binary file, not text"),
        ("noise.txt", (1u8..=255).cycle().take(4000).collect(), Limits::default(), "noise.txt looks like a binary file, not text"),
        ("locked.pdf", pdf_bytes(encrypted), Limits::default(), "locked.pdf is encrypted with a password"),
        ("cut.pdf", whole[..whole.len() / 3].to_vec(), Limits::default(), "cut.pdf is damaged and cannot be read"),
        ("bomb.docx", bomb, small, "bomb.docx unpacks to more than 1.0 MB; it may be a zip bomb"),
        (
            "other.docx",
            zip_of(&[("x.xml", b"<x/>".to_vec())]),
            Limits::default(),
            "other.docx is damaged and cannot be read: it is a zip without a Word document inside",
        ),
        ("photos.zip", zip_of(&[("a.txt", b"a".to_vec())]), Limits::default(), "photos.zip is an archive"),
        ("cat.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(), Limits::default(), "cat.png is not an image that can be read"),
        ("huge.bmp", bmp_header(30_000, 30_000), Limits::default(), "huge.bmp is 30000 × 30000 pixels; images up to 50 megapixels"),
        // The user's lower limit (Settings → Attachments), said with where it is set.
        (
            "photo.bmp",
            bmp_header(2000, 1000),
            small,
            "photo.bmp is 2000 × 1000 pixels; images up to 1 megapixels can be attached — scale it down first (the limit is set in Settings",
        ),
        ("cat.webp", b"RIFF\x10\0\0\0WEBPVP8 ".to_vec(), Limits::default(), "cat.webp is a WebP image, which models cannot read yet"),
        ("empty.txt", b"  \n\n".to_vec(), Limits::default(), "empty.txt has no text to read"),
        ("long.txt", vec![b'a'; 2000], small, "long.txt holds 2000 characters of text; up to 1000 can be attached"),
    ];
    for (name, data, limits, expected) in cases {
        match read_bytes(name.into(), data, &limits) {
            Ok(file) => panic!("{name} was read: {:?}", &file.text[..file.text.len().min(80)]),
            Err(e) => assert!(e.to_string().starts_with(expected), "{name}: {e}"),
        }
    }
}

#[test]
fn a_file_over_the_size_limit_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    // 2 GB, sparse: nothing is written, and nothing may be read.
    let path = dir.path().join("huge.txt");
    std::fs::File::create(&path).unwrap().set_len(2 << 30).unwrap();
    let e = read_file(&path, &Limits::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "huge.txt is 2048 MB; files up to 64 MB can be attached (the limit is set in Settings → Sampling & model → Attachments)"
    );
    // A user who allows larger files: what a file may unpack to and hold follows.
    let larger = Limits::from(hearth_core::AttachmentLimits { max_file_mb: 4096 / 2, ..Default::default() });
    assert_eq!((larger.max_file_bytes, larger.max_unpacked_bytes, larger.max_text_chars), (2 << 30, 8 << 30, 2 << 30));
    let e = read_file(dir.path(), &Limits::default()).unwrap_err();
    assert!(e.to_string().ends_with("is not a file"), "{e}");
    let e = read_file(&dir.path().join("gone.txt"), &Limits::default()).unwrap_err();
    assert!(e.to_string().starts_with("gone.txt could not be read"), "{e}");
    let e = read_file(&dir.path().join("SmolLM2.Q4_1.gguf"), &Limits::default()).unwrap_err();
    assert_eq!(e.to_string(), "SmolLM2.Q4_1.gguf is a model, not a document: import it in Models → Library to chat with it");
    assert!(Path::new(&path).exists());
}

/// An image is kept as it is, for a vision model: its bytes, no text, under its hash.
#[test]
fn an_image_is_attached_as_it_is() {
    let data = hearth_testkit::images::gradient().bytes;
    let file = read_bytes("gradient.bmp".into(), data.clone(), &Limits::default()).unwrap();
    assert_eq!(file.attachment.kind, AttachmentKind::Image);
    assert_eq!((file.attachment.bytes, file.attachment.chars, file.text.as_str()), (data.len() as u64, 0, ""));
    assert_eq!(file.attachment.hash, hearth_testkit::images::gradient().hash);
    assert_eq!(file.data, data);
}
