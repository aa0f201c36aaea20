//! The wire: JSON-RPC messages framed by `Content-Length` headers over byte streams.
//!
//! Architecture invariant: reading never gives up on bad input. A frame that is not
//! JSON, JSON that is not a JSON-RPC message, a frame without a length or one larger
//! than [`MAX_FRAME`] becomes an [`Incoming::Invalid`], which the server answers with
//! an error response before it reads on: its id is the request's own when that is a
//! valid JSON-RPC id (a string, or an integer of any size, echoed byte for byte),
//! `null` otherwise. A header line that is not a header (no `:`) is read as garbage,
//! and the next `Content-Length` found resynchronises the stream. Only the end of the
//! input (or an I/O error) ends reading. (`lsp-server`'s own stdio transport stops at
//! the first malformed frame, so the server frames by itself and uses that crate for
//! the message types only.) What is written is the text of one JSON value per frame.

use lsp_server::{ErrorCode, Message, RequestId};
use serde_json::Value;
use std::io::{self, BufRead, Read, Write};

/// The largest frame read; a larger one is skipped and answered with an error.
pub const MAX_FRAME: usize = 256 << 20;

/// The longest header line read (longer ones are cut there and read as garbage).
const MAX_HEADER_LINE: u64 = 64 << 10;

/// What one frame of input was.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame to answer with an error response: the request's id when it is a valid
    /// JSON-RPC id, a JSON-RPC error code and a message.
    Invalid {
        id: Option<ReplyId>,
        code: i32,
        message: String,
    },
    /// A response whose id cannot be one of the server's requests: nothing to answer.
    Ignored,
}

/// A request's id as the client wrote it (a JSON string, or an integer literal of any
/// size), to echo in the error response to a request the server cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplyId(String);

impl ReplyId {
    /// The id of a JSON-RPC request, from its JSON text: a string or an integer (no
    /// fraction, no exponent); anything else (`1.5`, `true`, `{}`, `null`) is `None`.
    fn of_json(raw: &str) -> Option<ReplyId> {
        let raw = raw.trim();
        let digits = raw.strip_prefix('-').unwrap_or(raw);
        let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let string = raw.starts_with('"');
        (integer || string).then(|| ReplyId(raw.to_string()))
    }

    /// The id of a message the server read.
    fn of_request(id: &RequestId) -> ReplyId {
        ReplyId(serde_json::to_string(id).unwrap_or_else(|_| "null".into()))
    }
}

/// Read one frame. `Ok(None)` at the end of the input (also inside a frame).
pub fn read_frame(r: &mut impl BufRead) -> io::Result<Option<Incoming>> {
    let mut length: Option<usize> = None;
    let mut bad_length: Option<String> = None;
    let mut lines = 0usize;
    loop {
        let mut line = Vec::new();
        let n = (&mut *r).take(MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if lines == 0 {
                // Blank lines between frames are skipped.
                continue;
            }
            break;
        }
        lines += 1;
        // The header may follow garbage on the same line (the unframed body of a frame
        // whose header could not be read, which ends without a newline): found
        // anywhere in the line, it resynchronises the stream.
        if let Some(at) = text.to_ascii_lowercase().rfind("content-length:") {
            let value = text[at + "content-length:".len()..].trim();
            match value.parse::<usize>() {
                Ok(n) => length = Some(n),
                Err(_) => bad_length = Some(value.to_string()),
            }
        }
    }
    let Some(length) = length else {
        let message = match bad_length {
            Some(v) => format!("the Content-Length `{v}` is not a number of bytes"),
            None => "a message header without Content-Length".to_string(),
        };
        return Ok(Some(invalid(None, ErrorCode::ParseError, message)));
    };
    if length > MAX_FRAME {
        let skipped = io::copy(&mut (&mut *r).take(length as u64), &mut io::sink())?;
        if skipped < length as u64 {
            return Ok(None);
        }
        let message = format!("a message of {length} bytes (at most {MAX_FRAME} are read)");
        return Ok(Some(invalid(None, ErrorCode::InvalidRequest, message)));
    }
    let mut body = vec![0; length];
    if let Err(e) = r.read_exact(&mut body) {
        return if e.kind() == io::ErrorKind::UnexpectedEof { Ok(None) } else { Err(e) };
    }
    Ok(Some(parse_body(&body)))
}

/// A frame's body as a message, or why it is not one.
pub fn parse_body(body: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return invalid(None, ErrorCode::ParseError, format!("not JSON: {e}")),
    };
    if !value.is_object() {
        return invalid(None, ErrorCode::InvalidRequest, "not a JSON-RPC message object".into());
    }
    // The id exactly as written (serde_json reads integers past 64 bits as floats).
    #[derive(serde::Deserialize)]
    struct RawId<'a> {
        #[serde(borrow, default)]
        id: Option<&'a serde_json::value::RawValue>,
    }
    let raw = serde_json::from_slice::<RawId<'_>>(body).ok().and_then(|r| r.id);
    let reply = raw.and_then(|r| ReplyId::of_json(r.get()));
    let has_id = value.get("id").is_some_and(|i| !i.is_null());
    let readable =
        value.get("id").and_then(|i| serde_json::from_value::<RequestId>(i.clone()).ok());
    if value.get("method").is_none() && has_id && readable.is_none() {
        // A response (`result` or `error`) to no request of this server's, which numbers
        // its own with strings: never answered (JSON-RPC answers requests only).
        if value.get("result").is_some() || value.get("error").is_some() {
            return Incoming::Ignored;
        }
    }
    // A request whose id is neither a string nor a 32-bit integer (`2147483648`, `1.5`,
    // `true`, `{}`) would read as a notification and get no answer: it is answered
    // with an error (its id echoed when it is a valid JSON-RPC id, else `null`).
    if readable.is_none() && value.get("method").is_some() && has_id {
        return invalid(
            reply,
            ErrorCode::InvalidRequest,
            "the request's id is neither a string nor a 32-bit integer".into(),
        );
    }
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Incoming::Message(m),
        Err(e) => invalid(
            readable.as_ref().map(ReplyId::of_request).or(reply),
            ErrorCode::InvalidRequest,
            format!("not a JSON-RPC message: {e}"),
        ),
    }
}

fn invalid(id: Option<ReplyId>, code: ErrorCode, message: String) -> Incoming {
    Incoming::Invalid { id, code: code as i32, message }
}

/// A message as it is sent (the text of a frame's body): with `"jsonrpc": "2.0"`.
pub fn to_text(m: &Message) -> String {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.insert("jsonrpc".into(), Value::from("2.0"));
    }
    v.to_string()
}

/// An error response; `id: None` is sent as `null` (no valid id could be read).
pub fn error_response(id: Option<&ReplyId>, code: i32, message: &str) -> String {
    let error = serde_json::json!({"code": code, "message": message});
    let id = id.map_or("null", |i| i.0.as_str());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

/// Write one frame (`body`: the text of one JSON value) and flush.
pub fn write_frame(w: &mut impl Write, body: &str) -> io::Result<()> {
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<Incoming> {
        let mut r = io::BufReader::new(input.as_bytes());
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r).unwrap() {
            out.push(f);
        }
        out
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    /// The id an invalid frame is answered with, as its JSON text.
    fn reply(f: &Incoming) -> Option<String> {
        match f {
            Incoming::Invalid { id, .. } => {
                let text = error_response(id.as_ref(), 0, "");
                let v: Value = serde_json::from_str(&text).unwrap();
                assert!(v["id"].is_null() == id.is_none(), "{text}");
                Some(id.as_ref().map_or("null".into(), |i| i.0.clone()))
            }
            _ => None,
        }
    }

    #[test]
    fn reads_messages_and_reads_on_after_garbage() {
        let input = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            frame("{not json"),
            "X-Nonsense: 1\r\n\r\n".to_string(),
            "Content-Length: ten\r\n\r\n".to_string(),
            frame(r#"[1,2]"#),
            frame(r#"{"jsonrpc":"2.0","id":7,"params":{}}"#),
            frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#),
        ]
        .concat();
        let got = frames(&input);
        assert_eq!(got.len(), 7);
        assert!(
            matches!(&got[0], Incoming::Message(Message::Request(r)) if r.method == "initialize")
        );
        let codes: Vec<(Option<String>, i32)> = got[1..6]
            .iter()
            .map(|f| match f {
                Incoming::Invalid { code, .. } => (reply(f), *code),
                other => panic!("read {other:?} as a message"),
            })
            .collect();
        let null = || Some("null".to_string());
        assert_eq!(
            codes,
            [
                (null(), -32700),
                (null(), -32700),
                (null(), -32700),
                (null(), -32600),
                (Some("7".into()), -32600)
            ]
        );
        assert!(
            matches!(&got[6], Incoming::Message(Message::Notification(n)) if n.method == "initialized")
        );
    }

    #[test]
    fn requests_with_unreadable_ids_are_answered() {
        // Valid JSON-RPC ids the server cannot take (integers past 32 bits, of any size)
        // are echoed as written; the others are answered with id null.
        let cases = [
            ("2147483648", "2147483648"),
            ("-2147483649", "-2147483649"),
            ("123456789012345678901234567890", "123456789012345678901234567890"),
            ("1.5", "null"),
            ("1e3", "null"),
            ("true", "null"),
            ("{}", "null"),
            ("[1]", "null"),
        ];
        for (id, echoed) in cases {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#);
            let got = frames(&frame(&body));
            assert!(matches!(&got[..], [Incoming::Invalid { code: -32600, .. }]), "{id}: {got:?}");
            assert_eq!(reply(&got[0]).as_deref(), Some(echoed), "{id}");
        }
        // A string id with a malformed request is echoed too.
        let got = frames(&frame(r#"{"jsonrpc":"2.0","id":"a\"b","method":5}"#));
        assert_eq!(reply(&got[0]).as_deref(), Some(r#""a\"b""#), "{got:?}");
        // A null id is a notification's (no answer is due).
        let got = frames(&frame(r#"{"jsonrpc":"2.0","id":null,"method":"exit"}"#));
        assert!(matches!(&got[..], [Incoming::Message(Message::Notification(_))]), "{got:?}");
        // A response to no request of the server's is not answered.
        let got = frames(&frame(r#"{"jsonrpc":"2.0","id":2147483648,"result":null}"#));
        assert!(matches!(&got[..], [Incoming::Ignored]), "{got:?}");
    }

    #[test]
    fn framing_resynchronises_after_a_header_line_without_a_colon() {
        let ok = frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
        let input = format!("Content-Length 40\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":1}}{ok}");
        let got = frames(&input);
        assert!(
            matches!(got.last(), Some(Incoming::Message(Message::Request(r))) if r.method == "shutdown"),
            "{got:?}"
        );
        // A stray line among the headers of a good frame costs nothing; one before a
        // frame, or an unframed body over several lines, costs one error each.
        let body = r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#;
        let inputs = [
            format!("Content-Length: {}\r\nNo colon here\r\n\r\n{body}", body.len()),
            format!("No colon here\r\n\r\n{}", frame(body)),
            format!("Content-Length 9\r\n\r\n{{\n \"id\": 1\n}}{}", frame(body)),
        ];
        for input in inputs {
            let got = frames(&input);
            let last = got.last();
            assert!(
                matches!(last, Some(Incoming::Message(Message::Request(r))) if r.id == 3.into()),
                "{input:?}: {got:?}"
            );
            assert!(got[..got.len() - 1].iter().all(|f| reply(f).as_deref() == Some("null")));
        }
    }

    #[test]
    fn a_frame_cut_short_ends_the_input() {
        assert!(frames("Content-Length: 100\r\n\r\n{\"id\"").is_empty());
        assert!(frames("Content-Le").is_empty());
    }

    #[test]
    fn writes_what_it_reads() {
        let v = error_response(None, -32700, "bad");
        let mut buf = Vec::new();
        write_frame(&mut buf, &v).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(text.starts_with("Content-Length: "), "{text}");
        let got = frames(&text);
        // An error response without an id is not a message the server accepts.
        assert!(matches!(&got[0], Incoming::Invalid { id: None, .. }));
        assert!(text.contains(r#""id":null"#), "{text}");
    }
}
